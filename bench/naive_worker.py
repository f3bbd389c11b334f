"""`python -m bench.naive_worker`: the naive baseline's worker, in its own process.

Reads TEMPORAL_ADDRESS and HARNESS_TASK_QUEUE like `python -m worker`; stops on SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import signal

from temporalio.worker import Worker

from bench.naive import NaiveLevelsWorkflow, naive_step
from bench.naive_agent import NaiveAgentsWorkflow, naive_model_turn, naive_tool
from infra.client import connect
from infra.process import exit_now
from infra.settings import Settings
from worker.tuning import WorkerTuning


async def serve(settings: Settings) -> None:
    client = await connect(settings)
    worker = Worker(
        client,
        task_queue=settings.task_queue,
        workflows=[NaiveLevelsWorkflow, NaiveAgentsWorkflow],
        activities=[naive_step, naive_model_turn, naive_tool],
        **WorkerTuning.from_settings(settings).run_worker(),  # as the harness worker's
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        await stop.wait()


def main() -> None:
    asyncio.run(serve(Settings.from_env()))
    exit_now(0)


if __name__ == "__main__":
    main()
