"""`make demo`: start what is missing (dev server with its UI's codec server, payment service,
worker), run a goal of a scenario (cities unless `--scenario` names another; the scenario's
example goal unless one is given), show the report.

`--stop` ends the server, codec server, payment service and worker that the demo started (their
pids, logs and data are in the state directory, infra.state).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from durable_harness._client import runs
from durable_harness.exceptions import HarnessError
from durable_harness.pack import Pack
from infra.process import exit_now
from infra.settings import Settings, SettingsError
from scenarios import UnknownScenarioError, get_scenario
from scenarios.registry import PackLoadError
from starter.cli.app import build_parser
from starter.cli.cli_handlers import dispatch
from starter.cli.local_services import ensure_services, stop
from starter.errors import exit_code_of

DEFAULT_SCENARIO = "cities"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m starter.cli.demo")
    parser.add_argument(
        "goal", nargs="?", default="", help="the goal (default: the scenario's example goal)"
    )
    parser.add_argument(
        "--scenario", default=DEFAULT_SCENARIO, metavar="NAME", help="the scenario (pack) to run"
    )
    parser.add_argument(
        "--stop",
        action="store_true",
        help="stop the server, codec server, payment service and worker",
    )
    args = parser.parse_args()
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        print(f"demo: {error}", file=sys.stderr)
        exit_now(2)
    if args.stop:
        stop(settings)
        return
    pack = known_pack(args.scenario)
    goal = args.goal or pack.example_goal or f"a task for {args.scenario}"
    try:
        asyncio.run(ensure_services(settings))
    except HarnessError as error:
        print(f"demo: {error.message}", file=sys.stderr)
        exit_now(exit_code_of(error))
    run_id = runs.new_run_id()
    code = 0
    try:
        code = dispatch(
            build_parser().parse_args(["run", goal, "--scenario", args.scenario, "--id", run_id])
        )
    except HarnessError as error:
        print(f"demo: {error.message}", file=sys.stderr)
        code = exit_code_of(error)
    print(
        f"\nSee the run in the Temporal UI: {runs.ui_link(settings, run_id)}\n"
        "The server (its UI decoding payloads through the codec server), payment service and "
        "worker keep running; `make stop` ends them."
    )
    exit_now(code)


def known_pack(scenario: str) -> Pack:
    """The scenario's pack (the demo's worker loads the same packs); an unknown scenario is one
    line and exit 2, before anything starts."""
    try:
        return get_scenario(scenario)
    except (UnknownScenarioError, PackLoadError) as error:
        print(f"demo: {error}", file=sys.stderr)
        exit_now(2)


if __name__ == "__main__":
    main()
