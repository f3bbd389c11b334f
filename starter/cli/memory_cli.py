"""The arguments of `harness memory list|search|show|forget`: what runs remember, read and
pruned in the store the workers share (starter.cli.memory_actions does the work)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from harness.recall.memory_context import MemoryTier
from harness.recall.memory_records import DEFAULT_DEPTH, MAX_DEPTH
from infra.settings import Settings
from starter.cli.cli_handlers import handled
from starter.cli.task_cli import scope_name, text_argument


def dispatch_memory(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import memory_actions  # the memory store: opened when the command runs

    return memory_actions.dispatch_memory(args, settings)


def _count_to(most: int) -> Callable[[str], int]:
    def checked(text: str) -> int:
        if not text.isdigit() or not 1 <= int(text) <= most:
            raise argparse.ArgumentTypeError(f"a count from 1 to {most}")
        return int(text)

    return checked


def add_memory_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    memory = handled(
        commands.add_parser("memory", help="what runs remember: episodes of past runs and facts"),
        dispatch_memory,
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = memory.add_parser("list", help="memories, newest first")
    listing.add_argument("--scope", type=scope_name, help="only this scope's (default: all)")
    listing.add_argument("--session", help="only this session's episodes")
    listing.add_argument("--tier", choices=[tier.value for tier in MemoryTier])
    listing.add_argument("--limit", type=_count_to(1000), default=50)
    listing.add_argument("--json", action="store_true")
    search = memory.add_parser("search", help="memories most similar to a text, as a run ranks")
    search.add_argument("query", type=text_argument)
    search.add_argument("--scope", type=scope_name, default="default")
    search.add_argument("--scenario", help="rank the scenario's own facts too")
    search.add_argument("--session", help="the session whose episodes come first")
    search.add_argument(
        "--limit", type=_count_to(MAX_DEPTH), default=DEFAULT_DEPTH, help="memories per group"
    )
    search.add_argument("--json", action="store_true")
    show = memory.add_parser("show", help="one memory, whole")
    show.add_argument("memory_id", metavar="ID")
    show.add_argument("--json", action="store_true")
    forget = memory.add_parser(
        "forget", help="delete what an id, a session or a scope names, and nothing else"
    )
    forget.add_argument("memory_id", metavar="ID", nargs="?")
    forget.add_argument("--session", help="every memory of this session")
    forget.add_argument("--scope", type=scope_name, help="every memory of this scope")
    forget.add_argument("--json", action="store_true")
