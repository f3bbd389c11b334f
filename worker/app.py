"""Builds the worker: the run's task queue (the workflows, and the activities that call no model)
and its twin for model calls (planner, judge and the tools that call a model), which carries the
server-side rate limit toward the providers. What each queue carries is infra.queues'; the
queue plugin (worker.queue_plugin) registers it from the activities built here."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from datetime import timedelta
from types import TracebackType

from temporalio.client import Client
from temporalio.worker import Worker

from activities import (
    CatalogActivities,
    JudgeActivities,
    PlannerActivities,
    TaskLedgerActivities,
    ToolActivities,
    cancel_own_run,
    check_report,
    validate_plan,
)
from activities.agent_turn import AgentTurnActivities
from activities.eval_cases import EvalActivities
from activities.llm import ProviderRegistry
from activities.mcp_hub import McpHub
from activities.memory import MemoryActivities
from activities.task_contract import TaskContractActivities
from activities.task_ledger_service import TemporalTaskLedger
from activities.token_stream import TokenPoster
from harness.engine.contracts import llm_task_queue
from infra.plugin import HarnessPlugin
from infra.settings import Settings
from memory import MemoryStore, open_store
from memory.ranking import default_ranker
from scenarios import acceptance_checks, all_scenarios
from scenarios.management import TASK_LEDGER_SERVICE
from worker.pydantic_ai import runtime_plugins
from worker.queue_plugin import Activity, QueuePlugin, activities_by_name
from worker.tuning import WorkerTuning


def default_services(environment: Mapping[str, str] | None = None) -> dict[str, object]:
    """What tools may use besides their arguments: each scenario's own services (the refunds
    scenario's payment service client), configured from the environment."""
    services: dict[str, object] = {}
    for scenario in all_scenarios():
        services.update(scenario.services(os.environ if environment is None else environment))
    return services


class HarnessWorker:
    """The two Temporal workers of one worker process, started and stopped together."""

    def __init__(
        self,
        run_worker: Worker,
        llm_worker: Worker,
        opened: MemoryStore | None = None,
        mcp: McpHub | None = None,
        tokens: TokenPoster | None = None,
    ) -> None:
        self.run_worker = run_worker
        self.llm_worker = llm_worker
        self.opened = opened
        """The memory store the worker opened itself, and so closes when it stops."""
        self.mcp = mcp
        """The worker's connections to MCP servers, closed (their processes ended) when it
        stops."""
        self.tokens = tokens
        """The poster of streamed replies to the web app, closed when the worker stops."""

    async def __aenter__(self) -> HarnessWorker:
        await self.run_worker.__aenter__()
        try:
            await self.llm_worker.__aenter__()
        except BaseException:
            await self.run_worker.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Both workers stop at once, so a drain takes the grace period once, not twice."""
        try:
            stopped = await asyncio.gather(
                self.llm_worker.__aexit__(kind, error, traceback),
                self.run_worker.__aexit__(kind, error, traceback),
                return_exceptions=True,
            )
        finally:
            if self.opened is not None:
                self.opened.close()
            if self.mcp is not None:
                await self.mcp.aclose()
            if self.tokens is not None:
                await self.tokens.aclose()
        for outcome in stopped:
            if isinstance(outcome, BaseException):
                raise outcome


def build_worker(
    client: Client,
    task_queue: str,
    providers: ProviderRegistry,
    services: Mapping[str, object] | None = None,
    llm_activities_per_second: float | None = None,
    memory: MemoryStore | None = None,
    shutdown_grace_seconds: float | None = None,
    mcp: McpHub | None = None,
    tuning: WorkerTuning | None = None,
    tokens: TokenPoster | None = None,
) -> HarnessWorker:
    """`llm_activities_per_second` is the rate limit of model calls on the task queue, enforced
    by the Temporal server for every worker of the queue together (the last worker to start
    sets it); None leaves them unlimited. `memory` is the store of episodes and facts, shared
    by every worker; None opens the one the environment names (HARNESS_MEMORY_URL, else SQLite
    in the state directory), which the worker closes when it stops. `shutdown_grace_seconds`:
    how long a stop lets running activities finish (None: the SDK's, no wait). `mcp`: the MCP
    servers whose tools the catalogs list (None: each scenario's and HARNESS_MCP_CONFIG's).
    `tuning`: slots, sticky cache and pollers (None: worker.tuning's defaults). `tokens`: where
    the writers' and agents' replies go as they stream (None: the web app HARNESS_WEB_URL
    names, if any; activities.token_stream)."""
    tuning = tuning or WorkerTuning()
    grace = timedelta(seconds=shutdown_grace_seconds) if shutdown_grace_seconds else None
    if not any(isinstance(plugin, HarnessPlugin) for plugin in client.config()["plugins"]):
        raise ValueError("the worker's client must be connected with the harness plugin")
    tool_services = default_services() if services is None else dict(services)
    mcp = McpHub.from_environment(os.environ) if mcp is None else mcp
    tokens = TokenPoster.from_environment(os.environ) if tokens is None else tokens
    opened = None
    if memory is None:
        settings = Settings.from_env()
        memory = opened = open_store(settings.memory_url, settings.state_dir)
    queues = QueuePlugin(
        task_queue,
        worker_activities(client, task_queue, providers, tool_services, memory, mcp, tokens),
    )
    run_worker = Worker(
        client,
        task_queue=task_queue,
        plugins=[queues, *runtime_plugins(os.environ)],
        graceful_shutdown_timeout=grace or timedelta(),
        **tuning.run_worker(),
    )
    llm_worker = Worker(
        client,
        task_queue=llm_task_queue(task_queue),
        plugins=[queues],
        max_task_queue_activities_per_second=llm_activities_per_second,
        graceful_shutdown_timeout=grace or timedelta(),
        **tuning.llm_worker(),
    )
    return HarnessWorker(run_worker, llm_worker, opened, mcp, tokens)


def worker_activities(
    client: Client,
    task_queue: str,
    providers: ProviderRegistry,
    services: Mapping[str, object],
    memory: MemoryStore,
    mcp: McpHub,
    tokens: TokenPoster | None = None,
) -> dict[str, Activity]:
    """Every activity a worker runs, by name, built on what it holds: the providers, the tools'
    services and the task ledger, the memory store, the MCP servers and the poster of streamed
    replies. Which queue carries which is infra.queues' to say."""
    task_ledger = TemporalTaskLedger(client, task_queue)
    return activities_by_name(
        CatalogActivities(mcp),
        PlannerActivities(providers),
        AgentTurnActivities(providers, tokens),
        ToolActivities(providers, {**services, TASK_LEDGER_SERVICE: task_ledger}, mcp, tokens),
        TaskLedgerActivities(task_ledger),
        TaskContractActivities(task_ledger, acceptance_checks(), services),
        JudgeActivities(providers),
        EvalActivities(client, services),
        MemoryActivities(memory, default_ranker(), task_ledger),
        check_report,
        validate_plan,
        cancel_own_run,
    )
