"""The run's memory: what the planner is given to remember, and the episode the run leaves.

Retrieval is an activity (what the planner saw lands in history); the context is assembled
here from what it returned, under the run's character budget, and its cut is traced as
`memory.retrieve`. Under budget pressure (from 0.7) retrieval goes shallower. When the run ends,
whatever the ending, its episode is written through an activity; a store that cannot be
reached costs the run nothing but the memory.

Since MEMORY_DEGRADES_PATCH a failing store (down, corrupt, locked, slow) costs a run at most
MEMORY_PATIENCE per call: a run whose retrieval failed plans without memory for the rest of
the run, and a run whose episode was not written says so in its trace (`memory.record`), its
ending unchanged.
"""

from __future__ import annotations

from pydantic import JsonValue
from temporalio import workflow
from temporalio.exceptions import ActivityError

from harness.core.plan import Plan
from harness.core.redaction import redact
from harness.engine.budget import Degradation
from harness.engine.episodes import episode_of
from harness.engine.run import RunRequest, RunResult
from harness.engine.run_state import RunState
from harness.engine.trace import AgentRole, TraceKind, TraceLog
from harness.governance.host_contract import DEFAULT_SCOPE
from harness.recall.memory_context import PART_CHARS, MemoryContext, WorkingMemory, assemble
from harness.recall.memory_records import DEFAULT_DEPTH, SHALLOW_DEPTH, MemoryQuery
from workflows.activity_calls import stores
from workflows.activity_calls.failures import ActivityFailure, raise_if_cancelled

REASON_CHARS = 300
"""A store failure's reason in the trace: its first line, at most this long."""


def run_scope(request: RunRequest) -> str:
    """The scope a run works in: its task's, the one it names, or the default."""
    return request.task.scope if request.task else (request.scope or DEFAULT_SCOPE)


class RunMemory:
    def __init__(
        self, state: RunState, trace: TraceLog, *, local: bool = False, bounded: bool = False
    ) -> None:
        """`local`: retrieve and record in the run's own worker (since the patch). `bounded`:
        memory calls within MEMORY_PATIENCE, and store failures traced (since
        MEMORY_DEGRADES_PATCH)."""
        self._state = state
        self._trace = trace
        self._local = local
        self._bounded = bounded
        self._unavailable = False
        """A retrieval of this run failed: its later planning attempts do without (bounded)."""
        self._remembered: dict[str, str] = {}
        """What the planner was told had no data, and which memory said so."""

    @property
    def enabled(self) -> bool:
        return self._state.request.memory.enabled

    async def context(self, degradation: Degradation) -> MemoryContext | None:
        """The planner's memory context for this attempt; None when retrieval failed (the
        planner plans without memory, and the trace says why)."""
        state, request = self._state, self._state.request
        if self._unavailable:
            return None  # the trace said so when it failed
        depth = DEFAULT_DEPTH if degradation is Degradation.FULL else SHALLOW_DEPTH
        query = MemoryQuery(
            run_id=state.run_id,
            goal=request.goal,
            scenario=request.scenario,
            scope=run_scope(request),
            session_id=request.session_id,
            depth=depth,
        )
        try:
            found = await stores.retrieve_memories(query, local=self._local, bounded=self._bounded)
        except ActivityError as error:
            raise_if_cancelled(error)
            reason = ActivityFailure(error, 3).message
            said = f"planning without memory: {reason}"
            if self._bounded:
                self._unavailable = True
                said = f"planning without memory for the rest of the run: {one_line(reason)}"
            self._trace.emit(
                TraceKind.MEMORY_RETRIEVE,
                role=AgentRole.PLANNER,
                status="unavailable",
                message=said,
            )
            return None
        context = assemble(self.working(), found.memories, request.memory.budget_chars)
        cut = context.cut
        remembered = context.remembered_from(request.scenario)
        self._remembered.update(remembered)
        missing = list(remembered)
        said = f"{len(cut.included)} of {len(found.memories)} memories in the planner's context"
        if cut.left_out:
            said += f", {len(cut.left_out)} left out at the budget of {cut.budget_chars} chars"
        if remembered:
            said += "; remembered with no data: " + ", ".join(
                f"{name} ({memory_id})" for name, memory_id in remembered.items()
            )
        self._trace.emit(
            TraceKind.MEMORY_RETRIEVE,
            role=AgentRole.PLANNER,
            status="shallow" if depth < DEFAULT_DEPTH else "full",
            latency_ms=found.latency_ms,
            message=said,
            data={
                "ranker": found.ranker,
                "candidates": found.candidates,
                "depth": depth,
                "included": [
                    {"id": m.id, "tier": m.tier.value, "score": round(m.score, 4), "text": m.text}
                    for m in context.memories
                ],
                "left_out": list[JsonValue](cut.left_out),
                "remembered_missing": list[JsonValue](missing),
                "budget_chars": cut.budget_chars,
                "used_chars": cut.used_chars,
            },
        )
        return context

    def working(self) -> WorkingMemory:
        """What the planner always receives, each part bounded."""
        state = self._state
        return WorkingMemory(
            goal=state.request.goal,
            answers=list(state.answers),
            plan_summary=_summary(state.plan) if state.plan is not None else None,
            failures=[f"{f.code} {f.tool or f.node_id or ''}: {f.message}" for f in state.failures],
            reused=sorted(state.reusable),
        )

    async def remember(self, result: RunResult) -> None:
        """Write the run's episode; a failure is logged (and, bounded, traced), never the
        run's: the run's status and result are those it had."""
        scope = run_scope(self._state.request)
        try:
            record = episode_of(result, scope, workflow.now(), self._remembered).record()
        except ValueError as error:  # a run whose own request was out of range, say
            workflow.logger.warning("no episode for run %s: %s", result.run_id, error)
            self._not_saved(f"no episode could be made of this run: {error}")
            return
        try:
            await stores.record_memory(record, local=self._local, bounded=self._bounded)
        except ActivityError as error:
            reason = ActivityFailure(error, 3).message
            workflow.logger.warning("episode %s not written: %s", record.id, reason)
            self._not_saved(f"episode {record.id} not saved: {reason}")

    def _not_saved(self, said: str) -> None:
        if self._bounded:
            self._trace.emit(TraceKind.MEMORY_RECORD, status="not_saved", message=one_line(said))


def one_line(reason: str) -> str:
    """A store failure's reason for the trace: its first line, bounded, redacted. The stores'
    messages name where the store is, never its password (memory.postgres_store); redaction
    holds that for whatever a driver may one day put in its message."""
    lines = redact(reason).strip().splitlines()
    first = lines[0] if lines else "unknown"
    return first if len(first) <= REASON_CHARS else first[: REASON_CHARS - 1] + "…"


def _summary(plan: Plan) -> str:
    calls = ", ".join(f"{node.id}={node.tool}" for node in plan.nodes)
    text = f"{len(plan.nodes)} nodes: {calls}"
    return text if len(text) <= PART_CHARS else text[: PART_CHARS - 1] + "…"
