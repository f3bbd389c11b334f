"""Builds the worker: one task queue, the workflows (from the client's harness plugin) and every
activity."""

from __future__ import annotations

import os
from collections.abc import Mapping

from temporalio.client import Client
from temporalio.worker import Worker

from activities import JudgeActivities, PlannerActivities, ToolActivities, check_report, list_tools
from activities.llm import ProviderRegistry
from infra.plugin import HarnessPlugin
from scenarios import all_scenarios

MAX_CONCURRENT_ACTIVITIES = 200


def default_services(environment: Mapping[str, str] | None = None) -> dict[str, object]:
    """What tools may use besides their arguments: each scenario's own services (the refunds
    scenario's payment service client), configured from the environment."""
    services: dict[str, object] = {}
    for scenario in all_scenarios():
        services.update(scenario.services(os.environ if environment is None else environment))
    return services


def build_worker(
    client: Client,
    task_queue: str,
    providers: ProviderRegistry,
    services: Mapping[str, object] | None = None,
) -> Worker:
    if not any(isinstance(plugin, HarnessPlugin) for plugin in client.config()["plugins"]):
        raise ValueError("the worker's client must be connected with the harness plugin")
    planner = PlannerActivities(providers)
    tools = ToolActivities(providers, default_services() if services is None else services)
    critic = JudgeActivities(providers)
    return Worker(
        client,
        task_queue=task_queue,
        activities=[
            list_tools,
            planner.plan,
            tools.run_tool,
            tools.probe_operation,
            critic.judge,
            check_report,
        ],
        max_concurrent_activities=MAX_CONCURRENT_ACTIVITIES,
    )
