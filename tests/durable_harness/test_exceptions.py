"""The client's own exceptions: a small public hierarchy, one line each, that the `harness` CLI
shows as that line and maps to the exit code docs/cli.md states (2 bad input or an unknown id,
3 no server, 1 a failed run). The public package has no CliError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest
from temporalio.client import Client

import durable_harness
from durable_harness import (
    Harness,
    HarnessError,
    InvalidInput,
    NotFound,
    RunFailed,
    Settings,
    TaskRefused,
    Unavailable,
)
from durable_harness._client import deliveries
from starter.errors import CliError, exit_code_of

ROOT = Path(__file__).parent.parent.parent
NOWHERE = "127.0.0.1:1"
"""An address no server listens on."""

KINDS: list[tuple[type[HarnessError], int]] = [
    (InvalidInput, 2),
    (NotFound, 2),
    (Unavailable, 3),
    (RunFailed, 1),
]


@pytest.mark.parametrize(("kind", "code"), KINDS, ids=[kind.__name__ for kind, _ in KINDS])
def test_each_public_exception_maps_to_the_exit_code_the_cli_documents(
    kind: type[HarnessError], code: int
) -> None:
    assert exit_code_of(kind("it went wrong")) == code


def test_a_task_refusal_is_invalid_input_with_the_exit_code_the_clis_refusals_always_had() -> None:
    refused = TaskRefused("an agent cannot set a task CANCELLED")
    assert isinstance(refused, InvalidInput) and exit_code_of(refused) == 2
    assert "TaskRefused" in durable_harness.__all__


def test_a_subclass_of_a_public_exception_keeps_its_exit_code() -> None:
    class ServerGone(Unavailable):
        pass

    assert exit_code_of(ServerGone("gone")) == 3


def test_a_public_exception_is_its_one_line_and_no_cli_error() -> None:
    error = NotFound("no run with id 'r-1'")
    assert str(error) == error.message == "no run with id 'r-1'"
    assert isinstance(error, HarnessError) and not isinstance(error, CliError)
    assert "CliError" not in durable_harness.__all__ and not hasattr(durable_harness, "CliError")


def test_the_clis_own_error_is_a_harness_error_with_its_own_exit_code() -> None:
    assert exit_code_of(CliError("bad flag")) == 2
    assert exit_code_of(CliError("gone", 3)) == 3


@pytest.mark.parametrize(("kind", "code"), KINDS, ids=[kind.__name__ for kind, _ in KINDS])
def test_the_cli_shows_a_public_exception_as_its_line_and_exits_with_its_code(
    kind: type[HarnessError], code: int
) -> None:
    """Raised from a command's handler, as the client raises it: `harness: LINE` on stderr,
    nothing else, and the kind's exit code."""
    script = (
        "import starter.cli.app as app\n"
        f"from durable_harness import {kind.__name__}\n"
        "def refuse(args):\n"
        f"    raise {kind.__name__}('what went wrong, in one line')\n"
        "app.dispatch = refuse\n"
        "app.main(['tools'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stderr) == (code, "harness: what went wrong, in one line\n")


def test_an_agent_approving_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="agents can never approve"):
        deliveries.approval("approval-1", "agent:planner", False, None)


async def test_a_bad_start_request_is_invalid_input_before_anything_is_sent() -> None:
    # No client at all: the request is refused before one would be used.
    harness = Harness(client=cast(Client, None), settings=Settings.from_env({}))
    with pytest.raises(InvalidInput, match="cannot start this run"):
        await harness.start("Compare Paris and Tokyo", max_replans=-1)


async def test_an_agent_model_the_provider_cannot_serve_is_invalid_input_naming_the_role() -> None:
    harness = Harness(client=cast(Client, None), settings=Settings.from_env({}))
    with pytest.raises(InvalidInput, match="agent_model: claude-sonnet-4-6 is a anthropic model"):
        await harness.start(
            "Compare Paris and Tokyo", provider="openai", agent_model="claude-sonnet-4-6"
        )


async def test_no_server_at_the_address_is_unavailable() -> None:
    with pytest.raises(Unavailable, match=f"cannot reach Temporal at {NOWHERE}"):
        await Harness.connect(address=NOWHERE)


async def test_a_run_id_the_server_does_not_know_is_not_found(client: Client) -> None:
    harness = await Harness.connect(address=client.service_client.config.target_host)
    with pytest.raises(NotFound, match="no run with id 'no-such-run'"):
        await harness.run("no-such-run").status()
