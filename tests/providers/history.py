"""Reading workflow history: the planning activities' attempts, and every payload as text."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType
from temporalio.api.failure.v1 import Failure
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client


@dataclass(frozen=True)
class PlanActivity:
    """One `harness.plan` activity as history shows it: its last attempt and how it ended."""

    attempt: int
    last_failure: Failure | None
    failure: Failure | None


def plan_activities(events: list[HistoryEvent]) -> list[PlanActivity]:
    scheduled = {
        event.event_id
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.activity_task_scheduled_event_attributes.activity_type.name == "harness.plan"
    }
    started: dict[int, HistoryEvent] = {}
    failed: dict[int, Failure] = {}
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[event.activity_task_started_event_attributes.scheduled_event_id] = event
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
            attributes = event.activity_task_failed_event_attributes
            failed[attributes.scheduled_event_id] = attributes.failure
    activities = []
    for event_id in sorted(scheduled):
        start = started[event_id].activity_task_started_event_attributes
        last = start.last_failure if start.HasField("last_failure") else None
        activities.append(PlanActivity(start.attempt, last, failed.get(event_id)))
    return activities


def readable(history_json: str) -> str:
    """Exported history with every payload decoded: payloads are base64 in the JSON, and a
    secret search must see what they carry."""
    decoded: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "data" and isinstance(value, str):
                    decoded.append(base64.b64decode(value).decode(errors="replace"))
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(json.loads(history_json))
    return "\n".join([history_json, *decoded])


async def exported_history(client: Client, run_id: str) -> str:
    return readable((await client.get_workflow_handle(run_id).fetch_history()).to_json())
