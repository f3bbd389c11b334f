"""How to answer a wait: the `harness` command and the `temporal workflow signal` payload, the
same for the CLI's listing and the run's current details in the Temporal UI."""

from __future__ import annotations

import json
import shlex

from pydantic import JsonValue

from harness.waits.wait_book import Wait, WaitKind


def harness_command(run_id: str, wait: Wait) -> str:
    """The CLI command that answers `wait` (for a reconcile: the whole payload to send)."""
    if wait.kind is WaitKind.APPROVAL:
        return f"harness approve {run_id} {wait.id} --actor human:NAME [--reject]"
    if wait.kind is WaitKind.USER_INPUT:
        return f"harness answer {run_id} {wait.id} 'TEXT'"
    if wait.kind is WaitKind.ASYNC_OPERATION:
        return f"harness deliver {run_id} --operation {wait.operation_id} --data JSON"
    if wait.kind is WaitKind.EXTERNAL_EVENT:
        return f"harness deliver {run_id} --event {wait.event} --data JSON"
    if wait.kind is WaitKind.RECONCILE:
        example = wait.example or {"outcome": "succeeded", "result": "RESULT"}
        done = shlex.quote(json.dumps(example, separators=(", ", ": ")))
        failed = shlex.quote(json.dumps({"outcome": "failed"}))
        command = f"harness deliver {run_id} {wait.id} --data"
        return f"{command} {done}\n    -> or, if it did not happen: {command} {failed}"
    return ""


def signal_of(wait: Wait) -> tuple[str, dict[str, JsonValue]] | None:
    """(signal name, payload) for `temporal workflow signal --name NAME --input PAYLOAD`."""
    if wait.kind is WaitKind.APPROVAL:
        return "approve", {"wait_id": wait.id, "decision": "approve", "actor": "human:NAME"}
    if wait.kind is WaitKind.USER_INPUT:
        return "answer", {"wait_id": wait.id, "text": "TEXT", "actor": "human:NAME"}
    if wait.kind in (WaitKind.ASYNC_OPERATION, WaitKind.EXTERNAL_EVENT, WaitKind.RECONCILE):
        data = wait.example if wait.kind is WaitKind.RECONCILE else "DATA"
        return "deliver", {"wait_id": wait.id, "data": data, "actor": "system:NAME"}
    return None
