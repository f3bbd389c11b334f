"""Agent sessions: an agent that talks with someone over time, one bounded slice per message.

A session is one long-lived workflow per session id, in a scope. Each message it is sent runs
one *slice* of its agent's loop, bounded by `SliceLimits` (turns and a budget), and is answered
with a `SessionReply`: DONE with the answer, WAITING with the wait to answer, or
CONTINUATION_REQUIRED when work remains (the next slice, on any worker, goes on from the
checkpoint). Messages are taken one at a time, in the order they came.

The agent itself is an `AgentRuntime` (harness.engine.agent_runtime): the built-in loop, or an
adapter for another runtime. The session keeps the runtime's checkpoint between slices, opens
the waits the runtime asks for, and gives each slice an `epoch`: a slice's writes to its task
carry it, so a write from a slice the session has moved past is refused (a `WriterFence`).

Pure models and rules: no Temporal, no I/O.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.tools import RESERVED_TOOL_PREFIX, ToolCatalog, ToolSpec
from harness.core.usage import TokenUsage
from harness.engine.agent_loop import AgentWaitAnswer, wait_outcome
from harness.engine.agent_node import AgentToolCall, agent_may_call, agent_tool_names
from harness.engine.budget import BudgetLimits
from harness.governance.work import TaskBinding
from harness.waits.approval_cover import approval_refusal
from harness.waits.wait_book import Wait, WaitKind, WaitStatus

MESSAGE_CHARS: Final = 20_000
"""The longest message a session takes (its conversation is compacted, but one message is
sent whole to every later turn until it is cut)."""
BUILTIN_RUNTIME: Final = "builtin"
SESSION_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$"


class SessionStatus(StrEnum):
    """How a slice ended."""

    DONE = "DONE"  # the agent answered
    WAITING = "WAITING"  # it waits for a person (answer or approve the wait named)
    CONTINUATION_REQUIRED = "CONTINUATION_REQUIRED"  # its slice's limits came first


class SliceLimits(BaseModel):
    """What one slice may take: model turns, and a budget of its own."""

    max_turns: int = Field(default=6, ge=1, le=50, description="Model turns per slice.")
    budget: BudgetLimits = Field(
        default_factory=lambda: BudgetLimits(max_tokens=60_000, max_tool_calls=24),
        description="Tokens, tool calls and cost one slice may spend.",
    )


class RuntimeCheckpoint(BaseModel):
    """A runtime's exported state: all it needs to resume, as JSON, on any worker."""

    runtime: str = Field(description="The runtime that wrote it, e.g. `builtin`.")
    state: JsonValue = Field(description="The runtime's own state (its conversation and more).")


class PendingWait(BaseModel):
    """A call of the agent that waits for a person: the session opens a wait for it, and the
    slice ends WAITING until the wait is answered."""

    call_id: str = Field(description="The runtime's id of the call that waits.")
    tool: str = Field(description="`ask_user` or `request_approval` (or the runtime's own).")
    kind: WaitKind
    prompt: str
    wait_id: str | None = Field(default=None, description="The session's wait, once opened.")


class WaitResult(BaseModel):
    """How a pending wait ended, as the runtime applies it to its state: the call's result
    (ok), or why there is none."""

    call_id: str
    tool: str
    ok: bool
    result: JsonValue = None
    error: str | None = None


class SliceRequest(BaseModel):
    """What the session asks its runtime to do in one slice."""

    session_id: str
    workflow_id: str = Field(description="The session's workflow id: tools see it as the run.")
    scenario: str
    epoch: int = Field(ge=1, description="This slice's number: its writes carry it.")
    tools: list[ToolSpec] = Field(description="The pack's tools the agent may call.")
    limits: SliceLimits
    provider: str | None = None
    model: str | None = None
    task: TaskBinding | None = None
    node_id: str | None = Field(
        default=None,
        description="What the conversation's calls are named under (their idempotency keys' "
        "part): unique in the workflow, a restarted session's too; none: the session id.",
    )
    plan_attempt: int = Field(default=1, ge=1, description="An agent node's plan attempt.")

    def calls_named(self) -> str:
        return self.node_id or self.session_id


class SliceResult(BaseModel):
    """What one slice did, and the checkpoint the next one resumes from."""

    status: SessionStatus
    checkpoint: RuntimeCheckpoint
    answer: str | None = None
    wait: PendingWait | None = None
    turns: int = Field(default=0, ge=0)
    tool_calls: list[AgentToolCall] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)


class SessionMessage(BaseModel):
    """One message to a session: text, or none to continue the work a slice left."""

    text: str | None = Field(default=None, max_length=MESSAGE_CHARS)
    actor: str = Field(default="human:user", description="Who sends it.")


class SessionReply(BaseModel):
    """The session's answer to one message."""

    session_id: str
    status: SessionStatus
    epoch: int = Field(ge=0, description="The slice that answered (0: none ran yet).")
    answer: str | None = None
    wait_id: str | None = Field(default=None, description="The wait to answer (WAITING).")
    prompt: str | None = Field(default=None, description="What the wait asks (WAITING).")
    wait_kind: WaitKind | None = Field(default=None, description="USER_INPUT or APPROVAL.")
    turns: int = 0
    tool_calls: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    note: str | None = Field(default=None, description="Why nothing ran, when nothing did.")

    def line(self) -> str:
        """One line: the status and what it needs."""
        if self.status is SessionStatus.WAITING:
            return f"WAITING {self.wait_id}: {self.prompt}"
        if self.status is SessionStatus.CONTINUATION_REQUIRED:
            return (
                f"CONTINUATION_REQUIRED after slice {self.epoch} ({self.turns} turn(s)): "
                "continue it with --continue"
            )
        return "DONE"


class SessionStart(BaseModel):
    """What a session workflow starts from (and what it carries over continue-as-new)."""

    session_id: str = Field(pattern=SESSION_ID_PATTERN)
    scope: str = Field(default="default", min_length=1, max_length=63)
    scenario: str = "cities"
    tools: list[str] | None = Field(
        default=None, description="The tools offered; none: every tool an agent may call."
    )
    runtime: str = Field(default=BUILTIN_RUNTIME, description="The AgentRuntime, by name.")
    provider: str | None = None
    model: str | None = None
    limits: SliceLimits = Field(default_factory=SliceLimits)
    task: TaskBinding | None = None
    carried: SessionState | None = None


class SessionState(BaseModel):
    """The session so far: its runtime's checkpoint, the wait it is parked on, its last
    reply, and its counts."""

    epoch: int = 0
    checkpoint: RuntimeCheckpoint | None = None
    pending: PendingWait | None = None
    wait: Wait | None = Field(default=None, description="The session's wait for `pending`.")
    last: SessionReply | None = None
    asked: str | None = Field(default=None, description="The newest message, as sent.")
    messages: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)

    def parked(self) -> Wait | None:
        """The wait the session waits on, while it is not answered."""
        wait = self.wait
        return wait if wait is not None and wait.status is WaitStatus.PENDING else None

    def answered(self) -> bool:
        """The wait it was parked on has ended: the next slice is to run."""
        return self.wait is not None and self.wait.status is not WaitStatus.PENDING

    def parked_line(self, session_id: str, workflow_id: str) -> str:
        """Why a message is refused while the session waits, and what to do."""
        wait = self.wait
        assert wait is not None
        verb = "approve" if wait.kind is WaitKind.APPROVAL else "answer"
        return (
            f"session {session_id} waits on {wait.id} ({wait.prompt}): "
            f"{verb} it first (harness {verb} {workflow_id} {wait.id} ...)"
        )

    def wait_result(self) -> WaitResult:
        """How the wait ended, as the call that waited is given it (as an agent node's)."""
        wait, pending = self.wait, self.pending
        assert wait is not None and pending is not None
        refusal = approval_refusal(wait) if wait.kind is WaitKind.APPROVAL else None
        answer = AgentWaitAnswer(
            ask_id=1, wait_id=wait.id, status=wait.status, payload=wait.payload, refusal=refusal
        )
        ok, result, why = wait_outcome(wait.kind, answer)
        return WaitResult(
            call_id=pending.call_id, tool=pending.tool, ok=ok, result=result, error=why or None
        )


def session_workflow_id(scope: str, session_id: str) -> str:
    """The one workflow of a session: its id names its scope and itself."""
    return f"session:{scope}:{session_id}"  # a scope has no ':', so no two sessions meet


def session_tools(
    listed: list[str] | None, catalog: ToolCatalog, *, bound_to_task: bool
) -> tuple[list[ToolSpec], str | None]:
    """The tools a session's agent is offered: those `listed`, or every tool of the pack an
    agent may call (and, on a task, the management tools); or why the list cannot be. A tool
    whose every call waits for an approval is not offered yet: a slice would have to end on
    the approval and make the call in the next one (the model may still ask with
    `request_approval`)."""
    callable_names = [
        tool.name
        for tool in catalog.tools
        if agent_may_call(tool)
        and not tool.name.startswith(RESERVED_TOOL_PREFIX)
        and not (tool.requires_approval or tool.side_effects)  # see below
    ]
    names = callable_names if listed is None else listed
    wrong = [name for name in names if name not in callable_names]
    if wrong:
        return [], (
            f"tools: {', '.join(wrong)} cannot be called by an agent of pack "
            f"'{catalog.scenario}'; it may call {', '.join(callable_names) or 'none'}"
        )
    names = agent_tool_names(names, catalog, bound_to_task=bound_to_task)
    return [spec for name in names if (spec := catalog.get(name)) is not None], None


def wait_name(kind: WaitKind, epoch: int) -> str:
    """A session wait's id: what it asks, and the slice that asked (`question-3`)."""
    return f"{'approval' if kind is WaitKind.APPROVAL else 'question'}-{epoch}"


def slice_reply(session_id: str, epoch: int, outcome: SliceResult) -> SessionReply:
    """The session's answer for a slice that ran."""
    wait = outcome.wait
    return SessionReply(
        session_id=session_id,
        status=outcome.status,
        epoch=epoch,
        answer=outcome.answer,
        wait_id=wait.wait_id if wait else None,
        prompt=wait.prompt if wait else None,
        wait_kind=wait.kind if wait else None,
        turns=outcome.turns,
        tool_calls=len(outcome.tool_calls),
        usage=outcome.usage,
    )


SessionStart.model_rebuild()  # it names SessionState, defined after it
