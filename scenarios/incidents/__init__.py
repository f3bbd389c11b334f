"""Scenario `incidents`: investigate a reported symptom in synthetic telemetry and name the most
likely root cause, with its evidence and a confidence."""

from pathlib import Path

from scenarios.base import Pack
from scenarios.incidents.check import check_incident_report, incidents_rubric
from scenarios.incidents.data import DEPENDENCIES
from scenarios.incidents.outcome import incident_outcome
from scenarios.incidents.planning import plan_incidents
from scenarios.incidents.tools import TOOLS

SCENARIO = Pack(
    name="incidents",
    eval_cases=Path(__file__).parent / "eval_cases.yaml",
    description="Investigate a symptom across metrics, logs, traces, deployments and config "
    "changes of five services, and name the most likely root cause with a confidence.",
    example_goal="checkout-service 5xx errors increased since 14:00, maybe payments dependency",
    tools=TOOLS,
    check=check_incident_report,
    offline_plan=plan_incidents,
    rubric=incidents_rubric,
    outcome_check=incident_outcome,
    facts=tuple(
        f"{service} calls {', '.join(calls)}: its errors and latency can come from them."
        if calls
        else f"{service} calls no other service: a fault there starts there."
        for service, calls in DEPENDENCIES.items()
    ),
)
