"""The agent's management tools: reserved tools in every scenario's catalog that let a plan read
and write its task's ledger, validated and run like any other node.

They run with the agent's actor (`agent:RUN_ID`), so the gateway's rules hold for them too: an
agent records facts, evidence, decisions and relations and creates tasks, but resolves,
completes and cancels nothing. Each write carries an idempotency key naming the run and node,
so a retried call applies once. They need the run to be bound to a task (`harness run --task`),
except a create in a run that works on no task: its first create claims the run's one scope
from the run itself (the `claim_task_scope` update), and a create in another scope is refused.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.tools import ToolSpec
from harness.core.errors import ErrorCode, ToolError
from harness.engine.contracts import TASK_MANAGE_TOOL
from harness.engine.node_evidence import node_evidence
from harness.governance.host_contract import ContractInForce
from harness.governance.task_commands import (
    AddRelation,
    LedgerReceipt,
    ProposeDecision,
    RecordEvidence,
    RecordFact,
    SetStatus,
    TaskCommand,
    TaskOperation,
)
from harness.governance.task_graph import (
    AddDependency,
    CreateTask,
    GraphCommand,
    GraphOperation,
    TaskGraph,
    TaskGraphState,
    scope_problem,
)
from harness.governance.task_ledger import TaskContext
from harness.governance.work import (
    EntityKind,
    EntityRef,
    EvidenceKind,
    RelationType,
    TaskBinding,
    TaskStatus,
)
from scenarios.base import Tool, ToolContext

TASK_LEDGER_SERVICE = "task_ledger"


class TaskLedgerService(Protocol):
    """What the worker gives the management tools: its Temporal client, behind the gateway."""

    async def task_command(self, scope: str, command: TaskCommand) -> LedgerReceipt: ...

    async def scope_command(
        self, command: GraphCommand, *, start_scope: bool = False
    ) -> LedgerReceipt: ...

    async def claim_scope(self, run_id: str, scope: str) -> LedgerReceipt: ...

    async def context(self, scope: str, task_id: str) -> TaskContext: ...

    async def graph(self, scope: str) -> TaskGraphState: ...

    async def contract_in_force(self, scope: str, preset: str | None) -> ContractInForce: ...

    async def open_waits(self, run_ids: list[str]) -> list[dict[str, JsonValue]]: ...


class ContextArgs(BaseModel):
    pass


class FactArgs(BaseModel):
    statement: str = Field(min_length=1, max_length=500)
    source: str = Field(min_length=1, max_length=500, description="Where the fact comes from.")
    confidence: float = Field(ge=0.0, le=1.0)
    evidence_of: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Nodes of this plan whose results support the fact: each is recorded as "
        "TOOL evidence and joined to the fact by a SUPPORTS relation.",
    )


class EvidenceArgs(BaseModel):
    kind: EvidenceKind = EvidenceKind.EXTERNAL
    summary: str = Field(min_length=1, max_length=500)
    location: str | None = Field(default=None, max_length=500)


class DecisionArgs(BaseModel):
    question: str = Field(min_length=1, max_length=500)
    proposal: str = Field(min_length=1, max_length=500)


class RelationArgs(BaseModel):
    source_kind: EntityKind
    source_id: str = Field(min_length=1, max_length=200)
    target_kind: EntityKind
    target_id: str = Field(min_length=1, max_length=200)
    type: RelationType


class TaskManageArgs(BaseModel):
    action: Literal["create", "split", "update", "add_dependency", "get", "list", "runnable"]
    title: str | None = Field(default=None, max_length=500)
    task_id: str | None = Field(
        default=None, description="split: the parent; else the task (default: the run's)."
    )
    depends_on: str | None = None
    status: Literal["ACTIVE", "BLOCKED"] | None = Field(
        default=None, description="update: the task's new status (all an agent may set)."
    )
    reason: str | None = Field(default=None, max_length=500)
    scope: str = Field(
        default="default",
        max_length=63,
        description="create, in a run that works on no task: the new task's scope; the run is "
        "then bound to the task it created.",
    )


def _binding(ctx: ToolContext) -> TaskBinding:
    if ctx.task is None:
        raise ToolError(
            ErrorCode.POLICY_VIOLATION,
            "this run is not bound to a task: start it with `harness run ... --task TASK`",
        )
    return ctx.task


def _ledger(ctx: ToolContext) -> TaskLedgerService:
    service = ctx.services.get(TASK_LEDGER_SERVICE)
    if service is None:
        raise ToolError(ErrorCode.CONFIG_INVALID, "this worker has no task ledger service")
    return service  # type: ignore[return-value]


def agent_actor(ctx: ToolContext) -> str:
    return f"agent:{ctx.run_id}"


def agent_key(ctx: ToolContext) -> str:
    """The idempotency key of this node's write: its run, plan attempt and node."""
    return f"agent:{ctx.run_id}:{ctx.plan_attempt}:{ctx.node_id}"


async def _write(
    ctx: ToolContext,
    operation: TaskOperation,
    part: str = "",
    key: str | None = None,
    task_id: str | None = None,
) -> LedgerReceipt:
    """One command as the agent, to the run's task (or `task_id` of its scope); the key names
    run and node (and `part` of the node's writes), or is the one given. It carries the
    binding's fence: the gateway refuses it if its writer has been superseded."""
    binding = _binding(ctx)
    command = TaskCommand(
        task_id=task_id or binding.task_id,
        actor=agent_actor(ctx),
        operation=operation,
        idempotency_key=key or f"{agent_key(ctx)}{part}",
        fence=binding.fence,
    )
    receipt = await _ledger(ctx).task_command(binding.scope, command)
    if not receipt.accepted:
        raise ToolError(ErrorCode.POLICY_VIOLATION, receipt.reason)
    return receipt


async def context_get(args: ContextArgs, ctx: ToolContext) -> JsonValue:
    binding = _binding(ctx)
    ledger = _ledger(ctx)
    seen = await ledger.context(binding.scope, binding.task_id)
    graph = TaskGraph(await ledger.graph(binding.scope))
    runnable = {task.id for task in graph.runnable()}
    subtasks = [t.id for t in graph.children(binding.task_id) if t.id in runnable]
    running = [run.run_id for run in seen.task.runs if run.ended is None]
    held = await ledger.contract_in_force(binding.scope, seen.task.preset)
    return {
        **seen.model_dump(mode="json"),
        "contract": {
            "preset": held.preset,
            "gates": list[JsonValue](held.gates()),
            "approval_required_tools": list[JsonValue](held.approval_required_tools),
            "task_required_tools": list[JsonValue](held.task_required_tools),
            "rules_in_force": list[JsonValue](held.planning_notes()),
        },
        "open_waits": await ledger.open_waits(running),
        "runnable_subtasks": subtasks,
        "unfinished_dependencies": graph.unfinished_dependencies(binding.task_id)
        if binding.task_id in graph.state.tasks
        else [],
    }


async def fact_record(args: FactArgs, ctx: ToolContext) -> JsonValue:
    fact = await _write(
        ctx, RecordFact(statement=args.statement, source=args.source, confidence=args.confidence)
    )
    supported_by: list[JsonValue] = []
    for node_id in args.evidence_of:
        # the run records each node's evidence when its attempt is done; name it by what it
        # points at, and the ledger joins the relation to it then
        record, _ = node_evidence(ctx.run_id, ctx.plan_attempt, node_id)
        assert record.content_ref is not None and fact.id is not None
        await _write(
            ctx,
            AddRelation(
                source=EntityRef(kind=EntityKind.EVIDENCE, id=record.content_ref),
                target=EntityRef(kind=EntityKind.FACT, id=fact.id),
                type=RelationType.SUPPORTS,
            ),
            f":supports:{node_id}",
        )
        supported_by.append(record.content_ref)
    return {"fact_id": fact.id, "supported_by": supported_by}


async def evidence_record(args: EvidenceArgs, ctx: ToolContext) -> JsonValue:
    receipt = await _write(
        ctx,
        RecordEvidence(
            kind=args.kind,
            summary=args.summary,
            location=args.location,
            run_id=ctx.run_id,
            node_id=ctx.node_id,
        ),
    )
    return {"evidence_id": receipt.id}


async def decision_propose(args: DecisionArgs, ctx: ToolContext) -> JsonValue:
    receipt = await _write(ctx, ProposeDecision(question=args.question, proposal=args.proposal))
    return {"decision_id": receipt.id, "status": "PROPOSED"}


async def relation_manage(args: RelationArgs, ctx: ToolContext) -> JsonValue:
    receipt = await _write(
        ctx,
        AddRelation(
            source=EntityRef(kind=args.source_kind, id=args.source_id),
            target=EntityRef(kind=args.target_kind, id=args.target_id),
            type=args.type,
        ),
    )
    return {"relation_id": receipt.id}


async def task_manage(args: TaskManageArgs, ctx: ToolContext) -> JsonValue:
    ledger = _ledger(ctx)
    if ctx.task is None and args.action == "create":
        return await _create(args, ctx, ledger, args.scope, bind=True)
    binding = _binding(ctx)
    task_id = args.task_id or binding.task_id
    if args.action in ("get", "list", "runnable"):
        graph = TaskGraph(await ledger.graph(binding.scope))
        if args.action == "runnable":
            return [task.model_dump(mode="json") for task in graph.runnable()]
        if args.action == "list":
            return [task.model_dump(mode="json") for task in graph.state.tasks.values()]
        task = graph.state.tasks.get(task_id)
        if task is None:
            raise ToolError(ErrorCode.MISSING_INFO, f"no task '{task_id}'")
        return task.model_dump(mode="json")
    if args.action == "update":
        if args.status is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "update needs a status")
        status = SetStatus(status=TaskStatus(args.status), reason=args.reason)
        receipt = await _write(ctx, status, task_id=task_id)
        return {"task_id": receipt.id, "reason": receipt.reason}
    if args.action == "add_dependency":
        if args.depends_on is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "add_dependency needs depends_on")
        operation = AddDependency(task_id=task_id, depends_on=args.depends_on)
        return await _graph(ctx, ledger, binding.scope, operation)
    parent = task_id if args.action == "split" else None
    return await _create(args, ctx, ledger, binding.scope, bind=False, parent=parent)


async def _create(
    args: TaskManageArgs,
    ctx: ToolContext,
    ledger: TaskLedgerService,
    scope: str,
    *,
    bind: bool,
    parent: str | None = None,
) -> JsonValue:
    if not args.title:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{args.action} needs a title")
    problem = scope_problem(scope)
    if problem:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, problem)
    if bind:  # a run that works on no task: its first create claims the one scope it writes in
        claim = await ledger.claim_scope(ctx.run_id, scope)
        if not claim.accepted:
            raise ToolError(ErrorCode.POLICY_VIOLATION, claim.reason)
    created = await _graph(
        ctx, ledger, scope, CreateTask(title=args.title, parent_id=parent), start_scope=bind
    )
    return {**created, "scope": scope, "bound": bind}


async def _graph(
    ctx: ToolContext,
    ledger: TaskLedgerService,
    scope: str,
    operation: GraphOperation,
    *,
    start_scope: bool = False,
) -> dict[str, JsonValue]:
    command = GraphCommand(
        scope=scope,
        actor=agent_actor(ctx),
        operation=operation,
        idempotency_key=agent_key(ctx),
    )
    receipt = await ledger.scope_command(command, start_scope=start_scope)
    if not receipt.accepted:
        raise ToolError(ErrorCode.POLICY_VIOLATION, receipt.reason)
    return {"task_id": receipt.id, "reason": receipt.reason}


def _tool(name: str, description: str, arguments: type[BaseModel], run: object) -> Tool:
    spec = ToolSpec.from_model(name, description, arguments, cost_hint=0.1, idempotent=True)
    return Tool(spec=spec, arguments=arguments, run=run)  # type: ignore[arg-type]


MANAGEMENT_TOOLS: tuple[Tool, ...] = (
    _tool(
        "harness_context_get",
        "Read the run's task: its valid facts, decisions, recent evidence, relations, runnable "
        "subtasks and unfinished dependencies.",
        ContextArgs,
        context_get,
    ),
    _tool(
        TASK_MANAGE_TOOL,
        "Create or split tasks, add a dependency between tasks, get a task, list runnable tasks.",
        TaskManageArgs,
        task_manage,
    ),
    _tool(
        "harness_fact_record",
        "Record a fact on the run's task, with its source and confidence; evidence_of names the "
        "nodes whose results support it.",
        FactArgs,
        fact_record,
    ),
    _tool(
        "harness_evidence_record",
        "Record a pointer at an artefact as evidence on the run's task.",
        EvidenceArgs,
        evidence_record,
    ),
    _tool(
        "harness_decision_propose",
        "Propose a decision on the run's task; a person or a system resolves it.",
        DecisionArgs,
        decision_propose,
    ),
    _tool(
        "harness_relation_manage",
        "Relate two records of the run's task (SUPPORTS: evidence backs a fact or decision).",
        RelationArgs,
        relation_manage,
    ),
)
MANAGEMENT_TOOL_NAMES = frozenset(tool.spec.name for tool in MANAGEMENT_TOOLS)
