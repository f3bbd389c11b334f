"""An approval covers its action for the rest of the run: a replan that plans the same action
again (a refund after a failed report) is not asked about it a second time.

"The same action" is the same tool with the same arguments, as canonical JSON (keys sorted,
so the order the planner wrote them in does not matter; any other difference, an amount or an
order id, makes it another action that is asked about). Only a decision covers: an approval
expired or cancelled without one asks again.

- An approval covers the same action once in each LATER attempt of the run. Two nodes of one
  plan with the same action are that plan asking to do it twice, so each is asked; a later
  attempt re-doing it once is the replan retrying the approved step.
- A rejection is remembered too, and for every later node with the action: the run does not
  ask the person again what they refused, it fails the node as the rejection did, naming who
  rejected it and where. (Today a rejection is a POLICY_VIOLATION, which halts the run, so no
  later attempt comes; the rule stands for any path that goes on.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import BaseModel, JsonValue

from harness.waits.wait_book import Decision, Wait, WaitKind, WaitStatus


def action_key(tool: str, arguments: Mapping[str, JsonValue]) -> str:
    """What makes two approvals the same action: the tool and its arguments, canonical."""
    body = {"tool": tool, "arguments": dict(arguments)}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Cover(BaseModel):
    """An earlier decision on an action: where it was made, by whom, and what it was."""

    wait_id: str
    decision: Decision
    decided_by: str
    attempt: int

    def refusal(self) -> str | None:
        """Why the node covered by this decision may not go ahead, or None: approved."""
        if self.decision is Decision.APPROVE:
            return None
        return (
            f"rejected by {self.decided_by} in wait {self.wait_id} (attempt {self.attempt}); "
            "the same action is not asked again"
        )


def approval_refusal(wait: Wait) -> str | None:
    """Why the node held on a settled APPROVAL wait may not go ahead, or None: approved.
    Anything but an approval refuses it, an expiry or a cancel too."""
    if wait.status is WaitStatus.DELIVERED and wait.decision is Decision.APPROVE:
        return None
    if wait.status is WaitStatus.DELIVERED:
        reason = f"rejected by {wait.delivered_by}"
        return reason + (f": {wait.comment_excerpt()}" if wait.comment else "")
    return f"approval {wait.status.value.lower()} without a decision; treated as rejected"


class ApprovalCover:
    """The run's decided approvals by action. Pure bookkeeping, rebuilt the same on replay."""

    def __init__(self) -> None:
        self._decided: dict[str, Cover] = {}
        self._taken: set[tuple[int, str]] = set()

    def decided(self, key: str, wait: Wait, attempt: int) -> None:
        """Remember a delivered decision on the action `key` (anything else is not one)."""
        if wait.kind is not WaitKind.APPROVAL or wait.status is not WaitStatus.DELIVERED:
            return
        if wait.decision is None or wait.delivered_by is None:
            return
        self._decided[key] = Cover(
            wait_id=wait.id, decision=wait.decision, decided_by=wait.delivered_by, attempt=attempt
        )

    def cover(self, key: str, attempt: int) -> Cover | None:
        """The earlier decision that settles the action in `attempt`, or None: ask."""
        earlier = self._decided.get(key)
        if earlier is None or earlier.attempt >= attempt:
            return None
        if earlier.decision is Decision.REJECT:
            return earlier
        if (attempt, key) in self._taken:
            return None
        self._taken.add((attempt, key))
        return earlier
