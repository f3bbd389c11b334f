"""A management tool's write to its task carries its binding's fence to the task's gateway on a
real dev server: a slice that has been superseded (an older epoch of its session) is refused with
the reason and the ledger is unchanged; a binding without a fence writes as before."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from activities.task_ledger_service import TemporalTaskLedger
from durable_harness._client import tasks
from harness.core.errors import ErrorCode, ToolError
from harness.governance.task_graph import CreateTask, GraphCommand
from harness.governance.work import TaskBinding, WriterFence
from scenarios.base import ToolContext
from scenarios.management import TASK_LEDGER_SERVICE, FactArgs, fact_record
from tests.support import running_worker

pytestmark = pytest.mark.requires_local_server("tasks are listed by the HarnessTask* attributes")

SESSION = "session:s-1"


class NoWriter:
    async def write(self, request: object) -> object:
        raise AssertionError("no model here")


def slice_context(
    ledger: TemporalTaskLedger, scope: str, task_id: str, node_id: str, epoch: int | None
) -> ToolContext:
    """What the tool activity gives a management tool of a session's slice of this epoch."""
    fence = None if epoch is None else WriterFence(holder=SESSION, epoch=epoch)
    return ToolContext(
        run_id=f"run-{uuid.uuid4().hex[:8]}",
        node_id=node_id,
        attempt=1,
        writer=NoWriter(),  # type: ignore[arg-type]
        services={TASK_LEDGER_SERVICE: ledger},
        task=TaskBinding(scope=scope, task_id=task_id, fence=fence),
    )


async def test_a_superseded_slices_write_is_refused_with_the_reason_and_changes_nothing(
    client: Client, task_queue: str
) -> None:
    scope = f"fence-{uuid.uuid4().hex[:8]}"
    ledger = TemporalTaskLedger(client, task_queue)
    found = [FactArgs(statement=f"finding {n}", source="search", confidence=0.5) for n in range(3)]
    async with running_worker(client, task_queue):
        create = GraphCommand(scope=scope, actor="human:ops", operation=CreateTask(title="t"))
        task_id = (await tasks.scope_command(client, task_queue, create)).id
        assert task_id is not None
        await fact_record(found[0], slice_context(ledger, scope, task_id, "n1", epoch=3))
        before = await ledger.ledger(scope, task_id)
        with pytest.raises(ToolError) as stale:
            await fact_record(found[1], slice_context(ledger, scope, task_id, "n2", epoch=2))
        after = await ledger.ledger(scope, task_id)
        await fact_record(found[2], slice_context(ledger, scope, task_id, "n3", epoch=None))
        last = await ledger.ledger(scope, task_id)
    assert stale.value.code is ErrorCode.POLICY_VIOLATION
    assert stale.value.message == (
        f"stale writer: {SESSION} epoch 2 is older than epoch 3, which has written to task "
        f"{task_id} since; nothing was changed"
    )
    assert after == before and before.writer_epochs == {SESSION: 3}
    assert [fact.statement for fact in last.facts] == ["finding 0", "finding 2"]
