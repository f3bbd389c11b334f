"""Record workflow histories for the replay tests: `python -m tests.record_histories [OUTDIR]`.

Each case drives one run the way production does (started with the Harness* search attributes
by `durable_harness._client.runs.start_run`, on a dev server that has them registered, worked by
the offline
ScriptedProvider) to a terminal phase, and its history is written to OUTDIR/<case>.json. OUTDIR
defaults to tests/histories/v<version in pyproject.toml>: the histories of a release are
recorded with that release's code. An existing file is never overwritten; the case is skipped.

Run it from a checkout of the release being recorded (e.g. a git worktree of its tag): the
workflow code that runs is the code of the checkout this module sits in, and it refuses to run
otherwise. Keep every older folder: every history recorded here must go on replaying.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import tomllib
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType, PendingActivityState
from temporalio.client import Client, WorkflowHandle, WorkflowHistory
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

import workflows
from activities.heartbeats import HEARTBEAT_EVERY_SECONDS
from activities.llm import LLMProvider
from durable_harness._client.run_results import result_of
from durable_harness._client.runs import new_run_id, start_run
from harness.core.errors import ErrorCode
from harness.core.plan import Plan
from harness.engine.budget import BudgetLimits
from harness.engine.dag import NodeStatus
from harness.engine.faults import FaultSpec
from harness.engine.run import RunPhase, RunRequest, RunResult, ScaleOptions, WaitTimeouts
from harness.engine.run_models import RunModels
from harness.governance.work import TaskBinding
from harness.waits.deliveries import AnswerRequest, ApprovalRequest, DeliverRequest
from harness.waits.signatures import signed_message
from infra.plugin import HarnessPlugin
from infra.settings import Settings
from infra.signing import public_key, sign
from memory.sqlite_store import SqliteMemoryStore
from starter.servers.dev_server import temporal_binary
from tests.agents.plans import asking_agent, one_agent, two_agents
from tests.factories import approval_request, collect, delay, node
from tests.factories import synthetic_plan as plan_of
from tests.memory.store_faults import corrupted, locked
from tests.support import Replans, pending_wait, running_worker
from workflows import AgentRunWorkflow, search_attributes

CHECKOUT = Path(__file__).resolve().parent.parent
HISTORIES = CHECKOUT / "tests" / "histories"
POLL_SECONDS = 0.05
POLL_TIMES = 200

Handle = WorkflowHandle[AgentRunWorkflow, RunResult]
Payload = dict[str, Any]  # deliveries travel as JSON, the shape external callers send
Start = Callable[[RunRequest], Awaitable[Handle]]
Drive = Callable[[Start], Awaitable[Handle]]
Hook = Callable[[Client, str], Awaitable[None]]
StoreFault = Callable[[Path], AbstractContextManager[None]]


@dataclass(frozen=True)
class Case:
    """One recorded history: `drive` starts a run and takes it to its end; the run must finish
    in `expect`. `children` names extra files for child workflows: file name -> id suffix.
    `settle` is how long the worker keeps running after the run ends, so that activities the
    run cancelled without waiting see it at their next heartbeat and finish in a live worker
    (shutting the worker down under them can crash the interpreter at exit)."""

    name: str
    expect: RunPhase
    drive: Drive
    children: dict[str, str] = field(default_factory=dict)
    settle: float = 0.0
    start_signal: tuple[str, Payload] | None = None
    """A signal sent with the start (signal-with-start): it is in the run's first task."""
    others: dict[str, str] = field(default_factory=dict)
    """Histories of other workflows the run made, by workflow id (file name -> id): a task's
    entity and its scope's graph."""
    prepare: Hook | None = None
    """Before the run starts (e.g. a scope's contract and a task for the run to work on)."""
    then: Hook | None = None
    """After the run ended, before the histories are fetched (e.g. a review and a completion)."""
    provider: Callable[[], LLMProvider] | None = None
    """The worker's model provider, when not the offline ScriptedProvider (e.g. a planner for
    the synthetic scenario's replans)."""
    store_fault: StoreFault | None = None
    """How the case's SQLite memory store is broken while the run runs (given its path)."""
    unchecked: bool = False
    """Started as any client may start a run: without the checks of `harness run`."""


def release_folder() -> Path:
    project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())
    return HISTORIES / f"v{project['project']['version']}"


# -- plans and requests ---------------------------------------------------------------------


def _fan_out(width: int, tool: str = "delay") -> Plan:
    leaves = [
        node(f"n{i}", tool, ms=0, value=i) if tool == "delay" else node(f"n{i}", tool, value=i)
        for i in range(width)
    ]
    final = collect("final", [leaf.id for leaf in leaves])
    return plan_of(*leaves, final)


THREE_CITIES = "Compare Paris, Tokyo and New York"
RECORDED_SCOPE = "recorded"
NO_CITIES = "Compare some cities"
VAGUE_INCIDENT = "checkout is slow"


# -- drivers: each starts its run, waits (by query) for what it delivers to, delivers ----------


def _to_the_end(request: RunRequest) -> Drive:
    async def drive(start: Start) -> Handle:
        return await start(request)

    return drive


async def _node_status(handle: Handle, node_id: str, *wanted: NodeStatus) -> None:
    for _ in range(POLL_TIMES):
        status = await handle.query(AgentRunWorkflow.status)
        if any(n.id == node_id and n.status in wanted for n in status.nodes):
            return
        await asyncio.sleep(POLL_SECONDS)
    raise AssertionError(f"node {node_id} never became {'/'.join(wanted)}")


async def _update(handle: Handle, name: str, payload: Payload) -> Payload:
    """Deliver by update and return the receipt; the delivery must be accepted."""
    receipt: Payload = await handle.execute_update(name, payload, result_type=dict)
    assert receipt["accepted"], f"{name} {payload} refused: {receipt['reason']}"
    return receipt


APPROVE_CHANGE: Payload = {"wait_id": "approve-change", "decision": "approve", "actor": "human:ops"}
REJECT_CHANGE: Payload = {**APPROVE_CHANGE, "decision": "reject", "comment": "no"}
ANSWER_CITIES: Payload = {"wait_id": "question-1", "text": "Paris and Tokyo"}


async def approval_by_signal(start: Start) -> Handle:
    """A side effect's approval delivered by the `approve` signal."""
    handle = await start(approval_request())
    await pending_wait(handle, "approve-change")
    await handle.signal("approve", APPROVE_CHANGE)
    return handle


async def approval_rejected_by_update(start: Start) -> Handle:
    """A side effect's approval rejected by the `approve_sync` update: its node fails."""
    handle = await start(approval_request())
    await pending_wait(handle, "approve-change")
    await _update(handle, "approve_sync", REJECT_CHANGE)
    return handle


async def answer_by_update(start: Start) -> Handle:
    """A goal without cities: the run asks, the answer comes by the `answer_sync` update."""
    handle = await start(RunRequest(goal=NO_CITIES))
    await pending_wait(handle, "question-1")
    await _update(handle, "answer_sync", ANSWER_CITIES)
    return handle


async def agent_asks_the_user(start: Start) -> Handle:
    """An agent node's model calls ask_user; the answer comes by the `answer` signal."""
    handle = await start(asking_agent())
    await pending_wait(handle, "ask-scout.t1.c2")
    await handle.signal("answer", {"wait_id": "ask-scout.t1.c2", "text": "Brest"})
    return handle


async def answer_by_signal(start: Start) -> Handle:
    """A goal without cities: the run asks, the answer comes by the `answer` signal."""
    handle = await start(RunRequest(goal=NO_CITIES))
    await pending_wait(handle, "question-1")
    await handle.signal("answer", ANSWER_CITIES)
    return handle


async def async_result_delivered_early(start: Start) -> Handle:
    """The result arrives while the node is still behind its 1.5 s gate: parked, then applied."""
    plan = plan_of(
        delay("gate", 1500),
        node("job", "start_job", deps=["gate"], job="early"),
        collect("final", ["job"]),
    )
    handle = await start(RunRequest(goal="early", scenario="synthetic", plan=plan))
    early = {"operation_id": f"{handle.id}:job:early", "data": {"done": True}}
    receipt = await _update(handle, "deliver_sync", early)
    assert "parked" in receipt["reason"], receipt
    return handle


async def junk_before_an_early_result(start: Start) -> Handle:
    """A hundred junk early results, then the real one: parked under the delivery rules v2."""
    plan = plan_of(
        delay("gate", 5000),
        node("job", "start_job", deps=["gate"], job="early"),
        collect("final", ["job"]),
    )
    handle = await start(RunRequest(goal="early", scenario="synthetic", plan=plan))
    await asyncio.gather(
        *(handle.signal("deliver", {"operation_id": f"junk-{n}", "data": n}) for n in range(100))
    )
    early = {"operation_id": f"{handle.id}:job:early", "data": {"done": True}}
    receipt = await _update(handle, "deliver_sync", early)
    assert "parked" in receipt["reason"], receipt
    return handle


OPS_KEY = "9lx8TbEC7sBC3ibYeyoJUCp3CHs7HaLxuoimHzWjB5E="
"""A fixed test key, so the recorded run's input is the same each time it is recorded."""


def _gated_job() -> Plan:
    """The job starts after the event `go`: its result can come before its wait opens."""
    return plan_of(
        node("gate", "await_event", event="go"),
        node("job", "start_job", deps=["gate"], job="early"),
        collect("final", ["job"]),
    )


async def _junk(handle: Handle, count: int = 200) -> None:
    await asyncio.gather(
        *(
            handle.signal(
                "deliver", {"operation_id": f"junk-{n}", "data": n, "actor": "system:junk"}
            )
            for n in range(count)
        )
    )


async def junk_after_an_early_result(start: Start) -> Handle:
    """Since 0.10, early deliveries are parked by sender: the real result from system:jobs,
    then 200 junk ones from system:junk, which do not push it out."""
    request = RunRequest(goal="early", scenario="synthetic", plan=_gated_job())
    handle = await start(request)
    await pending_wait(handle, "event-gate")
    early = {"operation_id": f"{handle.id}:job:early", "data": {"done": True}}
    receipt = await _update(handle, "deliver_sync", {**early, "actor": "system:jobs"})
    assert "parked" in receipt["reason"], receipt
    await _junk(handle)
    await handle.signal("deliver", {"event": "go"})
    return handle


async def signed_early_result_after_junk(start: Start) -> Handle:
    """Since 0.10, a run with actor keys parks only signed early deliveries: 200 unsigned junk
    results are refused, the signed real one is parked and taken."""
    keys = {"system:jobs": public_key(OPS_KEY)}
    request = RunRequest(goal="early", scenario="synthetic", plan=_gated_job(), actor_keys=keys)
    handle = await start(request)
    await pending_wait(handle, "event-gate")
    await _junk(handle)
    early = DeliverRequest(
        operation_id=f"{handle.id}:job:early", data={"done": True}, actor="system:jobs"
    )
    early.signature = sign(OPS_KEY, signed_message(handle.id, early))
    receipt = await _update(handle, "deliver_sync", early.model_dump(mode="json"))
    assert "parked" in receipt["reason"], receipt
    await handle.signal("deliver", {"event": "go"})
    return handle


async def late_result_traced_late(start: Start) -> Handle:
    """Since 0.10, a result for a wait that expired is traced as late and not applied."""
    plan = plan_of(
        node("job", "start_job", job="slow"),
        delay("busy", 4000),
        collect("final", ["job", "busy"]),
    )
    timeouts = WaitTimeouts(async_operation=1)
    handle = await start(
        RunRequest(goal="late", scenario="synthetic", plan=plan, wait_timeouts=timeouts)
    )
    await pending_wait(handle, "op-job")
    await _node_status(handle, "job", NodeStatus.FAILED)
    late = {"operation_id": f"{handle.id}:job:slow", "data": {"x": 1}}
    receipt: Payload = await handle.execute_update("deliver_sync", late, result_type=dict)
    assert receipt["late"] and not receipt["accepted"], receipt
    return handle


def _replans_to_a_second_change() -> LLMProvider:
    return Replans(
        plan_of(
            node("change", "side_effect", target="prod"),
            node("other", "side_effect", target="staging"),
            collect("final", ["change", "other"]),
        )
    )


async def approval_covers_a_replan(start: Start) -> Handle:
    """Since 0.10, an approval covers its action across replans: attempt 1's approved change
    to prod is not asked again in attempt 2; the new change to staging is."""
    plan = plan_of(
        node("change", "side_effect", target="prod"),
        node("broken", "fail", deps=["change"], code="INVALID_ARGUMENT"),
        collect("final", ["change", "broken"]),
    )
    handle = await start(RunRequest(goal="change prod", scenario="synthetic", plan=plan))
    await pending_wait(handle, "approve-change")
    await _update(handle, "approve_sync", APPROVE_CHANGE)
    await pending_wait(handle, "approve-other")
    await _update(handle, "approve_sync", {**APPROVE_CHANGE, "wait_id": "approve-other"})
    return handle


async def signed_approval(start: Start) -> Handle:
    """Signed actors: an unsigned approval in the name of human:ops is refused, the signed one
    approves."""
    request = approval_request().model_copy(
        update={"actor_keys": {"human:ops": public_key(OPS_KEY)}}
    )
    handle = await start(request)
    await pending_wait(handle, "approve-change")
    await handle.signal("approve", APPROVE_CHANGE)
    approval = ApprovalRequest.model_validate(APPROVE_CHANGE)
    approval.signature = sign(OPS_KEY, signed_message(handle.id, approval))
    await handle.signal("approve", approval.model_dump(mode="json"))
    return handle


async def cancel_by_another_spelling_refused(start: Start) -> Handle:
    """Since 0.10, a keyed actor is found in any spelling: an unsigned cancel as Human:Ops is
    refused where human:ops has a key (traced), and the signed approval ends the run."""
    request = approval_request().model_copy(
        update={"actor_keys": {"human:ops": public_key(OPS_KEY)}}
    )
    handle = await start(request)
    await pending_wait(handle, "approve-change")
    await handle.signal("cancel", {"reason": "stop it", "actor": "Human:Ops"})
    approval = ApprovalRequest.model_validate(APPROVE_CHANGE)
    approval.signature = sign(OPS_KEY, signed_message(handle.id, approval))
    await handle.signal("approve", approval.model_dump(mode="json"))
    return handle


async def reconcile_with_its_result(start: Start) -> Handle:
    """A side effect whose call timed out: a reconcile without the result is refused, then the
    whole one completes the node (delivery rules v3)."""
    plan = plan_of(node("change", "side_effect", target="prod"), collect("final", ["change"]))
    request = RunRequest(
        goal="reconcile",
        scenario="synthetic",
        plan=plan,
        approve_side_effects=False,
        faults=[FaultSpec.parse("side_effect=TIMEOUT")],
    )
    handle = await start(request)
    await pending_wait(handle, "reconcile-change")
    half = {"wait_id": "reconcile-change", "data": {"outcome": "succeeded"}, "actor": "human:ops"}
    receipt: Payload = await handle.execute_update("deliver_sync", half, result_type=dict)
    assert not receipt["accepted"], receipt
    whole = {**half, "data": {"outcome": "succeeded", "result": {"changed": "prod"}}}
    await _update(handle, "deliver_sync", whole)
    return handle


async def rejected_run_fails(start: Start) -> Handle:
    """The same rejection as approval_rejected_by_update, under the rule that the workflow's
    status is the run's outcome: the workflow ends Failed, the RunResult in its failure."""
    return await approval_rejected_by_update(start)


async def cancel_through_temporal(start: Start) -> Handle:
    """Temporal's own cancellation (as `harness cancel` sends it) while one node waits for
    approval and another runs: the workflow ends Canceled."""
    plan = plan_of(
        node("change", "side_effect", target="prod"),
        delay("long", 600_000),
        collect("final", ["change", "long"]),
    )
    handle = await start(RunRequest(goal="cancel me", scenario="synthetic", plan=plan))
    await pending_wait(handle, "approve-change")
    await _node_status(handle, "long", NodeStatus.RUNNING)
    await handle.cancel(reason="no longer needed (by human:ops)")
    return handle


async def cancel_by_signal(start: Start) -> Handle:
    """Cancelled while one node waits for approval and another runs; a third has finished."""
    plan = plan_of(
        node("change", "side_effect", target="prod"),
        delay("done_first", 10),
        delay("long", 600_000),
        collect("final", ["change", "done_first", "long"]),
    )
    handle = await start(RunRequest(goal="cancel me", scenario="synthetic", plan=plan))
    await pending_wait(handle, "approve-change")
    await _node_status(handle, "done_first", NodeStatus.DONE)
    await _node_status(handle, "long", NodeStatus.RUNNING)
    await handle.signal("cancel", {"reason": "no longer needed", "actor": "human:ops"})
    return handle


async def event_and_timer(start: Start) -> Handle:
    """A sleep timer and an external event (`deploy.done`) delivered by signal."""
    plan = plan_of(
        node("nap", "sleep", seconds=0.2),
        node("signal", "await_event", event="deploy.done"),
        collect("final", ["nap", "signal"]),
    )
    handle = await start(RunRequest(goal="events", scenario="synthetic", plan=plan))
    await pending_wait(handle, "event-signal")
    await handle.signal("deliver", {"event": "deploy.done", "data": {"ok": True}})
    return handle


CASES: tuple[Case, ...] = (
    # the first recordings (kept from before the release folders)
    Case(  # three cities compared: populations, timezones, summaries and a report
        "cities_three", RunPhase.SUCCEEDED, _to_the_end(RunRequest(goal=THREE_CITIES))
    ),
    Case(  # a city without data (Atlantis) fails its node; the run replans without it
        "cities_unknown_city_replans",
        RunPhase.SUCCEEDED,
        _to_the_end(RunRequest(goal="Compare Paris, Atlantis and Tokyo")),
    ),
    Case(  # a diamond DAG: two branches after one node, joined by a collector
        "synthetic_diamond",
        RunPhase.SUCCEEDED,
        _to_the_end(
            RunRequest(
                goal="diamond",
                scenario="synthetic",
                plan=plan_of(
                    delay("a", 10),
                    delay("b", 30, ["a"]),
                    delay("c", 20, ["a"]),
                    collect("d", ["b", "c"]),
                ),
            )
        ),
    ),
    # durable waits, each delivery route
    Case("approval_by_signal", RunPhase.SUCCEEDED, approval_by_signal),
    Case("approval_rejected_by_update", RunPhase.FAILED_EXECUTION, approval_rejected_by_update),
    Case("answer_by_update", RunPhase.SUCCEEDED, answer_by_update),
    Case("answer_by_signal", RunPhase.SUCCEEDED, answer_by_signal),
    Case("async_result_delivered_early", RunPhase.SUCCEEDED, async_result_delivered_early),
    Case("event_and_timer", RunPhase.SUCCEEDED, event_and_timer),
    Case(
        "cancel_by_signal",
        RunPhase.CANCELLED,
        cancel_by_signal,
        settle=HEARTBEAT_EVERY_SECONDS + 1,
    ),
    Case("rejected_run_fails", RunPhase.FAILED_EXECUTION, rejected_run_fails),
    Case(
        "cancel_through_temporal",
        RunPhase.CANCELLED,
        cancel_through_temporal,
        settle=HEARTBEAT_EVERY_SECONDS + 1,
    ),
    # scale, budget, recovery
    Case(  # a 12-node fan-out run in child batches (NodeBatch workflows) of five
        "child_batches",
        RunPhase.SUCCEEDED,
        _to_the_end(
            RunRequest(
                goal="wide",
                scenario="synthetic",
                plan=_fan_out(12),
                max_concurrency=4,
                scale=ScaleOptions(batch_plan_nodes=10, batch_min_ready=5, batch_size=5),
            )
        ),
        children={"child_batches_node_batch": "-attempt-1-batch-1"},
    ),
    Case(  # since 0.9: cheap calls share local activities; one is retried on its own
        "cheap_groups",
        RunPhase.SUCCEEDED,
        _to_the_end(
            RunRequest(
                goal="cheap",
                scenario="synthetic",
                plan=_fan_out(10, "echo"),
                max_concurrency=10,
                scale=ScaleOptions(cheap_group_size=4),
                faults=[FaultSpec(tool="echo", argument_value="3", code=ErrorCode.RATE_LIMITED)],
            )
        ),
    ),
    Case(  # since 0.9: a wide plan's batches start together, and group their cheap calls
        "parallel_cheap_batches",
        RunPhase.SUCCEEDED,
        _to_the_end(
            RunRequest(
                goal="wide",
                scenario="synthetic",
                plan=_fan_out(12, "echo"),
                max_concurrency=6,
                scale=ScaleOptions(
                    batch_plan_nodes=10, batch_min_ready=5, batch_size=5, cheap_group_size=2
                ),
            )
        ),
        children={
            "parallel_cheap_batches_node_batch_1": "-attempt-1-batch-1",
            "parallel_cheap_batches_node_batch_2": "-attempt-1-batch-2",
        },
    ),
    Case(  # since 0.10: a wide plan's batches start one per workflow task (a 20,000-node plan)
        "batches_start_in_turn",
        RunPhase.SUCCEEDED,
        _to_the_end(
            RunRequest(
                goal="wide",
                scenario="synthetic",
                plan=_fan_out(15),
                max_concurrency=6,
                scale=ScaleOptions(batch_plan_nodes=10, batch_min_ready=5, batch_size=5),
            )
        ),
        children={"batches_start_in_turn_node_batch_3": "-attempt-1-batch-3"},
    ),
    Case(  # a tool-call budget of 4 runs out mid-plan
        "budget_exhausted_tool_calls",
        RunPhase.BUDGET_EXHAUSTED,
        _to_the_end(RunRequest(goal=THREE_CITIES, limits=BudgetLimits(max_tool_calls=4))),
    ),
    Case(  # a vague incident goal whose verification fails, so the run replans
        "incidents_verification_replans",
        RunPhase.SUCCEEDED,
        _to_the_end(RunRequest(goal=VAGUE_INCIDENT, scenario="incidents")),
    ),
    # since 0.2.0: the paths behind workflow.patched
    Case(  # a cancel signalled with the start, before the run's first task
        "cancel_before_start",
        RunPhase.CANCELLED,
        _to_the_end(approval_request()),
        start_signal=("cancel", {"reason": "changed my mind", "actor": "human:ops"}),
    ),
    Case(  # a 1 s wall-clock limit ends the run while a node runs for ten minutes
        "wall_clock_limit",
        RunPhase.BUDGET_EXHAUSTED,
        _to_the_end(
            RunRequest(
                goal="slow",
                scenario="synthetic",
                limits=BudgetLimits(max_seconds=1.0),
                plan=plan_of(
                    delay("quick", 10), delay("slow", 600_000), collect("final", ["quick", "slow"])
                ),
            )
        ),
        settle=HEARTBEAT_EVERY_SECONDS + 1,
    ),
    Case("junk_before_an_early_result", RunPhase.SUCCEEDED, junk_before_an_early_result),
    Case("signed_approval", RunPhase.SUCCEEDED, signed_approval),
    Case("reconcile_with_its_result", RunPhase.SUCCEEDED, reconcile_with_its_result),
    # 0.4: a run that creates a task is bound to it: the task's entity and its scope's graph
    Case(
        "run_creates_its_task",
        RunPhase.SUCCEEDED,
        _to_the_end(
            RunRequest(
                goal="open a task",
                scenario="synthetic",
                plan=plan_of(
                    node(
                        "open",
                        "harness_task_manage",
                        action="create",
                        title="follow up",
                        scope=RECORDED_SCOPE,
                    ),
                    delay("work", 5),
                    collect("final", ["open", "work"]),
                ),
            )
        ),
        others={
            "run_creates_its_task_scope_graph": f"{RECORDED_SCOPE}/tasks",
            "run_creates_its_task_task_entity": f"{RECORDED_SCOPE}/task-1",
        },
    ),
    # 0.4: retries carry their start times in heartbeat details, results their timing
    Case(  # a RATE_LIMITED fault retried twice, with each retry's start time
        "transient_fault_retried",
        RunPhase.SUCCEEDED,
        _to_the_end(
            RunRequest(
                goal="Compare Paris and Tokyo",
                faults=[FaultSpec.parse("get_population:Tokyo=RATE_LIMITED*2")],
            )
        ),
    ),
    Case(  # a fatal failure halts the run; nodes waiting for a slot are skipped
        "halt_skips_nodes_waiting_for_a_slot",
        RunPhase.FAILED_EXECUTION,
        _to_the_end(
            RunRequest(
                goal="halt",
                scenario="synthetic",
                max_concurrency=2,
                plan=plan_of(
                    node("change", "side_effect", target="prod"),
                    node("broken", "fail", code="TOOL_EXECUTION_FAILED"),
                    delay("later_a", 10),
                    delay("later_b", 10),
                    collect("final", ["change", "broken", "later_a", "later_b"]),
                ),
            )
        ),
    ),
)


CONTRACT_SCOPE = "recorded-contract"


async def _scope_with_a_rule(client: Client, task_queue: str) -> None:
    """A contract whose tool rule makes `delay` wait for approval, a lesson promoted into a
    rule requiring an acceptance check, and the task the run works on."""
    from durable_harness._client import tasks
    from harness.governance.host_contract import Contract, RuleKind
    from harness.governance.scope_rules import (
        PromoteLesson,
        ProposeLesson,
        ResolveLesson,
        RulesCommand,
        RulesOperation,
        SetContract,
    )
    from harness.governance.task_graph import CreateTask, GraphCommand

    steps: list[tuple[str, RulesOperation]] = [
        ("human:host", SetContract(contract=Contract(approval_required_tools=["delay"]))),
        ("agent:planner", ProposeLesson(fact="f", question="q", proposal="p")),
        ("human:lead", ResolveLesson(lesson_id="lesson-1", accept=True, reason="r")),
        (
            "human:lead",
            PromoteLesson(
                lesson_id="lesson-1", kind=RuleKind.REQUIRE_ACCEPTANCE_CHECK, target="no-such-check"
            ),
        ),
    ]
    for actor, operation in steps:
        command = RulesCommand(scope=CONTRACT_SCOPE, actor=actor, operation=operation)
        assert (await tasks.rules_command(client, task_queue, command)).accepted
    create = GraphCommand(scope=CONTRACT_SCOPE, actor="human:host", operation=CreateTask(title="t"))
    assert (await tasks.scope_command(client, task_queue, create)).accepted


async def _review_and_complete(client: Client, task_queue: str) -> None:
    """A system's approval and a completion, each judged by the contract through an activity;
    the rule's check is registered nowhere, so the completion fails closed."""
    from durable_harness._client import tasks
    from harness.governance.task_commands import Complete, ReviewSubmission, TaskCommand

    for actor, operation in (
        ("system:reviewer", ReviewSubmission(submission_id="sub-1", approve=True)),
        ("human:lead", Complete()),
    ):
        command = TaskCommand(task_id="task-1", actor=actor, operation=operation)
        assert (await tasks.task_command(client, CONTRACT_SCOPE, command)).accepted


async def _approve_work(start: Start) -> Handle:
    handle = await start(
        RunRequest(
            goal="held to a contract",
            scenario="synthetic",
            plan=plan_of(delay("work", 5), collect("final", ["work"])),
            task=TaskBinding(scope=CONTRACT_SCOPE, task_id="task-1"),
        )
    )
    await pending_wait(handle, "approve-work")
    await _update(handle, "approve_sync", {"wait_id": "approve-work", "decision": "approve",
                                           "actor": "human:ops"})  # fmt: skip
    return handle


CASES = (
    *CASES,
    # 0.5: every run reads the contract of its scope (here `default`) in a local activity
    Case(
        "cities_in_the_default_scope",
        RunPhase.SUCCEEDED,
        _to_the_end(RunRequest(goal="Compare Paris and Tokyo")),
    ),
    # 0.5: a run held to its scope's contract; the task's completion judged by an activity
    Case(
        "run_held_to_its_scopes_contract",
        RunPhase.SUCCEEDED,
        _approve_work,
        prepare=_scope_with_a_rule,
        then=_review_and_complete,
        others={
            "run_held_to_its_scopes_contract_scope_graph": f"{CONTRACT_SCOPE}/tasks",
            "run_held_to_its_scopes_contract_task_entity": f"{CONTRACT_SCOPE}/task-1",
        },
    ),
)


async def _a_run_finds_atlantis_missing(client: Client, task_queue: str) -> None:
    """The earlier run whose episode the recorded one remembers."""
    settings = Settings(task_queue=task_queue)
    run_id = new_run_id()
    await start_run(client, settings, RunRequest(goal="Compare Paris, Atlantis and Tokyo"), run_id)
    await result_of(client, client.get_workflow_handle_for(AgentRunWorkflow.run, run_id))


CASES = (
    *CASES,
    # 0.6: the planner remembers what an earlier run found missing (retrieval, then the
    # episode written at the end)
    Case(
        "cities_remembers_what_a_run_found_missing",
        RunPhase.SUCCEEDED,
        _to_the_end(RunRequest(goal="Compare Rome, Atlantis and Vienna", session_id="s-1")),
        prepare=_a_run_finds_atlantis_missing,
    ),
    # 0.6: under budget pressure the replan retrieves less and plans with the fallback model
    Case(
        "replan_under_pressure_uses_the_fallback_model",
        RunPhase.SUCCEEDED,
        _to_the_end(
            RunRequest(
                goal="Compare Paris, Atlantis and Tokyo", limits=BudgetLimits(max_tool_calls=12)
            )
        ),
    ),
)

CASES = (
    *CASES,
    # 0.10, waits: early deliveries parked by sender (and only signed ones in a keyed run), a
    # late result traced as late, an approval that covers its action across a replan
    Case("junk_after_an_early_result", RunPhase.SUCCEEDED, junk_after_an_early_result),
    Case("signed_early_result_after_junk", RunPhase.SUCCEEDED, signed_early_result_after_junk),
    Case("late_result_traced_late", RunPhase.FAILED_EXECUTION, late_result_traced_late),
    Case(
        "approval_covers_a_replan",
        RunPhase.SUCCEEDED,
        approval_covers_a_replan,
        provider=_replans_to_a_second_change,
    ),
)


CASES = (
    *CASES,
    # 0.10: one identity per actor however spelt; a keyed actor's other spelling is refused
    Case(
        "cancel_by_another_spelling_refused",
        RunPhase.SUCCEEDED,
        cancel_by_another_spelling_refused,
    ),
)


def _rate_limited_twice(value: str) -> FaultSpec:
    return FaultSpec(tool="delay", argument_value=value, code=ErrorCode.RATE_LIMITED, times=2)


def _leaves(count: int) -> Plan:
    """`count` independent delays d0, d1 ... (each its own id as the value) and a collector."""
    leaves = [delay(f"d{i}", 5) for i in range(count)]
    return plan_of(*leaves, collect("final", [leaf.id for leaf in leaves]))


CASES = (
    *CASES,
    # 0.10: every tool call reserves its attempts from the tool-call budget; a call that is
    # retried twice leaves fewer calls for the others, and ready calls wait for what finished
    # calls give back
    Case(
        "retries_under_a_tool_call_budget",
        RunPhase.BUDGET_EXHAUSTED,
        _to_the_end(
            RunRequest(
                goal="retries under a budget",
                scenario="synthetic",
                plan=_leaves(6),
                limits=BudgetLimits(max_tool_calls=6),
                faults=[_rate_limited_twice("d1")],
            )
        ),
    ),
    # 0.10: a tool's own attempts, timeout and backoff (synthetic `flaky`: 5 of 20 s, 0.5 s)
    Case(
        "a_tools_own_retry_policy",
        RunPhase.SUCCEEDED,
        _to_the_end(
            RunRequest(
                goal="a flaky service",
                scenario="synthetic",
                plan=plan_of(
                    node("f", "flaky", ms=1, value="f"),
                    delay("plain", 1),
                    collect("end", ["f", "plain"]),
                ),
                limits=BudgetLimits(max_tool_calls=8),
                faults=[FaultSpec(tool="flaky", code=ErrorCode.RATE_LIMITED, times=3)],
            )
        ),
    ),
    # 0.10: child batches get each call's reserved attempts in their input
    Case(
        "child_batches_retries_under_a_budget",
        RunPhase.BUDGET_EXHAUSTED,
        _to_the_end(
            RunRequest(
                goal="wide, under a budget",
                scenario="synthetic",
                plan=_leaves(12),
                max_concurrency=4,
                limits=BudgetLimits(max_tool_calls=10),
                faults=[_rate_limited_twice("d0")],
                scale=ScaleOptions(batch_plan_nodes=10, batch_min_ready=3, batch_size=12),
            )
        ),
        children={
            "child_batches_retries_under_a_budget_node_batch_1": "-attempt-1-batch-1",
            "child_batches_retries_under_a_budget_node_batch_2": "-attempt-1-batch-2",
        },
    ),
)


CASES = (
    *CASES,
    # 0.10: the store is corrupt (overwritten with junk): retrieval fails, the run plans
    # without memory, and its episode is not saved; the trace says both
    Case(
        "memory_unavailable_the_run_plans_without_it",
        RunPhase.SUCCEEDED,
        _to_the_end(RunRequest(goal="Compare Paris and Tokyo")),
        store_fault=corrupted,
    ),
    # 0.10: the store is write-locked by another connection: retrieval works, the episode
    # write fails after its retries, the run's ending is unchanged
    Case(
        "episode_not_saved_the_run_ends_as_it_would",
        RunPhase.SUCCEEDED,
        _to_the_end(RunRequest(goal="Compare Paris and Tokyo")),
        store_fault=locked,
    ),
    # the same, recorded into v0.9.0 with 0.9.0's code (this module and store_faults.py copied
    # into an export of that commit): with 0.9.0's 30 s lock wait the write times out, and the
    # history, whose run succeeded, did not replay with that code (issue 32, F2)
    Case(  # the locked store, with 0.9.0's code: the episode write times out
        "episode_write_timed_out_on_a_locked_store",
        RunPhase.SUCCEEDED,
        _to_the_end(RunRequest(goal="Compare Paris and Tokyo")),
        store_fault=locked,
    ),
)


async def _backing_off(handle: WorkflowHandle[Any, Any]) -> None:
    """Until one of the workflow's tool calls failed and waits out its retry backoff."""
    for _ in range(POLL_TIMES * 10):
        pending = (await handle.describe()).raw_description.pending_activities
        if any(
            activity.attempt >= 2
            and activity.state == PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
            for activity in pending
        ):
            return
        await asyncio.sleep(POLL_SECONDS)
    raise AssertionError(f"{handle.id}: no tool call ever waited out a retry backoff")


CANCEL_SIGNAL_PAYLOAD: Payload = {"reason": "no longer needed", "actor": "human:ops"}


async def cancel_signal_while_retrying(start: Start) -> Handle:
    """The `cancel` signal while a node waits out its retry backoff: the run asks Temporal to
    cancel it and ends Canceled."""
    plan = plan_of(delay("flaky", 600_000), collect("final", ["flaky"]))
    fault = FaultSpec(tool="delay", code=ErrorCode.RATE_LIMITED, times=2)
    request = RunRequest(goal="cancel me", scenario="synthetic", plan=plan, faults=[fault])
    handle = await start(request)
    await _backing_off(handle)
    await handle.signal("cancel", CANCEL_SIGNAL_PAYLOAD)
    return handle


async def cancel_signal_in_child_batches(start: Start) -> Handle:
    """The `cancel` signal while a wide plan's nodes run in child batches."""
    slow = [delay(f"n{i}", 600_000) for i in range(12)]
    request = RunRequest(
        goal="cancel me",
        scenario="synthetic",
        plan=plan_of(*slow, collect("final", [leaf.id for leaf in slow])),
        scale=ScaleOptions(batch_plan_nodes=10, batch_min_ready=5, batch_size=5),
    )
    handle = await start(request)
    for suffix in ("-attempt-1-batch-1", "-attempt-1-batch-2", "-attempt-1-batch-3"):
        child = handle.id + suffix
        for _ in range(POLL_TIMES * 10):
            try:
                pending = await _client_of(handle).get_workflow_handle(child).describe()
            except RPCError:
                await asyncio.sleep(POLL_SECONDS)
                continue
            if pending.raw_description.pending_activities:
                break
            await asyncio.sleep(POLL_SECONDS)
    await handle.signal("cancel", CANCEL_SIGNAL_PAYLOAD)
    return handle


async def cancel_signal_while_cheap_calls_retry(start: Start) -> Handle:
    """The `cancel` signal while cheap calls, grouped two at a time, fail and are retried."""
    cheap = [node(f"e{i}", "echo", value=i) for i in range(20)]
    request = RunRequest(
        goal="cancel me",
        scenario="synthetic",
        plan=plan_of(*cheap, collect("final", [leaf.id for leaf in cheap])),
        max_concurrency=2,
        faults=[FaultSpec(tool="echo", code=ErrorCode.RATE_LIMITED, times=2)],
    )
    handle = await start(request)
    await _node_status(handle, "e0", NodeStatus.DONE)
    await handle.signal("cancel", CANCEL_SIGNAL_PAYLOAD)
    return handle


def _client_of(handle: WorkflowHandle[Any, Any]) -> Client:
    return handle._client


CANCELLED_SETTLE = HEARTBEAT_EVERY_SECONDS + 1

CASES = (
    *CASES,
    # 0.10: the `cancel` signal ends a run Canceled in Temporal too, whatever its nodes do
    Case(
        "cancel_signal_ends_canceled",
        RunPhase.CANCELLED,
        cancel_by_signal,  # one node waiting for approval, one running, one done
        settle=CANCELLED_SETTLE,
    ),
    Case(
        "cancel_signal_while_retrying",
        RunPhase.CANCELLED,
        cancel_signal_while_retrying,
        settle=CANCELLED_SETTLE,
    ),
    Case(
        "cancel_signal_in_child_batches",
        RunPhase.CANCELLED,
        cancel_signal_in_child_batches,
        children={
            "cancel_signal_in_child_batches_node_batch_1": "-attempt-1-batch-1",
            "cancel_signal_in_child_batches_node_batch_2": "-attempt-1-batch-2",
            "cancel_signal_in_child_batches_node_batch_3": "-attempt-1-batch-3",
        },
        settle=CANCELLED_SETTLE,
    ),
    Case(
        "cancel_signal_while_cheap_calls_retry",
        RunPhase.CANCELLED,
        cancel_signal_while_cheap_calls_retry,
        settle=CANCELLED_SETTLE,
    ),
)


CASES = (
    *CASES,
    # 0.10: a local activity's failure is an ActivityError, as a queued one's: a run started
    # by any client with an unknown scenario ends FAILED_VALIDATION with the reason, and a
    # local tool's failure for good fails its node (before, both failed the workflow)
    Case(  # a run started by any client with an unknown scenario
        "unknown_scenario_ends_failed_validation",
        RunPhase.FAILED_VALIDATION,
        _to_the_end(RunRequest(goal="anything", scenario="nope")),
        unchecked=True,
    ),
    Case(  # a local (cheap) tool's non-retryable failure fails its node alone
        "a_local_tool_fails_its_node",
        RunPhase.FAILED_EXECUTION,
        _to_the_end(
            RunRequest(
                goal="echo",
                scenario="synthetic",
                plan=plan_of(
                    node("a", "echo", value="a"),
                    node("b", "echo", value="b"),
                    collect("end", ["a", "b"]),
                ),
                max_replans=0,
                scale=ScaleOptions(cheap_group_size=1),
                faults=[
                    FaultSpec(tool="echo", argument_value="b", code=ErrorCode.INVALID_ARGUMENT)
                ],
            )
        ),
    ),
)


async def signed_answer_in_a_keyed_run(start: Start) -> Handle:
    """Since 0.10, a run with actor keys takes an answer only when a keyed actor signed it: the
    unsigned answer of human:ana is refused in the trace, human:ops's signed one is taken."""
    keys = {"human:ops": public_key(OPS_KEY)}
    handle = await start(RunRequest(goal=NO_CITIES, actor_keys=keys))
    await pending_wait(handle, "question-1")
    await handle.signal(
        "answer", {"wait_id": "question-1", "text": "Lima and Oslo", "actor": "human:ana"}
    )
    answer = AnswerRequest(wait_id="question-1", text="Paris and Tokyo", actor="human:ops")
    answer.signature = sign(OPS_KEY, signed_message(handle.id, answer))
    await handle.signal("answer", answer.model_dump(mode="json"))
    return handle


CASES = (
    *CASES,
    # 0.10, security: a keyed run refuses an unsigned answer and takes a signed one
    Case("signed_answer_in_a_keyed_run", RunPhase.SUCCEEDED, signed_answer_in_a_keyed_run),
)


def _replans_to_the_same_change_started_again() -> LLMProvider:
    return Replans(
        plan_of(node("change", "start_change", job="prod"), collect("final", ["change"]))
    )


async def operation_started_again_takes_its_known_outcome(start: Start) -> Handle:
    """Since 0.10, an operation a replan starts again (the same operation id) takes the outcome
    an earlier attempt was delivered: the change's result is reported once, in attempt 1."""
    plan = plan_of(
        node("change", "start_change", job="prod"),
        node("broken", "fail", deps=["change"], code="INVALID_ARGUMENT"),
        collect("final", ["change", "broken"]),
    )
    handle = await start(
        RunRequest(goal="change prod", scenario="synthetic", plan=plan, max_replans=1)
    )
    await pending_wait(handle, "approve-change")
    await _update(handle, "approve_sync", APPROVE_CHANGE)
    wait = await pending_wait(handle, "op-change")
    reported = {"operation_id": wait.operation_id, "data": {"done": True}, "actor": "system:jobs"}
    await _update(handle, "deliver_sync", reported)
    return handle


KEYED_SCOPE = "recorded-keyed"
LEAD_KEY = "Ahj5Ov1GmYlUx0t3M0gq5mX8m2Xx4n2hJb5W9s1f3YQ="
"""A second fixed test key (human:lead's), like OPS_KEY."""


async def _scope_keyed_after_its_task(client: Client, task_queue: str) -> None:
    """A task created in an unkeyed scope, then the scope's first keys, set by human:ops
    among them and signed with the key being set: the scope tells the task, which reads them."""
    from durable_harness._client import tasks
    from durable_harness._client.signed_actors import sign_command
    from harness.governance.scope_rules import RulesCommand, SetKeys
    from harness.governance.task_graph import CreateTask, GraphCommand

    create = GraphCommand(scope=KEYED_SCOPE, actor="human:host", operation=CreateTask(title="t"))
    assert (await tasks.scope_command(client, task_queue, create)).accepted
    keys = {"human:ops": public_key(OPS_KEY), "human:lead": public_key(LEAD_KEY)}
    command = RulesCommand(
        scope=KEYED_SCOPE,
        actor="human:ops",
        operation=SetKeys(keys=keys),
        idempotency_key="recorded-keys-1",
    )
    signed = sign_command(command, KEYED_SCOPE, OPS_KEY)
    assert (await tasks.rules_command(client, task_queue, signed)).accepted


async def _signed_review_and_complete(client: Client, task_queue: str) -> None:
    """In the keyed scope, human:lead's signed review and human:ops's signed completion."""
    from durable_harness._client import tasks
    from durable_harness._client.signed_actors import sign_command
    from harness.governance.task_commands import Complete, ReviewSubmission, TaskCommand

    for number, (actor, key, operation) in enumerate(
        (
            ("human:lead", LEAD_KEY, ReviewSubmission(submission_id="sub-1", approve=True)),
            ("human:ops", OPS_KEY, Complete()),
        )
    ):
        command = TaskCommand(
            task_id="task-1",
            actor=actor,
            operation=operation,
            idempotency_key=f"recorded-act-{number}",
        )
        signed = sign_command(command, KEYED_SCOPE, key)
        receipt = await tasks.task_command(client, KEYED_SCOPE, signed)
        assert receipt.accepted, receipt.reason


async def _work_on_the_keyed_task(start: Start) -> Handle:
    return await start(
        RunRequest(
            goal="work on a task of a keyed scope",
            scenario="synthetic",
            plan=plan_of(delay("work", 5), collect("final", ["work"])),
            task=TaskBinding(scope=KEYED_SCOPE, task_id="task-1"),
        )
    )


async def early_cancel_by_another_spelling_refused(start: Start) -> Handle:
    """Since 0.10, a signal sent with the start waits for the run's rules: the unsigned cancel
    as Human:Ops is refused where human:ops has a key, and the signed approval ends the run."""
    request = approval_request().model_copy(
        update={"actor_keys": {"human:ops": public_key(OPS_KEY)}}
    )
    handle = await start(request)
    await pending_wait(handle, "approve-change")
    approval = ApprovalRequest.model_validate(APPROVE_CHANGE)
    approval.signature = sign(OPS_KEY, signed_message(handle.id, approval))
    await handle.signal("approve", approval.model_dump(mode="json"))
    return handle


CASES = (
    *CASES,
    # 0.10: a replan's node that starts the same operation again takes its known outcome
    Case(
        "operation_started_again_takes_its_known_outcome",
        RunPhase.SUCCEEDED,
        operation_started_again_takes_its_known_outcome,
        provider=_replans_to_the_same_change_started_again,
    ),
    # 0.10, security: a scope's first keys (trust on first use), told to its task, which reads
    # them; the run's own reports go unsigned, the review and the completion are signed
    Case(
        "signed_governance_in_a_keyed_scope",
        RunPhase.SUCCEEDED,
        _work_on_the_keyed_task,
        prepare=_scope_keyed_after_its_task,
        then=_signed_review_and_complete,
        others={
            "signed_governance_in_a_keyed_scope_scope_graph": f"{KEYED_SCOPE}/tasks",
            "signed_governance_in_a_keyed_scope_task_entity": f"{KEYED_SCOPE}/task-1",
        },
    ),
    # 0.10, security: a cancel sent with the start is judged by the run's rules, not before
    Case(
        "early_cancel_by_another_spelling_refused",
        RunPhase.SUCCEEDED,
        early_cancel_by_another_spelling_refused,
        start_signal=("cancel", {"reason": "stop it", "actor": "Human:Ops"}),
    ),
)


STATUS_SCOPE = "recorded-status"


async def _a_task_of_its_own_scope(client: Client, task_queue: str) -> None:
    from durable_harness._client import tasks
    from harness.governance.task_graph import CreateTask, GraphCommand

    create = GraphCommand(scope=STATUS_SCOPE, actor="human:host", operation=CreateTask(title="t"))
    assert (await tasks.scope_command(client, task_queue, create)).accepted


async def _the_task_cancelled(client: Client, task_queue: str) -> None:
    from durable_harness._client import tasks
    from harness.governance.task_commands import SetStatus, TaskCommand
    from harness.governance.work import TaskStatus

    cancel = TaskCommand(
        task_id="task-1", actor="human:host", operation=SetStatus(status=TaskStatus.CANCELLED)
    )
    assert (await tasks.task_command(client, STATUS_SCOPE, cancel)).accepted


async def _work_on_the_status_task(start: Start) -> Handle:
    return await start(
        RunRequest(
            goal="work on a task, then it is cancelled",
            scenario="synthetic",
            plan=plan_of(delay("work", 5), collect("final", ["work"])),
            task=TaskBinding(scope=STATUS_SCOPE, task_id="task-1"),
        )
    )


CASES = (
    *CASES,
    # 0.10, security: a task_status signal is news only; the scope reads the task's status
    Case(
        "scope_reads_its_tasks_status",
        RunPhase.SUCCEEDED,
        _work_on_the_status_task,
        prepare=_a_task_of_its_own_scope,
        then=_the_task_cancelled,
        settle=3.0,
        others={"scope_reads_its_tasks_status_scope_graph": f"{STATUS_SCOPE}/tasks"},
    ),
)


FENCE_SCOPE = "recorded-fence"
FENCE_HOLDER = "session:recorded"


async def _a_task_to_fence(client: Client, task_queue: str) -> None:
    from durable_harness._client import tasks
    from harness.governance.task_graph import CreateTask, GraphCommand

    create = GraphCommand(scope=FENCE_SCOPE, actor="human:host", operation=CreateTask(title="t"))
    assert (await tasks.scope_command(client, task_queue, create)).accepted


async def _work_on_the_fenced_task(start: Start) -> Handle:
    """Since 0.10, a run's writes carry its binding's fence (epoch 3 of its session): its task
    keeps the mark, refuses a write of epoch 2 (no event) and takes one of epoch 4."""
    from harness.governance.work import WriterFence

    fence = WriterFence(holder=FENCE_HOLDER, epoch=3)
    return await start(
        RunRequest(
            goal="work on a task as epoch 3 of a session",
            scenario="synthetic",
            plan=plan_of(delay("work", 5), collect("final", ["work"])),
            task=TaskBinding(scope=FENCE_SCOPE, task_id="task-1", fence=fence),
        )
    )


async def _a_stale_write_then_a_newer_one(client: Client, task_queue: str) -> None:
    from durable_harness import TaskRefused
    from durable_harness._client import tasks
    from harness.governance.task_commands import RecordFact, TaskCommand
    from harness.governance.work import WriterFence

    def write(epoch: int) -> TaskCommand:
        fact = RecordFact(statement=f"epoch {epoch}", source="recorded", confidence=0.5)
        fence = WriterFence(holder=FENCE_HOLDER, epoch=epoch)
        return TaskCommand(task_id="task-1", actor="agent:recorded", operation=fact, fence=fence)

    try:
        await tasks.task_command(client, FENCE_SCOPE, write(2))
    except TaskRefused as refused:
        assert "stale writer" in str(refused), refused
    else:
        raise AssertionError("a write of epoch 2 after epoch 3 was not refused")
    assert (await tasks.task_command(client, FENCE_SCOPE, write(4))).accepted


CASES = (
    *CASES,
    Case(
        "fenced_writes_to_a_task",
        RunPhase.SUCCEEDED,
        _work_on_the_fenced_task,
        prepare=_a_task_to_fence,
        then=_a_stale_write_then_a_newer_one,
        others={"fenced_writes_to_a_task_task_entity": f"{FENCE_SCOPE}/task-1"},
    ),
)


# -- recording ------------------------------------------------------------------------------


def _upserts(history: WorkflowHistory) -> int:
    kind = EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
    return sum(1 for event in history.events if event.event_type == kind)


def _write_new(path: Path, history: WorkflowHistory) -> None:
    with path.open("x") as out:  # "x": never overwrite, even a file that appeared meanwhile
        out.write(history.to_json())


async def record(client: Client, task_queue: str, case: Case, outdir: Path) -> bool:
    """Run the case and write its histories; False (and nothing written) when it went wrong."""
    settings = Settings(task_queue=task_queue)

    async def start(request: RunRequest) -> Handle:
        run_id = new_run_id()
        if case.start_signal is None and not case.unchecked:
            await start_run(client, settings, request, run_id)
        else:
            name, payload = case.start_signal or (None, None)
            await client.start_workflow(
                AgentRunWorkflow.run,
                request,
                id=run_id,
                task_queue=task_queue,
                search_attributes=search_attributes.initial(request.scenario, "CREATED"),
                start_signal=name,
                start_signal_args=[payload] if name else [],
            )
        return client.get_workflow_handle_for(AgentRunWorkflow.run, run_id)

    try:
        if case.prepare is not None:
            await case.prepare(client, task_queue)
        handle = await case.drive(start)
        result = await result_of(client, handle)
        if case.then is not None:
            await case.then(client, task_queue)
        history = await handle.fetch_history()
        await asyncio.sleep(case.settle)
    except Exception as error:
        print(f"{case.name}: {type(error).__name__}: {error}: NOT written")
        return False
    if result.status is not case.expect:
        print(f"{case.name}: ended {result.status.value}, not {case.expect.value}: NOT written")
        return False
    if _upserts(history) == 0:
        print(f"{case.name}: no search attribute upserts in its history: NOT written")
        return False
    files = {case.name: history}
    for name, suffix in case.children.items():
        files[name] = await client.get_workflow_handle(handle.id + suffix).fetch_history()
    for name, workflow_id in case.others.items():
        files[name] = await client.get_workflow_handle(workflow_id).fetch_history()
    for name, recorded in files.items():
        _write_new(outdir / f"{name}.json", recorded)
        events = len(recorded.events)
        print(f"{name}: {recorded.workflow_id} ({result.status.value}), {events} events")
    return True


def _existing(case: Case, outdir: Path) -> list[Path]:
    names = [case.name, *case.children, *case.others]
    return [outdir / f"{name}.json" for name in names if (outdir / f"{name}.json").exists()]


def _check_checkout() -> None:
    """The workflow code imported must be this checkout's, not another one's editable install."""
    imported = Path(workflows.__file__).resolve().parent.parent
    if imported != CHECKOUT:
        raise SystemExit(
            f"workflows is imported from {imported}, not from {CHECKOUT}: run from {CHECKOUT} "
            f"or set PYTHONPATH={CHECKOUT}"
        )


CASES = (
    *CASES,
    # 0.10: agent nodes: each one's loop is a child workflow (AgentLoop) of model turns and
    # tool calls; one agent reads the other's answer
    Case(
        "agent_nodes",
        RunPhase.SUCCEEDED,
        _to_the_end(two_agents()),
        children={
            "agent_nodes_scout": "-attempt-1-agent-scout",
            "agent_nodes_checker": "-attempt-1-agent-checker",
        },
    ),
    # 0.10: an agent asks its run for more tool calls (a signal each way) and is refused
    Case(
        "agent_asks_for_more_and_stops_at_the_budget",
        RunPhase.BUDGET_EXHAUSTED,
        _to_the_end(one_agent(BudgetLimits(max_tool_calls=2))),
        children={"agent_asks_for_more_and_stops_at_the_budget_scout": "-attempt-1-agent-scout"},
    ),
    # 0.10: an agent's model asks the user; the run opens the wait and the answer (a signal to
    # the run) continues the loop
    Case(
        "agent_asks_the_user",
        RunPhase.SUCCEEDED,
        agent_asks_the_user,
        children={"agent_asks_the_user_scout": "-attempt-1-agent-scout"},
    ),
    # 0.10: a writing tool's model call the provider refuses (a worker model it does not serve)
    # ends the run FAILED_PROVIDER, not FAILED_EXECUTION
    Case(
        "writer_refused_ends_failed_provider",
        RunPhase.FAILED_PROVIDER,
        _to_the_end(RunRequest(goal=THREE_CITIES, models=RunModels(worker="gpt-4.1"))),
    ),
    # 0.10: the planner's model call refused ends the run FAILED_PROVIDER, not FAILED_VALIDATION
    Case(
        "planner_refused_ends_failed_provider",
        RunPhase.FAILED_PROVIDER,
        _to_the_end(RunRequest(goal=THREE_CITIES, models=RunModels(planner="gpt-4.1"))),
    ),
)


async def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.record_histories")
    parser.add_argument(
        "outdir",
        nargs="?",
        type=Path,
        default=release_folder(),
        help="release folder to write to (default: %(default)s)",
    )
    parser.add_argument("--only", nargs="+", metavar="CASE", help="record only these cases")
    args = parser.parse_args(argv)
    _check_checkout()
    outdir: Path = args.outdir
    known = {case.name for case in CASES}
    unknown = sorted(set(args.only or []) - known)
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    cases = [case for case in CASES if args.only is None or case.name in args.only]
    todo = []
    for case in cases:
        existing = _existing(case, outdir)
        if existing:
            print(f"{case.name}: skipped, already recorded: {', '.join(str(p) for p in existing)}")
        else:
            todo.append(case)
    if not todo:
        return 0
    print(f"recording {len(todo)} case(s) into {outdir} with the code in {CHECKOUT}")
    outdir.mkdir(parents=True, exist_ok=True)
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        plugins=[HarnessPlugin()],
        dev_server_log_level="warn",
        search_attributes=search_attributes.ALL_KEYS,
    )
    failed = 0
    async with env:
        for case in todo:  # each case on its own worker and memory: no case remembers another
            task_queue = f"record-{new_run_id()[4:12]}"
            with tempfile.TemporaryDirectory(prefix="record-memory-") as directory:
                path = Path(directory) / "memory.db"
                memory = SqliteMemoryStore(path)
                provider = case.provider() if case.provider is not None else None
                fault = case.store_fault(path) if case.store_fault else nullcontext()
                async with running_worker(env.client, task_queue, provider, memory=memory):
                    with fault:
                        if not await record(env.client, task_queue, case, outdir):
                            failed += 1
                memory.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
