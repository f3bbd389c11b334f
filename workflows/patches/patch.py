"""The registry's type: one patch id, with when and why it came."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Patch:
    """One patch id. `added`, `commit`: the commit that added it (`git log -S'<id>' --reverse`;
    empty until that commit exists). `release`: the version pyproject.toml named then.
    `numbered`: asked as `<id>:<acceptances>:<reviews>`, once per act of a long-lived task (see
    task_entity), as well as (for CONTRACT_PATCH) bare."""

    id: str
    added: date
    commit: str
    release: str
    reason: str
    numbered: bool = False
