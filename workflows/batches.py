"""A wide plan's batches, from the parent's side: which ready nodes go to which child workflow.

A plan wider than `batch_plan_nodes` hands its ready, independent plain nodes to child
`NodeBatch` workflows (`workflows.node_batch`), so the run's own history records one child per
batch instead of three events per call. Here the run decides how many children, which nodes and
how many concurrency slots each gets, starts them (one per workflow task for a huge plan) and
settles what each returns in the ledger. The scheduler lends its slots and tasks (`Slots`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Protocol

from pydantic import JsonValue
from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import CancelledError, ChildWorkflowError
from temporalio.workflow import ChildWorkflowHandle

from harness.catalog.tools import ToolCompletion
from harness.core.errors import ErrorCode, parse_error_code
from harness.engine.agent_node import AGENT_TOOL
from harness.engine.contracts import BATCH_WORKFLOW
from harness.engine.messages import BatchCall, NodeBatchRequest, NodeBatchResult
from harness.engine.node_ledger import NodeLedger
from harness.engine.run import ExecutionOptions
from workflows.node_runner import NodeRunner
from workflows.patches import BATCH_ID_PATCH

SETTLE_GAP = timedelta(milliseconds=1)  # a timer: what ends a workflow task between two settles


class Slots(Protocol):
    """What a batch asks of the scheduler, which holds the run's concurrency slots and tasks."""

    @property
    def stopping(self) -> bool:
        """The run is stopping (out of time, cancelled, halted with nodes held)."""
        ...

    def admits(self) -> bool:
        """The budget admits one more call now."""
        ...

    def start_call(self, node_id: str) -> dict[str, JsonValue] | None:
        """Admit the ready node and start its call: its arguments, or None when it settled on
        admission (an identical earlier result reused, a bad binding)."""
        ...

    def take(self, slots: int) -> None:
        """Hold `slots` concurrency slots."""
        ...

    def occupy(self, node_ids: list[str], task: asyncio.Task[None], slots: int) -> None:
        """`task` runs `node_ids` on `slots` slots taken before."""
        ...

    def vacate(self, node_ids: list[str], slots: int) -> None:
        """The task of `node_ids` has ended: its slots are free."""
        ...

    def crashed(self, crash: BaseException) -> None:
        """A bug in a task, which must fail the workflow task rather than hang it."""
        ...

    def cancelled(self, node_id: str) -> None:
        """Settle the unfinished node as cancelled by the run's stop."""
        ...

    def launch_ready(self) -> None:
        """Start what may start now."""
        ...


class Batches:
    """The child batches of one plan attempt."""

    def __init__(
        self, ledger: NodeLedger, options: ExecutionOptions, runner: NodeRunner, slots: Slots
    ) -> None:
        self._ledger = ledger
        self._options = options
        self._runner = runner
        self._slots = slots
        self._started = 0  # batches started in this attempt: each one's number
        self._out = 0  # batches started in turn and not yet settled
        self._settling = asyncio.Lock()
        self._launchers: set[asyncio.Task[None]] = set()
        """Tasks starting a wide plan's batches one per workflow task (see _start_in_turn)."""

    def launch(self, free: int) -> bool:
        """Hand the ready, independent plain nodes to as many child workflows as their number
        needs (at most `batch_size` each), all at once, splitting the `free` concurrency slots
        between them: each child keeps to its share, so the run keeps to its cap. False when
        nothing batchable was ready: the scheduler falls back to single nodes."""
        ready = [node_id for node_id in self._ledger.ready() if self._batchable(node_id)]
        count = min(-(-len(ready) // self._options.scale.batch_size), free)
        if count == 0:
            return False
        size = -(-len(ready) // count)
        if self._options.batches_start_in_turn:
            shares = [free // count + (1 if index < free % count else 0) for index in range(count)]
            chunks = [ready[index * size : (index + 1) * size] for index in range(count)]
            self._slots.take(free)  # every share, held until its batch starts or is dropped
            launcher = asyncio.create_task(self._start_in_turn(chunks, shares))
            self._launchers.add(launcher)
            launcher.add_done_callback(self._launchers.discard)
            return True
        launched = False
        for index in range(count):
            share = free // count + (1 if index < free % count else 0)
            calls = self._calls(ready[index * size : (index + 1) * size])
            if calls:
                self._start(calls, share)
                launched = True
        return launched

    def launch_one(self) -> bool:
        """Hand many ready, independent plain nodes to one child workflow. While the batch
        runs it holds every concurrency slot; the child keeps to the same cap. (Runs before the
        parallel-batches patch.) False when nothing batchable was ready."""
        ready = [node_id for node_id in self._ledger.ready() if self._batchable(node_id)]
        calls = self._calls(ready, limit=self._options.scale.batch_size)
        if not calls:
            return False
        self._start(calls, self._options.max_concurrency)
        return True

    def _batchable(self, node_id: str) -> bool:
        spec = self._ledger.spec(node_id)
        return (
            spec.name != AGENT_TOOL  # its loop is a child workflow of the run's own
            and spec.native_wait is None
            and not spec.side_effects
            and not spec.requires_approval
            and spec.completion is ToolCompletion.SYNC
        )

    async def _start_in_turn(self, chunks: list[list[str]], shares: list[int]) -> None:
        """Prepare and start one batch, wait until the server has started it (the next workflow
        task), then the next: the SDK's deadlock detector gives one activation 2 s, and the
        calls of a 20,000-node plan take longer than that to prepare in one. Each share of the
        slots was taken beforehand; one whose batch does not start is given back."""
        unused = 0
        try:
            for chunk, share in zip(chunks, shares, strict=True):
                ledger = self._ledger
                if self._slots.stopping or ledger.halted_by is not None:
                    unused += share
                    continue
                # a node another launch took meanwhile (a batch ended early) is not ready now
                calls = self._calls([node for node in chunk if ledger.is_ready(node)])
                if not calls:
                    unused += share
                    continue
                started = asyncio.Event()
                task = self._start(calls, share, reserved=True, started=started.set)
                await workflow.wait_condition(_started_or_done(started, task))
        except asyncio.CancelledError:
            raise  # the worker dropped the run (eviction): nothing of the run's own ends
        except BaseException as crash:  # a bug here must fail the workflow task, not hang it
            self._slots.crashed(crash)
            raise
        finally:
            self._slots.vacate([], unused)
        if unused:
            self._slots.launch_ready()

    def _calls(self, node_ids: list[str], limit: int | None = None) -> list[BatchCall]:
        """Admit `node_ids` (up to `limit` calls) and resolve their calls; a node settled on
        admission (reused, bad binding) makes no call, and none is admitted once the budget is
        exhausted."""
        calls: list[BatchCall] = []
        for node_id in node_ids:
            if limit is not None and len(calls) >= limit:
                break
            if not self._slots.admits():
                continue
            arguments = self._slots.start_call(node_id)
            if arguments is None:
                continue
            calls.append(self._runner.batch_call(node_id, arguments))
        return calls

    def _start(
        self,
        calls: list[BatchCall],
        slots: int,
        reserved: bool = False,
        started: Callable[[], None] | None = None,
    ) -> asyncio.Task[None]:
        """`reserved`: its slots were taken already; `started` is called once the child runs."""
        if not reserved:
            self._slots.take(slots)
        self._started += 1
        task = asyncio.create_task(self._run(calls, self._started, slots, started))
        self._slots.occupy([call.node_id for call in calls], task, slots)
        return task

    async def _run(
        self,
        calls: list[BatchCall],
        number: int,
        slots: int,
        started: Callable[[], None] | None = None,
    ) -> None:
        try:
            if started is None:
                self._settle_outcomes(calls, await self._child(calls, number, slots))
            else:
                self._out += 1
                raw = await self._child_in_turn(calls, number, slots, started)
                await self._settle_in_turn(calls, raw)
        except asyncio.CancelledError:
            self._settle_unreturned(calls, f"batch {number} cancelled", cancelled=True)
        except ChildWorkflowError as error:
            cancelled = isinstance(error.cause, CancelledError)
            self._settle_unreturned(calls, f"batch {number} failed: {error.cause}", cancelled)
        except BaseException as crash:
            self._slots.crashed(crash)
            raise
        finally:
            self._out -= 1 if started is not None else 0
            self._slots.vacate([call.node_id for call in calls], slots)
        self._slots.launch_ready()

    # -- the child workflows --------------------------------------------------------------------

    async def _child(self, calls: list[BatchCall], number: int, slots: int) -> NodeBatchResult:
        """Hand `calls` to one child workflow that keeps `slots` of them in flight; its outcomes
        are the caller's to settle."""
        handle = await self._start_child(calls, number, slots, NodeBatchResult)
        result: NodeBatchResult = await handle  # as execute_child_workflow: start, then wait
        return result

    async def _child_in_turn(
        self, calls: list[BatchCall], number: int, slots: int, started: Callable[[], None]
    ) -> RawValue:
        """As _child, but `started` is called once the server has started the child (a later
        workflow task than the one that asked for it), and the result comes undecoded: it is
        decoded (`_settle_in_turn`) when its turn comes."""
        handle = await self._start_child(calls, number, slots, RawValue)
        started()
        raw: RawValue = await handle
        return raw

    async def _start_child(
        self, calls: list[BatchCall], number: int, slots: int, result_type: type[Any]
    ) -> ChildWorkflowHandle[Any, Any]:
        options = self._options
        batch_id = f"{options.run_id}-batch-{number}"
        if workflow.patched(BATCH_ID_PATCH):
            batch_id = f"{options.run_id}-attempt-{options.attempt}-batch-{number}"
        return await workflow.start_child_workflow(
            BATCH_WORKFLOW,
            NodeBatchRequest(
                run_id=options.run_id,
                scenario=options.scenario,
                provider=options.provider,
                worker_model=options.worker_model,
                cost_limited=options.cost_limited,
                max_concurrency=slots,
                calls=calls,
                task=options.task,
                plan_attempt=options.attempt if options.task else None,
                cheap_group_size=options.scale.cheap_group_size if options.group_cheap_calls else 0,
            ),
            id=batch_id,
            result_type=result_type,
            static_summary=f"batch {number}: {len(calls)} nodes",
        )

    # -- what a batch returns ---------------------------------------------------------------------

    async def _settle_in_turn(self, calls: list[BatchCall], raw: RawValue) -> None:
        """Decode and settle one batch's outcomes per workflow task. Children that share the
        cap finish together, and the results that reach one workflow task are all decoded in
        its first activation unless they come raw: four of 1,429 calls took 10 s there (under
        cProfile, on a loaded machine), past the SDK's 2 s. While other batches are still out,
        the lock is held over a 1 ms timer, so the next result is settled in the next task."""
        async with self._settling:
            result: NodeBatchResult = workflow.payload_converter().from_payload(
                raw.payload, NodeBatchResult
            )
            self._settle_outcomes(calls, result)
            if self._out > 1:
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

    def _settle_unreturned(self, calls: list[BatchCall], message: str, cancelled: bool) -> None:
        """A batch that did not return: its unfinished nodes are cancelled when the run is
        stopping, and fail otherwise (one child's failure is not the whole run's)."""
        for call in calls:
            if not self._ledger.is_unsettled(call.node_id):
                continue
            if cancelled and self._slots.stopping:
                self._slots.cancelled(call.node_id)
            else:
                code = ErrorCode.TOOL_EXECUTION_FAILED
                self._ledger.fail(call.node_id, call.arguments, code, message, attempts=0)


def _started_or_done(started: asyncio.Event, task: asyncio.Task[None]) -> Callable[[], bool]:
    """A batch has started, or will not: its task ended (failed, or cancelled before)."""
    return lambda: started.is_set() or task.done()
