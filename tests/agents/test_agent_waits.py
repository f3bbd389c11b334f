"""An agent's model can ask: `ask_user` opens one of the run's waits, which makes the run
WAITING, and `harness answer` continues the loop with the answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from durable_harness._client.run_results import result_of
from harness.engine.agent_node import AgentResult, AgentStop
from harness.engine.contracts import APPROVE_UPDATE
from harness.engine.run import RunPhase, RunRequest
from harness.waits.deliveries import ApprovalRequest
from harness.waits.wait_book import WaitKind, WaitStatus
from scenarios.registry import registered
from tests.agents.plans import asking_agent
from tests.factories import collect, node, ref, synthetic_plan
from tests.scenarios.tally import TALLY, TALLY_FILE, lines
from tests.starter.test_cli import harness
from tests.support import deliver_update, pending_wait, running_worker, start_run
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


async def test_an_agent_that_requests_approval_is_told_the_decision_and_no_agent_may_give_it(
    client: Client, task_queue: str
) -> None:
    scout = node(
        "scout",
        "agent",
        goal="Restart the stuck consumer.\naction: restart consumer-7\nreason: lag over 1h",
        tools=["echo"],
    )
    request = RunRequest(
        goal="restart", scenario="synthetic", plan=synthetic_plan(scout, collect("end", ["scout"]))
    )
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request)
        wait = await pending_wait(handle, "approve-scout.t1.c2")
        by_an_agent = await deliver_update(
            handle, APPROVE_UPDATE, ApprovalRequest(wait_id=wait.id, actor="agent:scout")
        )
        by_a_person = await deliver_update(
            handle, APPROVE_UPDATE, ApprovalRequest(wait_id=wait.id, actor="human:ops")
        )
        result = await result_of(client, handle)
    assert wait.kind is WaitKind.APPROVAL
    assert wait.prompt == "approve restart consumer-7? reason: lag over 1h"
    assert not by_an_agent.accepted and by_a_person.accepted
    assert result.status is RunPhase.SUCCEEDED, result.error
    outcome = AgentResult.model_validate(next(n for n in result.nodes if n.id == "scout").result)
    asked = next(call for call in outcome.tool_calls if call.tool == "request_approval")
    assert asked.ok and asked.result == {"approved": True, "wait": wait.id}


async def test_an_agents_side_effect_waits_for_approval_through_the_run_before_it_is_made(
    client: Client, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = tmp_path / "tally.txt"
    monkeypatch.setenv(TALLY_FILE, str(counts))
    poster = node("poster", "agent", goal="Post the kelp notice.\nlabel: kelp", tools=["post"])
    plan = synthetic_plan(poster, node("report", "write_report", ref("inputs", "poster"),
                                       deps=["poster"]))  # fmt: skip
    with registered(TALLY):
        async with running_worker(client, task_queue):
            handle = await start_run(
                client, task_queue, RunRequest(goal="kelp", scenario="tally", plan=plan)
            )
            wait = await pending_wait(handle, "approve-poster.t1.c1")
            before = lines(counts)
            await deliver_update(
                handle, APPROVE_UPDATE, ApprovalRequest(wait_id=wait.id, actor="human:ops")
            )
            result = await result_of(client, handle)
    assert wait.prompt == "approve poster.t1.c1 post(label=kelp)?"
    assert before == []  # held before the call, not after
    assert lines(counts) == ["post poster.t1.c1 kelp"]
    assert result.status is RunPhase.SUCCEEDED, result.error
