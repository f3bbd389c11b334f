"""The event-driven DAG scheduler: a node starts the moment its own dependencies are DONE.

It decides admission (budget, halts, stops), holds the concurrency slots and hands wide plans
to child batches; the node runner carries each node, the ledger records what happened.
Completions that arrive in the same workflow task are handled in one activation, and the nodes
they unblock are scheduled in that same task: no level-by-level barrier, no extra round trip.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from pydantic import JsonValue
from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import CancelledError, ChildWorkflowError

from harness.catalog.tools import ToolCompletion
from harness.core.errors import ErrorCode, parse_error_code
from harness.engine.binding import BindingError, resolve_arguments
from harness.engine.budget import Budget, Degradation
from harness.engine.messages import BatchCall, NodeBatchResult, ToolCallResult
from harness.engine.node_ledger import NodeLedger
from harness.engine.reuse import call_key
from harness.engine.run import ExecutionOptions
from workflows.held_nodes import HeldNodes
from workflows.node_runner import NodeRunner
from workflows.patches import HALT_SKIPS_READY_PATCH
from workflows.wait_desk import WaitDesk

BUDGET_EXHAUSTED_REASON = "budget exhausted"
OUT_OF_TIME_REASON = "budget exhausted: wall-clock limit reached"
SETTLE_GAP = timedelta(milliseconds=1)  # a timer: what ends a workflow task between two settles


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
        self._desk = desk
        self._budget = budget
        self._options = options
        self._reusable = reusable
        held = HeldNodes(ledger, desk, options)
        self._runner = NodeRunner(
            ledger, held, options, lambda: self._stop_reason is not None, self._calls_returned
        )
        self._batching = len(ledger.nodes) > options.scale.batch_plan_nodes
        self._batches = 0
        self._in_flight = 0
        self._crash: BaseException | None = None
        self._stop_reason: str | None = None
        self._halt_applied = False
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._settling = asyncio.Lock()
        self._batches_out = 0  # batches started in turn and not yet settled
        self._launchers: set[asyncio.Task[None]] = set()
        """Tasks starting a wide plan's batches one per workflow task (see _start_in_turn)."""

    async def run(self, seconds_left: float | None) -> None:
        """Run until every node has finished, or the wall-clock budget runs out."""
        self._launch_ready()
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

    def _launch_ready(self) -> None:
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
                if self._options.parallel_batches:
                    self._launch_batches(self._options.max_concurrency - self._in_flight)
                    continue
                if self._in_flight == 0:
                    self._launch_batch()
                    continue
            node_id = ledger.admit_next()
            arguments = self._prepare(node_id)
            if arguments is not None:
                self._in_flight += 1
                task = asyncio.create_task(self._run_node(node_id, arguments), name=node_id)
                task.add_done_callback(self._settle_unstarted([node_id], 1))
                self._tasks[node_id] = task

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
        if self._options.reserve_attempts:
            ledger.reserve_call(node_id)
        else:
            ledger.charge_call()
        return arguments

    def _exhausted(self) -> bool:
        return self._budget.degradation() is Degradation.EXHAUSTED

    def _calls_returned(self) -> None:
        """A node's call ended and gave back what it did not use, while the node waits on: the
        nodes waiting for calls may start now, not when it finishes (runs before 0.10 reserved
        nothing, and launched nothing here)."""
        if self._options.reserve_attempts:
            self._launch_ready()

    def _admits(self) -> bool:
        return not self._exhausted() and self._can_reserve()

    def _can_reserve(self) -> bool:
        """A call admitted now could reserve at least one attempt. When every call left under
        the limit is reserved by calls still running, ready nodes wait for what those give back
        (none is skipped: they may yet run). Runs before 0.10 reserved nothing."""
        return not self._options.reserve_attempts or self._budget.can_reserve_tool_call()

    def _apply_halt(self) -> None:
        """After a HALT, nodes held on a wait would only keep the run open until their
        deadlines; cancel them now (running activities are left to finish)."""
        halted_by = self._ledger.halted_by
        if halted_by is None or self._halt_applied:
            return
        self._halt_applied = True
        held = self._ledger.held()
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
        while len(cheap) > 1 and self._in_flight < cap and self._admits():
            take = min(size, cap - self._in_flight)
            calls: dict[str, dict[str, JsonValue]] = {}
            for node_id in cheap[:take]:
                if not self._admits():
                    break
                ledger.admit(node_id)
                arguments = self._prepare(node_id)
                if arguments is not None:
                    ledger.call_started(node_id)
                    calls[node_id] = arguments
            cheap = cheap[take:]
            if calls:
                self._start_group(calls)

    def _start_group(self, calls: dict[str, dict[str, JsonValue]]) -> None:
        node_ids = list(calls)
        self._in_flight += len(node_ids)
        task = asyncio.create_task(self._run_group(calls), name=f"group {node_ids[0]}")
        task.add_done_callback(self._settle_unstarted(node_ids, len(node_ids)))
        for node_id in node_ids:
            self._tasks[node_id] = task

    async def _run_group(self, calls: dict[str, dict[str, JsonValue]]) -> None:
        try:
            await self._runner.run_group(calls)
        except asyncio.CancelledError:
            for node_id in calls:
                if self._ledger.is_unsettled(node_id):
                    self._cancelled(node_id)
        except BaseException as crash:  # a bug here must fail the workflow task, not hang it
            self._crash = crash
            raise
        finally:
            self._in_flight -= len(calls)
            for node_id in calls:
                self._tasks.pop(node_id, None)
        self._launch_ready()

    # -- single nodes -----------------------------------------------------------------------

    async def _run_node(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        try:
            await self._runner.run(node_id, arguments)
        except asyncio.CancelledError:
            self._cancelled(node_id)
        except BaseException as crash:  # a bug here must fail the workflow task, not hang it
            self._crash = crash
            raise
        finally:
            self._in_flight -= 1
            self._tasks.pop(node_id, None)
        self._launch_ready()

    def _settle_unstarted(
        self, node_ids: list[str], slots: int
    ) -> Callable[[asyncio.Task[None]], None]:
        """A task cancelled before its first step never runs its own except/finally blocks;
        settle its nodes and free its slots here so `stop()` can finish."""

        def settle(task: asyncio.Task[None]) -> None:
            if not task.cancelled():
                return
            for node_id in node_ids:
                self._tasks.pop(node_id, None)
                if self._ledger.is_unsettled(node_id):
                    self._cancelled(node_id)
            self._in_flight -= slots

        return settle

    def _cancelled(self, node_id: str) -> None:
        reason = self._stop_reason or "cancelled"
        self._desk.cancel_pending(reason, node_id=node_id)
        self._ledger.cancel(node_id, reason, budget=reason == OUT_OF_TIME_REASON)

    # -- batches of a wide plan -------------------------------------------------------------

    def _batchable(self, node_id: str) -> bool:
        spec = self._ledger.spec(node_id)
        return (
            spec.native_wait is None
            and not spec.side_effects
            and not spec.requires_approval
            and spec.completion is ToolCompletion.SYNC
        )

    def _launch_batches(self, free: int) -> None:
        """Hand the ready, independent plain nodes to as many child workflows as their number
        needs (at most `batch_size` each), all at once, splitting the free concurrency slots
        between them: each child keeps to its share, so the run keeps to its cap."""
        ready = [node_id for node_id in self._ledger.ready() if self._batchable(node_id)]
        count = min(-(-len(ready) // self._options.scale.batch_size), free)
        if count == 0:
            self._batching = False  # nothing batchable is ready; fall back to single nodes
            return
        size = -(-len(ready) // count)
        if self._options.batches_start_in_turn:
            shares = [free // count + (1 if index < free % count else 0) for index in range(count)]
            chunks = [ready[index * size : (index + 1) * size] for index in range(count)]
            self._in_flight += free  # every share, held until its batch starts or is dropped
            launcher = asyncio.create_task(self._start_in_turn(chunks, shares))
            self._launchers.add(launcher)
            launcher.add_done_callback(self._launchers.discard)
            return
        launched = False
        for index in range(count):
            share = free // count + (1 if index < free % count else 0)
            calls = self._batch_calls(ready[index * size : (index + 1) * size])
            if calls:
                self._start_batch(calls, share)
                launched = True
        if not launched:
            self._batching = False

    async def _start_in_turn(self, chunks: list[list[str]], shares: list[int]) -> None:
        """Prepare and start one batch, wait until the server has started it (the next workflow
        task), then the next: the SDK's deadlock detector gives one activation 2 s, and the
        calls of a 20,000-node plan take longer than that to prepare in one. Each share of the
        slots was taken beforehand; one whose batch does not start is given back."""
        unused = 0
        try:
            for chunk, share in zip(chunks, shares, strict=True):
                ledger = self._ledger
                if self._stop_reason is not None or ledger.halted_by is not None:
                    unused += share
                    continue
                # a node another launch took meanwhile (a batch ended early) is not ready now
                calls = self._batch_calls([node for node in chunk if ledger.is_ready(node)])
                if not calls:
                    unused += share
                    continue
                started = asyncio.Event()
                task = self._start_batch(calls, share, reserved=True, started=started.set)
                await workflow.wait_condition(_started_or_done(started, task))
        except asyncio.CancelledError:
            raise  # the worker dropped the run (eviction): nothing of the run's own ends
        except BaseException as crash:  # a bug here must fail the workflow task, not hang it
            self._crash = crash
            raise
        finally:
            self._in_flight -= unused
        if unused:
            self._launch_ready()

    def _launch_batch(self) -> None:
        """Hand many ready, independent plain nodes to one child workflow. While the batch
        runs it holds every concurrency slot; the child keeps to the same cap. (Runs before the
        parallel-batches patch.)"""
        ready = [node_id for node_id in self._ledger.ready() if self._batchable(node_id)]
        calls = self._batch_calls(ready, limit=self._options.scale.batch_size)
        if not calls:
            self._batching = False  # nothing batchable is ready; fall back to single nodes
            return
        self._start_batch(calls, self._options.max_concurrency)

    def _batch_calls(self, node_ids: list[str], limit: int | None = None) -> list[BatchCall]:
        """Admit `node_ids` (up to `limit` calls) and resolve their calls; a node settled on
        admission (reused, bad binding) makes no call, and none is admitted once the budget is
        exhausted."""
        calls: list[BatchCall] = []
        for node_id in node_ids:
            if limit is not None and len(calls) >= limit:
                break
            if not self._admits():
                continue
            self._ledger.admit(node_id)
            arguments = self._prepare(node_id)
            if arguments is None:
                continue
            self._ledger.call_started(node_id)
            calls.append(self._runner.batch_call(node_id, arguments))
        return calls

    def _start_batch(
        self,
        calls: list[BatchCall],
        slots: int,
        reserved: bool = False,
        started: Callable[[], None] | None = None,
    ) -> asyncio.Task[None]:
        """`reserved`: its slots were taken already; `started` is called once the child runs."""
        if not reserved:
            self._in_flight += slots
        self._batches += 1
        task = asyncio.create_task(self._run_batch(calls, self._batches, slots, started))
        node_ids = [call.node_id for call in calls]
        task.add_done_callback(self._settle_unstarted(node_ids, slots))
        for node_id in node_ids:
            self._tasks[node_id] = task
        return task

    async def _run_batch(
        self,
        calls: list[BatchCall],
        number: int,
        slots: int,
        started: Callable[[], None] | None = None,
    ) -> None:
        try:
            if started is None:
                self._settle_outcomes(calls, await self._runner.run_batch(calls, number, slots))
            else:
                self._batches_out += 1
                raw = await self._runner.run_batch_in_turn(calls, number, slots, started)
                await self._settle_in_turn(calls, raw)
        except asyncio.CancelledError:
            self._settle_batch(calls, f"batch {number} cancelled", cancelled=True)
        except ChildWorkflowError as error:
            cancelled = isinstance(error.cause, CancelledError)
            self._settle_batch(calls, f"batch {number} failed: {error.cause}", cancelled)
        except BaseException as crash:
            self._crash = crash
            raise
        finally:
            self._in_flight -= slots
            self._batches_out -= 1 if started is not None else 0
            for call in calls:
                self._tasks.pop(call.node_id, None)
        self._launch_ready()

    async def _settle_in_turn(self, calls: list[BatchCall], raw: RawValue) -> None:
        """Decode and settle one batch's outcomes per workflow task. Children that share the
        cap finish together, and the results that reach one workflow task are all decoded in
        its first activation unless they come raw: four of 1,429 calls took 10 s there (under
        cProfile, on a loaded machine), past the SDK's 2 s. While other batches are still out,
        the lock is held over a 1 ms timer, so the next result is settled in the next task."""
        async with self._settling:
            self._settle_outcomes(calls, self._runner.batch_result(raw))
            if self._batches_out > 1:
                await workflow.sleep(SETTLE_GAP)

    def _settle_outcomes(self, calls: list[BatchCall], result: NodeBatchResult) -> None:
        arguments = {call.node_id: call.arguments for call in calls}
        for outcome in result.outcomes:
            node_id = outcome.node_id
            timing = outcome.call.timing if outcome.call is not None else outcome.timing
            self._ledger.retried(node_id, outcome.attempts, timing.retries if timing else None)
            if outcome.call is not None:
                self._ledger.complete(node_id, outcome.call, arguments=arguments[node_id])
            else:
                code = parse_error_code(outcome.error_type)
                message = outcome.error_message or "failed"
                self._ledger.fail(
                    node_id, arguments[node_id], code, message, outcome.attempts, timing
                )

    def _settle_batch(self, calls: list[BatchCall], message: str, cancelled: bool) -> None:
        """A batch that did not return: its unfinished nodes are cancelled when the run is
        stopping, and fail otherwise (one child's failure is not the whole run's)."""
        for call in calls:
            if not self._ledger.is_unsettled(call.node_id):
                continue
            if cancelled and self._stop_reason is not None:
                self._cancelled(call.node_id)
            else:
                code = ErrorCode.TOOL_EXECUTION_FAILED
                self._ledger.fail(call.node_id, call.arguments, code, message, attempts=0)


def _started_or_done(started: asyncio.Event, task: asyncio.Task[None]) -> Callable[[], bool]:
    """A batch has started, or will not: its task ended (failed, or cancelled before)."""
    return lambda: started.is_set() or task.done()
