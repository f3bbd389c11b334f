"""Record workflow histories for the replay tests: `python -m tests.record_histories`.

Run it when a release changes the workflow on purpose (behind `workflow.patched`), and keep the
older files: every history recorded here must go on replaying.
"""

from __future__ import annotations

import asyncio
import uuid

from temporalio.testing import WorkflowEnvironment

from harness.run import RunRequest
from infra.converter import DATA_CONVERTER
from starter.dev_server import temporal_binary
from tests.support import collect, delay, execute_run, running_worker, synthetic_plan
from tests.workflows.test_replay import HISTORIES

CASES = {
    "cities_three": RunRequest(goal="Compare Paris, Tokyo and New York"),
    "cities_unknown_city_replans": RunRequest(goal="Compare Paris, Atlantis and Tokyo"),
    "synthetic_diamond": RunRequest(
        goal="diamond",
        scenario="synthetic",
        plan=synthetic_plan(
            delay("a", 10), delay("b", 30, ["a"]), delay("c", 20, ["a"]), collect("d", ["b", "c"])
        ),
    ),
}


async def main() -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(), data_converter=DATA_CONVERTER
    )
    async with env:
        task_queue = f"record-{uuid.uuid4().hex[:8]}"
        async with running_worker(env.client, task_queue):
            for name, request in CASES.items():
                result = await execute_run(env.client, task_queue, request)
                history = await env.client.get_workflow_handle(result.run_id).fetch_history()
                (HISTORIES / f"{name}.json").write_text(history.to_json())
                print(f"{name}: {result.status.value}, {len(history.events)} events")


if __name__ == "__main__":
    asyncio.run(main())
