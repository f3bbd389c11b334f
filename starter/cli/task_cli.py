"""The arguments of `harness task|fact|evidence|decision|context`, checked before anything is
sent (starter.cli.task_actions does the work).

Every write names its `--actor` and may carry an idempotency `--key`, and is signed with
`--signing-key FILE` (or $HARNESS_ACTOR_KEY_FILE) where the scope keys its actor.
"""

from __future__ import annotations

import argparse

from harness.governance.state_size import actor_problem
from harness.governance.task_graph import scope_problem
from harness.governance.work import SUMMARY_CHARS, EvidenceKind, TaskStatus
from infra.settings import Settings
from starter.cli.cli_handlers import handled

MAX_KEY_CHARS = 200


def dispatch_task(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import task_actions  # the Temporal client: loaded when the command runs

    return task_actions.dispatch_task(args, settings)


def _actor(text: str) -> str:
    problem = actor_problem(text)  # the gateways' own check, before anything is sent
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def scope_name(text: str) -> str:
    problem = scope_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def text_argument(text: str) -> str:
    if not text.strip() or len(text) > SUMMARY_CHARS:
        raise argparse.ArgumentTypeError(f"the text has 1 to {SUMMARY_CHARS} characters")
    return text


def _key(text: str) -> str:
    if not text.strip() or len(text) > MAX_KEY_CHARS:
        raise argparse.ArgumentTypeError(f"a key has 1 to {MAX_KEY_CHARS} characters")
    return text


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{value} is not a confidence between 0 and 1")
    return value


def common_arguments(parser: argparse.ArgumentParser, *, writes: bool) -> None:
    parser.add_argument("--scope", type=scope_name, default="default", help="tenant, shop, project")
    parser.add_argument("--json", action="store_true")
    if writes:
        parser.add_argument("--actor", type=_actor, required=True, help="human:, system:, agent:")
        parser.add_argument(
            "--key", type=_key, help="idempotency key: the same command twice applies once"
        )
        parser.add_argument(
            "--signing-key",
            metavar="FILE",
            help="sign as the actor with this private key file ($HARNESS_ACTOR_KEY_FILE)",
        )


def add_task_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    task = handled(
        commands.add_parser("task", help="tasks that many runs work on"), dispatch_task
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    create = task.add_parser("create", help="a new task in a scope; prints its id")
    create.add_argument("title", type=text_argument)
    create.add_argument("--parent", help="the task this one is part of")
    create.add_argument("--depends-on", action="append", default=[], metavar="TASK")
    create.add_argument("--preset", help="the task type: its scope's contract preset (e.g. refund)")
    common_arguments(create, writes=True)
    split = task.add_parser("split", help="a subtask of TASK")
    split.add_argument("task_id")
    split.add_argument("title", type=text_argument)
    common_arguments(split, writes=True)
    depend = task.add_parser("depend", help="TASK depends on DEPENDENCY (no cycles)")
    depend.add_argument("task_id")
    depend.add_argument("dependency")
    common_arguments(depend, writes=True)
    for name, help_text in (
        ("cancel", "cancel a task"),
        ("complete", "complete a task IN_REVIEW: every gate must pass"),
    ):
        finish = task.add_parser(name, help=f"{help_text} (people and systems only)")
        finish.add_argument("task_id")
        finish.add_argument("--reason", type=text_argument)
        common_arguments(finish, writes=True)
    show = task.add_parser("show", help="a task, its dependencies and its ledger's counts")
    show.add_argument("task_id")
    common_arguments(show, writes=False)
    listing = task.add_parser("list", help="a scope's tasks, through Temporal's visibility")
    listing.add_argument("--status", type=TaskStatus, choices=list(TaskStatus))
    common_arguments(listing, writes=False)
    runnable = task.add_parser("runnable", help="ACTIVE tasks whose dependencies are DONE")
    common_arguments(runnable, writes=False)

    fact = handled(
        commands.add_parser("fact", help="facts of a task"), dispatch_task
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    record = fact.add_parser("record", help="record what is believed, with source and confidence")
    record.add_argument("task_id")
    record.add_argument("statement", type=text_argument)
    record.add_argument("--source", type=text_argument, required=True)
    record.add_argument("--confidence", type=_confidence, required=True)
    common_arguments(record, writes=True)
    invalidate = fact.add_parser("invalidate", help="mark a fact no longer valid (kept)")
    invalidate.add_argument("task_id")
    invalidate.add_argument("fact_id")
    invalidate.add_argument("--reason", type=text_argument, required=True)
    common_arguments(invalidate, writes=True)

    evidence = handled(
        commands.add_parser("evidence", help="evidence of a task"), dispatch_task
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    listed = evidence.add_parser("list", help="every evidence record of a task")
    listed.add_argument("task_id")
    common_arguments(listed, writes=False)
    add = evidence.add_parser("record", help="append a pointer at an artefact")
    add.add_argument("task_id")
    add.add_argument("--kind", type=EvidenceKind, choices=list(EvidenceKind), required=True)
    add.add_argument("--summary", type=text_argument, required=True)
    add.add_argument("--location", type=text_argument)
    add.add_argument("--content-ref", type=text_argument)
    common_arguments(add, writes=True)

    decision = handled(
        commands.add_parser("decision", help="decisions of a task"), dispatch_task
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    propose = decision.add_parser("propose", help="a question with a proposed answer")
    propose.add_argument("task_id")
    propose.add_argument("question", type=text_argument)
    propose.add_argument("--proposal", type=text_argument, required=True)
    common_arguments(propose, writes=True)
    resolve = decision.add_parser("resolve", help="accept or --reject a proposal")
    resolve.add_argument("task_id")
    resolve.add_argument("decision_id")
    resolve.add_argument("--reject", action="store_true")
    resolve.add_argument("--reason", type=text_argument, required=True)
    common_arguments(resolve, writes=True)

    submit = handled(
        commands.add_parser("submit", help="submit a task's result for review"), dispatch_task
    )
    submit.add_argument("task_id")
    submit.add_argument("--summary", type=text_argument, required=True)
    submit.add_argument(
        "--evidence", action="append", default=[], metavar="ID", help="evidence it rests on"
    )
    common_arguments(submit, writes=True)
    review = handled(
        commands.add_parser("review", help="approve a submission, or request changes"),
        dispatch_task,
    )
    review.add_argument("task_id")
    review.add_argument("submission_id")
    verdict = review.add_mutually_exclusive_group(required=True)
    verdict.add_argument("--approve", action="store_true")
    verdict.add_argument("--changes-requested", action="store_true")
    review.add_argument("--comment")
    common_arguments(review, writes=True)

    context = handled(
        commands.add_parser("context", help="a task with what is believed and why"), dispatch_task
    )
    context.add_argument("task_id")
    common_arguments(context, writes=False)
