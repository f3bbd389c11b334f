"""A small scenario of `@tool` functions, as a user would write them: the tests of the public
package call its tools directly, through the tool activity, and in a run on the dev server.

Registered where a test needs it (`scenarios.registry.registered`); an installed pack is found
by its entry point instead."""

from __future__ import annotations

import threading
from typing import Annotated

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from durable_harness import Pack, ToolContext, ToolError, tool
from durable_harness.pack_types import CheckInput, PlanningInput
from harness.core.plan import ArgumentBinding, Plan, PlanNode

STATIONS = {"EHAM": 7.5, "KJFK": 4.0}
"""Wind speed at each station, in metres per second."""

KNOTS_PER_METRE_PER_SECOND = 1.943844


class Reading(BaseModel):
    station: str
    speed: float
    unit: str


class CallSeen(TypedDict):
    """What a tool saw of its call: its context, and the thread it ran in."""

    run_id: str
    node_id: str
    attempt: int
    thread: int


@tool(local=True)
def wind_speed(
    station: Annotated[str, Field(description="ICAO code of the station, e.g. 'EHAM'.")],
    unit: str = "m/s",
) -> Reading:
    """The latest wind reading at a weather station.

    Metres per second unless `unit` is "kn"."""
    if station not in STATIONS:
        raise ToolError("MISSING_INFO", f"no weather station '{station}'")
    speed = STATIONS[station] * (KNOTS_PER_METRE_PER_SECOND if unit == "kn" else 1.0)
    return Reading(station=station, speed=round(speed, 1), unit=unit)


@tool
async def seen_async(ctx: ToolContext, label: str = "") -> CallSeen:
    """What an async tool sees of its call."""
    return CallSeen(
        run_id=ctx.run_id, node_id=ctx.node_id, attempt=ctx.attempt, thread=threading.get_ident()
    )


@tool
def seen_sync(label: str, context: ToolContext) -> CallSeen:
    """What a sync tool sees of its call."""
    return CallSeen(
        run_id=context.run_id,
        node_id=context.node_id,
        attempt=context.attempt,
        thread=threading.get_ident(),
    )


@tool(name="busy_station")
def rate_limited(station: str) -> str:
    """A station whose service is overloaded: it asks to be tried again."""
    raise ToolError("RATE_LIMITED", f"{station} is busy; try again")


@tool
def leaky(station: str) -> str:
    """Fails unexpectedly, with a credential in its message."""
    raise RuntimeError(f"could not log in to {station} with password=hunter22")


@tool
def wrong_result(station: str) -> Reading:
    """Returns what its return type refuses."""
    return {"station": station}  # type: ignore[return-value]


@tool(final=True)
def wind_report(readings: list[Reading], notes: tuple[str, ...] = ()) -> str:
    """Writes the wind report from the stations' readings."""
    lines = [f"- {r.station}: {r.speed} {r.unit}" for r in readings]
    return "\n".join(["# Wind", *lines, *notes])


def _check(check: CheckInput) -> list[str]:
    return [] if check.report.startswith("# Wind") else ["the report has no # Wind heading"]


def _offline_plan(planning: PlanningInput) -> Plan:
    """A reading at each station the goal names, then the report."""
    stations = [name for name in sorted(STATIONS) if name in planning.goal]
    readings = [
        PlanNode(
            id=f"read-{name}",
            tool="wind_speed",
            arguments=[ArgumentBinding.literal("station", name)],
        )
        for name in stations
    ]
    report = PlanNode(
        id="report",
        tool="wind_report",
        arguments=[ArgumentBinding.node_result("readings", node.id) for node in readings],
        deps=[node.id for node in readings],
    )
    return Plan(nodes=[*readings, report])


WEATHER = Pack(
    "weather",
    "Wind readings at weather stations, from typed tool functions.",
    [wind_speed, seen_async, seen_sync, rate_limited, leaky, wrong_result, wind_report],
    example_goal="How windy is it at EHAM and KJFK?",
    check=_check,
    offline_plan=_offline_plan,
)
