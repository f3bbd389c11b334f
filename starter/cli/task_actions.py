"""`harness task|fact|evidence|decision|context`: the task ledger from the command line.

A refused write is one line and exit 2, and changes nothing. Reads print a short text, or JSON
with `--json`.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable

from pydantic import ValidationError
from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.service import RPCError

from durable_harness._client import runs, tasks
from durable_harness._client.signed_actors import signed_command
from harness.core.problems import describe_invalid
from harness.governance.task_commands import (
    Complete,
    InvalidateFact,
    LedgerReceipt,
    ProposeDecision,
    RecordEvidence,
    RecordFact,
    ResolveDecision,
    ReviewSubmission,
    SetStatus,
    Submit,
    TaskCommand,
    TaskOperation,
)
from harness.governance.task_graph import (
    AddDependency,
    CreateTask,
    GraphCommand,
    GraphOperation,
    TaskGraph,
)
from harness.governance.work import TaskStatus
from infra.settings import Settings
from starter import output
from starter.errors import CliError


def dispatch_task(args: argparse.Namespace, settings: Settings) -> int:
    handlers: dict[tuple[str, str | None], Callable[[], Awaitable[int]]] = {
        ("task", "create"): lambda: _graph(args, settings, _create(args)),
        ("task", "split"): lambda: _graph(
            args, settings, CreateTask(title=args.title, parent_id=args.task_id)
        ),
        ("task", "depend"): lambda: _graph(
            args, settings, AddDependency(task_id=args.task_id, depends_on=args.dependency)
        ),
        ("task", "cancel"): lambda: _write(
            args, settings, SetStatus(status=TaskStatus.CANCELLED, reason=args.reason)
        ),
        ("task", "complete"): lambda: _write(args, settings, Complete(reason=args.reason)),
        ("submit", None): lambda: _write(
            args, settings, Submit(summary=args.summary, evidence_ids=args.evidence)
        ),
        ("review", None): lambda: _write(
            args,
            settings,
            ReviewSubmission(
                submission_id=args.submission_id, approve=args.approve, comment=args.comment
            ),
        ),
        ("task", "show"): lambda: _show(args, settings),
        ("task", "list"): lambda: _list(args, settings),
        ("task", "runnable"): lambda: _runnable(args, settings),
        ("fact", "record"): lambda: _write(
            args,
            settings,
            RecordFact(statement=args.statement, source=args.source, confidence=args.confidence),
        ),
        ("fact", "invalidate"): lambda: _write(
            args, settings, InvalidateFact(fact_id=args.fact_id, reason=args.reason)
        ),
        ("evidence", "list"): lambda: _evidence(args, settings),
        ("evidence", "record"): lambda: _write(
            args,
            settings,
            RecordEvidence(
                kind=args.kind,
                summary=args.summary,
                location=args.location,
                content_ref=args.content_ref,
            ),
        ),
        ("decision", "propose"): lambda: _write(
            args, settings, ProposeDecision(question=args.question, proposal=args.proposal)
        ),
        ("decision", "resolve"): lambda: _write(
            args,
            settings,
            ResolveDecision(
                decision_id=args.decision_id, accept=not args.reject, reason=args.reason
            ),
        ),
        ("context", None): lambda: _context(args, settings),
    }
    return run_handler(handlers[(args.command, getattr(args, "action", None))])


def run_handler(handler: Callable[[], Awaitable[int]]) -> int:
    """Build the command (a model that refuses it sends nothing: one line, exit 2), then send
    it, a refusal being bad input too."""
    try:
        work = handler()
    except ValidationError as error:
        raise CliError(describe_invalid(error, whole="command")) from error
    return asyncio.run(refusals_are_bad_input(work))


async def refusals_are_bad_input(work: Awaitable[int]) -> int:
    """A refusal (TaskRefused), an unknown task (NotFound) or a server not set up for tasks
    (InvalidInput) is a public exception, shown by `main` with its exit code (2); what Temporal
    itself fails is 1."""
    try:
        return await work
    except WorkflowUpdateRPCTimeoutOrCancelledError as error:
        raise CliError("the task did not answer in time: is a worker running?", 1) from error
    except RPCError as error:
        raise CliError(f"Temporal refused: {error.message}", 1) from error


def _create(args: argparse.Namespace) -> CreateTask:
    return CreateTask(
        title=args.title, parent_id=args.parent, depends_on=args.depends_on, preset=args.preset
    )


async def _graph(args: argparse.Namespace, settings: Settings, operation: GraphOperation) -> int:
    command = GraphCommand(
        scope=args.scope, actor=args.actor, operation=operation, idempotency_key=args.key
    )
    command = signed_command(command, args.scope, args.signing_key)
    client = await runs.client_for(settings)
    return print_receipt(args, await tasks.scope_command(client, settings.task_queue, command))


async def _write(args: argparse.Namespace, settings: Settings, operation: TaskOperation) -> int:
    command = TaskCommand(
        task_id=args.task_id, actor=args.actor, operation=operation, idempotency_key=args.key
    )
    command = signed_command(command, args.scope, args.signing_key)
    client = await runs.client_for(settings)
    return print_receipt(args, await tasks.task_command(client, args.scope, command))


def print_receipt(args: argparse.Namespace, receipt: LedgerReceipt) -> int:
    """Exit 1 when a completion's gates did not all pass (the task stays IN_REVIEW)."""
    if args.json:
        output.emit_json(receipt.model_dump(mode="json"))
    else:
        for gate in receipt.gates:
            print(f"{'PASS' if gate.passed else 'FAIL'}  {gate.gate}: {gate.reason}")
        reason = f"already applied under key {args.key}" if receipt.duplicate else receipt.reason
        print(f"{receipt.id}: {reason}")
    return 1 if any(not gate.passed for gate in receipt.gates) else 0


async def _show(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    state = await tasks.ledger(client, args.scope, args.task_id)
    graph = await tasks.graph(client, args.scope)
    node = graph.tasks.get(args.task_id)
    depends_on = node.depends_on if node else []
    unfinished = [d for d in depends_on if graph.tasks[d].status is not TaskStatus.DONE]
    if args.json:
        output.emit_json(
            {
                "task": state.task.model_dump(mode="json"),
                "depends_on": depends_on,
                "unfinished_dependencies": unfinished,
                "subtasks": [t.id for t in graph.tasks.values() if t.parent_id == args.task_id],
                "records": {
                    "facts": len(state.facts),
                    "evidence": len(state.evidence),
                    "decisions": len(state.decisions),
                    "relations": len(state.relations),
                },
            }
        )
        return 0
    task = state.task
    print(f"{task.id} [{task.status.value}] {task.title} (scope {task.scope})")
    if task.parent_id:
        print(f"  part of {task.parent_id}")
    if depends_on:
        print(f"  depends on {', '.join(depends_on)}; unfinished: {', '.join(unfinished) or '-'}")
    if task.preset:
        print(f"  preset {task.preset}")
    for run in task.runs:
        repair = f" (a repair of {run.repair_of})" if run.repair_of else ""
        print(f"  run {run.run_id}: {run.ended or 'running'}{repair}")
    print(
        f"  {len(state.facts)} facts, {len(state.evidence)} evidence, "
        f"{len(state.decisions)} decisions, {len(state.relations)} relations"
    )
    return 0


async def _list(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    await tasks.check_search_attributes(client)
    found = await tasks.listed(client, args.scope, args.status)
    if args.json:
        output.emit_json([{"id": task_id, "status": status} for task_id, status in found])
    else:
        for task_id, status in found:
            print(f"{task_id}  {status}")
        if not found:
            print("(no tasks)")
    return 0


async def _runnable(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    ready = TaskGraph(await tasks.graph(client, args.scope)).runnable()
    if args.json:
        output.emit_json([task.model_dump(mode="json") for task in ready])
    else:
        for task in ready:
            print(f"{task.id}  {task.title}")
        if not ready:
            print("(no runnable tasks)")
    return 0


async def _evidence(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    state = await tasks.ledger(client, args.scope, args.task_id)
    if args.json:
        output.emit_json([record.model_dump(mode="json") for record in state.evidence])
    else:
        for record in state.evidence:
            where = record.content_ref or record.location or ""
            print(f"{record.id}  {record.kind.value:<8} {record.summary}  {where}".rstrip())
        if not state.evidence:
            print("(no evidence)")
    return 0


async def _context(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    seen = await tasks.context(client, args.scope, args.task_id)
    if args.json:
        output.emit_json(seen.model_dump(mode="json"))
        return 0
    task = seen.task
    print(f"{task.id} [{task.status.value}] {task.title} (scope {task.scope})")
    print(f"facts ({len(seen.valid_facts)} valid, {seen.invalidated_facts} invalidated):")
    for fact in seen.valid_facts:
        print(f"  {fact.id}  {fact.statement}  ({fact.source}, {fact.confidence:.2f})")
    print(f"evidence ({seen.evidence_count}, the last {len(seen.recent_evidence)}):")
    for record in seen.recent_evidence:
        print(f"  {record.id}  {record.kind.value:<8} {record.summary}")
    print(f"decisions ({len(seen.open_decisions)} open):")
    for decision in [*seen.open_decisions, *seen.resolved_decisions]:
        print(
            f"  {decision.id}  [{decision.status.value}] {decision.question} -> {decision.proposal}"
        )
    print("relations:")
    for relation in seen.relations:
        print(f"  {relation.source.label()} {relation.type.value} {relation.target.label()}")
    for submission in seen.submissions:
        print(
            f"submission {submission.id} [{submission.status.value}] by {submission.submitted_by}"
        )
    for review in seen.reviews:
        verdict = "approved" if review.approved else "changes requested"
        comment = f": {review.comment}" if review.comment else ""
        by = f"by {review.reviewed_by}{comment}"
        print(f"review {review.id} of {review.submission_id}: {verdict} {by}")
    held = await tasks.contract_in_force(client, args.scope, task.preset)
    preset = f" (preset {held.preset})" if held.preset else ""
    print(f"contract in force{preset}: gates {', '.join(held.gates()) or '-'}")
    for note in held.planning_notes():
        print(f"  {note}")
    return 0
