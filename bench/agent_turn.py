"""`python -m bench agent-turn [K]`: K agent nodes one after another (then the final node), each
a loop of the offline provider's agent calling the synthetic `delay(ms=0)` tool, against a
minimal hand-written agent loop doing the same turns (bench.naive_agent).

The offline agent calls its one tool in its first turn and answers in its second: each agent
is two model turns and one tool call, on both sides. The figure is wall time per turn, client
side, as a multiple of the baseline's; the agent nodes' own span per turn (node started ->
finished, from the RunResult: the child workflow's start, its turns, its progress signals)
is set beside the baseline workflow's own wall time per turn.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from bench.dagrun import Probe, Side, harness_side
from bench.drive import run_workflow, synthetic_request
from bench.env import (
    HARNESS_WORKER,
    NAIVE_WORKER,
    BenchError,
    Server,
    WorkerProcess,
    dev_server,
    log,
    worker_process,
)
from bench.history import chain_histories
from bench.naive_agent import NAIVE_AGENT_WORKFLOW, NaiveAgentRequest, NaiveAgentResult
from bench.report import Measurement, measure
from harness.catalog.agent_turns import OfferedTool
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.agent_node import AgentResult
from harness.engine.run import RunResult
from scenarios.synthetic import SCENARIO

DEFAULT_AGENTS = 10
TARGET_RATIO = 1.2  # an agent-loop turn, as a multiple of a bare model call plus a bare tool call
GOAL = "Sleep for no time.\nms: 0"
TOOL = "delay"
MAX_TURNS = 4


def agent_plan(agents: int) -> Plan:
    """`agents` agent nodes, each after the one before, then the final `collect`."""
    nodes = [
        PlanNode(
            id=f"agent{index}",
            tool="agent",
            arguments=[
                ArgumentBinding.literal("goal", GOAL),
                ArgumentBinding.literal("tools", [TOOL]),
                ArgumentBinding.literal("max_turns", MAX_TURNS),
            ],
            deps=[f"agent{index - 1}"] if index else [],
        )
        for index in range(agents)
    ]
    last = nodes[-1].id
    final = PlanNode(
        id="final",
        tool="collect",
        arguments=[ArgumentBinding.node_result("inputs", last)],
        deps=[last],
    )
    return Plan(nodes=[*nodes, final])


def naive_agent_request(agents: int) -> NaiveAgentRequest:
    spec = next(tool.spec for tool in SCENARIO.tools if tool.spec.name == TOOL)
    return NaiveAgentRequest(
        agents=agents, goal=GOAL, tools=[OfferedTool.of(spec)], max_turns=MAX_TURNS
    )


@dataclass
class AgentSide:
    side: Side
    turns: int = 0
    tool_calls: int = 0
    span_s: float | None = None  # the agent nodes' own span (harness), the workflow's (naive)
    events: int = 0


@dataclass
class AgentComparison:
    agents: int
    harness: AgentSide
    naive: AgentSide
    repeat: int
    spreads: dict[str, list[float]] = field(default_factory=dict)


async def run(agents: int, repeat: int = 1) -> list[Measurement]:
    cmp = await compare(agents, repeat)
    return rows(cmp)


async def compare(agents: int, repeat: int) -> AgentComparison:
    timeout = 120 + 2.0 * agents
    naive_runs: list[AgentSide] = []
    harness_runs: list[AgentSide] = []
    async with (
        dev_server() as server,
        worker_process(server, NAIVE_WORKER, "naive") as naive_worker,
        worker_process(server, HARNESS_WORKER, "harness") as harness_worker,
    ):
        client = server.client
        for label, count in (("warmup", 1), *((f"agents{agents}", agents),) * repeat):
            log(f"{label}: naive agent loop, {count} agent(s)")
            side = Side("naive_temporal")
            probe = Probe(server, naive_worker)
            result, timed = await run_workflow(
                client,
                NAIVE_AGENT_WORKFLOW,
                naive_worker.task_queue,
                naive_agent_request(count),
                NaiveAgentResult,
                timeout=timeout,
                label=label,
            )
            probe.fill(side)
            side.timed, side.client_s, side.workflow_s = timed, timed.seconds, result.wall_seconds
            naive = AgentSide(side, result.turns, result.tool_calls, result.wall_seconds)
            log(f"{label}: harness agent nodes, {count} agent(s)")
            harness = await _harness(server, harness_worker, count, timeout, label)
            if label != "warmup":
                naive_runs.append(naive)
                harness_runs.append(harness)
            if harness.side.error:
                break
        naive, harness = _median(naive_runs), _median(harness_runs)
        for one, worker in ((naive, naive_worker), (harness, harness_worker)):
            one.side.idle_rss_mb, one.side.peak_rss_mb = worker.idle_rss_mb, worker.peak_rss_mb()
            if one.side.timed is not None:
                histories = await chain_histories(
                    client, one.side.timed.workflow_id, one.side.timed.run_id
                )
                one.events = sum(len(history.events) for history in histories)
    spreads = {
        "harness": [one.side.client_s or 0.0 for one in harness_runs],
        "naive": [one.side.client_s or 0.0 for one in naive_runs],
    }
    return AgentComparison(agents, harness, naive, len(harness_runs), spreads)


async def _harness(
    server: Server, worker: WorkerProcess, agents: int, timeout: float, label: str
) -> AgentSide:
    request = synthetic_request(agent_plan(agents), 1)
    side, result = await harness_side(server, worker, request, timeout, label)
    if result is None:
        return AgentSide(side)
    turns, calls, span = _agents(result)
    return AgentSide(side, turns, calls, span)


def _agents(result: RunResult) -> tuple[int, int, float]:
    """Turns and tool calls of the run's agent nodes, and the sum of their spans."""
    turns = calls = 0
    span = 0.0
    for node in result.nodes:
        if not node.id.startswith("agent") or node.result is None:
            continue
        agent = AgentResult.model_validate(node.result)
        turns, calls = turns + agent.turns, calls + len(agent.tool_calls)
        if node.started_at and node.finished_at:
            span += (node.finished_at - node.started_at).total_seconds()
    return turns, calls, span


def _median(sides: list[AgentSide]) -> AgentSide:
    if not sides:
        raise BenchError("no agent-turn run was measured")
    timed = sorted(sides, key=lambda one: one.side.client_s or 0.0)
    return timed[(len(timed) - 1) // 2]


def rows(cmp: AgentComparison) -> list[Measurement]:
    bench = f"agent-turn{cmp.agents}"
    h, n = cmp.harness, cmp.naive

    def per_turn_ms(seconds: float | None, one: AgentSide) -> float | None:
        return None if seconds is None or not one.turns else seconds * 1000 / one.turns

    harness_turn = per_turn_ms(h.side.client_s, h)
    naive_turn = per_turn_ms(n.side.client_s, n)
    same = (h.turns, h.tool_calls) == (n.turns, n.tool_calls)
    spread = ", ".join(
        f"{name} {min(walls):.3f}-{max(walls):.3f} s (median {statistics.median(walls):.3f})"
        for name, walls in cmp.spreads.items()
        if walls
    )
    note = h.side.error or (
        None
        if same
        else f"turns/calls differ: harness {h.turns}/{h.tool_calls}, naive {n.turns}/{n.tool_calls}"
    )
    return [
        measure(bench, "repeats", cmp.repeat, "runs", note=f"wall min-max: {spread}"),
        measure(bench, "turns", h.turns, "turns", baseline=n.turns, vs="naive_temporal.turns"),
        measure(
            bench,
            "tool_calls",
            h.tool_calls,
            "calls",
            baseline=n.tool_calls,
            vs="naive_temporal.tool_calls",
        ),
        measure(
            bench,
            "harness.wall_ms_per_turn",
            harness_turn,
            "ms",
            baseline=naive_turn,
            vs="naive_temporal.wall_ms_per_turn",
            target=f"ratio <= {TARGET_RATIO:g}",
            met=None
            if harness_turn is None or naive_turn is None or not same
            else harness_turn <= TARGET_RATIO * naive_turn,
            note=note,
        ),
        measure(
            bench,
            "harness.agent_span_ms_per_turn",
            per_turn_ms(h.span_s, h),
            "ms",
            baseline=per_turn_ms(n.span_s, n),
            vs="naive_temporal.workflow_ms_per_turn",
            note="agent nodes started -> finished (child workflow, turns, calls, progress "
            "signals) against the baseline workflow's own wall time",
        ),
        measure(
            bench,
            "harness.events_per_turn",
            h.events / h.turns if h.turns else None,
            "events",
            baseline=n.events / n.turns if n.turns else None,
            vs="naive_temporal.events_per_turn",
        ),
        measure(
            bench,
            "harness.worker_cpu_ms_per_turn",
            per_turn_ms(h.side.worker_cpu_s, h),
            "ms",
            baseline=per_turn_ms(n.side.worker_cpu_s, n),
            vs="naive_temporal.worker_cpu_ms_per_turn",
        ),
        measure(
            bench,
            "harness.server_cpu_ms_per_turn",
            per_turn_ms(h.side.server_cpu_s, h),
            "ms",
            baseline=per_turn_ms(n.side.server_cpu_s, n),
            vs="naive_temporal.server_cpu_ms_per_turn",
        ),
        *(
            measure(
                bench,
                f"harness.worker_{kind}_cpu_ms_per_turn",
                per_turn_ms(h.side.thread_cpu_s.get(kind), h),
                "ms",
                baseline=per_turn_ms(n.side.thread_cpu_s.get(kind), n),
                vs=f"naive_temporal.worker_{kind}_cpu_ms_per_turn",
            )
            for kind in ("loop", "core", "workflow")
        ),
    ]
