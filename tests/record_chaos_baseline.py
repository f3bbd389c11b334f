"""Record the recovery baseline of the chaos eval: `python -m tests.record_chaos_baseline`.

It runs CI's chaos eval (tests.starter.test_eval_chaos.CHAOS_EVAL) on a fresh local dev server
and a worker of this checkout on the offline provider, prints the tables, and saves the
baseline to scenarios/chaos_baseline.json (over the one there: re-record it after a change that
makes recovery better, and commit it with that change). Memory is off and state is a
temporary directory's, so nothing an earlier run left changes a plan."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import uuid

from durable_harness.testing import start_dev_server
from tests.starter.test_cli import harness
from tests.starter.test_eval_chaos import CHAOS_BASELINE, CHAOS_EVAL
from tests.support import running_worker


async def main() -> int:
    with tempfile.TemporaryDirectory() as state:
        os.environ["HARNESS_STATE_DIR"] = state
        task_queue = f"chaos-{uuid.uuid4().hex[:8]}"
        async with await start_dev_server() as env, running_worker(env.client, task_queue):
            _, stdout, stderr = await harness(
                *CHAOS_EVAL, "--no-start", "--quiet", "--out", os.path.join(state, "out"),
                "--save-baseline", str(CHAOS_BASELINE), client=env.client, task_queue=task_queue,
            )  # fmt: skip
    print(stdout)
    print(stderr, file=sys.stderr)
    return 0 if "baseline saved" in stderr else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
