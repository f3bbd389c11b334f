"""Builds the worker: one task queue, the orchestrator workflow and every activity."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.worker import Worker

from activities import JudgeActivities, PlannerActivities, ToolActivities, check_report, list_tools
from activities.llm import ProviderRegistry
from workflows import AgentRunWorkflow

MAX_CONCURRENT_ACTIVITIES = 200


def build_worker(client: Client, task_queue: str, providers: ProviderRegistry) -> Worker:
    planner = PlannerActivities(providers)
    tools = ToolActivities(providers)
    critic = JudgeActivities(providers)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[AgentRunWorkflow],
        activities=[list_tools, planner.plan, tools.run_tool, critic.judge, check_report],
        max_concurrent_activities=MAX_CONCURRENT_ACTIVITIES,
    )
