"""Offline planning rules for incidents: which investigations the goal's words call for.

Metrics and logs of the affected service are always looked at. A stated onset time ("since 14:00")
or words about deploys or config add the change history; a suspected dependency adds traces. A
vague goal ("checkout is slow") therefore starts with metrics and logs only. When the report check
finds the confidence too low, it names the missing investigations, and the replan adds them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import JsonValue

from harness.core.plan import ArgumentBinding, Plan, PlanNode
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
from scenarios.incidents.evidence import INVESTIGATION, Source

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
    tools = {node.tool for node in plan.nodes} if plan else set()
    return {s for s in Source if INVESTIGATION[s].split()[0] in tools}


def _plan(symptom: Symptom, branches: list[Source]) -> Plan:
    literal, result = ArgumentBinding.literal, ArgumentBinding.node_result
    window = [literal("start", clock(WINDOW_START)), literal("end", clock(WINDOW_END))]
    split = literal("split_at", symptom.since or clock(DEFAULT_SPLIT))
    path: list[JsonValue] = list(dependencies_of(symptom.service))
    nodes: list[PlanNode] = []
    inputs: list[ArgumentBinding] = []

    def branch(source: Source, fetch: PlanNode, step: PlanNode | None = None) -> None:
        nodes.append(fetch)
        last = fetch
        if step is not None:
            nodes.append(step)
            last = step
        inputs.append(result(source.value, last.id))

    if Source.METRICS in branches:
        branch(
            Source.METRICS,
            PlanNode(
                id="metrics",
                tool="get_metrics",
                arguments=[literal("services", list(SERVICES)), *window],
            ),
            PlanNode(
                id="metric_shifts",
                tool="compare_periods",
                arguments=[result("metrics", "metrics"), split],
                deps=["metrics"],
            ),
        )
    if Source.LOGS in branches:
        branch(
            Source.LOGS,
            PlanNode(id="logs", tool="get_logs", arguments=[literal("services", path), *window]),
            PlanNode(
                id="log_signatures",
                tool="detect_signatures",
                arguments=[result("logs", "logs"), split],
                deps=["logs"],
            ),
        )
    if Source.TRACES in branches:
        branch(
            Source.TRACES,
            PlanNode(
                id="traces",
                tool="get_traces",
                arguments=[literal("service", symptom.service), *window],
            ),
            PlanNode(
                id="slow_spans",
                tool="find_slow_spans",
                arguments=[result("traces", "traces"), split],
                deps=["traces"],
            ),
        )
    if Source.DEPLOYMENTS in branches:
        branch(
            Source.DEPLOYMENTS, PlanNode(id="deployments", tool="get_deployments", arguments=window)
        )
    if Source.CONFIG in branches:
        branch(
            Source.CONFIG,
            PlanNode(id="config_changes", tool="get_config_changes", arguments=window),
        )
    about = [literal("service", symptom.service), literal("symptom", symptom.kind)]
    if symptom.since:
        about.append(literal("since", symptom.since))
    nodes.append(
        PlanNode(
            id="analysis",
            tool="analyze_evidence",
            arguments=[*about, *inputs],
            deps=[binding.node_id for binding in inputs if binding.node_id],
        )
    )
    return Plan(nodes=nodes)
