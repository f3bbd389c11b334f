"""Offline planning rules for cities: the cities named in the goal, three lookups each, a report."""

from __future__ import annotations

import hashlib
import re

from harness.core.errors import ErrorCode
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from scenarios.base import PlanningError, PlanningInput
from scenarios.cities.data import all_names, find_city

_LIST_START = re.compile(r"\b(?:compare|comparing|between|cities)\b:?", re.IGNORECASE)
_LIST_END = re.compile(
    r"\s(?:on|by|for|in terms of|regarding|with respect to)\s|[?!;\n]|\.(?:\s|$)", re.IGNORECASE
)
_SEPARATOR = re.compile(r",|\band\b|\bvs\.?|\bversus\b|&|/", re.IGNORECASE)
_CITY_TOOLS = ("get_population", "get_timezone", "summarize_city")


def requested_cities(goal: str) -> list[str]:
    """Cities named in the goal, in order: known names anywhere, plus unknown names in a list."""
    found: dict[str, tuple[int, str]] = {}
    taken: list[tuple[int, int]] = []
    for name in all_names():
        for match in re.finditer(rf"\b{re.escape(name)}\b", goal, re.IGNORECASE):
            span = match.span()
            if any(start < span[1] and span[0] < end for start, end in taken):
                continue
            taken.append(span)
            record = find_city(name)
            if record is not None:
                _keep_earliest(found, record.name, span[0])
    for offset, chunk in _listed_names(goal):
        record = find_city(chunk)
        _keep_earliest(found, record.name if record is not None else chunk, offset)
    return [name for _, name in sorted(found.values())]


def _keep_earliest(found: dict[str, tuple[int, str]], name: str, offset: int) -> None:
    key = name.lower()
    if key not in found or offset < found[key][0]:
        found[key] = (offset, name)


def _listed_names(goal: str) -> list[tuple[int, str]]:
    start = _LIST_START.search(goal)
    if start is None:
        return []
    rest = goal[start.end() :]
    end = _LIST_END.search(rest)
    listed = rest[: end.start()] if end else rest
    names = []
    position = start.end()
    for chunk in _SEPARATOR.split(listed):
        name = chunk.strip(" .'\"")
        offset = goal.find(name, position) if name else -1
        if name and name[0].isupper() and len(name.split()) <= 4:
            names.append((offset, name))
    return names


def _slug(name: str) -> str:
    """A node-id-safe name; names without ASCII letters get a stable digest instead."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return slug or "city_" + hashlib.sha1(name.encode()).hexdigest()[:8]


def plan_cities(request: PlanningInput) -> Plan:
    missing = sorted(
        {
            str(failure.arguments["city"])
            for failure in request.failures
            if failure.code == ErrorCode.MISSING_INFO
            and failure.tool in _CITY_TOOLS
            and failure.arguments
            and "city" in failure.arguments
        }
    )
    requested = requested_cities(request.goal)
    remembered = {name.lower() for name in request.remembered_missing}
    missing = sorted({*missing, *(city for city in requested if city.lower() in remembered)})
    cities = [city for city in requested if city not in missing]
    if not cities:
        raise PlanningError(
            "the goal names no city I have data for; name the cities to compare, "
            "e.g. 'Compare Paris, Tokyo and New York'"
        )
    nodes: list[PlanNode] = []
    report_args: list[ArgumentBinding] = []
    for city in cities:
        slug = _slug(city)
        for prefix, tool, argument in (
            ("pop", "get_population", "populations"),
            ("tz", "get_timezone", "timezones"),
            ("sum", "summarize_city", "summaries"),
        ):
            node_id = f"{prefix}_{slug}"
            nodes.append(
                PlanNode(id=node_id, tool=tool, arguments=[ArgumentBinding.literal("city", city)])
            )
            report_args.append(ArgumentBinding.node_result(argument, node_id))
    if missing:
        report_args.append(ArgumentBinding.literal("missing_cities", list(missing)))
    nodes.append(
        PlanNode(
            id="report",
            tool="aggregate_report",
            arguments=report_args,
            deps=[node.id for node in nodes],
        )
    )
    return Plan(nodes=nodes)
