"""`harness memory`: reads and prunes the memory store the workers share (HARNESS_MEMORY_URL,
else SQLite in the state directory). It needs no Temporal server."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager

from harness.recall.memory_context import MemoryTier
from harness.recall.memory_records import MemoryFilter, MemoryQuery, MemoryRecord
from infra.settings import Settings
from memory import MemoryStore, StoreError, open_store
from memory.ranking import default_ranker
from memory.retrieval import rank, scenario_facts
from memory.store import StoreConfigError
from scenarios import get_scenario, scenario_names
from starter.errors import EXIT_FAILED_RUN, EXIT_UNAVAILABLE, CliError

TEXT_CHARS = 110


def dispatch_memory(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "search" and args.scenario is not None:
        _known_scenario(args.scenario)  # before the store is opened (and maybe created)
    if args.action == "forget" and not (args.memory_id or args.session or args.scope):
        raise CliError("name what to forget: an ID, --session SESSION or --scope SCOPE")
    try:
        with _store(settings) as store:
            if args.action == "list":
                return _list(store, args)
            if args.action == "search":
                return _search(store, args)
            if args.action == "show":
                return _show(store, args)
            return _forget(store, args)
    except StoreConfigError as error:
        raise CliError(str(error)) from error
    except StoreError as error:
        raise CliError(str(error), EXIT_UNAVAILABLE) from error


def _known_scenario(name: str) -> None:
    if name not in scenario_names():
        raise CliError(f"unknown scenario {name!r}: one of {', '.join(scenario_names())}")


@contextmanager
def _store(settings: Settings) -> Iterator[MemoryStore]:
    store = open_store(settings.memory_url, settings.state_dir)
    try:
        yield store
    finally:
        store.close()


def _list(store: MemoryStore, args: argparse.Namespace) -> int:
    tier = MemoryTier(args.tier) if args.tier else None
    where = MemoryFilter(scope=args.scope, session_id=args.session, tier=tier)
    records = store.select(where, limit=args.limit)
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in records], indent=2))
        return 0
    if not records:
        print("no memories" + (" match" if not where.is_empty() or tier else ""))
    for record in records:
        print(_line(record))
    return 0


def _search(store: MemoryStore, args: argparse.Namespace) -> int:
    query = MemoryQuery(
        run_id="search",
        goal=args.query,
        scenario=args.scenario or "",
        scope=args.scope,
        session_id=args.session,
        depth=args.limit,
    )
    stored = store.select(MemoryFilter(scope=args.scope))
    facts = (
        scenario_facts(args.scenario, get_scenario(args.scenario).facts) if args.scenario else []
    )
    found = rank(query, stored, facts, default_ranker())
    if args.json:
        print(found.model_dump_json(indent=2))
        return 0
    if not found.memories:
        print(f"nothing in scope {args.scope} is like that ({found.candidates} memories ranked)")
    for memory in found.memories:
        session = " [this session]" if memory.same_session else ""
        print(
            f"{memory.score:5.3f}  {memory.id}  {memory.tier.value}{session}  {_cut(memory.text)}"
        )
    return 0


def _show(store: MemoryStore, args: argparse.Namespace) -> int:
    record = store.get(args.memory_id)
    if record is None:
        raise CliError(f"no memory {args.memory_id!r} (see `harness memory list`)", EXIT_FAILED_RUN)
    if args.json:
        print(record.model_dump_json(indent=2))
        return 0
    print(f"{record.id}  {record.tier.value}  scope {record.scope}  at {record.at.isoformat()}")
    for label, value in (
        ("session", record.session_id),
        ("scenario", record.scenario),
        ("run", record.run_id),
        ("source", record.source),
        ("no data", ", ".join(record.missing)),
    ):
        if value:
            print(f"{label}: {value}")
    print(record.text)
    return 0


def _forget(store: MemoryStore, args: argparse.Namespace) -> int:
    where = MemoryFilter(id=args.memory_id, session_id=args.session, scope=args.scope)
    count = store.forget(where)
    if args.json:
        print(json.dumps({"forgotten": count}))
    else:
        print(f"forgot {count} memor{'y' if count == 1 else 'ies'}")
    return 0


def _line(record: MemoryRecord) -> str:
    session = f" session {record.session_id}" if record.session_id else ""
    when = record.at.strftime("%Y-%m-%d %H:%M")
    head = f"{when}  {record.id}  {record.tier.value}  scope {record.scope}{session}"
    return f"{head}\n    {_cut(record.text)}"


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"
