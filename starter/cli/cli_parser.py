"""The `harness` parser's manners: a mistake on the command line gets one line, not a usage block.

argparse answers a typo with the whole usage of the command (a dozen lines for `run`) and the
error last, where the eye does not look. Here every parse error is one line: what was wrong, a
did-you-mean when a command, an action, a flag or a choice is one edit or so away from what was
typed, and the `--help` to read; exit 2 (the CLI's usage code), nothing sent anywhere."""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import NoReturn

from starter.errors import EXIT_USAGE

DISTRIBUTION = "durable-harness"
_INVALID_CHOICE = re.compile(r"^argument (?P<name>[^:]+): invalid choice: (?P<value>'.*?'|\".*?\")")
_MAX_LISTED_CHOICES = 8
"""Past this many, listing the choices is the usage dump again: `--help` lists them."""


def package_version() -> str:
    """The installed distribution's version, which setuptools takes from pyproject.toml: the one
    place it is written. A checkout run without installing has no metadata to read."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def closest(typed: str, known: Iterable[str]) -> str | None:
    """The known word nearest to `typed`, if one is near enough to be what was meant."""
    found = difflib.get_close_matches(typed, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


class HarnessParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line; subparsers are made of the same class."""

    def error(self, message: str) -> NoReturn:
        self.fail(self._explained(message))

    def fail(self, message: str) -> NoReturn:
        stop = "" if message.endswith(("?", ".")) else "."
        print(f"{self.prog}: {message}{stop} See `{self.prog} --help`.", file=sys.stderr)
        self.exit(EXIT_USAGE)

    def unrecognized(self, extras: Sequence[str]) -> NoReturn:
        """Arguments the command does not take, with the flag of this parser nearest to the
        first one that looks like a flag."""
        words = " ".join(extras)
        flags = [word.split("=", 1)[0] for word in extras if word.startswith("-")]
        near = closest(flags[0], self._option_string_actions) if flags else None
        plural = "s" if len(extras) > 1 else ""
        said = f"unrecognized argument{plural}: {words}"
        self.fail(f"{said}; did you mean {near}?" if near else said)

    def _explained(self, message: str) -> str:
        invalid = _INVALID_CHOICE.match(message)
        if invalid is None:
            return message
        value = invalid["value"][1:-1]
        choices = [str(choice) for choice in self._choices_of(invalid["name"])]
        said = f"invalid choice: {invalid['value']}"
        near = closest(value, choices)
        if near is not None:
            return f"{said}; did you mean {near!r}?"
        if choices and len(choices) <= _MAX_LISTED_CHOICES:
            return f"{said} (one of {', '.join(choices)})"
        return said

    def _choices_of(self, name: str) -> Sequence[object]:
        for action in self._actions:
            said = argparse._get_action_name(action)  # the name argparse's message used
            if said == name and action.choices is not None:
                return list(action.choices)
        return []


def leaf_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> HarnessParser:
    """The parser of the command that was given (`harness task create` -> create's), whose
    flags are the ones a stray flag was meant to be."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest, None)
            if isinstance(chosen, str) and chosen in action.choices:
                return leaf_parser(action.choices[chosen], args)
    assert isinstance(parser, HarnessParser)  # subparsers are made of their parent's class
    return parser


def parse_command_line(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace:
    """`parse_args`, but an argument the command does not take is reported by the command's
    own parser (argparse reports it at the top, without the command's flags to suggest)."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        leaf_parser(parser, args).unrecognized(extras)
    return args
