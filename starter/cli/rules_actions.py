"""`harness contract|lesson|keys`: a scope's contract, its lessons and its actor keys from the
command line.

A refused write is one line and exit 2, and changes nothing: the line says which rule refused.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import ValidationError

from durable_harness._client import runs, tasks
from durable_harness._client.input_files import read_text_file
from durable_harness._client.signed_actors import actor_keys, signed_command
from harness.core.problems import describe_invalid
from harness.governance.host_contract import BUILT_IN_GATES, Contract, RuleKind, did_you_mean
from harness.governance.scope_rules import (
    PromoteLesson,
    ProposeLesson,
    ResolveLesson,
    RevokeRule,
    RulesCommand,
    RulesOperation,
    SetContract,
    SetKeys,
)
from infra.settings import Settings
from scenarios import acceptance_checks, all_scenarios
from starter import output
from starter.cli.task_actions import print_receipt, run_handler
from starter.errors import CliError


def dispatch_rules(args: argparse.Namespace, settings: Settings) -> int:
    handlers: dict[tuple[str, str], Callable[[], Awaitable[int]]] = {
        ("contract", "show"): lambda: _show_contract(args, settings),
        ("contract", "set"): lambda: _write(args, settings, SetContract(contract=_contract(args))),
        ("lesson", "propose"): lambda: _write(
            args,
            settings,
            ProposeLesson(
                fact=args.fact,
                question=args.question,
                proposal=args.proposal,
                evidence=args.evidence,
                task_id=args.task_id,
            ),
        ),
        ("lesson", "resolve"): lambda: _write(
            args,
            settings,
            ResolveLesson(lesson_id=args.lesson_id, accept=not args.reject, reason=args.reason),
        ),
        ("lesson", "promote"): lambda: _write(args, settings, _promotion(args)),
        ("lesson", "revoke"): lambda: _write(
            args, settings, RevokeRule(rule_id=args.rule_id, reason=args.reason)
        ),
        ("lesson", "list"): lambda: _list(args, settings),
        ("keys", "set"): lambda: _write(args, settings, SetKeys(keys=actor_keys(args.keys))),
        ("keys", "show"): lambda: _show_keys(args, settings),
    }
    return run_handler(handlers[(args.command, args.action)])


def _contract(args: argparse.Namespace) -> Contract:
    path = Path(args.file)
    try:
        data = json.loads(read_text_file(path, f"the contract {path}"))
    except json.JSONDecodeError as error:
        raise CliError(f"{path} is not JSON: {error.msg} at line {error.lineno}") from error
    except RecursionError as error:
        raise CliError(f"{path} nests too deeply to read") from error
    try:
        contract = Contract.model_validate(data)
    except ValidationError as error:
        raise CliError(f"{path}: {describe_invalid(error, whole='contract')}") from error
    problems = contract.problems() + _unknown_names(contract)
    if problems:
        raise CliError(f"{path}: {problems[0]}")
    return contract


def _unknown_names(contract: Contract) -> list[str]:
    """Checks and tools no scenario of this harness has: a typo would bind nothing."""
    checks = sorted(acceptance_checks())
    tools = sorted({name for scenario in all_scenarios() for name in scenario.catalog().names()})
    wanted = [*contract.required_checks]
    for preset in contract.presets.values():
        wanted += preset.required_checks
    found = [
        f"no acceptance check '{name}' is registered{did_you_mean(name, checks)}"
        for name in wanted
        if name not in checks
    ]
    found += [
        f"no scenario has a tool '{name}'{did_you_mean(name, tools)}"
        for name in [*contract.task_required_tools, *contract.approval_required_tools]
        if name not in tools
    ]
    return found


def _promotion(args: argparse.Namespace) -> PromoteLesson:
    rule = PromoteLesson(
        lesson_id=args.lesson_id, kind=args.rule, target=args.target, preset=args.preset
    )
    probe = Contract(
        required_checks=[rule.target] if rule.kind is RuleKind.REQUIRE_ACCEPTANCE_CHECK else [],
        approval_required_tools=[rule.target] if rule.kind.is_tool_rule else [],
    )
    unknown = [] if rule.target in BUILT_IN_GATES else _unknown_names(probe)
    if unknown:
        raise CliError(unknown[0])
    return rule


async def _write(args: argparse.Namespace, settings: Settings, operation: RulesOperation) -> int:
    command = RulesCommand(
        scope=args.scope, actor=args.actor, operation=operation, idempotency_key=args.key
    )
    command = signed_command(command, args.scope, args.signing_key)
    client = await runs.client_for(settings)
    return print_receipt(args, await tasks.rules_command(client, settings.task_queue, command))


async def _show_contract(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    state = await tasks.scope_rules(client, args.scope)
    if args.preset is not None:
        held = await tasks.contract_in_force(client, args.scope, args.preset)
        if args.json:
            output.emit_json(held.model_dump(mode="json"))
            return 0
        print(f"the contract in force for preset {args.preset} in scope {args.scope}:")
        if held.preset_problem:
            print(f"  REFUSED  {held.preset_problem}")
        print(f"  gates: {', '.join(held.gates()) or '-'}")
        print(f"  tools that wait for approval: {', '.join(held.approval_required_tools) or '-'}")
        print(f"  tools that need a task: {', '.join(held.task_required_tools) or '-'}")
        for rule in held.rules:
            print(f"  rule {rule.describe()}")
        return 0
    if args.json:
        output.emit_json(state.contract.model_dump(mode="json"))
        return 0
    by = f" (set by {state.contract_set_by})" if state.contract_set_by else " (the default)"
    print(f"contract of scope {args.scope}{by}:")
    print(json.dumps(state.contract.model_dump(mode="json"), indent=2))
    live = [rule for rule in state.rules if not rule.revoked]
    print(f"{len(live)} rule(s) in force" + (":" if live else ""))
    for rule in live:
        print(f"  {rule.describe()}")
    return 0


async def _show_keys(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    state = await tasks.scope_rules(client, args.scope)
    if args.json:
        output.emit_json(state.actor_keys)
        return 0
    if not state.actor_keys:
        print(f"scope {args.scope} has no actor keys: its commands are not signed")
        return 0
    print(f"actor keys of scope {args.scope} (set by {state.actor_keys_set_by}):")
    for actor, key in sorted(state.actor_keys.items()):
        print(f"  {actor}  {key}")
    return 0


async def _list(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    state = await tasks.scope_rules(client, args.scope)
    if args.json:
        output.emit_json(
            {
                "lessons": [lesson.model_dump(mode="json") for lesson in state.lessons],
                "rules": [rule.model_dump(mode="json") for rule in state.rules],
            }
        )
        return 0
    rules = {rule.id: rule for rule in state.rules}
    for lesson in state.lessons:
        decision = lesson.decision
        print(f"{lesson.id} [{lesson.status.value}] {decision.question} -> {decision.proposal}")
        print(f"  fact: {lesson.fact} (proposed by {decision.proposed_by})")
        for ref in lesson.evidence:
            print(f"  evidence: {ref}")
        if decision.resolved_by:
            print(f"  {lesson.status.value.lower()} by {decision.resolved_by}: {decision.reason}")
        rule = rules.get(lesson.rule_id) if lesson.rule_id else None
        if rule is not None:
            state_of = (
                f"revoked by {rule.revoked_by}: {rule.revoke_reason}"
                if rule.revoked
                else ("in force")
            )
            print(f"  rule {rule.describe()} (promoted by {rule.promoted_by}; {state_of})")
    if not state.lessons:
        print("(no lessons)")
    return 0
