"""DAG bookkeeping for the scheduler: ready set, dependents, remaining deps, skip propagation.

Pure and deterministic: every list comes out in plan order, so workflow code that iterates it
replays the same way.
"""

from __future__ import annotations

import heapq
from enum import StrEnum

from harness.core.plan import Plan


class NodeStatus(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    WAITING = "WAITING"
    UNKNOWN = "UNKNOWN"


FINISHED_STATUSES = frozenset({NodeStatus.DONE, NodeStatus.FAILED, NodeStatus.SKIPPED})


class DagState:
    """Tracks which nodes may start. Assumes a validated plan (unique ids, known deps, no cycle)."""

    def __init__(self, plan: Plan) -> None:
        self._index = {node.id: i for i, node in enumerate(plan.nodes)}
        self._order = plan.node_ids()
        self.deps: dict[str, list[str]] = {node.id: list(node.deps) for node in plan.nodes}
        self.dependents: dict[str, list[str]] = {node_id: [] for node_id in self._order}
        for node in plan.nodes:
            for dep in dict.fromkeys(node.deps):
                self.dependents[dep].append(node.id)
        self.remaining: dict[str, int] = {node.id: len(set(node.deps)) for node in plan.nodes}
        self.status: dict[str, NodeStatus] = dict.fromkeys(self._order, NodeStatus.PENDING)
        self._unfinished = len(self._order)
        self._ready_set: set[int] = {
            self._index[node_id] for node_id in self._order if self.remaining[node_id] == 0
        }
        """The ready nodes (plan positions); `_ready` is a heap of them in plan order, from
        which a node taken out of turn is dropped only when it comes up (so taking one node of
        thousands costs O(1), not a rebuilt heap)."""
        self._ready: list[int] = sorted(self._ready_set)

    def has_ready(self) -> bool:
        return bool(self._ready_set)

    def ready(self) -> list[str]:
        """Nodes whose dependencies are all DONE and that have not started, in plan order."""
        return [self._order[i] for i in sorted(self._ready_set)]

    def ready_count(self) -> int:
        return len(self._ready_set)

    def is_ready(self, node_id: str) -> bool:
        return self._index[node_id] in self._ready_set

    def take(self, node_id: str) -> None:
        """Mark one specific ready node RUNNING (for callers that pick nodes themselves)."""
        self._discard_ready(node_id)
        self._set(node_id, NodeStatus.RUNNING)

    def pop_ready(self, limit: int) -> list[str]:
        """Take up to `limit` ready nodes (plan order) and mark them RUNNING."""
        taken: list[str] = []
        while self._ready_set and len(taken) < limit:
            index = heapq.heappop(self._ready)
            if index not in self._ready_set:
                continue  # taken out of turn earlier
            self._ready_set.remove(index)
            node_id = self._order[index]
            self._set(node_id, NodeStatus.RUNNING)
            taken.append(node_id)
        return taken

    def complete(self, node_id: str) -> list[str]:
        """Mark `node_id` DONE; return the dependents that became ready."""
        self._set(node_id, NodeStatus.DONE)
        newly_ready = []
        for dependent in self.dependents[node_id]:
            self.remaining[dependent] -= 1
            if self.remaining[dependent] == 0 and self.status[dependent] is NodeStatus.PENDING:
                heapq.heappush(self._ready, self._index[dependent])
                self._ready_set.add(self._index[dependent])
                newly_ready.append(dependent)
        return newly_ready

    def fail(self, node_id: str) -> list[str]:
        """Mark `node_id` FAILED; return every transitive dependent now SKIPPED, in plan order."""
        self._set(node_id, NodeStatus.FAILED)
        return self._skip_dependents_of(node_id)

    def skip(self, node_id: str) -> list[str]:
        """Mark a pending or running `node_id` SKIPPED; return it and its skipped dependents."""
        self._discard_ready(node_id)
        self._set(node_id, NodeStatus.SKIPPED)
        return [node_id, *self._skip_dependents_of(node_id)]

    def is_finished(self) -> bool:
        return self._unfinished == 0

    def _set(self, node_id: str, status: NodeStatus) -> None:
        was_finished = self.status[node_id] in FINISHED_STATUSES
        self.status[node_id] = status
        self._unfinished += int(was_finished) - int(status in FINISHED_STATUSES)

    def running(self) -> list[str]:
        return [n for n in self._order if self.status[n] is NodeStatus.RUNNING]

    def count(self, status: NodeStatus) -> int:
        return sum(1 for value in self.status.values() if value is status)

    def _skip_dependents_of(self, node_id: str) -> list[str]:
        skipped: set[str] = set()
        frontier = list(self.dependents[node_id])
        while frontier:
            dependent = frontier.pop()
            if self.status[dependent] is not NodeStatus.PENDING:
                continue
            self._discard_ready(dependent)
            self._set(dependent, NodeStatus.SKIPPED)
            skipped.add(dependent)
            frontier.extend(self.dependents[dependent])
        return sorted(skipped, key=self._index.__getitem__)

    def _discard_ready(self, node_id: str) -> None:
        self._ready_set.discard(self._index[node_id])


def find_cycles(plan: Plan) -> list[list[str]]:
    """One concrete cycle per strongly connected component with more than one node.

    Self-dependencies are reported separately by the validator; unknown deps are ignored here.
    """
    known = {node.id for node in plan.nodes}
    edges = {node.id: [d for d in node.deps if d in known and d != node.id] for node in plan.nodes}
    return [_cycle_in(component, edges) for component in _strong_components(plan, edges)]


def _strong_components(plan: Plan, edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative so a deep chain cannot overflow the stack."""
    order = {node.id: i for i, node in enumerate(plan.nodes)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in order:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if child < len(edges[node]):
                work.append((node, child + 1))
                nxt = edges[node][child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component, key=order.__getitem__))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(components, key=lambda c: order[c[0]])


def _cycle_in(component: list[str], edges: dict[str, list[str]]) -> list[str]:
    members = set(component)
    path: list[str] = []
    node = component[0]
    while node not in path:
        path.append(node)
        node = next(dep for dep in edges[node] if dep in members)
    return path[path.index(node) :]
