"""`make demo`: start what is missing (dev server, payment service, worker), run a cities goal,
show the report.

`--stop` ends the server, payment service and worker that the demo started (their pids, logs
and data are in the state directory, infra.state).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from durable_harness._client import runs
from durable_harness.exceptions import HarnessError
from infra.process import exit_now
from infra.settings import Settings, SettingsError
from starter.cli.app import build_parser
from starter.cli.cli_handlers import dispatch
from starter.cli.local_services import ensure_services, stop
from starter.errors import exit_code_of


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m starter.cli.demo")
    parser.add_argument("goal", nargs="?", default="Compare Paris, Tokyo and New York")
    parser.add_argument(
        "--stop", action="store_true", help="stop the server, payment service and worker"
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
    try:
        asyncio.run(ensure_services(settings))
    except HarnessError as error:
        print(f"demo: {error.message}", file=sys.stderr)
        exit_now(exit_code_of(error))
    run_id = runs.new_run_id()
    code = 0
    try:
        code = dispatch(build_parser().parse_args(["run", args.goal, "--id", run_id]))
    except HarnessError as error:
        print(f"demo: {error.message}", file=sys.stderr)
        code = exit_code_of(error)
    print(
        f"\nSee the run in the Temporal UI: {runs.ui_link(settings, run_id)}\n"
        "The server, payment service and worker keep running; `make stop` ends them."
    )
    exit_now(code)


if __name__ == "__main__":
    main()
