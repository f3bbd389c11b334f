"""The arguments of `harness contract|lesson|keys`: a scope's contract, the lessons that become
its rules, and the actor keys that sign its governance acts (starter.cli.rules_actions does the
work). Every write names its `--actor`."""

from __future__ import annotations

import argparse

from harness.governance.host_contract import RuleKind
from infra.settings import Settings
from starter.cli.cli_handlers import handled
from starter.cli.task_cli import common_arguments, text_argument


def dispatch_rules(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import rules_actions  # the Temporal client: loaded when the command runs

    return rules_actions.dispatch_rules(args, settings)


def add_rules_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    contract = handled(
        commands.add_parser(
            "contract", help="a scope's contract: which tools need a task or an approval, the gates"
        ),
        dispatch_rules,
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    show = contract.add_parser("show", help="the scope's contract (and, with --preset, in force)")
    show.add_argument("--preset", help="the contract a task of this preset is held to")
    common_arguments(show, writes=False)
    put = contract.add_parser("set", help="replace the scope's contract with a JSON file (people)")
    put.add_argument("--file", required=True, metavar="FILE", help="a contract, as JSON")
    common_arguments(put, writes=True)

    lesson = handled(
        commands.add_parser(
            "lesson", help="lessons: a fact, a decision from it, the rule it becomes"
        ),
        dispatch_rules,
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    propose = lesson.add_parser("propose", help="propose a lesson from what went wrong (anyone)")
    propose.add_argument("--fact", type=text_argument, required=True, help="what went wrong")
    propose.add_argument("--question", type=text_argument, required=True)
    propose.add_argument("--proposal", type=text_argument, required=True)
    propose.add_argument(
        "--evidence", action="append", default=[], metavar="REF", help="what shows the fact"
    )
    propose.add_argument("--task", dest="task_id", help="the task it was learnt on")
    common_arguments(propose, writes=True)
    resolve = lesson.add_parser("resolve", help="accept a lesson, or --reject it (not agents)")
    resolve.add_argument("lesson_id")
    resolve.add_argument("--reject", action="store_true")
    resolve.add_argument("--reason", type=text_argument, required=True)
    common_arguments(resolve, writes=True)
    promote = lesson.add_parser("promote", help="make an ACCEPTED lesson a rule (people)")
    promote.add_argument("lesson_id")
    promote.add_argument("--rule", type=RuleKind, choices=list(RuleKind), required=True)
    promote.add_argument("--target", required=True, help="the check id, or the tool name")
    promote.add_argument("--preset", help="only tasks of this preset (acceptance checks only)")
    common_arguments(promote, writes=True)
    revoke = lesson.add_parser("revoke", help="revoke a rule; its record and lineage stay")
    revoke.add_argument("rule_id")
    revoke.add_argument("--reason", type=text_argument, required=True)
    common_arguments(revoke, writes=True)
    listing = lesson.add_parser("list", help="the scope's lessons and rules, with their lineage")
    common_arguments(listing, writes=False)

    keys = handled(
        commands.add_parser(
            "keys", help="a scope's actor keys: who must sign its reviews, completions and rules"
        ),
        dispatch_rules,
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    put_keys = keys.add_parser(
        "set",
        help="replace the scope's actor keys (the first: by a person among them, signing with "
        "their key; later: by a keyed person)",
    )
    put_keys.add_argument(
        "--keys", required=True, metavar="FILE", help='JSON {"human:ops": "PUBLIC_KEY"}; {} off'
    )
    common_arguments(put_keys, writes=True)
    show_keys = keys.add_parser("show", help="the scope's actor keys")
    common_arguments(show_keys, writes=False)
