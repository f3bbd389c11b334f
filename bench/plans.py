"""Benchmark DAGs: one description, turned into a harness Plan, naive levels or walker levels."""

from __future__ import annotations

from dataclasses import dataclass
from graphlib import TopologicalSorter

from harness.core.plan import ArgumentBinding, Plan, PlanNode

SKEW_FIRST_MS = (120, 180, 700, 900)
SKEW_SECOND_MS = (800, 100, 100, 100)
SKEW_SUMMARY_MS = 100
FINAL_BINDS = 8  # the final node binds a handful of results; deps alone define the order
# At most this many activities in flight per run, harness and naive alike: the server fails a
# workflow task that would leave more than 2,000 activities pending in one run.
IN_FLIGHT_CAP = 1000


@dataclass(frozen=True)
class DagNode:
    id: str
    ms: int
    deps: tuple[str, ...] = ()
    binds: tuple[str, ...] = ()
    final: bool = False
    tool: str = "delay"  # or "echo": no sleep, a local activity in the harness


@dataclass(frozen=True)
class BenchDag:
    """Nodes in topological order; the last one is the final (collect) node."""

    name: str
    nodes: tuple[DagNode, ...]

    @property
    def size(self) -> int:
        return len(self.nodes)

    def critical_path_ms(self) -> int:
        finish: dict[str, int] = {}
        for node in self.nodes:
            finish[node.id] = node.ms + max((finish[dep] for dep in node.deps), default=0)
        return max(finish.values(), default=0)

    def levels(self) -> list[list[DagNode]]:
        depth: dict[str, int] = {}
        levels: list[list[DagNode]] = []
        for node in self.nodes:
            depth[node.id] = 1 + max((depth[dep] for dep in node.deps), default=-1)
            if depth[node.id] == len(levels):
                levels.append([])
            levels[depth[node.id]].append(node)
        return levels

    def ms_by_node(self) -> dict[str, int]:
        return {node.id: node.ms for node in self.nodes}

    def to_plan(self) -> Plan:
        """`delay` or `echo` nodes (one bind feeds `value`) and a final zero-latency `collect`."""
        return Plan(nodes=[_plan_node(node) for node in self.nodes])


def _plan_node(node: DagNode) -> PlanNode:
    if node.final:
        if node.ms:
            raise ValueError(f"{node.id}: the final `collect` node cannot take time")
        arguments = [ArgumentBinding.node_result("inputs", dep) for dep in node.binds]
        return PlanNode(id=node.id, tool="collect", arguments=arguments, deps=list(node.deps))
    if len(node.binds) > 1:
        raise ValueError(f"{node.id}: a `{node.tool}` node binds at most one result")
    value = (
        ArgumentBinding.node_result("value", node.binds[0])
        if node.binds
        else ArgumentBinding.literal("value", node.id)
    )
    if node.tool == "echo":
        if node.ms:
            raise ValueError(f"{node.id}: an `echo` node cannot take time")
        return PlanNode(id=node.id, tool="echo", arguments=[value], deps=list(node.deps))
    if node.tool != "delay":
        raise ValueError(f"{node.id}: unknown bench tool {node.tool!r}")
    arguments = [ArgumentBinding.literal("ms", node.ms), value]
    return PlanNode(id=node.id, tool="delay", arguments=arguments, deps=list(node.deps))


def _final(deps: list[str]) -> DagNode:
    return DagNode("final", 0, deps=tuple(deps), binds=tuple(deps[:FINAL_BINDS]), final=True)


def skew() -> BenchDag:
    """Four two-step branches, a 100 ms summarizer, then the zero-latency final collect."""
    nodes: list[DagNode] = []
    for index, (first, second) in enumerate(zip(SKEW_FIRST_MS, SKEW_SECOND_MS, strict=True)):
        nodes.append(DagNode(f"a{index}", first))
        nodes.append(DagNode(f"b{index}", second, deps=(f"a{index}",), binds=(f"a{index}",)))
    seconds = [f"b{index}" for index in range(len(SKEW_FIRST_MS))]
    nodes.append(DagNode("summarize", SKEW_SUMMARY_MS, deps=tuple(seconds)))
    nodes.append(_final(["summarize"]))
    return BenchDag("skew", tuple(nodes))


def fanout(count: int, ms: int = 0, tool: str = "delay") -> BenchDag:
    """`count` independent nodes, then the final node that depends on all of them.

    With `tool="echo"` the harness runs each leaf as a local activity (each echoes its own id);
    the naive workflow still runs one regular activity per node.
    """
    leaves = [DagNode(f"n{index}", ms, tool=tool) for index in range(count)]
    name = f"fanout{count}" if tool == "delay" else f"fanout{count}-{tool}"
    return BenchDag(name, (*leaves, _final([leaf.id for leaf in leaves])))


def chain(steps: int, ms: int = 0) -> BenchDag:
    """`steps` nodes, each depending on the one before, then the final node."""
    nodes = [
        DagNode(f"c{index}", ms, deps=(f"c{index - 1}",) if index else ()) for index in range(steps)
    ]
    return BenchDag(f"chain{steps}", (*nodes, _final([nodes[-1].id])))


def mirror(plan: Plan, ms_by_node: dict[str, int]) -> BenchDag:
    """A harness run's activities as a DAG: catalog -> plan -> the plan's nodes -> check -> judge.

    For baselines of whole runs: same activity count and shape, same tool latencies.
    """
    nodes = [DagNode("catalog", 0), DagNode("plan", 0, deps=("catalog",))]
    by_id = {node.id: node for node in plan.nodes}
    order = TopologicalSorter({node.id: node.deps for node in plan.nodes}).static_order()
    for node_id in order:
        deps = tuple(by_id[node_id].deps) or ("plan",)
        nodes.append(DagNode(node_id, ms_by_node.get(node_id, 0), deps=deps))
    last = plan.nodes[-1].id
    nodes.append(DagNode("check", 0, deps=(last,)))
    nodes.append(DagNode("judge", 0, deps=("check",)))
    return BenchDag("mirror", tuple(nodes))
