"""`harness memory list|search|show|forget` as a user types it: a real process on the store the
workers wrote, and `harness run --session/--no-memory/--memory-budget`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from temporalio.client import Client

from harness.recall.memory_records import MemoryFilter
from memory.sqlite_store import SqliteMemoryStore
from tests.starter.test_cli import harness
from tests.support import running_worker

pytestmark = pytest.mark.requires_local_server("`harness run` sets the Harness* search attributes")


def _state() -> Path:
    return Path(os.environ["HARNESS_STATE_DIR"])


async def test_two_runs_of_a_session_are_listed_searched_shown_and_forgotten(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        for goal, session in (
            ("Compare Paris, Atlantis and Tokyo", "trip"),
            ("Compare Rome, Atlantis and Vienna", "trip"),
            ("Compare Oslo and Lisbon", "work"),
        ):
            code, out, err = await harness(
                "run", goal, "--session", session, client=client, task_queue=task_queue
            )
            assert code == 0, err
    code, listed, err = await harness("memory", "list", "--session", "trip", "--json")
    assert code == 0, err
    episodes = json.loads(listed)
    assert [e["data"]["goal"] for e in episodes] == [
        "Compare Rome, Atlantis and Vienna",
        "Compare Paris, Atlantis and Tokyo",
    ]
    assert episodes[0]["data"]["attempts"] == 1 and episodes[1]["data"]["attempts"] == 2

    code, found, err = await harness("memory", "search", "Atlantis", "--scenario", "cities")
    assert code == 0, err
    assert found.splitlines()[0].split()[1] == episodes[1]["id"]  # the one that found no data

    code, shown, err = await harness("memory", "show", episodes[1]["id"])
    assert code == 0, err
    assert "no data: Atlantis" in shown and "session: trip" in shown

    code, out, err = await harness("memory", "forget", "--session", "trip")
    assert (code, out.strip()) == (0, "forgot 2 memories"), err
    left = SqliteMemoryStore(_state() / "memory.db")
    assert [r.data["goal"] for r in left.select(MemoryFilter())] == ["Compare Oslo and Lisbon"]
    left.close()

    code, _, err = await harness("memory", "show", episodes[1]["id"])
    assert code == 1 and "no memory" in err and "Traceback" not in err


async def test_a_run_with_no_memory_leaves_no_episode_and_a_small_budget_is_kept(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        code, _, err = await harness(
            "run", "Compare Paris and Tokyo", "--no-memory", client=client, task_queue=task_queue
        )
        assert code == 0, err
        code, out, err = await harness(
            "run", "Compare Paris and Tokyo", "--memory-budget", "250", "--json",
            client=client, task_queue=task_queue,
        )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    recalled = [e for e in result["trace"] if e["kind"] == "memory.retrieve"]
    assert recalled and recalled[0]["data"]["budget_chars"] == 250
    assert recalled[0]["data"]["used_chars"] <= 250
    code, listed, err = await harness("memory", "list", "--json")
    assert [e["run_id"] for e in json.loads(listed)] == [result["run_id"]]


@pytest.mark.parametrize(
    ("url", "code", "said"),
    [
        ("postgresql://u@[bad/db", 2, "HARNESS_MEMORY_URL is not a Postgres URL"),
        ("postgresql://bob:hunter2@127.0.0.1:1/memory", 3, "cannot be opened"),
        ("mysql://db/x", 2, "HARNESS_MEMORY_URL must be postgresql://"),
    ],
)
async def test_a_store_that_cannot_be_used_is_one_line_and_its_exit_code(
    url: str, code: int, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_MEMORY_URL", url)
    got, _, err = await harness("memory", "list")
    assert (got, "Traceback" in err, len(err.strip().splitlines())) == (code, False, 1), err
    assert said in err and "hunter2" not in err


async def test_the_issues_walkthrough_the_second_run_succeeds_at_once_and_its_trace_says_why(
    client: Client, task_queue: str
) -> None:
    """docs/memory.md's two commands, then `harness trace` of the second run."""
    async with running_worker(client, task_queue):
        code, first, err = await harness(
            "run", "Compare Paris, Atlantis and Tokyo", client=client, task_queue=task_queue
        )
        assert code == 0 and "attempts 2" in first, err
        code, second, err = await harness(
            "run", "Compare Rome, Atlantis and Vienna", client=client, task_queue=task_queue
        )
    assert code == 0 and "attempts 1" in second.splitlines()[-1], err
    run_id = second.splitlines()[-1].split(" · ")[1].removeprefix("run ")
    code, trace, err = await harness("trace", run_id, client=client, task_queue=task_queue)
    assert code == 0, err
    recalled = [line for line in trace.splitlines() if " memory.retrieve " in line]
    assert len(recalled) == 1
    assert "remembered with no data: Atlantis (episode-run-" in recalled[0]
    assert not [line for line in trace.splitlines() if " node.fail " in line]
