"""Load held toward a provider: model calls run on their own task queue, whose rate limit the
Temporal server enforces for every worker together. Counted where it matters, at the (fake)
provider API: 999 model calls that may all run at once never arrive faster than the provider's
limit, with the queue sized as the README says (at most half the provider's per-second limit:
the server's token bucket lets one second's worth through on top of the rate)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from temporalio.client import Client

from activities.llm import ProviderRegistry
from harness.engine.run import RunPhase, RunRequest
from tests.factories import collect, node, synthetic_plan
from tests.fakes import FakeServer
from tests.fakes.openai_api import OpenAIApi
from tests.providers.script import CitiesScript
from tests.providers.support import build_provider
from tests.support import execute_run
from worker.app import build_worker

pytestmark = pytest.mark.requires_local_server("the rate limit is counted in real time")

API = OpenAIApi()
WRITERS = 999
PROVIDER_LIMIT = 100
"""Requests per second the provider allows, in any one second."""
RATE = 40.0
"""The task queue's limit: under PROVIDER_LIMIT / 2, with room for the network's jitter and for
a busy worker whose calls, dispatched at the rate, leave it bunched (109 arrivals in one second
were counted at 45 on a loaded 2-core machine)."""


class Arrivals:
    """Answers like the cities script and notes when each model call arrived."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._lock = threading.Lock()
        self._script = CitiesScript(API, "synthetic")

    def __call__(self, request: object) -> object:
        with self._lock:
            self.times.append(time.monotonic())
        return self._script(request)  # type: ignore[arg-type]

    def busiest_second(self) -> int:
        """The most calls that arrived within any one second."""
        times = sorted(self.times)
        start, most = 0, 0
        for end, at in enumerate(times):
            while at - times[start] >= 1.0:
                start += 1
            most = max(most, end - start + 1)
        return most


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(API.route) as fake:
        yield fake


def writers_run() -> RunRequest:
    writers = [node(f"w{i}", "write", topic=f"topic {i}") for i in range(WRITERS)]
    plan = synthetic_plan(*writers, collect("final", [w.id for w in writers]))
    return RunRequest(goal="write", scenario="synthetic", plan=plan, max_concurrency=WRITERS)


async def run_writers(
    client: Client, task_queue: str, server: FakeServer, rate: float | None
) -> Arrivals:
    arrivals = Arrivals()
    server.fallback = arrivals  # type: ignore[assignment]
    registry = ProviderRegistry.always(build_provider(API, API.base_url(server.url)))
    async with build_worker(client, task_queue, registry, llm_activities_per_second=rate):
        result = await execute_run(client, task_queue, writers_run())
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert len(arrivals.times) >= WRITERS
    return arrivals


async def test_a_thousand_parallel_model_calls_never_exceed_the_task_queue_rate_limit(
    client: Client, task_queue: str, server: FakeServer
) -> None:
    limited = await run_writers(client, task_queue, server, RATE)
    assert limited.busiest_second() <= PROVIDER_LIMIT, limited.busiest_second()


async def test_without_a_limit_the_same_calls_arrive_far_faster(
    client: Client, task_queue: str, server: FakeServer
) -> None:
    """The limit above is what holds them: unlimited, the same calls arrive faster than the
    limit could ever let through (the rate plus one second's burst)."""
    unlimited = await run_writers(client, task_queue, server, None)
    assert unlimited.busiest_second() > 2 * RATE, unlimited.busiest_second()
