"""`harness chat SESSION "message"`: one message to an agent session, one bounded slice of its
agent, and its reply: DONE with the answer, WAITING with the wait to answer, or
CONTINUATION_REQUIRED (`--continue` runs the next slice). Exit 0 for all three."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

from harness.engine.sessions import BUILTIN_RUNTIME, MESSAGE_CHARS, SESSION_ID_PATTERN
from infra.settings import Settings
from starter.cli.cli_handlers import handled
from starter.cli.task_cli import scope_name


def chat(args: argparse.Namespace, settings: Settings) -> object:
    from starter.cli import chat_actions  # the Temporal client: loaded when the command runs

    return chat_actions.chat(args, settings)


def _count(most: int) -> Callable[[str], int]:
    def checked(text: str) -> int:
        if not text.isdigit() or not 1 <= int(text) <= most:
            raise argparse.ArgumentTypeError(f"a count from 1 to {most}")
        return int(text)

    return checked


def _message(text: str) -> str:
    if not text.strip() or len(text) > MESSAGE_CHARS:
        raise argparse.ArgumentTypeError(f"a message has 1 to {MESSAGE_CHARS} characters")
    return text


def _session_id(text: str) -> str:
    if not re.fullmatch(SESSION_ID_PATTERN, text):
        raise argparse.ArgumentTypeError(
            "a session id of letters, digits and . _ : - (at most 100, starting with a letter "
            "or digit)"
        )
    return text


def add_chat_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = handled(
        commands.add_parser(
            "chat", help="send a message to an agent session (one bounded slice per message)"
        ),
        chat,  # type: ignore[arg-type]
    )
    parser.add_argument("session", type=_session_id, metavar="SESSION")
    parser.add_argument("message", type=_message, nargs="?", help="what to say")
    parser.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="run the next slice of work the last one left (no message)",
    )
    parser.add_argument("--scope", type=scope_name, default="default")
    parser.add_argument("--scenario", default="cities", help="the pack whose tools it calls")
    parser.add_argument("--tools", help="comma-separated tools (default: every one it may call)")
    parser.add_argument("--runtime", default=BUILTIN_RUNTIME, help="the agent runtime")
    parser.add_argument("--task", metavar="TASK", help="the task the session works on")
    parser.add_argument("--provider", help="the model provider (default: the worker's)")
    parser.add_argument("--model", help="the agent model (default: the provider's)")
    parser.add_argument(
        "--max-turns", type=_count(50), default=None, help="model turns per slice (default 6)"
    )
    parser.add_argument(
        "--slice-tokens", type=_count(10_000_000), default=None, help="tokens per slice"
    )
    parser.add_argument("--actor", default="human:user", help="who speaks (default human:user)")
    parser.add_argument("--json", action="store_true", help="the reply as JSON")
