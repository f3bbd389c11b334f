"""What the commands on runs, plans, catalogs and servers do once their arguments are parsed
(imported only then, by the handlers their command groups name: `run_cli`, `run_handle_cli`,
`catalog_cli`, `servers_cli`; so `harness --help` loads no Temporal client, chart library or
scenario data it does not need)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import signal
import subprocess
from http.server import ThreadingHTTPServer

from pydantic import ValidationError

from durable_harness._client import deliveries, history, runs, signed_actors
from durable_harness.client import Harness
from harness.catalog.tools import ToolCatalog
from harness.core.problems import describe_invalid
from harness.engine.budget import BudgetLimits
from harness.engine.run import MemoryOptions, RunPhase, RunRequest, RunResult
from harness.engine.run_models import RunModels
from harness.engine.validation import ValidationReport, validate_plan
from harness.governance.host_contract import DEFAULT_SCOPE
from harness.governance.work import TaskBinding
from harness.recall.memory_context import DEFAULT_BUDGET_CHARS
from infra.client import connect
from infra.process import die_with_parent
from infra.settings import UI_PORT_OFFSET, Settings
from infra.state import SERVER_DB_FILE
from scenarios.base import Pack
from starter import output
from starter.cli import progress
from starter.cli.tool_listing import catalog_with_servers, scenario_servers, servers_from_flags
from starter.errors import EXIT_FAILED_RUN, EXIT_UNAVAILABLE, CliError
from starter.plan_files import load_plan, load_scenario, pack_here
from starter.servers.codec_server import (
    codec_answers,
    endpoint,
    serve,
    serve_in_background,
    ui_origins,
)
from starter.servers.dev_server import dev_server_command, register_search_attributes

OFFLINE_PROVIDER = "scripted"
"""The provider that plans without a model, by the pack's own offline planner."""


def offline(provider: str | None, settings: Settings) -> bool:
    """Whether a run started with `--provider provider` is planned by the offline provider, as
    this environment sees it (a run without --provider gets the worker's default, which the
    CLI takes to be its own HARNESS_LLM_PROVIDER)."""
    return (provider or settings.llm_provider) == OFFLINE_PROVIDER


def run_request(args: argparse.Namespace, settings: Settings) -> RunRequest:
    """The RunRequest that `harness run` starts, from its parsed arguments and the defaults;
    one line that says what to fix when they make no valid request."""
    pack = pack_here(args.scenario)  # None: a pack only the worker may have; it decides
    plan = load_plan(args.plan) if args.plan else None
    planless = pack is not None and pack.offline_plan is None
    if pack is not None and planless and plan is None and offline(args.provider, settings):
        # stop before anything starts: the worker's offline planner could only fail the run
        raise CliError(f"{pack.no_offline_planner} (--provider or HARNESS_LLM_PROVIDER)")
    try:
        limits = BudgetLimits(
            max_tokens=args.max_tokens or settings.max_tokens,
            max_tool_calls=args.max_tool_calls or settings.max_tool_calls,
            max_seconds=args.max_seconds or settings.max_seconds,
            max_cost_usd=args.max_cost or settings.max_cost_usd,
        )
        request = RunRequest(
            goal=args.goal,
            scenario=args.scenario,
            session_id=args.session,
            max_concurrency=args.max_concurrency,
            max_replans=args.max_replans,
            max_nodes=args.max_nodes,
            plan=plan,
            provider=args.provider,
            models=RunModels(
                planner=args.planner_model,
                worker=args.worker_model,
                judge=args.judge_model,
                agent=args.agent_model,
            ),
            limits=limits,
            agent_runtime=args.agent_runtime,
            faults=args.fault,
            ask_user=not args.no_ask,
            actor_keys=signed_actors.actor_keys(args.actor_keys),
            task=TaskBinding(scope=args.scope or DEFAULT_SCOPE, task_id=args.task)
            if args.task
            else None,
            scope=None if args.task else args.scope,
            memory=MemoryOptions(
                enabled=not args.no_memory,
                budget_chars=args.memory_budget or DEFAULT_BUDGET_CHARS,
            ),
        )
    except ValidationError as error:
        raise CliError(f"cannot start this run: {describe_invalid(error, whole='run')}") from error
    return runs.check_request(request)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    request = run_request(args, settings)
    harness = await Harness.with_settings(settings)
    started = await harness.start_request(request, run_id=args.run_id)
    if args.no_wait:
        print(started.run_id)
        return 0
    output.note(f"run {started.run_id} started · {started.ui_link}")
    if not await harness.has_worker():
        output.note(
            f"no worker is polling task queue '{settings.task_queue}' yet; "
            "start one with `python -m worker` (the run waits for it)"
        )
    result = await progress.watch(started, progress.view_for(started.run_id, quiet=args.quiet))
    if args.json:
        output.emit_json(result.model_dump(mode="json"))
    else:
        output.print_result(result)
    return 0 if result.status is RunPhase.SUCCEEDED else EXIT_FAILED_RUN


async def status(args: argparse.Namespace, settings: Settings) -> int:
    found = await (await Harness.with_settings(settings)).run(args.run_id).status()
    if args.json:
        output.emit_json(found.model_dump(mode="json"))
    elif isinstance(found, RunResult):
        output.print_result(found)
    else:
        output.print_status(found)
    return 0


async def trace(args: argparse.Namespace, settings: Settings) -> int:
    replayed = await (await Harness.with_settings(settings)).run(args.run_id).replayed()
    events = [event.model_dump(mode="json") for event in replayed.trace]
    if args.json:
        output.emit_json(events)
    elif args.jsonl:
        for event in events:
            print(json.dumps(event, ensure_ascii=False))
    else:
        print("\n".join(history.trace_table(replayed.trace)))
        print(f"run {args.run_id}: {replayed.status.phase.value}, {len(events)} events")
    return 0


async def waits(args: argparse.Namespace, settings: Settings) -> int:
    harness = await Harness.with_settings(settings)
    if args.run_id:
        found = {args.run_id: await harness.run(args.run_id).pending_waits()}
    else:
        found = await harness.pending_waits()
    if args.json:
        output.emit_json(
            {rid: [w.model_dump(mode="json") for w in waits] for rid, waits in found.items()}
        )
        return 0
    lines = [deliveries.describe_wait(rid, wait) for rid, waits in found.items() for wait in waits]
    print("\n".join(lines) if lines else "no pending waits")
    return 0


async def deliver(args: argparse.Namespace, settings: Settings) -> int:
    """approve, answer and deliver: an update, answered with a receipt. The request is checked
    before anything connects."""
    request: deliveries.Request
    if args.command == "approve":
        request = deliveries.approval(args.wait_id, args.actor, args.reject, args.comment)
    elif args.command == "answer":
        request = deliveries.answer(args.wait_id, args.text, args.actor)
    else:
        data = deliveries.read_data(args.data)
        request = deliveries.delivery(args.wait_id, args.operation, args.event, data, args.actor)
    request = signed_actors.signed(request, args.run_id, args.key)
    run_ = (await Harness.with_settings(settings)).run(args.run_id)
    receipt = await run_.send(request)
    verdict = "accepted" if receipt.accepted else "refused"
    duplicate = " (duplicate, ignored)" if receipt.duplicate else ""
    print(f"{verdict}{duplicate}: {receipt.reason}")
    return 0 if receipt.accepted else EXIT_FAILED_RUN


async def cancel(args: argparse.Namespace, settings: Settings) -> int:
    request = deliveries.cancellation(args.reason, args.actor)
    await (await Harness.with_settings(settings)).run(args.run_id).send_cancel(request)
    print(f"cancellation requested for run {args.run_id}")
    return 0


async def report(args: argparse.Namespace, settings: Settings) -> int:
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CliError(f"cannot write to {args.out}: {error.strerror or error}") from error
    run_ = (await Harness.with_settings(settings)).run(args.run_id)
    replayed = await run_.replayed()
    from starter.pages.charts import write_run_report  # matplotlib: only for this command

    files = write_run_report(
        args.out,
        replayed.result,
        phase=replayed.status.phase.value,
        ui_link=run_.ui_link,
    )
    for path in (files.timeline_png, files.pressure_png, files.tokens_png, files.plan_png):
        print(path)
    print(files.html)
    return 0


async def validate(args: argparse.Namespace, settings: Settings) -> int:
    scenario = load_scenario(args.scenario)
    plan = load_plan(args.plan_file)
    catalog = await catalog_with_servers(
        scenario.catalog(), scenario_servers(scenario, os.environ), os.environ, scenario
    )
    issues = validate_plan(plan, catalog)
    if args.json:
        output.emit_json(ValidationReport(valid=not issues, issues=issues).model_dump(mode="json"))
    else:
        output.print_issues(issues)
    return 0 if not issues else EXIT_FAILED_RUN


async def tools(args: argparse.Namespace, settings: Settings) -> int:
    """A scenario's catalog with its MCP servers' tools; with --mcp, those servers' tools alone
    (or added to --scenario's catalog, as a worker's configuration adds them)."""
    asked = servers_from_flags(args.mcp or [], os.environ)
    scenario: Pack | None = None
    if asked and args.scenario is None:
        base, servers = ToolCatalog(scenario="mcp", tools=[]), asked
    else:
        scenario = load_scenario("cities" if args.scenario is None else args.scenario)
        servers = scenario_servers(scenario, os.environ)
        known = {server.name: server for server in servers}
        for server in asked:
            if server.name in known and known[server.name] != server:
                raise CliError(
                    f"a configured MCP server is named '{server.name}': give another NAME="
                )
        servers += [server for server in asked if server.name not in known]
        base = scenario.catalog()
    catalog = await catalog_with_servers(base, servers, os.environ, scenario)
    if args.json:
        output.emit_json(catalog.model_dump(mode="json"))
    else:
        output.print_catalog(catalog)
    return 0


def server(args: argparse.Namespace, settings: Settings) -> int:
    if args.ui_port is None:
        args.ui_port = args.port + UI_PORT_OFFSET
        if args.ui_port > 65535:
            raise CliError(f"--port {args.port} leaves no UI port above it; give --ui-port")
    if args.db is None:  # the state directory's, where `make demo` keeps it too
        args.db = settings.state_dir / SERVER_DB_FILE
    try:
        command = dev_server_command(
            args.port, args.ui_port, args.db, settings.temporal_namespace, endpoint(args.codec_port)
        )
    except OSError as error:
        raise CliError(f"cannot keep the server's data in {args.db}: {error.strerror}") from error
    codec = _codec_beside(args.codec_port, args.ui_port)
    if codec is not None:
        serve_in_background(codec)
    whose = "its own codec server" if codec is not None else "the codec server already"
    output.note(
        f"Temporal dev server on 127.0.0.1:{args.port}, UI on http://localhost:{args.ui_port} "
        f"(decoding payloads with {whose} on {endpoint(args.codec_port)}), "
        f"data in {args.db} (Ctrl-C stops it)"
    )
    server = subprocess.Popen(command, preexec_fn=die_with_parent())
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())
    try:
        address = dataclasses.replace(  # the dev server just started: plain, local, no key
            settings,
            temporal_address=f"127.0.0.1:{args.port}",
            temporal_tls=False,
            temporal_api_key=None,
            temporal_rpc_metadata={},
        )
        asyncio.run(_register_when_up(address, server))
        return server.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(server)


def _codec_beside(port: int, ui_port: int) -> ThreadingHTTPServer | None:
    """The codec server the dev server's UI decodes payloads with, listening (not yet serving);
    None when one answers on `port` already (`make demo`'s, another `harness server`'s)."""
    try:
        return serve("127.0.0.1", port, ui_origins(ui_port))
    except OSError as error:
        if codec_answers(port):
            return None
        raise CliError(
            f"cannot listen on 127.0.0.1:{port} for the codec server: {error.strerror}; "
            "give another --codec-port"
        ) from error


def _stop(server: subprocess.Popen[bytes]) -> None:
    """Never leave the dev server behind: terminate, then kill if it will not stop."""
    if server.poll() is None:
        server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


async def _register_when_up(settings: Settings, server: subprocess.Popen[bytes]) -> None:
    for _ in range(120):
        if server.poll() is not None:
            raise CliError(f"the dev server exited with code {server.returncode}", 1)
        try:
            client = await connect(settings)
        except RuntimeError:
            await asyncio.sleep(0.5)
            continue
        added = await register_search_attributes(client, settings.temporal_namespace)
        if added:
            output.note(f"registered search attributes: {', '.join(added)}")
        return
    raise CliError("the dev server did not answer within 60 s", EXIT_UNAVAILABLE)


def codec_server(args: argparse.Namespace, settings: Settings) -> int:
    from starter.servers.codec_server import serve_until_signalled

    try:
        server = serve("127.0.0.1", args.port, args.ui_origin or ui_origins(8233))
    except OSError as error:
        raise CliError(f"cannot listen on 127.0.0.1:{args.port}: {error.strerror}") from error
    output.note(
        f"codec server on http://127.0.0.1:{args.port} (point the UI's codec setting or "
        "`temporal --codec-endpoint` at it; Ctrl-C stops it)"
    )
    serve_until_signalled(server)
    return 0
