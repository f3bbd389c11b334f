"""A pack of one data tool and no final tool of its own, as a team that only has tools writes
it: its runs finish with the built-in `write_report`. Registered where a test needs it
(`scenarios.registry.registered`)."""

from __future__ import annotations

from typing_extensions import TypedDict

from durable_harness import Pack, ToolError, tool
from durable_harness.pack_types import CheckInput
from harness.core.plan import ArgumentBinding, Plan, PlanNode

HIGH_WATER = {"Brest": ("06:12", 6.9), "Cherbourg": ("07:40", 5.8)}


class Tide(TypedDict):
    port: str
    high_water: str
    height_m: float


@tool
def tide(port: str) -> Tide:
    """Today's high water at a port: its time and height in metres."""
    if port not in HIGH_WATER:
        raise ToolError("MISSING_INFO", f"no tide table for '{port}'")
    time, height = HIGH_WATER[port]
    return Tide(port=port, high_water=time, height_m=height)


def _check(check: CheckInput) -> list[str]:
    """Every port the goal names is in the report."""
    return [f"the report does not name {p}" for p in HIGH_WATER if p not in check.report]


TIDES = Pack("tides", "High water at ports.", [tide], check=_check)

QUESTION = "When is high water at Brest and Cherbourg?"

PLAN = Plan(
    nodes=[
        PlanNode(id="brest", tool="tide", arguments=[ArgumentBinding.literal("port", "Brest")]),
        PlanNode(
            id="cherbourg", tool="tide", arguments=[ArgumentBinding.literal("port", "Cherbourg")]
        ),
        PlanNode(
            id="report",
            tool="write_report",
            arguments=[
                ArgumentBinding.node_result("inputs", "brest"),
                ArgumentBinding.node_result("inputs", "cherbourg"),
                ArgumentBinding.literal("question", QUESTION),
            ],
            deps=["brest", "cherbourg"],
        ),
    ]
)
"""Both ports' tides, then the built-in report writer with both results and the question."""
