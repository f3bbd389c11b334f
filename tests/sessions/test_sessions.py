"""Agent sessions (issue 37): one bounded slice per message, DONE / WAITING /
CONTINUATION_REQUIRED, messages taken one at a time, the conversation carried from message to
message (and over continue-as-new), against the real dev server and the offline agent."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from temporalio.client import Client

from activities.task_ledger_service import TemporalTaskLedger
from durable_harness._client import tasks
from durable_harness.client import Harness
from harness.core.errors import ToolError
from harness.engine.contracts import SESSION_QUERY
from harness.engine.sessions import (
    SessionReply,
    SessionState,
    SessionStatus,
    session_workflow_id,
)
from harness.engine.trace import TraceKind
from harness.governance.task_graph import CreateTask, GraphCommand
from harness.governance.work import TaskBinding, WriterFence
from scenarios.base import ToolContext
from scenarios.management import TASK_LEDGER_SERVICE, FactArgs, fact_record
from tests.scenarios.test_fenced_task_writes import NoWriter
from tests.starter.test_cli import harness
from tests.support import running_worker

TOOLS = ["echo", "delay"]


def _harness(client: Client, task_queue: str) -> Harness:
    from infra.settings import Settings

    settings = Settings.from_env(
        {
            "TEMPORAL_ADDRESS": client.service_client.config.target_host,
            "HARNESS_TASK_QUEUE": task_queue,
        }
    )
    return Harness(client, settings)


async def _session_state(client: Client, session_id: str) -> SessionState:
    handle = client.get_workflow_handle(session_workflow_id("default", session_id))
    state: SessionState = await handle.query(SESSION_QUERY, result_type=SessionState)
    return state


async def _until_slice(client: Client, session_id: str, epoch: int) -> None:
    """Until the session has begun slice `epoch` (a query, polled generously)."""
    for _ in range(600):
        if (await _session_state(client, session_id)).epoch >= epoch:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"slice {epoch} never began")


async def test_a_session_answers_three_messages_in_order_one_after_a_wait_and_queues_a_fourth(
    client: Client, task_queue: str
) -> None:
    api = _harness(client, task_queue)
    session = "s-three"
    workflow_id = session_workflow_id("default", session)
    start: dict[str, Any] = {"scenario": "synthetic", "tools": TOOLS}
    async with running_worker(client, task_queue):
        first = await api.send(session, "Find the code. value: 42", **start)
        second = await api.send(session, "Ask me which year. question: Which year?", **start)
        code, _, err = await harness(
            "answer",
            session_workflow_id("default", session),
            second.wait_id or "",
            "1999",
            client=client,
            task_queue=task_queue,
        )
        answered = await api.send(session, None)  # after the answer: the slice it resumed
        slow = asyncio.create_task(api.send(session, "Now wait.\nms: 1500", **start))
        await _until_slice(client, session, 4)
        fourth = await harness(
            "chat", session, "And now?", "--json", client=client, task_queue=task_queue
        )
        third = await slow
        slices = [
            await client.get_workflow_handle(f"{workflow_id}-slice-{n}").describe() for n in (4, 5)
        ]
        runs = [run async for run in client.list_workflows(f'WorkflowId="{workflow_id}"')]
    assert first.status is SessionStatus.DONE and first.epoch == 1
    assert first.answer and '"value": 42' in first.answer
    assert second.status is SessionStatus.WAITING and second.wait_id == "question-2"
    assert second.prompt == "Which year?"
    assert code == 0, err
    assert answered.status is SessionStatus.DONE and answered.epoch == 3
    assert answered.answer and "1999" in answered.answer and '"value": 42' in answered.answer
    assert third.status is SessionStatus.DONE and third.epoch == 4
    assert third.answer and '"ms": 1500' in third.answer and '"value": 42' in third.answer
    fourth_code, fourth_out, fourth_err = fourth
    assert fourth_code == 0, fourth_err
    last = SessionReply.model_validate_json(fourth_out)
    # taken after the third, never beside it: its slice is the next, and it saw the delay's end
    assert last.status is SessionStatus.DONE and last.epoch == 5
    assert last.answer and last.answer.startswith("Findings for: And now?")
    assert '"ms": 1500' in last.answer
    fourth_slice, fifth_slice = slices
    assert fourth_slice.close_time is not None and fifth_slice.start_time is not None
    assert fourth_slice.close_time <= fifth_slice.start_time
    assert len(runs) >= 5  # it continued as new between slices, carrying the conversation


async def test_a_slice_that_reaches_its_turn_limit_asks_to_continue_and_continue_finishes_it(
    client: Client, task_queue: str
) -> None:
    session = "s-limit"
    async with running_worker(client, task_queue):
        code, out, err = await harness(
            "chat",
            session,
            "Look it up.\nvalue: 7\nms: 10",
            "--scenario",
            "synthetic",
            "--tools",
            "echo,delay",
            "--max-turns",
            "1",
            client=client,
            task_queue=task_queue,
        )
        again, more, more_err = await harness(
            "chat", session, "--continue", client=client, task_queue=task_queue
        )
    assert code == 0, err
    assert out.startswith("CONTINUATION_REQUIRED after slice 1"), out
    assert again == 0, more_err
    assert more.startswith("DONE"), more
    assert '"value": 7' in more and '"ms": 10' in more


async def test_a_message_to_a_session_that_waits_is_refused_with_the_wait_to_answer(
    client: Client, task_queue: str
) -> None:
    api = _harness(client, task_queue)
    session = "s-parked"
    async with running_worker(client, task_queue):
        asked = await api.send(
            session, "question: Which port?", scenario="synthetic", tools=["echo"]
        )
        code, _, err = await harness(
            "chat", session, "hello?", client=client, task_queue=task_queue
        )
        state = await _session_state(client, session)
    assert asked.status is SessionStatus.WAITING
    assert code == 2
    assert f"waits on {asked.wait_id} (Which port?)" in err and "Traceback" not in err
    assert state.messages == 1  # the refused message changed nothing


async def test_a_chat_session_is_the_memory_session_of_its_id_for_later_runs(
    client: Client, task_queue: str
) -> None:
    api = _harness(client, task_queue)
    async with running_worker(client, task_queue):
        told = await api.send("s-mem", "Note the code.\nvalue: 451", scenario="synthetic")
        run = await api.start("Compare Paris and Tokyo", session_id="s-mem")
        result = await run.result()
        trace = await run.trace()
    assert told.status is SessionStatus.DONE
    assert result.status.value == "SUCCEEDED", result.error
    [retrieved] = [event for event in trace if event.kind is TraceKind.MEMORY_RETRIEVE]
    included = json.dumps(retrieved.data["included"])
    assert "Session s-mem was asked: Note the code." in included, included


@pytest.mark.requires_local_server("tasks are listed by the HarnessTask* attributes")
async def test_each_slice_writes_to_its_task_with_its_epoch_and_an_older_slices_write_is_refused(
    client: Client, task_queue: str
) -> None:
    api = _harness(client, task_queue)
    scope = f"chat-{uuid.uuid4().hex[:8]}"
    ledger = TemporalTaskLedger(client, task_queue)
    fact = "source: dashboard\nconfidence: 0.8\nstatement: "
    async with running_worker(client, task_queue):
        create = GraphCommand(scope=scope, actor="human:ops", operation=CreateTask(title="t"))
        task_id = (await tasks.scope_command(client, task_queue, create)).id
        assert task_id is not None
        task = TaskBinding(scope=scope, task_id=task_id)
        start: dict[str, Any] = {"scenario": "synthetic", "tools": ["echo"], "task": task}
        await api.send("s-fence", f"Note it.\n{fact}the cache is cold", scope=scope, **start)
        await api.send("s-fence", f"And now.\n{fact}the cache is warm", scope=scope, **start)
        written = await ledger.ledger(scope, task_id)
        [(holder, mark)] = written.writer_epochs.items()
        straggler = ToolContext(  # a call of slice 1 that comes after slice 2 wrote
            run_id=session_workflow_id(scope, "s-fence"),
            node_id="slice1.t9.c1",
            attempt=2,
            writer=NoWriter(),  # type: ignore[arg-type]
            services={TASK_LEDGER_SERVICE: ledger},
            task=task.model_copy(update={"fence": WriterFence(holder=holder, epoch=1)}),
        )
        with pytest.raises(ToolError) as stale:
            await fact_record(FactArgs(statement="late", source="s", confidence=0.1), straggler)
    statements = [fact.statement for fact in written.facts]
    assert statements == ["the cache is cold", "the cache is warm"]
    assert holder.startswith(f"session:{scope}:s-fence:") and mark == 2  # and its generation
    assert stale.value.message.startswith(f"stale writer: {holder} epoch 1 is older than epoch 2")


async def test_a_session_asking_approval_is_approved_by_a_person_and_never_by_an_agent(
    client: Client, task_queue: str
) -> None:
    session = "s-approve"
    workflow_id = session_workflow_id("default", session)
    ask = "Restart it. action: restart consumer-7\nreason: lag over an hour"
    async with running_worker(client, task_queue):
        code, out, err = await harness(
            "chat",
            session,
            ask,
            "--scenario",
            "synthetic",
            "--tools",
            "echo",
            client=client,
            task_queue=task_queue,
        )
        by_agent = await harness(
            "approve",
            workflow_id,
            "approval-1",
            "--actor",
            "agent:scout",
            client=client,
            task_queue=task_queue,
        )
        by_person = await harness(
            "approve",
            workflow_id,
            "approval-1",
            "--actor",
            "human:ops",
            client=client,
            task_queue=task_queue,
        )
        done = await _harness(client, task_queue).send(session)
    assert code == 0, err
    assert out.startswith("WAITING approval-1: approve restart consumer-7? reason: lag"), out
    assert f"harness approve {workflow_id} approval-1 --actor human:NAME" in out
    assert by_agent[0] == 2 and "agents can never approve" in by_agent[2]
    assert by_person[0] == 0, by_person[2]
    assert done.status is SessionStatus.DONE and done.epoch == 2
    assert done.answer and '"approved": true' in done.answer


async def test_a_session_on_the_pydantic_ai_runtime_waits_for_its_answer_and_finishes(
    client: Client, task_queue: str
) -> None:
    api = _harness(client, task_queue)
    session = "s-pyai"
    workflow_id = session_workflow_id("default", session)
    start: dict[str, Any] = {"scenario": "synthetic", "tools": ["echo"], "runtime": "pydantic-ai"}
    async with running_worker(client, task_queue):
        first = await api.send(session, "Find the code. value: 42", **start)
        asked = await api.send(session, "Ask me which year. question: Which year?", **start)
        code, _, err = await harness(
            "answer", workflow_id, asked.wait_id or "", "1999", client=client, task_queue=task_queue
        )
        answered = await api.send(session)
        unknown = await harness(
            "chat", "s-other", "hi", "--runtime", "nope", client=client, task_queue=task_queue
        )
        closed = await client.get_workflow_handle(
            session_workflow_id("default", "s-other")
        ).result()
    assert first.status is SessionStatus.DONE, first
    assert first.answer and '"value": 42' in first.answer
    assert asked.status is SessionStatus.WAITING and asked.prompt == "Which year?"
    assert code == 0, err
    assert answered.status is SessionStatus.DONE and answered.answer and "1999" in answered.answer
    assert unknown[0] == 2 and "no agent runtime 'nope'" in unknown[2], unknown
    assert closed["messages"] == 1  # the session closed: a later message starts it anew
