"""What `harness chat` does once its arguments are parsed (starter.cli.chat_cli)."""

from __future__ import annotations

import argparse

from durable_harness.client import Harness
from durable_harness.exceptions import InvalidInput
from harness.engine.sessions import SessionReply, SessionStatus, SliceLimits, session_workflow_id
from harness.governance.work import TaskBinding
from harness.waits.wait_book import WaitKind
from infra.settings import Settings
from starter import output


async def chat(args: argparse.Namespace, settings: Settings) -> int:
    if args.resume == (args.message is not None):
        raise InvalidInput("give a message, or --continue to run the next slice (not both)")
    limits = SliceLimits()
    if args.max_turns is not None:
        limits.max_turns = args.max_turns
    if args.slice_tokens is not None:
        limits.budget = limits.budget.model_copy(update={"max_tokens": args.slice_tokens})
    harness = await Harness.with_settings(settings)
    if not await harness.has_worker():
        output.note(
            f"no worker is polling task queue '{settings.task_queue}' yet; "
            "start one with `harness worker` (the message waits for it)"
        )
    reply = await harness.send(
        args.session,
        args.message,
        scope=args.scope,
        actor=args.actor,
        scenario=args.scenario,
        tools=[name.strip() for name in args.tools.split(",")] if args.tools else None,
        runtime=args.runtime,
        provider=args.provider,
        model=args.model,
        limits=limits,
        task=TaskBinding(scope=args.scope, task_id=args.task) if args.task else None,
    )
    print(reply.model_dump_json(indent=2) if args.json else shown(reply, args.scope))
    return 0


def shown(reply: SessionReply, scope: str) -> str:
    """The reply as `harness chat` prints it: the status line, then the answer or what to do."""
    lines = [reply.line()]
    if reply.status is SessionStatus.WAITING:
        workflow_id = session_workflow_id(scope, reply.session_id)
        if reply.wait_kind is WaitKind.APPROVAL:
            hint = f"harness approve {workflow_id} {reply.wait_id} --actor human:NAME"
        else:
            hint = f'harness answer {workflow_id} {reply.wait_id} "..."'
        lines.append(f"    -> {hint}")
    if reply.note:
        lines.append(f"({reply.note})")
    if reply.answer:
        lines.append(reply.answer)
    return "\n".join(lines)
