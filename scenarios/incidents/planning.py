"""Offline planning rules for incidents: which investigations the goal's words call for.

Metrics and logs of the affected service are always looked at. A stated onset time ("since 14:00")
or words about deploys or config add the change history; a suspected dependency adds traces. A
vague goal ("checkout is slow") therefore starts with metrics and logs only. When the report check
finds the confidence too low, it names the missing investigations, and the replan adds them.

Each investigation is an agent node (tool `agent`): the original incident design's sub-agents,
one per branch, in parallel, converging on `analyze_evidence`, which reads the evidence their
tool calls returned. An agent's goal says what to find out and carries every argument its tools
need as `NAME: VALUE` lines, so the offline agent fills them from the goal alone, and a model
agent has them in front of it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import JsonValue

from harness.core.plan import ArgumentBinding, ArgumentKind, Plan, PlanNode
from harness.engine.agent_node import AGENT_TOOL
from harness.engine.verification import VERIFICATION_FAILED
from scenarios.base import PlanningError, PlanningInput
from scenarios.incidents.data import (
    ALIASES,
    DEFAULT_SPLIT,
    SERVICES,
    STEP_MINUTES,
    WINDOW_END,
    WINDOW_START,
    clock,
    dependencies_of,
    find_service,
)
from scenarios.incidents.evidence import INVESTIGATION, Source, branch_tool, source_tools

_TIME = re.compile(
    r"\b(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)\b|\b(?P<h12>1[0-2]|[1-9])\s*(?P<ampm>am|pm)\b", re.I
)
_ERRORS = re.compile(r"\b(5xx|50\d|errors?|failures?|failing|500s)\b", re.I)
_LATENCY = re.compile(r"\b(slow\w*|latenc\w*|timeouts?|timing out|lag\w*)\b", re.I)
_DEPENDENCY = re.compile(r"\b(dependenc\w*|depends|downstream|upstream|calls?)\b", re.I)
_DEPLOY = re.compile(r"\b(deploy\w*|release\w*|roll-?outs?|rolled out)\b", re.I)
_CONFIG = re.compile(r"\b(config\w*|settings?|flags?|changes?|changed)\b", re.I)


@dataclass(frozen=True)
class Symptom:
    service: str
    suspects: list[str]
    kind: str
    since: str | None


def parse_symptom(goal: str) -> Symptom | None:
    """The affected service (the first one named), other services named, what is wrong, since when.

    Raises PlanningError for a time outside the telemetry window."""
    services = _services_named(goal)
    if not services:
        return None
    errors, latency = _ERRORS.search(goal), _LATENCY.search(goal)
    kind = "5xx errors" if errors else "latency" if latency else "errors or latency"
    if errors and latency:
        kind = "5xx errors and latency"
    return Symptom(service=services[0], suspects=services[1:], kind=kind, since=_since(goal))


def _services_named(goal: str) -> list[str]:
    found: dict[str, int] = {}
    taken: list[tuple[int, int]] = []
    for name in sorted([*SERVICES, *ALIASES], key=lambda n: (-len(n), n)):
        for match in re.finditer(rf"\b{re.escape(name)}\b", goal, re.IGNORECASE):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            taken.append(match.span())
            service = find_service(name)
            if service is not None and service not in found:
                found[service] = match.start()
    return sorted(found, key=lambda service: found[service])


def _since(goal: str) -> str | None:
    match = _TIME.search(goal)
    if match is None:
        return None
    if match.group("h") is not None:
        minute = int(match.group("h")) * 60 + int(match.group("m"))
    else:
        hour = int(match.group("h12")) % 12 + (12 if match.group("ampm").lower() == "pm" else 0)
        minute = hour * 60
    if not WINDOW_START + 3 * STEP_MINUTES <= minute <= WINDOW_END - 2 * STEP_MINUTES:
        raise PlanningError(
            f"the telemetry covers {clock(WINDOW_START)}-{clock(WINDOW_END)} UTC and needs a "
            f"baseline before the onset; {clock(minute)} is outside "
            f"{clock(WINDOW_START + 3 * STEP_MINUTES)}-{clock(WINDOW_END - 2 * STEP_MINUTES)}"
        )
    return clock(minute)


def branches_for(goal: str, symptom: Symptom) -> list[Source]:
    wanted = {Source.METRICS, Source.LOGS}
    if symptom.suspects or _DEPENDENCY.search(goal):
        wanted.add(Source.TRACES)
    if symptom.since or _DEPLOY.search(goal):
        wanted.add(Source.DEPLOYMENTS)
    if symptom.since or _CONFIG.search(goal):
        wanted.add(Source.CONFIG)
    return [source for source in Source if source in wanted]


def plan_incidents(request: PlanningInput) -> Plan:
    symptom = parse_symptom(request.goal)
    if symptom is None:
        raise PlanningError(
            "the goal names no service I have telemetry for; name the affected service and, if "
            "you know it, since when, e.g. 'checkout-service 5xx errors increased since 14:00' "
            f"(services: {', '.join(SERVICES)})"
        )
    branches = set(branches_for(request.goal, symptom))
    problems = [f.message for f in request.failures if f.code == VERIFICATION_FAILED]
    if problems:
        before = _branches_of(request.previous_plan) | branches
        asked = {s for s in Source for p in problems if INVESTIGATION[s].split()[0] in p}
        branches = before | asked
        if branches == before:
            raise PlanningError(
                "the previous plan already ran every investigation the check asked for "
                f"({', '.join(sorted(branches))}), and it still failed: {'; '.join(problems)}"
            )
    return _plan(symptom, [source for source in Source if source in branches])


def _branches_of(plan: Plan | None) -> set[Source]:
    """The sources a plan investigated: by its nodes' tools and the tools its agents list."""
    tools = {tool for node in plan.nodes for tool in _tools_of(node)} if plan else set()
    return {s for s in Source if tools & set(source_tools(s))}


def _tools_of(node: PlanNode) -> list[str]:
    if node.tool != AGENT_TOOL:
        return [node.tool]
    listed = [
        b.value for b in node.arguments if b.name == "tools" and b.kind is ArgumentKind.LITERAL
    ]
    return [
        name
        for value in listed
        for name in (value if isinstance(value, list) else [value])
        if isinstance(name, str)
    ]


AGENT_MAX_TURNS = 3
"""A turn to call the branch's tool, one to try a failed call once more, one to answer."""

_ASKED: dict[Source, str] = {
    Source.METRICS: "Find which metrics of which services rose after {split}, by how much and "
    "since when.",
    Source.LOGS: "Find the log signatures (WARN and ERROR templates) of {service} and the "
    "services it calls that are new or tripled after {split}, and which service they implicate.",
    Source.TRACES: "Find the spans of requests through {service} whose own time at least "
    "doubled after {split}.",
    Source.DEPLOYMENTS: "List the deployments of every service in the telemetry window.",
    Source.CONFIG: "List the configuration changes of every service in the telemetry window.",
}


def _plan(symptom: Symptom, branches: list[Source]) -> Plan:
    literal, result = ArgumentBinding.literal, ArgumentBinding.node_result
    split = symptom.since or clock(DEFAULT_SPLIT)
    window: dict[str, JsonValue] = {"start": clock(WINDOW_START), "end": clock(WINDOW_END)}
    reads: dict[Source, dict[str, JsonValue]] = {
        Source.METRICS: {"services": list(SERVICES), **window, "split_at": split},
        Source.LOGS: {
            "services": list(dependencies_of(symptom.service)),
            **window,
            "split_at": split,
        },
        Source.TRACES: {"service": symptom.service, **window, "split_at": split},
        Source.DEPLOYMENTS: window,
        Source.CONFIG: window,
    }
    nodes = [
        PlanNode(
            id=source.value,
            tool=AGENT_TOOL,
            arguments=[
                literal("goal", _agent_goal(symptom, source, split, reads[source])),
                literal("tools", [branch_tool(source)]),
                literal("max_turns", AGENT_MAX_TURNS),
            ],
        )
        for source in branches
    ]
    about = [literal("service", symptom.service), literal("symptom", symptom.kind)]
    if symptom.since:
        about.append(literal("since", symptom.since))
    nodes.append(
        PlanNode(
            id="analysis",
            tool="analyze_evidence",
            arguments=[*about, *(result("investigations", node.id) for node in nodes)],
            deps=[node.id for node in nodes],
        )
    )
    return Plan(nodes=nodes)


def _agent_goal(
    symptom: Symptom, source: Source, split: str, arguments: dict[str, JsonValue]
) -> str:
    """What the agent of `source` is to find out, then its tool's arguments as `NAME: VALUE`
    lines (JSON values), which the offline agent reads and a model agent sees."""
    onset = f"since {symptom.since}" if symptom.since else f"(no onset given; split at {split})"
    path = ", ".join(dependencies_of(symptom.service)[1:]) or "no other service"
    lines = [
        f"Investigate the {source.value} of an incident: {symptom.service} shows "
        f"{symptom.kind} {onset}; it depends, directly or not, on {path}.",
        _ASKED[source].format(service=symptom.service, split=split),
        f"Call {branch_tool(source)} with these arguments:",
        *(f"{name}: {_as_text(value)}" for name, value in arguments.items()),
    ]
    return "\n".join(lines)


def _as_text(value: JsonValue) -> str:
    """A clock time as it is ('14:00' is not JSON); anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)
