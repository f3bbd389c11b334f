"""`python -m bench NAME [SIZE] [--repeat K] [--tool delay|echo] [--persistence memory|file|both]`:
skew | fanout [N] | chain [N] | runs [M] | replay | task-context [N] | retrieval [N] | memory |
progress [N] | big [N] | agent-turn [K] | all. JSON lines (one per measurement) and a table on
stdout; progress on stderr."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable

from bench import (
    agent_turn,
    big,
    chain,
    fanout,
    memory,
    progress,
    replay,
    retrieval,
    runs,
    skew,
    task_context,
)
from bench.env import PERSISTENCE, PERSISTENCES, BenchError, log
from bench.report import Measurement, emit, keep_stdout_for_results
from infra.process import exit_now

DEFAULTS = {
    "fanout": fanout.DEFAULT_NODES,
    "chain": chain.DEFAULT_STEPS,
    "runs": runs.DEFAULT_RUNS,
    "task-context": task_context.DEFAULT_RECORDS,
    "retrieval": retrieval.DEFAULT_MEMORIES,
    "progress": progress.DEFAULT_NODES,
    "big": big.DEFAULT_NODES,
    "agent-turn": agent_turn.DEFAULT_AGENTS,
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "name",
        choices=[
            "skew",
            "fanout",
            "chain",
            "runs",
            "replay",
            "task-context",
            "retrieval",
            "memory",
            "progress",
            "big",
            "agent-turn",
            "all",
        ],
    )
    parser.add_argument(
        "size", nargs="?", type=int, help="N nodes (fanout, replay), N steps (chain), M runs"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="skew, fanout, chain, agent-turn, replay: alternate harness and naive K times, "
        "report the median run",
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=None,
        help="fanout: max activities in flight, harness and naive (default: min(N+1, 1000))",
    )
    parser.add_argument(
        "--tool",
        choices=fanout.TOOLS,
        default="delay",
        help="fanout: the leaves' tool; echo runs them as local activities in the harness "
        "(the naive baseline keeps regular activities)",
    )
    parser.add_argument(
        "--persistence",
        choices=[*PERSISTENCES, "both"],
        default=None,
        help="the dev server's store: in-memory SQLite, a SQLite file (as `harness server` "
        "keeps it), or each in turn (default: memory; `all`: both)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="replay: profile the harness workflow's replay (top functions on stderr)",
    )
    return parser


def _bench(args: argparse.Namespace) -> Awaitable[list[Measurement]]:
    size: int = args.size or DEFAULTS.get(args.name, 0)
    if args.name == "skew":
        return skew.run(args.repeat)
    if args.name == "fanout":
        return fanout.run(size, args.max_concurrency, args.repeat, args.tool)
    if args.name == "chain":
        return chain.run(size, args.repeat)
    if args.name == "runs":
        return runs.run(size)
    if args.name == "task-context":
        return task_context.run(size)
    if args.name == "retrieval":
        return retrieval.run(size)
    if args.name == "memory":
        return memory.run()
    if args.name == "progress":
        return progress.run(size, max(args.repeat, 3))
    if args.name == "big":
        return big.run(size)
    if args.name == "agent-turn":
        return agent_turn.run(size, args.repeat)
    return replay.run(nodes=args.size or replay.NODES, profile=args.profile, repeat=args.repeat)


WIDE_NODES = 5000
MANY_RUNS = 100


async def _orchestration(repeat: int) -> int:
    """The orchestration benches of issue 19 on the current persistence, each beside the minimal
    baseline; fanout 1000's histories are the replay's input."""
    failures = await _guarded(skew.run(repeat))
    try:
        rows, comparison = await fanout.measure_fanout(fanout.DEFAULT_NODES, repeat=repeat)
    except BenchError as error:
        log(f"failed: {error}")
        failures += 1
    else:
        emit(rows)
        failures += await _guarded(replay.run(comparison, repeat=repeat))
    failures += await _guarded(fanout.run(fanout.DEFAULT_NODES, repeat=repeat, tool="echo"))
    failures += await _guarded(fanout.run(WIDE_NODES))
    failures += await _guarded(chain.run(chain.DEFAULT_STEPS, repeat))
    failures += await _guarded(agent_turn.run(agent_turn.DEFAULT_AGENTS, repeat))
    failures += await _guarded(runs.run(runs.DEFAULT_RUNS))
    failures += await _guarded(runs.run(MANY_RUNS))
    return failures


async def _all(repeat: int, persistences: list[str]) -> int:
    """The orchestration benches on each persistence, then the others once, in memory."""
    failures = 0
    for persistence in persistences:
        PERSISTENCE.set(persistence)
        failures += await _orchestration(repeat)
    PERSISTENCE.set("memory")
    failures += await _guarded(task_context.run())
    failures += await _guarded(retrieval.run())
    failures += await _guarded(memory.run())
    failures += await _guarded(progress.run())
    return failures


async def _each(args: argparse.Namespace, persistences: list[str]) -> int:
    failures = 0
    for persistence in persistences:
        PERSISTENCE.set(persistence)
        failures += await _guarded(_bench(args))
    return failures


async def _guarded(bench: Awaitable[list[Measurement]]) -> int:
    try:
        emit(await bench)
    except BenchError as error:
        log(f"failed: {error}")
        return 1
    return 0


def main() -> None:
    args = _parser().parse_args()
    if (args.size is not None and args.size < 1) or args.repeat < 1:
        print("size and --repeat must be at least 1", file=sys.stderr)
        exit_now(2)
    keep_stdout_for_results()
    chosen = args.persistence or ("both" if args.name == "all" else "memory")
    persistences = list(PERSISTENCES) if chosen == "both" else [chosen]
    if args.name == "all":
        failures = asyncio.run(_all(args.repeat, persistences))
    else:
        failures = asyncio.run(_each(args, persistences))
    exit_now(1 if failures else 0)


if __name__ == "__main__":
    main()
