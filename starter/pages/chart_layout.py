"""What the run report draws, as plain numbers: node spans, pressure steps, token bars, plan layers.

No matplotlib here, so every rule about the data (fallbacks, depth, ordering) is tested cheaply.
The plan's layered layout is our own rather than graphviz or networkx: a plan is a DAG whose
layers are its depths, a few dozen lines place it, and neither a system binary (graphviz) nor
a second graph library is worth installing for that.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from harness.core.plan import Plan
from harness.core.usage import TokenUsage
from harness.engine.dag import NodeStatus
from harness.engine.run import NodeOutcome
from harness.engine.trace import AgentRole, TraceEvent, TraceKind

ROLE_ORDER: tuple[str, ...] = tuple(role.value for role in AgentRole)
"""The run's roles (planner, worker, critic, agent) in the order charts and tables list them,
before any other name usage or the trace may carry."""
UNKNOWN_ROLE = "unknown"


@dataclass(frozen=True)
class NodeSpan:
    """One Gantt row; `start` is None for a node drawn as a thin marker at `end` (or not at all)."""

    node_id: str
    tool: str
    role: str
    status: NodeStatus
    start: float | None
    end: float | None
    attempts: int

    @property
    def label(self) -> str:
        return f"{self.node_id} {self.tool}"


@dataclass(frozen=True)
class RoleTokens:
    """`unsplit` holds tokens whose input/output split is unknown (read from the trace)."""

    role: str
    input_tokens: int = 0
    output_tokens: int = 0
    unsplit: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens + self.unsplit


@dataclass(frozen=True)
class PlanLayout:
    """Per node (depth, y): depth is the longest path from a root; y centres each layer on 0.

    `routes` holds, per edge that skips layers, the points it passes in each layer between:
    a row of its own there, so the edge crosses no box on its way."""

    positions: dict[str, tuple[int, float]]
    edges: list[tuple[str, str]]
    depth_count: int
    widest_layer: int
    routes: dict[tuple[str, str], list[tuple[int, float]]] = field(default_factory=dict)


MAX_WAYPOINTS = 5000
"""Beyond this many rows for edges that skip layers, such edges are drawn straight."""


def run_origin(trace: list[TraceEvent], nodes: list[NodeOutcome]) -> datetime | None:
    """Time zero of every chart: the first trace event, else the earliest node start."""
    if trace:
        return min(event.at for event in trace)
    starts = [node.started_at for node in nodes if node.started_at is not None]
    return min(starts, default=None)


def seconds_since(origin: datetime | None, moment: datetime | None) -> float | None:
    if origin is None or moment is None:
        return None
    return (moment - origin).total_seconds()


def node_spans(trace: list[TraceEvent], nodes: list[NodeOutcome]) -> list[NodeSpan]:
    """A span per node, timed from its last node.start in the trace, else from the outcome."""
    origin = run_origin(trace, nodes)
    started: dict[str, datetime] = {}
    ended: dict[str, datetime] = {}
    for event in trace:
        if event.node_id is None:
            continue
        if event.kind is TraceKind.NODE_START:
            started[event.node_id] = event.at
            ended.pop(event.node_id, None)
        elif event.kind in (TraceKind.NODE_FINISH, TraceKind.NODE_FAIL):
            ended[event.node_id] = event.at
    spans = []
    for node in nodes:
        start = None if node.reused else started.get(node.id, node.started_at)
        spans.append(
            NodeSpan(
                node_id=node.id,
                tool=node.tool,
                role=node.tool_role,
                status=node.status,
                start=seconds_since(origin, start),
                end=seconds_since(origin, ended.get(node.id, node.finished_at)),
                attempts=node.attempts,
            )
        )
    return spans


def pressure_steps(trace: list[TraceEvent]) -> tuple[list[float], list[float]]:
    """(seconds since start, pressure) per trace event, in time order."""
    origin = run_origin(trace, [])
    ordered = sorted(trace, key=lambda event: event.at)
    seconds = [seconds_since(origin, event.at) or 0.0 for event in ordered]
    return seconds, [event.pressure for event in ordered]


def tokens_by_role(
    usage_by_role: dict[str, TokenUsage], trace: list[TraceEvent]
) -> list[RoleTokens]:
    """Tokens per role from the run's usage; from the trace's `tokens` when that is empty."""
    if usage_by_role:
        rows = [
            RoleTokens(role, usage.input_tokens, usage.output_tokens)
            for role, usage in usage_by_role.items()
        ]
    else:
        totals: dict[str, int] = {}
        for event in trace:
            if event.tokens:
                role = event.role or UNKNOWN_ROLE
                totals[role] = totals.get(role, 0) + event.tokens
        rows = [RoleTokens(role, unsplit=tokens) for role, tokens in totals.items()]
    return sorted((row for row in rows if row.total), key=lambda row: _role_rank(row.role))


def _role_rank(role: str) -> tuple[int, str]:
    return (ROLE_ORDER.index(role), "") if role in ROLE_ORDER else (len(ROLE_ORDER), role)


def plan_layout(plan: Plan) -> PlanLayout:
    """Layers by longest path from a root; nodes on a cycle (an unvalidated plan) go last.

    An edge that skips layers gets a waypoint, a row of its own, in each layer it passes (the
    layered drawing of Sugiyama et al.), so it never runs through a box."""
    ids = list(dict.fromkeys(plan.node_ids()))
    known = set(ids)
    deps = {node.id: [d for d in dict.fromkeys(node.deps) if d in known] for node in plan.nodes}
    depth = _longest_path_depths(ids, deps)
    last = max(depth.values(), default=-1) + 1
    layer_of = {node_id: depth.get(node_id, last) for node_id in ids}
    edges = [(dep, node_id) for node_id in ids for dep in deps[node_id]]
    skips = sum(max(layer_of[b] - layer_of[a] - 1, 0) for a, b in edges)
    chains = _waypoints(edges, layer_of) if skips <= MAX_WAYPOINTS else {}
    parents: dict[str, list[str]] = {node_id: [] for node_id in ids}
    layers: dict[int, list[str]] = {}
    for node_id in ids:
        layers.setdefault(layer_of[node_id], []).append(node_id)
    for (dep, _), chain in chains.items():
        for index, (layer, waypoint) in enumerate(chain):
            layers.setdefault(layer, []).append(waypoint)
            parents[waypoint] = [chain[index - 1][1] if index else dep]
    for dep, node_id in edges:
        route = chains.get((dep, node_id))
        parents[node_id].append(route[-1][1] if route else dep)
    rows: dict[str, tuple[int, float]] = {}
    for layer in sorted(layers):
        # Rows follow the mean height of each member's parents, so fewer edges cross.
        members = sorted(layers[layer], key=lambda member: -_mean_y(parents[member], rows))
        for row, member in enumerate(members):
            rows[member] = (layer, (len(members) - 1) / 2 - row)
    positions = {node_id: rows[node_id] for node_id in ids}
    routes = {edge: [rows[waypoint] for _, waypoint in chain] for edge, chain in chains.items()}
    widest = max((len(members) for members in layers.values()), default=0)
    return PlanLayout(positions, edges, len(layers), widest, routes)


def _waypoints(
    edges: list[tuple[str, str]], layer_of: dict[str, int]
) -> dict[tuple[str, str], list[tuple[int, str]]]:
    """Per edge that skips layers, (layer, waypoint key) for each layer it passes; a key holds
    a NUL, which no node id of a drawn plan needs, so it never names a node."""
    chains: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for dep, node_id in edges:
        between = range(layer_of[dep] + 1, layer_of[node_id])
        if between:
            chains[(dep, node_id)] = [(layer, f"{dep}\0{node_id}\0{layer}") for layer in between]
    return chains


def _mean_y(node_ids: list[str], positions: dict[str, tuple[int, float]]) -> float:
    heights = [positions[node_id][1] for node_id in node_ids if node_id in positions]
    return sum(heights) / len(heights) if heights else 0.0


def _longest_path_depths(ids: Iterable[str], deps: dict[str, list[str]]) -> dict[str, int]:
    """Kahn's order, so a chain of any length needs no recursion; cyclic nodes are left out."""
    waiting = {node_id: len(deps[node_id]) for node_id in ids}
    dependents: dict[str, list[str]] = {node_id: [] for node_id in waiting}
    for node_id, node_deps in deps.items():
        for dep in node_deps:
            dependents[dep].append(node_id)
    depth = {node_id: 0 for node_id, count in waiting.items() if count == 0}
    ready = list(depth)
    while ready:
        current = ready.pop()
        for dependent in dependents[current]:
            depth[dependent] = max(depth.get(dependent, 0), depth[current] + 1)
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                ready.append(dependent)
    return {node_id: d for node_id, d in depth.items() if waiting[node_id] == 0}
