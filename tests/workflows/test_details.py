"""The run's current details in the UI: every kind of pending wait is listed with what answers
it (a timer by time alone), and a long list is cut with a pointer to `harness waits`."""

from __future__ import annotations

import pytest

from harness.engine.run import RunCounts, RunPhase
from harness.waits.wait_book import WaitKind
from tests.factories import wait
from workflows.details import WAIT_DETAILS, current_details


def details(*kinds: WaitKind) -> str:
    pending = [wait(f"w{n}", kind, operation_id="op-1", event="e") for n, kind in enumerate(kinds)]
    return current_details(
        RunPhase.WAITING,
        run_id="run-1",
        attempt=1,
        counts=RunCounts(nodes=1),
        pending=pending,
        pressure=0.0,
        plan=None,
        statuses={},
    )


@pytest.mark.parametrize("kind", list(WaitKind))
def test_every_kind_of_pending_wait_is_listed(kind: WaitKind) -> None:
    text = details(kind)
    assert f"- `w0` {kind.value}:" in text
    assert ("harness " in text) is (kind is not WaitKind.TIMER)


def test_a_long_list_of_waits_points_to_harness_waits() -> None:
    text = details(*[WaitKind.APPROVAL] * (WAIT_DETAILS + 2))
    assert "… and 2 more (`harness waits run-1`)" in text


def test_an_approval_lists_its_command_and_signal_as_items_of_one_flat_list() -> None:
    """The UI's markdown draws no nested list: indented items would run into one paragraph."""
    lines = details(WaitKind.APPROVAL).split("waiting for:\n\n", 1)[1].splitlines()
    assert lines[1] == "- answer: `harness approve run-1 w0 --actor human:NAME [--reject]`"
    assert lines[2].startswith("- or signal: `temporal workflow signal --workflow-id run-1 ")
    assert not any(line.startswith(" ") for line in lines)
