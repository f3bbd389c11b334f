"""An agent's model can ask: `ask_user` opens one of the run's waits, which makes the run
WAITING, and `harness answer` continues the loop with the answer."""

from __future__ import annotations

from temporalio.client import Client, WorkflowExecutionStatus

from durable_harness._client.run_results import result_of
from harness.engine.agent_node import AgentResult, AgentStop
from harness.engine.run import RunPhase
from harness.waits.wait_book import WaitStatus
from tests.agents.plans import asking_agent
from tests.starter.test_cli import harness
from tests.support import pending_wait, running_worker, start_run
from workflows import AgentRunWorkflow


async def test_an_agent_that_asks_the_user_waits_and_harness_answer_continues_it(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, asking_agent())
        wait = await pending_wait(handle, "ask-scout.t1.c2")
        status = await handle.query(AgentRunWorkflow.status)
        code, _, err = await harness(
            "answer", handle.id, wait.id, "Brest", client=client, task_queue=task_queue
        )
        result = await result_of(client, handle)
    assert wait.prompt == "Which port should I watch?" and wait.node_id == "scout"
    assert status.phase is RunPhase.WAITING
    assert code == 0, err
    assert result.status is RunPhase.SUCCEEDED, result.error
    scout = AgentResult.model_validate(next(n for n in result.nodes if n.id == "scout").result)
    assert scout.stopped is AgentStop.ANSWERED
    asked = next(call for call in scout.tool_calls if call.tool == "ask_user")
    assert asked.ok and isinstance(asked.result, dict) and asked.result["answer"] == "Brest"
    assert "Brest" in scout.answer


async def test_a_run_cancelled_while_its_agent_waits_for_the_user_ends_cancelled_with_its_child(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, asking_agent())
        await pending_wait(handle, "ask-scout.t1.c2")
        await handle.cancel()
        result = await result_of(client, handle)
        child = await client.get_workflow_handle(f"{handle.id}-attempt-1-agent-scout").describe()
        waits = await handle.query(AgentRunWorkflow.waits)
    assert result.status is RunPhase.CANCELLED
    assert child.status == WorkflowExecutionStatus.CANCELED
    assert [wait.status for wait in waits] == [WaitStatus.CANCELLED]
