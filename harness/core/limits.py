"""The lengths every domain bounds names and actors by: one number each, shared
by the run's deliveries and the entity workflows' commands."""

from __future__ import annotations

from typing import Final

MAX_NAME_CHARS: Final = 1_000
"""Run, wait and operation ids, events and actors (an operation id may be an ARN or a URL)."""
MAX_ACTOR_CHARS: Final = MAX_NAME_CHARS
"""Every actor, wherever it enters: run deliveries, and task, graph and rules commands (where it
is stored with each record). One number, the deliveries' own: lowering it would make a run's
signal handler refuse, on replay, a delivery its history shows it took."""
