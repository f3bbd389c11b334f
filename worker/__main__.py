"""`python -m worker` (and `harness worker`, the same function): connect, register, run until
SIGINT/SIGTERM, then shut down cleanly. Exit 2 for a configuration that cannot work (a pack
that cannot load, a bad provider, store or MCP setting), 1 when no server answers, 0 after a
clean stop."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Mapping
from typing import NoReturn

import structlog

from activities.llm import ProviderConfigError, ProviderRegistry
from activities.mcp_hub import McpHub
from harness.engine.contracts import llm_task_queue
from infra.client import connect
from infra.logs import configure_logging
from infra.process import exit_now
from infra.settings import Settings, SettingsError
from memory import StoreError
from scenarios.registry import PackLoadError, registry
from tool_servers.config import McpConfigError
from worker.app import build_worker
from worker.bytecode import compile_workflow_package
from worker.tuning import WorkerTuning

log = structlog.get_logger()


async def serve(settings: Settings) -> None:
    compile_workflow_package()
    packs = registry()  # a pack that cannot load stops the worker here, before it connects
    providers = ProviderRegistry(default=settings.llm_provider)
    provider = providers.get()
    mcp = McpHub.from_environment(os.environ)  # a bad MCP configuration stops it here
    client = await connect(settings, tracing=True, metrics=True)
    worker = build_worker(
        client,
        settings.task_queue,
        providers,
        llm_activities_per_second=settings.llm_activities_per_second,
        shutdown_grace_seconds=settings.shutdown_grace_seconds,
        mcp=mcp,
        tuning=WorkerTuning.from_settings(settings),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    log.info(
        "worker.start",
        address=settings.temporal_address,
        namespace=settings.temporal_namespace,
        task_queue=settings.task_queue,
        llm_task_queue=llm_task_queue(settings.task_queue),
        llm_activities_per_second=settings.llm_activities_per_second,
        provider=provider.name,
        packs=packs.names(),
        metrics_address=settings.metrics_address,
        web_url=settings.web.url if settings.web else None,
        tuning=WorkerTuning.from_settings(settings).run_worker(),
    )
    async with worker:
        await stop.wait()
        log.info("worker.stopping")
    log.info("worker.stopped")


def main(environment: Mapping[str, str] | None = None) -> NoReturn:
    """The worker's whole life; `environment` (default: this process's) is where the connection
    settings are read (`harness worker --address ...` passes its flags in it)."""
    configure_logging()
    try:
        settings = Settings.from_env(environment)
    except SettingsError as error:
        log.error("worker.config_error", error=str(error))
        exit_now(2)
    try:
        asyncio.run(serve(settings))
    except (ProviderConfigError, StoreError, McpConfigError, PackLoadError) as error:
        log.error("worker.config_error", error=str(error))
        exit_now(2)
    except RuntimeError as error:
        if "connect" not in str(error).lower():
            raise
        log.error(
            "worker.cannot_connect",
            address=settings.temporal_address,
            error=str(error),
            hint="start a server with `harness server` (or `make demo`)",
        )
        exit_now(1)
    exit_now(0)


if __name__ == "__main__":
    main()
