"""`python -m bench progress [N]`: what following a run costs. The same N-node fan-out runs twice
on one in-memory dev server and worker, once alone and once followed as `harness run` follows
it (`durable_harness.Run.follow`, one progress query a second plus a closed check every fifth),
and the two are set side by side: wall time, history events (a query writes none), and the queries
and bytes the follower asked for, against what polling the whole trace each second would carry.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from bench import plans
from bench.drive import synthetic_request
from bench.env import HARNESS_WORKER, dev_server, log, worker_process
from bench.history import chain_histories
from bench.report import Measurement, measure
from durable_harness._client.run_results import result_of
from durable_harness.client import CLOSED_CHECK_POLLS, Harness, Run
from harness.engine.run import RunRequest
from infra.settings import Settings
from workflows import AgentRunWorkflow

DEFAULT_NODES = 1000


async def run(count: int = DEFAULT_NODES, repeat: int = 3) -> list[Measurement]:
    """`repeat` times each, alternating (alone, followed, alone, ...): the medians are shown."""
    dag = plans.fanout(count)
    bench = f"progress{count}"
    request = synthetic_request(dag.to_plan())
    alone: list[tuple[float, int]] = []
    follows: list[Followed] = []
    async with dev_server() as server, worker_process(server, HARNESS_WORKER, "progress") as w:
        settings = Settings(temporal_address=server.address, task_queue=w.task_queue)
        harness = Harness(server.client, settings)
        await _alone(harness, synthetic_request(plans.fanout(10).to_plan()), "warmup")
        for index in range(repeat):
            log(f"{bench} ({index + 1}/{repeat}): the run alone, then followed")
            alone.append(await _alone(harness, request, "alone"))
            follows.append(await _followed(harness, request))
    alone_s, alone_events = sorted(alone)[len(alone) // 2]
    followed = sorted(follows, key=lambda f: f.seconds)[len(follows) // 2]
    spread = (
        f"alone {min(a for a, _ in alone):.2f}-{max(a for a, _ in alone):.2f} s, followed "
        f"{min(f.seconds for f in follows):.2f}-{max(f.seconds for f in follows):.2f} s"
    )
    polls = followed.pages + followed.pages // CLOSED_CHECK_POLLS
    return [
        measure(
            bench,
            "wall.followed",
            followed.seconds,
            "s",
            baseline=alone_s,
            vs="alone",
            note=f"median of {repeat}; {spread}",
        ),
        measure(
            bench,
            "history.events",
            followed.events,
            "events",
            baseline=alone_events,
            vs="alone",
            note="a query writes no event; the count varies from run to run with how "
            "completions batch into workflow tasks",
        ),
        measure(
            bench,
            "follower.requests_per_s",
            polls / followed.seconds,
            "req/s",
            note="progress queries and closed checks",
        ),
        measure(
            bench,
            "follower.kib_per_poll",
            followed.page_bytes / followed.pages / 1024,
            "KiB",
            baseline=followed.whole_trace_bytes / followed.pages / 1024,
            vs="whole trace per poll",
        ),
    ]


async def _alone(harness: Harness, request: RunRequest, label: str) -> tuple[float, int]:
    run = await _start(harness, request, label)
    started = time.perf_counter()
    await result_of(harness.client, harness.client.get_workflow_handle(run.run_id))
    seconds = time.perf_counter() - started
    return seconds, await _events(harness, run)


@dataclass
class Followed:
    seconds: float = 0.0
    events: int = 0
    pages: int = 0
    page_bytes: int = 0
    whole_trace_bytes: int = 0


async def _followed(harness: Harness, request: RunRequest) -> Followed:
    followed = Followed()
    run = await _start(harness, request, "followed")
    started = time.perf_counter()
    sizes: list[int] = []  # the bytes of each event, in the order recorded
    async for page in run.follow():
        followed.pages += 1
        followed.page_bytes += len(page.model_dump_json())
        sizes += [len(event.model_dump_json()) for event in page.events]
        followed.whole_trace_bytes += sum(sizes)  # what a poll of the whole trace carried
    await result_of(harness.client, harness.client.get_workflow_handle(run.run_id))
    followed.seconds = time.perf_counter() - started
    followed.events = await _events(harness, run)
    return followed


async def _start(harness: Harness, request: RunRequest, label: str) -> Run:
    workflow_id = f"bench-progress-{label}-{uuid.uuid4().hex[:8]}"
    await harness.client.start_workflow(
        AgentRunWorkflow.run, request, id=workflow_id, task_queue=harness.settings.task_queue
    )
    return harness.run(workflow_id)


async def _events(harness: Harness, run: Run) -> int:
    histories = await chain_histories(harness.client, run.run_id, "")
    return sum(len(history.events) for history in histories)
