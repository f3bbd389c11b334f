"""Activities: retrieve what the planner remembers, and write a finished run's episode.

Retrieval ranks, in the run's scope, the episodes of earlier runs and the background facts:
the scenario's own and the valid facts of the scope's task ledger (with their source and
confidence). Episodes of the run's session are always candidates, whatever their score.
"""

from __future__ import annotations

import asyncio
import time

import structlog
from temporalio import activity
from temporalio.service import RPCError

from activities.task_ledger_service import TemporalTaskLedger
from harness.engine.contracts import MEMORY_RECORD_ACTIVITY, MEMORY_RETRIEVE_ACTIVITY
from harness.recall.memory_context import MemoryTier
from harness.recall.memory_records import (
    MemoryFilter,
    MemoryQuery,
    MemoryRecord,
    MemoryWritten,
    RetrievedMemories,
)
from memory.ranking import Ranker
from memory.retrieval import rank, scenario_facts
from memory.store import MemoryStore
from scenarios import all_scenarios

log = structlog.get_logger()
LEDGER_TASKS_READ = 50
"""Tasks of a scope whose valid facts retrieval reads (the newest first)."""


class MemoryActivities:
    def __init__(
        self, store: MemoryStore, ranker: Ranker, ledger: TemporalTaskLedger | None = None
    ) -> None:
        self._store = store
        self._ranker = ranker
        self._ledger = ledger
        self._scenario_facts = {
            scenario.name: scenario_facts(scenario.name, scenario.facts)
            for scenario in all_scenarios()
        }

    @activity.defn(name=MEMORY_RECORD_ACTIVITY)
    async def record(self, record: MemoryRecord) -> MemoryWritten:
        await asyncio.to_thread(self._store.put, record)
        log.info("memory.record", id=record.id, scope=record.scope, tier=record.tier.value)
        return MemoryWritten(id=record.id, location=self._store.location)

    @activity.defn(name=MEMORY_RETRIEVE_ACTIVITY)
    async def retrieve(self, query: MemoryQuery) -> RetrievedMemories:
        started = time.perf_counter()
        stored = await asyncio.to_thread(self._store.select, MemoryFilter(scope=query.scope))
        ledger_facts = await self._ledger_facts(query.scope)
        facts = [*self._scenario_facts.get(query.scenario, []), *ledger_facts]
        found = await asyncio.to_thread(rank, query, stored, facts, self._ranker)  # off the loop
        found.latency_ms = round((time.perf_counter() - started) * 1000, 3)
        return found

    async def _ledger_facts(self, scope: str) -> list[MemoryRecord]:
        """The valid facts of the scope's tasks; a scope with no tasks has none."""
        if self._ledger is None:
            return []
        try:
            graph = await self._ledger.graph(scope)
        except RPCError:
            return []  # no scope workflow yet: nothing recorded
        tasks = sorted(graph.tasks.values(), key=lambda t: t.created_at, reverse=True)
        ledger = self._ledger
        states = await asyncio.gather(
            *(ledger.ledger_if_any(scope, task.id) for task in tasks[:LEDGER_TASKS_READ])
        )
        facts: list[MemoryRecord] = []
        for task, state in zip(tasks, states, strict=False):
            for fact in state.facts if state else []:
                if fact.valid:
                    facts.append(
                        MemoryRecord(
                            id=f"fact-{task.id}-{fact.id}",
                            tier=MemoryTier.SEMANTIC,
                            scope=scope,
                            text=f"{fact.statement} (task {task.id}; source {fact.source}; "
                            f"confidence {fact.confidence:.2f})",
                            source=fact.source,
                            confidence=fact.confidence,
                            at=fact.recorded_at,
                        )
                    )
        return facts
