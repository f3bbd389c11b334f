"""Where the harness keeps what it must find again: one directory, whatever the current one is.

The memory store (memory.db), the dev server's database (temporal.db), the eval reports
(evals/EVAL_ID/), the payment service's token and ledger, and the pids and logs of what
`make demo` started all live in the state directory. Every reader and writer asks `state_dir`,
so a worker started in one folder and `harness memory list`, `harness eval --resume` or
`harness server` typed in another find the same files.

Which directory: `HARNESS_STATE_DIR` when set (compose sets /state; the tests set one per test),
else the per-user state directory of the XDG base-directory spec, `$XDG_STATE_HOME/durable-harness`
or `~/.local/state/durable-harness`. XDG's *state* home (not *data*) because the spec gives it to
"data that should persist between application restarts but is not important or portable enough
for the user's data directory": history, logs and the current state, which is what a memory of
past runs, a dev server's history and eval reports are. Not the checkout's `.harness/` (the
default up to 0.10.0): that made a run forget everything when started from another folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

STATE_DIR_VARIABLE = "HARNESS_STATE_DIR"
APP_FOLDER = "durable-harness"
SERVER_DB_FILE = "temporal.db"
EVALS_FOLDER = "evals"
PAYMENTS_LEDGER_FILE = "payments.db"


def state_dir(environment: Mapping[str, str] | None = None) -> Path:
    """The state directory: HARNESS_STATE_DIR, else $XDG_STATE_HOME/durable-harness, else
    ~/.local/state/durable-harness. An empty variable counts as unset (compose passes `${X:-}`
    through), and a relative XDG_STATE_HOME is ignored, as the spec says."""
    env = os.environ if environment is None else environment
    given = env.get(STATE_DIR_VARIABLE, "").strip()
    if given:
        return Path(given).expanduser()
    xdg = env.get("XDG_STATE_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / APP_FOLDER
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".local" / "state" / APP_FOLDER


def server_database(environment: Mapping[str, str] | None = None) -> Path:
    """The dev server's SQLite database (`harness server`, `make demo`)."""
    return state_dir(environment) / SERVER_DB_FILE


def evals_dir(environment: Mapping[str, str] | None = None) -> Path:
    """Where an eval's report goes without --out: one folder per eval id."""
    return state_dir(environment) / EVALS_FOLDER
