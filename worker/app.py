"""Builds the worker: one task queue, the workflows (from the client's harness plugin) and every
activity."""

from __future__ import annotations

from collections.abc import Mapping

from temporalio.client import Client
from temporalio.worker import Worker

from activities import JudgeActivities, PlannerActivities, ToolActivities, check_report, list_tools
from activities.callbacks import signal_delivery
from activities.llm import ProviderRegistry
from infra.plugin import HarnessPlugin
from scenarios.refunds.payments import FakePaymentService

MAX_CONCURRENT_ACTIVITIES = 200


def default_services(client: Client) -> dict[str, object]:
    """What tools may use besides their arguments: the refunds scenario's fake payment service,
    which reports each outcome to its run with the `deliver` signal."""
    return {"payments": FakePaymentService(signal_delivery(client))}


def build_worker(
    client: Client,
    task_queue: str,
    providers: ProviderRegistry,
    services: Mapping[str, object] | None = None,
) -> Worker:
    if not any(isinstance(plugin, HarnessPlugin) for plugin in client.config()["plugins"]):
        raise ValueError("the worker's client must be connected with the harness plugin")
    planner = PlannerActivities(providers)
    tools = ToolActivities(providers, default_services(client) if services is None else services)
    critic = JudgeActivities(providers)
    return Worker(
        client,
        task_queue=task_queue,
        activities=[list_tools, planner.plan, tools.run_tool, critic.judge, check_report],
        max_concurrent_activities=MAX_CONCURRENT_ACTIVITIES,
    )
