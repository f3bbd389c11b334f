"""Runs with agent nodes over the synthetic tools, shared by the tests and the recorded
histories (tests/record_histories.py)."""

from __future__ import annotations

from harness.engine.budget import BudgetLimits
from harness.engine.run import RunRequest
from tests.factories import collect, node, ref, synthetic_plan


def two_agents() -> RunRequest:
    scout = node(
        "scout",
        "agent",
        goal="Find the tide tables.\nms: 5\nvalue: high tide at 06:10",
        tools=["delay", "echo"],
        max_turns=4,
    )
    checker = node(
        "checker",
        "agent",
        ref("context", "scout", "answer"),
        goal="Check what the scout found.\nvalue: confirmed",
        tools=["echo"],
        deps=["scout"],
    )
    plan = synthetic_plan(scout, checker, collect("end", ["scout", "checker"]))
    return RunRequest(goal="tides", scenario="synthetic", plan=plan)


def one_agent(limits: BudgetLimits) -> RunRequest:
    scout = node(
        "scout",
        "agent",
        goal="Gather everything.\nms: 5\nvalue: kelp\ntopic: kelp forests",
        tools=["delay", "echo", "write"],
        max_turns=6,
    )
    plan = synthetic_plan(scout, collect("end", ["scout"]))
    return RunRequest(goal="gather", scenario="synthetic", plan=plan, limits=limits)


def asking_agent() -> RunRequest:
    scout = node(
        "scout",
        "agent",
        goal="Find which port to watch.\nquestion: Which port should I watch?\nvalue: noted",
        tools=["echo"],
    )
    plan = synthetic_plan(scout, collect("end", ["scout"]))
    return RunRequest(goal="ports", scenario="synthetic", plan=plan)
