"""Histories of a run and of every run it continued into or started as a child, and their costs.

Per activity (from event times): pickup = scheduled -> started, run = started -> closed minus the
node's own time, dispatch = the last dependency's completion -> this node's scheduling. Per
workflow task: queue = scheduled -> started, work = started -> completed.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory

from bench.plans import BenchDag

_SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
_STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
_CLOSED = (
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
)
_WFT_SCHEDULED = EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
_WFT_STARTED = EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
_WFT_COMPLETED = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
_WFT_FAILED = EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
_WFT_TIMED_OUT = EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT
_CAUSE_PREFIX = "WORKFLOW_TASK_FAILED_CAUSE_"


async def chain_histories(client: Client, workflow_id: str, run_id: str) -> list[WorkflowHistory]:
    """This run, the runs it continued-as-new into, and its child workflows (recursively)."""
    pending = [(workflow_id, run_id)]
    histories: list[WorkflowHistory] = []
    while pending:
        wid, rid = pending.pop(0)
        history = await client.get_workflow_handle(wid, run_id=rid or None).fetch_history()
        histories.append(history)
        for event in history.events:
            if event.HasField("child_workflow_execution_started_event_attributes"):
                child = event.child_workflow_execution_started_event_attributes.workflow_execution
                pending.append((child.workflow_id, child.run_id))
        last = history.events[-1] if history.events else None
        if last is not None and last.HasField(
            "workflow_execution_continued_as_new_event_attributes"
        ):
            attributes = last.workflow_execution_continued_as_new_event_attributes
            pending.append((wid, attributes.new_execution_run_id))
    return histories


def _ms(event: HistoryEvent) -> float:
    return event.event_time.ToNanoseconds() / 1e6


def _node(event: HistoryEvent) -> str:
    """The node id of an activity's summary: the harness names the tool first
    ('delay n3 (ms=0, ...)'), the minimal workflow the node alone ('n3')."""
    data = event.user_metadata.summary.data
    if not data:
        return ""
    words = str(json.loads(data)).split(" ", 2)
    return words[1] if len(words) > 1 else words[0]


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _p95(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


@dataclass(frozen=True)
class HistoryStats:
    runs: int
    events: int
    max_run_events: int
    bytes: int
    activities: int
    workflow_tasks: int
    failed_workflow_tasks: int
    failure_causes: str
    """Each distinct cause of a failed workflow task (its cause and the first of its message),
    with how often it came."""
    timed_out_workflow_tasks: int
    max_schedules_per_task: int
    completions_per_task: float | None
    wft_queue_ms: float | None
    wft_work_ms: float | None
    wft_work_p95_ms: float | None
    wft_work_max_ms: float | None
    pickup_ms: float | None
    run_overhead_ms: float | None
    dispatch_ms: float | None
    dispatch_max_ms: float | None


def analyze(histories: Iterable[WorkflowHistory], dag: BenchDag) -> HistoryStats:
    histories = list(histories)
    ms_by_node = dag.ms_by_node()
    deps = {node.id: node.deps for node in dag.nodes}
    scheduled: dict[tuple[int, int], tuple[str, float]] = {}
    started: dict[tuple[int, int], float] = {}
    closed_at: dict[str, float] = {}
    scheduled_at: dict[str, float] = {}
    pickups: list[float] = []
    overheads: list[float] = []
    wft_queue: list[float] = []
    wft_work: list[float] = []
    wft_failed = wft_timed_out = 0
    causes: Counter[str] = Counter()
    schedules_per_task = [0]
    completions = 0
    for index, history in enumerate(histories):
        wft_scheduled = wft_started = 0.0
        for event in history.events:
            kind = event.event_type
            if kind == _SCHEDULED:
                node = _node(event)
                scheduled[(index, event.event_id)] = (node, _ms(event))
                scheduled_at.setdefault(node, _ms(event))
                schedules_per_task[-1] += 1
            elif kind == _STARTED:
                attrs = event.activity_task_started_event_attributes
                started[(index, attrs.scheduled_event_id)] = _ms(event)
            elif kind in _CLOSED:
                scheduled_id = _closed_scheduled_id(event)
                node, at = scheduled[(index, scheduled_id)]
                start = started.get((index, scheduled_id), at)
                pickups.append(start - at)
                if node in ms_by_node:
                    overheads.append(_ms(event) - start - ms_by_node[node])
                    closed_at[node] = _ms(event)
                completions += 1
            elif kind == _WFT_SCHEDULED:
                wft_scheduled = _ms(event)
            elif kind == _WFT_STARTED:
                wft_started = _ms(event)
                wft_queue.append(wft_started - wft_scheduled)
            elif kind == _WFT_COMPLETED:
                wft_work.append(_ms(event) - wft_started)
                schedules_per_task.append(0)
            elif kind == _WFT_FAILED:
                wft_failed += 1
                failed = event.workflow_task_failed_event_attributes
                cause = WorkflowTaskFailedCause.Name(failed.cause).removeprefix(_CAUSE_PREFIX)
                causes[f"{cause}: {failed.failure.message[:120]}"] += 1
            elif kind == _WFT_TIMED_OUT:
                wft_timed_out += 1
    dispatch = [
        scheduled_at[node] - max(closed_at[dep] for dep in deps[node])
        for node in scheduled_at
        if deps.get(node) and all(dep in closed_at for dep in deps[node])
    ]
    sizes = [len(history.events) for history in histories]
    return HistoryStats(
        runs=len(histories),
        events=sum(sizes),
        max_run_events=max(sizes, default=0),
        bytes=sum(event.ByteSize() for history in histories for event in history.events),
        activities=len(scheduled),
        workflow_tasks=len(wft_work),
        failed_workflow_tasks=wft_failed,
        failure_causes="; ".join(f"{count}x {cause}" for cause, count in causes.most_common()),
        timed_out_workflow_tasks=wft_timed_out,
        max_schedules_per_task=max(schedules_per_task),
        completions_per_task=completions / len(wft_work) if wft_work else None,
        wft_queue_ms=_mean(wft_queue),
        wft_work_ms=_mean(wft_work),
        wft_work_p95_ms=_p95(wft_work),
        wft_work_max_ms=max(wft_work, default=None),
        pickup_ms=_mean(pickups),
        run_overhead_ms=_mean(overheads),
        dispatch_ms=_mean(dispatch),
        dispatch_max_ms=max(dispatch, default=None),
    )


def _closed_scheduled_id(event: HistoryEvent) -> int:
    if event.HasField("activity_task_completed_event_attributes"):
        return event.activity_task_completed_event_attributes.scheduled_event_id
    if event.HasField("activity_task_failed_event_attributes"):
        return event.activity_task_failed_event_attributes.scheduled_event_id
    return event.activity_task_timed_out_event_attributes.scheduled_event_id
