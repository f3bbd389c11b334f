"""Per-tool metrics, beside the SDK's own.

Every tool runs under one activity type, `harness.run_tool`, so the SDK's metrics
(`temporal_activity_execution_latency` and the rest, labelled by activity type) cannot tell one
tool from another. One activity type per tool would put the tool's name into every recorded
history's commands, so renaming a tool, or a catalog that changes, would break replay; the
harness keeps the one type and records its own metrics with the tool as a label, through the
activity's meter (the worker's runtime: Prometheus when `HARNESS_METRICS_ADDRESS` is set,
nothing otherwise).
"""

from __future__ import annotations

from temporalio import activity

CALLS = "harness_tool_calls"
LATENCY = "harness_tool_latency"


def record_tool_call(
    scenario: str, tool: str, status: str, error_code: str | None, latency_ms: float
) -> None:
    """One attempt of a tool call: counted by outcome, timed by tool."""
    meter = activity.metric_meter().with_additional_attributes({"scenario": scenario, "tool": tool})
    meter.create_counter(CALLS, "Attempts of tool calls, by tool and outcome.").add(
        1, {"status": status, "error_code": error_code or ""}
    )
    meter.create_histogram_float(
        LATENCY, "An attempt's own time, from Temporal's start to its result.", "ms"
    ).record(latency_ms, {"status": status})
