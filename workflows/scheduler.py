"""The event-driven DAG scheduler: a node starts the moment its own dependencies are DONE.

It decides admission (budget, halts, stops) and holds the concurrency slots and the tasks that
take them; the node runner carries each node, a wide plan's nodes go to child batches
(`workflows.batches`), and the ledger records what happened.
Completions that arrive in the same workflow task are handled in one activation, and the nodes
they unblock are scheduled in that same task: no level-by-level barrier, no extra round trip.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from pydantic import JsonValue
from temporalio import workflow

from harness.catalog.tools import ToolCompletion
from harness.core.errors import ErrorCode
from harness.engine.agent_node import AGENT_TOOL
from harness.engine.binding import BindingError, resolve_arguments
from harness.engine.budget import Budget, Degradation
from harness.engine.messages import ToolCallResult
from harness.engine.node_ledger import NodeLedger
from harness.engine.reuse import call_key
from harness.engine.run import ExecutionOptions
from workflows.agent_nodes import AgentNodes
from workflows.batches import Batches
from workflows.held_nodes import HeldNodes
from workflows.node_runner import NodeRunner
from workflows.patches import HALT_SKIPS_READY_PATCH
from workflows.wait_desk import WaitDesk

BUDGET_EXHAUSTED_REASON = "budget exhausted"
OUT_OF_TIME_REASON = "budget exhausted: wall-clock limit reached"


class Scheduler:
    """Runs one validated plan to the end: every node DONE, FAILED or SKIPPED."""

    def __init__(
        self,
        ledger: NodeLedger,
        desk: WaitDesk,
        budget: Budget,
        options: ExecutionOptions,
        reusable: dict[str, ToolCallResult],
    ) -> None:
        self._ledger = ledger
        self._budget = budget
        self._options = options
        self._reusable = reusable
        self._held = HeldNodes(ledger, desk, options, self._calls_returned)
        self.agents = AgentNodes(ledger, budget, options, desk, lambda: self.stopping)
        self._runner = NodeRunner(ledger, self._held, options, lambda: self.stopping, self.agents)
        self._batching = len(ledger.nodes) > options.scale.batch_plan_nodes
        self._batches = Batches(ledger, options, self._runner, self)
        self._in_flight = 0
        self._crash: BaseException | None = None
        self._stop_reason: str | None = None
        self._halt_applied = False
        self._tasks: dict[str, asyncio.Task[None]] = {}

    async def run(self, seconds_left: float | None) -> None:
        """Run until every node has finished, or the wall-clock budget runs out."""
        self.launch_ready()
        timeout = None if seconds_left is None else timedelta(seconds=max(seconds_left, 0.001))
        try:
            await workflow.wait_condition(
                lambda: self._ledger.is_finished() or self._crash is not None, timeout=timeout
            )
        except TimeoutError:
            await self.stop(OUT_OF_TIME_REASON)
        if self._crash is not None:
            raise self._crash

    async def stop(self, reason: str) -> None:
        """Admit nothing more, cancel what runs (activities see it through heartbeats), and
        wait until every node has settled. Finished results are kept."""
        self._stop_reason = reason
        self._ledger.skip_ready(reason, budget=reason == OUT_OF_TIME_REASON)
        for node_id in self._ledger.unsettled():
            task = self._tasks.get(node_id)
            if task is not None:
                task.cancel()
        await workflow.wait_condition(lambda: self._ledger.is_finished() or self._crash is not None)

    # -- admission --------------------------------------------------------------------------

    def launch_ready(self) -> None:
        """Start what may start now: ready nodes, while slots are free and the budget admits."""
        self._apply_halt()
        ledger = self._ledger
        if self._options.group_cheap_calls and not self._batching:
            self._launch_groups()
        while self._in_flight < self._options.max_concurrency and ledger.has_ready():
            if ledger.halted_by is not None:
                if self._stop_reason is not None and not workflow.patched(HALT_SKIPS_READY_PATCH):
                    return  # as runs before the fix did: these nodes stayed ready
                ledger.skip_ready(f"run halted: {ledger.halted_by}", budget=False)
                return
            if self._stop_reason is not None:
                return
            if self._exhausted():
                ledger.skip_ready(BUDGET_EXHAUSTED_REASON, budget=True)
                return
            if not self._can_reserve():
                return  # every call left is reserved by a running one: wait for what it returns
            if self._batching and ledger.ready_count() >= self._options.scale.batch_min_ready:
                # False when nothing batchable was ready: single nodes from then on
                if self._options.parallel_batches:
                    self._batching = self._batches.launch(
                        self._options.max_concurrency - self._in_flight
                    )
                    continue
                if self._in_flight == 0:
                    self._batching = self._batches.launch_one()
                    continue
            node_id = ledger.admit_next()
            arguments = self._prepare(node_id)
            if arguments is not None:
                self.take(1)
                task = asyncio.create_task(self._run_node(node_id, arguments), name=node_id)
                self.occupy([node_id], task, 1)

    def _prepare(self, node_id: str) -> dict[str, JsonValue] | None:
        """Resolve the admitted node's arguments and charge its call; None when it is already
        settled (a binding error fails it, an identical earlier result is reused)."""
        ledger = self._ledger
        node, spec = ledger.node(node_id), ledger.spec(node_id)
        try:
            arguments = resolve_arguments(node, spec, ledger.results)
        except BindingError as error:
            ledger.fail(node_id, {}, ErrorCode.INVALID_ARGUMENT, str(error), attempts=0)
            return None
        key = call_key(node.tool, arguments)
        if key in self._reusable and not spec.side_effects:
            ledger.complete(node_id, self._reusable[key], reused=True)
            return None
        if node.tool == AGENT_TOOL:
            pass  # its loop's calls are charged, each one, from the allowance it is granted
        elif self._options.reserve_attempts:
            ledger.reserve_call(node_id)
        else:
            ledger.charge_call()
        return arguments

    def start_call(self, node_id: str) -> dict[str, JsonValue] | None:
        """Admit the ready node, resolve its call and start it (see _prepare)."""
        self._ledger.admit(node_id)
        arguments = self._prepare(node_id)
        if arguments is not None:
            self._ledger.call_started(node_id)
        return arguments

    def _exhausted(self) -> bool:
        return self._budget.degradation() is Degradation.EXHAUSTED

    def _calls_returned(self) -> None:
        """A node's call ended and gave back what it did not use, while the node waits on: the
        nodes waiting for calls may start now, not when it finishes (runs before 0.10 reserved
        nothing, and launched nothing here)."""
        if self._options.reserve_attempts:
            self.launch_ready()

    def admits(self) -> bool:
        return not self._exhausted() and self._can_reserve()

    def _can_reserve(self) -> bool:
        """A call admitted now could reserve at least one attempt. When every call left under
        the limit is reserved by calls still running, ready nodes wait for what those give back
        (none is skipped: they may yet run). Runs before 0.10 reserved nothing."""
        return not self._options.reserve_attempts or self._budget.can_reserve_tool_call()

    def _apply_halt(self) -> None:
        """After a HALT, nodes held on a wait would only keep the run open until their
        deadlines, and agents would go on taking turns; cancel them now (running activities
        are left to finish)."""
        halted_by = self._ledger.halted_by
        if halted_by is None or self._halt_applied:
            return
        self._halt_applied = True
        held = self._ledger.held()
        # an agent's loop is no single activity to be left to finish: it would take turns on
        held += [
            node_id
            for node_id in self._ledger.unsettled()
            if self._ledger.node(node_id).tool == AGENT_TOOL and node_id not in held
        ]
        if held:
            self._stop_reason = self._stop_reason or f"run halted: {halted_by}"
        for node_id in held:
            task = self._tasks.get(node_id)
            if task is not None:
                task.cancel()

    # -- groups of cheap calls ---------------------------------------------------------------

    def _groupable(self, node_id: str) -> bool:
        """A call of a cheap, in-memory tool that needs nothing of the run but its result."""
        spec = self._ledger.spec(node_id)
        return (
            spec.local
            and spec.native_wait is None
            and not spec.side_effects
            and not spec.requires_approval
            and not spec.uses_llm
            and spec.mcp is None
            and spec.completion is ToolCompletion.SYNC
        )

    def _launch_groups(self) -> None:
        """Hand the ready cheap calls, up to `cheap_group_size` at a time and one slot each, to
        local activities that make several at once; a lone one runs on its own."""
        ledger, cap = self._ledger, self._options.max_concurrency
        if ledger.halted_by is not None or self._stop_reason is not None:
            return
        size = self._options.scale.cheap_group_size
        if size < 2:
            return  # each cheap call in its own local activity, as the request asks
        cheap = [node_id for node_id in ledger.ready() if self._groupable(node_id)]
        while len(cheap) > 1 and self._in_flight < cap and self.admits():
            take = min(size, cap - self._in_flight)
            calls: dict[str, dict[str, JsonValue]] = {}
            for node_id in cheap[:take]:
                if not self.admits():
                    break
                arguments = self.start_call(node_id)
                if arguments is not None:
                    calls[node_id] = arguments
            cheap = cheap[take:]
            if calls:
                self._start_group(calls)

    def _start_group(self, calls: dict[str, dict[str, JsonValue]]) -> None:
        node_ids = list(calls)
        self.take(len(node_ids))
        task = asyncio.create_task(self._run_group(calls), name=f"group {node_ids[0]}")
        self.occupy(node_ids, task, len(node_ids))

    async def _run_group(self, calls: dict[str, dict[str, JsonValue]]) -> None:
        try:
            await self._runner.run_group(calls)
        except asyncio.CancelledError:
            for node_id in calls:
                if self._ledger.is_unsettled(node_id):
                    self.cancelled(node_id)
        except BaseException as crash:  # a bug here must fail the workflow task, not hang it
            self.crashed(crash)
            raise
        finally:
            self.vacate(list(calls), len(calls))
        self.launch_ready()

    # -- single nodes -----------------------------------------------------------------------

    async def _run_node(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        try:
            await self._runner.run(node_id, arguments)
        except asyncio.CancelledError:
            self.cancelled(node_id)
        except BaseException as crash:  # a bug here must fail the workflow task, not hang it
            self.crashed(crash)
            raise
        finally:
            self.vacate([node_id], 1)
        self.launch_ready()

    def _settle_unstarted(
        self, node_ids: list[str], slots: int
    ) -> Callable[[asyncio.Task[None]], None]:
        """A task cancelled before its first step never runs its own except/finally blocks;
        settle its nodes and free its slots here so `stop()` can finish."""

        def settle(task: asyncio.Task[None]) -> None:
            if not task.cancelled():
                return
            for node_id in node_ids:
                if self._ledger.is_unsettled(node_id):
                    self.cancelled(node_id)
            self.vacate(node_ids, slots)

        return settle

    # -- the slots and the tasks that hold them (batches take theirs here too) ---------------------

    @property
    def stopping(self) -> bool:
        return self._stop_reason is not None

    def take(self, slots: int) -> None:
        self._in_flight += slots

    def occupy(self, node_ids: list[str], task: asyncio.Task[None], slots: int) -> None:
        task.add_done_callback(self._settle_unstarted(node_ids, slots))
        for node_id in node_ids:
            self._tasks[node_id] = task

    def vacate(self, node_ids: list[str], slots: int) -> None:
        self._in_flight -= slots
        for node_id in node_ids:
            self._tasks.pop(node_id, None)

    def crashed(self, crash: BaseException) -> None:
        self._crash = crash

    def cancelled(self, node_id: str) -> None:
        reason = self._stop_reason or "cancelled"
        self._held.cancel(node_id, reason, budget=reason == OUT_OF_TIME_REASON)
