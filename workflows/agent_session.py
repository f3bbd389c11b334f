"""AgentSessionWorkflow: an agent that talks with someone over time (harness.engine.sessions).

One workflow per session id in a scope, long-lived. Each message is an update (`send`, sent
with update-with-start, so the first one starts the session): it runs one bounded slice of the
session's agent runtime and answers DONE, WAITING or CONTINUATION_REQUIRED. Messages are taken
one at a time, in the order they came (a lock the update handlers share): a message sent while
a slice runs waits for it and never interleaves with it. Temporal runs one workflow task of a
session at a time, on one worker, so two workers never advance it at once; each slice has a new
epoch, which its writes to a task carry, so a straggler of an older slice is refused there.

A slice that asks a person (`ask_user`, `request_approval`) opens a wait of the session's own;
`harness answer SESSION_WORKFLOW WAIT TEXT` (or `approve`) answers it as a run's, and the
session then runs the next slice by itself. Between slices it continues as new, carrying only
its state: the runtime's checkpoint (a compacted conversation), the wait it is parked on, and
its last reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError, FailureError

from harness.catalog.tools import ToolSpec
from harness.core.actors import parse_actor
from harness.core.errors import ErrorCode
from harness.engine.agent_runtime import AgentRuntime
from harness.engine.bounds import delivery_problems
from harness.engine.contracts import (
    AGENT_SESSION_WORKFLOW,
    ANSWER_UPDATE,
    APPROVE_UPDATE,
    SESSION_QUERY,
    SESSION_SEND_UPDATE,
    WAITS_QUERY,
)
from harness.engine.sessions import (
    RuntimeCheckpoint,
    SessionMessage,
    SessionReply,
    SessionStart,
    SessionState,
    SessionStatus,
    SliceRequest,
    session_tools,
    slice_reply,
    wait_name,
)
from harness.governance.work import TaskBinding, WriterFence
from harness.waits.deliveries import AnswerRequest, ApprovalRequest
from harness.waits.wait_book import DeliveryReceipt, Wait, WaitBook
from workflows import session_memory
from workflows.activity_calls.placement import llm_queue, local_failures_are_activity_errors
from workflows.activity_calls.steps import load_catalog
from workflows.runtimes import runtime_missing, runtime_named


@workflow.defn(name=AGENT_SESSION_WORKFLOW)
class AgentSessionWorkflow:
    @workflow.init
    def __init__(self, start: SessionStart) -> None:
        self._start = start
        self._state = start.carried or SessionState()
        self._lock = asyncio.Lock()
        self._book = WaitBook()
        if self._state.wait is not None:  # parked on it over continue-as-new
            self._book.open(self._state.wait)
        self._tools: list[ToolSpec] | None = None
        self._closed: str | None = None
        self._slices_here = 0

    @workflow.run
    async def run(self, start: SessionStart) -> SessionState:
        llm_queue()  # decided in the first task, as every workflow that calls models does
        local_failures_are_activity_errors()
        while self._closed is None:
            await workflow.wait_condition(
                lambda: self._state.answered() or self._slices_here > 0 or self._closed is not None
            )
            if self._state.answered():
                async with self._lock:
                    if self._state.answered():  # a message may have resumed it first
                        await self._resumed_by_answer()
                continue
            await workflow.wait_condition(
                lambda: workflow.all_handlers_finished() and not self._lock.locked()
            )
            if self._closed is None and not self._state.answered():
                workflow.continue_as_new(self._start.model_copy(update={"carried": self._state}))
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._state

    # -- messages --------------------------------------------------------------------------

    @workflow.update(name=SESSION_SEND_UPDATE)
    async def send(self, message: SessionMessage) -> SessionReply:
        """One message (or, with no text, a continue): one slice, taken after those before."""
        async with self._lock:
            self._state.messages += 1
            return await self._guarded(self._resume(message.text))

    @send.validator
    def _check_message(self, message: SessionMessage) -> None:
        if self._closed is not None:
            raise ValueError(self._closed)
        try:
            parse_actor(message.actor)
        except ValueError as error:
            raise ValueError(f"actor: {error}") from error
        if message.text is not None and not message.text.strip():
            raise ValueError("text: a message needs words, not only spaces")
        if message.text is not None and self._state.parked() is not None:
            raise ValueError(self._state.parked_line(self._start.session_id, self._id()))
        if self._lock.locked() and workflow.info().is_continue_as_new_suggested():
            raise ValueError("the session is busy and its history long: send it again shortly")

    @workflow.query(name=SESSION_QUERY, description="The session's state: its last reply and more.")
    def session(self) -> SessionState:
        return self._state

    # -- its waits, answered as a run's ----------------------------------------------------

    @workflow.query(name=WAITS_QUERY, description="Every wait of the session's current run.")
    def waits(self) -> list[Wait]:
        return list(self._book.waits.values())

    @workflow.update(name=APPROVE_UPDATE)
    def approve(self, request: ApprovalRequest) -> DeliveryReceipt:
        return self._book.deliver(request.delivery(), workflow.now())

    @workflow.update(name=ANSWER_UPDATE)
    def answer(self, request: AnswerRequest) -> DeliveryReceipt:
        return self._book.deliver(request.delivery(), workflow.now())

    @approve.validator
    def _check_approval(self, request: ApprovalRequest) -> None:
        self._check_delivery(request)

    @answer.validator
    def _check_answer(self, request: AnswerRequest) -> None:
        self._check_delivery(request)

    def _check_delivery(self, request: ApprovalRequest | AnswerRequest) -> None:
        problems = delivery_problems(request)
        if problems:
            raise ValueError("out of range: " + "; ".join(problems))

    # -- slices ----------------------------------------------------------------------------

    async def _guarded(self, work: Awaitable[SessionReply]) -> SessionReply:
        """`work`, whose unforeseen failure fails the message as an ApplicationError: a plain
        exception would fail the workflow task, and the session would take no more messages."""
        try:
            return await work
        except (ApplicationError, asyncio.CancelledError):
            raise
        except Exception as error:
            first = (str(error).splitlines() or [""])[0]
            raise ApplicationError(
                f"session {self._start.session_id}: {type(error).__name__}: {first}",
                type="SESSION_ERROR",
                non_retryable=True,
            ) from error

    async def _resumed_by_answer(self) -> None:
        """The wait the session was parked on was answered: the next slice runs now. Its
        failure is the reply `--continue` reads (the session itself goes on)."""
        try:
            await self._guarded(self._resume(None))
        except ApplicationError as error:
            workflow.logger.warning("session %s: %s", self._start.session_id, error.message)
            if self._state.answered():  # an answer that could not be given is not retaken
                self._state.wait = self._state.pending = None
            last = self._state.last
            if last is not None:
                self._state.last = last.model_copy(update={"note": error.message})

    async def _resume(self, text: str | None) -> SessionReply:
        """Under the lock: the next slice, after the wait it was parked on was answered (its
        result given to the runtime first), or with the new message; when there is nothing to
        do, the last reply again."""
        runtime = self._runtime()
        state = self._state
        checkpoint = state.checkpoint
        parked = self._state.parked()
        if parked is not None:
            if text is not None:  # it came in while a slice ran, and that slice asked
                raise ApplicationError(
                    self._state.parked_line(self._start.session_id, self._id()),
                    type="WAITING",
                    non_retryable=True,
                )
            return state.last or self._reply_of_nothing("nothing has run yet")
        if state.wait is not None and state.pending is not None and checkpoint is not None:
            result = state.wait_result()
            checkpoint = runtime.apply_wait_result(checkpoint, result)
            state.wait = state.pending = None
        elif text is None and (state.last is None or state.last.status is SessionStatus.DONE):
            return state.last or self._reply_of_nothing("nothing to continue: send a message")
        if text is not None:
            state.asked = text
            if checkpoint is None:  # the session's opening: what its memory holds
                memory = await session_memory.recalled(self._start, self._id(), text)
                text = session_memory.with_memory(text, memory)
        checkpoint = runtime.open(checkpoint, text)
        state.checkpoint = checkpoint  # the message is kept, whatever the slice does
        return await self._slice(runtime, checkpoint)

    async def _slice(self, runtime: AgentRuntime, checkpoint: RuntimeCheckpoint) -> SessionReply:
        state = self._state
        state.epoch += 1
        epoch = state.epoch
        request = SliceRequest(
            session_id=self._start.session_id,
            workflow_id=self._id(),
            scenario=self._start.scenario,
            epoch=epoch,
            tools=await self._offered(),
            limits=self._start.limits,
            provider=self._start.provider,
            model=self._start.model,
            task=self._fenced(epoch),
            node_id=f"{self._start.session_id}-{self._generation()}",
        )
        self._slices_here += 1
        state.last = SessionReply(
            session_id=self._start.session_id,
            status=SessionStatus.CONTINUATION_REQUIRED,
            epoch=epoch,
            note=f"slice {epoch} was cut short: --continue runs it again",
        )
        try:
            outcome = await runtime.run_slice(checkpoint, request)
        except (ChildWorkflowError, ActivityError) as error:
            cause = error.cause
            code = cause.type if isinstance(cause, ApplicationError) and cause.type else None
            why = cause.message if isinstance(cause, FailureError) else str(error)
            raise ApplicationError(
                f"slice {epoch} failed: {why}; the message is kept: --continue tries again",
                type=code or ErrorCode.TOOL_EXECUTION_FAILED.value,
                non_retryable=True,
            ) from error
        state.checkpoint = outcome.checkpoint
        state.usage = state.usage.plus(outcome.usage)
        if outcome.wait is not None:
            wait = self._book.open(
                Wait(
                    id=self._book.free_id(wait_name(outcome.wait.kind, epoch)),
                    kind=outcome.wait.kind,
                    node_id=f"slice{epoch}",
                    prompt=outcome.wait.prompt,
                    created_at=workflow.now(),
                )
            )
            outcome.wait.wait_id = wait.id
            state.pending, state.wait = outcome.wait, wait
        state.last = slice_reply(self._start.session_id, epoch, outcome)
        if outcome.status is SessionStatus.DONE and outcome.answer and state.asked:
            await session_memory.remember(
                self._start,
                f"{self._id()}-{self._generation()}",
                epoch,
                state.asked,
                outcome.answer,
                workflow.now(),
            )
        return state.last

    @staticmethod
    def _id() -> str:
        return workflow.info().workflow_id

    async def _offered(self) -> list[ToolSpec]:
        """The tools the session's agent may call, from its pack's catalog (read once per run
        of the workflow, through an activity, so its history holds what the agent saw)."""
        if self._tools is None:
            catalog = await load_catalog(self._start.scenario)
            tools, problem = session_tools(
                self._start.tools, catalog, bound_to_task=self._start.task is not None
            )
            if problem is not None:
                self._close_if_new(problem)
                raise ApplicationError(problem, type="INVALID_ARGUMENT", non_retryable=True)
            self._tools = tools
        return self._tools

    def _close_if_new(self, problem: str) -> None:
        """A session that has run no slice closes on a problem of its start (its tools, its
        runtime), so a message with a right start begins it anew; one that has its
        conversation keeps it, and refuses each message with the problem."""
        if self._state.last is None:  # no slice has run (or begun)
            self._closed = f"session {self._start.session_id} is closed: {problem}"

    @staticmethod
    def _generation() -> str:
        """This session's life since it started (the same over continue-as-new, new when it
        is started again after it ended): it names its calls, fence and memories apart."""
        return workflow.info().first_execution_run_id[:8]

    def _fenced(self, epoch: int) -> TaskBinding | None:
        """The session's task, with this slice's epoch: the gateway refuses an older one."""
        task = self._start.task
        if task is None:
            return None
        holder = f"session:{self._start.scope}:{self._start.session_id}:{self._generation()}"
        fence = WriterFence(holder=holder, epoch=epoch)
        return task.model_copy(update={"fence": fence})

    def _runtime(self) -> AgentRuntime:
        runtime = runtime_named(self._start.runtime)
        if runtime is None:
            missing = runtime_missing(self._start.runtime)
            self._close_if_new(missing)
            raise ApplicationError(missing, type="CONFIG_INVALID", non_retryable=True)
        return runtime

    def _reply_of_nothing(self, note: str) -> SessionReply:
        return SessionReply(
            session_id=self._start.session_id, status=SessionStatus.DONE, epoch=0, note=note
        )
