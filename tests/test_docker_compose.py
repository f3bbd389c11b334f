"""Static checks of the container wiring: docker-compose.yml, Dockerfile and .dockerignore.

No Docker engine is needed: the files are parsed and their wiring asserted as behaviours, and the
namespace job's shell script is run under ``/bin/sh`` against a fake ``temporal`` CLI.
Compose interpolation (``${VAR:-default}``) is resolved the way Compose resolves it when none of
the variables is set in the environment, so the tests check the defaults a fresh checkout gets,
whatever the shell running the tests exports.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.client import Client

from durable_harness._client.run_results import result_of
from harness.engine.run import RunPhase, RunRequest
from workflows import AgentRunWorkflow, search_attributes

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
PYPROJECT = ROOT / "pyproject.toml"

TEMPORAL_FRONTEND = "temporal:7233"
NAMESPACE_JOB = "temporal-create-namespace"
HARNESS_SEARCH_ATTRIBUTES = search_attributes.registrations()
"""What the namespace job must register: the code's one list, with each attribute's type."""

# Stands in for the `temporal` CLI of the admin-tools image. Every call is appended to calls.log.
# The first $FAKE_UNREACHABLE calls fail as if the frontend were still starting; the namespace
# exists once a file named after it is in $FAKE_STATE; $FAKE_EXISTING lists Name:Type search
# attributes that are registered already (re-adding one fails with "already exists", as some
# server versions answer).
FAKE_TEMPORAL_CLI = """#!/bin/sh
echo "temporal $*" >> "$FAKE_STATE/calls.log"
calls=$(grep -c '^temporal ' "$FAKE_STATE/calls.log")
if [ "$calls" -le "${FAKE_UNREACHABLE:-0}" ]; then
  echo "Error: failed reaching server: Frontend is not healthy yet" >&2
  exit 1
fi
namespace="" name="" type="" previous=""
for argument; do
  case "$previous" in
    --namespace) namespace="$argument" ;;
    --name) name="$argument" ;;
    --type) type="$argument" ;;
  esac
  previous="$argument"
done
case "$*" in
  "operator namespace describe "*)
    [ -f "$FAKE_STATE/namespace-$namespace" ] && exit 0
    echo "Error: Namespace $namespace is not found" >&2
    exit 1 ;;
  "operator namespace create "*)
    touch "$FAKE_STATE/namespace-$namespace" ;;
  "operator search-attribute create "*)
    [ -f "$FAKE_STATE/namespace-$namespace" ] || { echo "Error: namespace not found" >&2; exit 1; }
    case " ${FAKE_EXISTING:-} " in
      *" $name:$type "*)
        echo "Error: unable to add search attributes: Search attribute $name already exists." >&2
        exit 1 ;;
      *" $name:"*)
        echo "Error: search attribute $name already exists and has different type Text" >&2
        exit 1 ;;
    esac ;;
esac
"""
FAKE_SLEEP = """#!/bin/sh
echo "sleep $*" >> "$FAKE_STATE/calls.log"
"""

_INTERPOLATION = re.compile(
    r"\$(?:(?P<escaped>\$)"
    r"|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}"
    r"|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


def interpolate(value: str) -> str:
    """Resolve Compose variables as if none were set: ``${X:-d}`` and ``${X-d}`` become ``d``,
    ``${X}`` and ``$X`` become empty, and ``$$`` becomes a literal ``$``."""

    def substitute(match: re.Match[str]) -> str:
        if match.group("escaped"):
            return "$"
        op = match.group("op")
        if op in (":-", "-"):
            return match.group("arg") or ""
        if op in (":?", "?"):
            name = match.group("braced")
            raise AssertionError(f"${{{name}}} is required and has no default")
        return ""

    return _INTERPOLATION.sub(substitute, value)


def resolve(node: Any) -> Any:
    """Apply :func:`interpolate` to every string value of a parsed YAML document."""
    if isinstance(node, str):
        return interpolate(node)
    if isinstance(node, dict):
        return {key: resolve(value) for key, value in node.items()}
    if isinstance(node, list):
        return [resolve(item) for item in node]
    return node


def compose() -> dict[str, Any]:
    document = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))
    assert isinstance(document, dict), "docker-compose.yml must be a mapping"
    resolved = resolve(document)
    assert isinstance(resolved, dict)
    return resolved


def service(name: str) -> dict[str, Any]:
    services = compose()["services"]
    assert name in services, f"service {name!r} is missing"
    definition = services[name]
    assert isinstance(definition, dict)
    return definition


def environment(name: str) -> dict[str, str]:
    """A service's environment as a mapping, whether written as a mapping or a KEY=VALUE list."""
    raw = service(name).get("environment", {})
    if isinstance(raw, list):
        pairs = (str(item).split("=", 1) for item in raw)
        return {pair[0]: pair[1] if len(pair) > 1 else "" for pair in pairs}
    assert isinstance(raw, dict)
    return {str(key): "" if value is None else str(value) for key, value in raw.items()}


def depends_on(name: str) -> dict[str, str]:
    """Each dependency of a service with its start condition (short form means started)."""
    raw = service(name).get("depends_on", {})
    if isinstance(raw, list):
        return {str(dependency): "service_started" for dependency in raw}
    assert isinstance(raw, dict)
    return {
        str(dependency): str((options or {}).get("condition", "service_started"))
        for dependency, options in raw.items()
    }


def script(name: str) -> str:
    """The shell a service runs, from its entrypoint and command joined together."""
    parts: list[str] = []
    for key in ("entrypoint", "command"):
        value = service(name).get(key)
        if isinstance(value, list):
            parts.extend(str(item) for item in value)
        elif value is not None:
            parts.append(str(value))
    return "\n".join(parts)


def run_namespace_job(
    tmp_path: Path,
    *,
    unreachable: int = 0,
    namespace_exists: bool = False,
    existing: tuple[str, ...] = (),
) -> tuple[int, list[str]]:
    """Run the namespace job's entrypoint against the fake CLI; its exit code and the calls made.

    ``sleep`` is faked too, so retries cost no time; the calls log records how long it waited."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("temporal", FAKE_TEMPORAL_CLI), ("sleep", FAKE_SLEEP)):
        executable = bin_dir / name
        executable.write_text(body, encoding="utf-8")
        executable.chmod(0o755)
    namespace = environment(NAMESPACE_JOB)["TEMPORAL_NAMESPACE"]
    if namespace_exists:
        (tmp_path / f"namespace-{namespace}").touch()
    entrypoint = [str(part) for part in service(NAMESPACE_JOB)["entrypoint"]]
    result = subprocess.run(
        entrypoint,
        env={
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "TEMPORAL_NAMESPACE": namespace,
            "FAKE_STATE": str(tmp_path),
            "FAKE_UNREACHABLE": str(unreachable),
            "FAKE_EXISTING": " ".join(existing),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    log = tmp_path / "calls.log"
    calls = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return result.returncode, calls


needs_posix_shell = pytest.mark.skipif(
    not Path("/bin/sh").is_file(), reason="runs the namespace job's script under /bin/sh"
)


def published_ports(name: str) -> set[str]:
    return {str(port) for port in service(name).get("ports", [])}


def dockerfile_instructions() -> list[tuple[str, str]]:
    """The Dockerfile as (INSTRUCTION, arguments), comments dropped and continuations joined."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        keyword, _, arguments = (pending + stripped).partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        pending = ""
    return instructions


def test_interpolation_resolves_defaults_like_compose() -> None:
    assert interpolate("${TEMPORAL_PORT:-7233}:7233") == "7233:7233"
    assert interpolate("${OPENAI_API_KEY:-}") == ""
    assert interpolate("${UNSET_WITHOUT_DEFAULT}x$BARE") == "x"
    assert interpolate('pg_isready -U "$${POSTGRES_USER}"') == 'pg_isready -U "${POSTGRES_USER}"'


def test_compose_defines_postgres_temporal_ui_and_worker_services() -> None:
    assert set(compose()["services"]) == {
        "postgresql",
        "temporal-admin-tools",
        "temporal",
        NAMESPACE_JOB,
        "temporal-ui",
        "codec-server",
        "worker",
        "payments",
    }
    assert service("postgresql")["image"] == "postgres:16"
    assert service("temporal-admin-tools")["image"].startswith("temporalio/admin-tools:")
    assert service(NAMESPACE_JOB)["image"] == service("temporal-admin-tools")["image"]
    assert service("temporal")["image"].startswith("temporalio/server:")
    assert service("temporal-ui")["image"].startswith("temporalio/ui:")


def test_every_image_tag_is_pinned_and_overridable() -> None:
    raw = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))["services"]
    for name in ("postgresql", "temporal-admin-tools", "temporal", NAMESPACE_JOB, "temporal-ui"):
        image = raw[name]["image"]
        assert re.fullmatch(r"[\w./-]+:\$\{[A-Z_]+:-[\w.-]+\}", image), (
            f"{name} image {image!r} should pin its tag through ${{VAR:-default}}"
        )
        assert not interpolate(image).endswith(":latest")


def test_postgres_keeps_its_data_and_reports_readiness() -> None:
    postgres = service("postgresql")
    assert environment("postgresql") == {
        "POSTGRES_USER": "temporal",
        "POSTGRES_PASSWORD": "temporal",
    }
    assert any(str(volume).endswith(":/var/lib/postgresql/data") for volume in postgres["volumes"])
    volume_name = str(postgres["volumes"][0]).split(":", 1)[0]
    assert volume_name in compose()["volumes"], "the data volume must be a named volume"
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])


def test_schema_job_runs_before_the_server_starts() -> None:
    assert depends_on("temporal-admin-tools") == {"postgresql": "service_healthy"}
    assert depends_on("temporal") == {"temporal-admin-tools": "service_completed_successfully"}
    assert str(service("temporal-admin-tools").get("restart", "no")) == "no", (
        "the schema job must run once and exit, not be restarted"
    )


def test_schema_job_creates_and_migrates_both_databases() -> None:
    env = environment("temporal-admin-tools")
    assert env["DBNAME"] == "temporal"
    assert env["VISIBILITY_DBNAME"] == "temporal_visibility"
    shell = script("temporal-admin-tools")
    assert "temporal-sql-tool --plugin postgres12" in shell
    assert '"$DBNAME" create-database' in shell
    assert '"$VISIBILITY_DBNAME" create-database' in shell
    assert '"$DBNAME" setup-schema -v 0.0' in shell
    assert '"$VISIBILITY_DBNAME" setup-schema -v 0.0' in shell
    assert (
        '"$DBNAME" update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned' in shell
    )
    assert (
        '"$VISIBILITY_DBNAME" update-schema'
        " -d /etc/temporal/schema/postgresql/v12/visibility/versioned" in shell
    )
    assert shell.index("create-database") < shell.index("setup-schema")
    assert shell.index("setup-schema") < shell.index("update-schema")


def test_schema_job_creates_the_workers_memory_database_once() -> None:
    assert environment("temporal-admin-tools")["MEMORY_DBNAME"] == "harness_memory"
    shell = script("temporal-admin-tools")
    assert 'sql "$MEMORY_DBNAME" create-database || echo' in shell
    assert environment("worker")["HARNESS_MEMORY_URL"].endswith("@postgresql:5432/harness_memory")


def test_schema_job_and_server_connect_to_the_same_databases_as_the_same_user() -> None:
    job, server, postgres = (
        environment("temporal-admin-tools"),
        environment("temporal"),
        environment("postgresql"),
    )
    for key in ("DB", "DB_PORT", "POSTGRES_SEEDS", "POSTGRES_USER", "DBNAME", "VISIBILITY_DBNAME"):
        assert job[key] == server[key], f"{key} differs between the schema job and the server"
    assert server["POSTGRES_USER"] == postgres["POSTGRES_USER"]
    assert server["POSTGRES_PWD"] == postgres["POSTGRES_PASSWORD"]
    assert job["SQL_PASSWORD"] == postgres["POSTGRES_PASSWORD"]


def test_server_uses_postgres_with_schema_setup_skipped() -> None:
    env = environment("temporal")
    assert env["DB"] == "postgres12"
    assert env["DB_PORT"] == "5432"
    assert env["POSTGRES_SEEDS"] == "postgresql"
    assert env["POSTGRES_SEEDS"] in compose()["services"]
    assert env["SKIP_SCHEMA_SETUP"] == "true"
    assert env["BIND_ON_IP"] == "0.0.0.0"


def test_server_publishes_its_frontend_and_reports_health() -> None:
    assert published_ports("temporal") == {"7233:7233"}
    check = service("temporal")["healthcheck"]["test"]
    assert "7233" in " ".join(str(part) for part in check)


def test_worker_and_ui_point_at_the_temporal_service() -> None:
    assert environment("worker")["TEMPORAL_ADDRESS"] == TEMPORAL_FRONTEND
    assert environment("temporal-ui")["TEMPORAL_ADDRESS"] == TEMPORAL_FRONTEND
    host, _, port = TEMPORAL_FRONTEND.partition(":")
    assert host in compose()["services"]
    assert any(mapping.endswith(f":{port}") for mapping in published_ports(host))


def test_ui_is_published_on_the_host_and_waits_for_a_healthy_server() -> None:
    assert published_ports("temporal-ui") == {"8233:8080"}
    assert environment("temporal-ui")["TEMPORAL_CORS_ORIGINS"] == "http://localhost:3000"
    assert depends_on("temporal-ui") == {"temporal": "service_healthy"}


def test_the_ui_decodes_payloads_through_the_codec_server_the_host_reaches() -> None:
    codec = service("codec-server")
    assert codec["build"]["dockerfile"] == "Dockerfile"
    command = [str(part) for part in codec["command"]]
    assert command[:3] == ["python", "-m", "starter.servers.codec_server"]
    assert command[command.index("--host") + 1] == "0.0.0.0"
    assert published_ports("codec-server") == {"8888:8888"}
    # The browser calls the codec: the UI's endpoint is the host's port, and the codec answers
    # the UI's published origin with CORS.
    assert environment("temporal-ui")["TEMPORAL_CODEC_ENDPOINT"] == "http://localhost:8888"
    origins = [command[i + 1] for i, part in enumerate(command) if part == "--ui-origin"]
    ui_host_port = published_ports("temporal-ui").pop().split(":")[0]
    assert f"http://localhost:{ui_host_port}" in origins


def test_worker_settings_come_from_the_environment_with_laptop_defaults() -> None:
    assert environment("worker") == {
        "TEMPORAL_ADDRESS": TEMPORAL_FRONTEND,
        "TEMPORAL_NAMESPACE": "default",
        "HARNESS_TASK_QUEUE": "durable-harness",
        "HARNESS_LLM_PROVIDER": "scripted",
        "HARNESS_PAYMENTS_URL": "http://payments:8642",
        "HARNESS_PAYMENTS_SECRET": "",
        "HARNESS_STATE_DIR": "/state",
        "HARNESS_LLM_ACTIVITIES_PER_SECOND": "",
        "HARNESS_MEMORY_URL": "postgresql://temporal:temporal@postgresql:5432/harness_memory",
        "ANTHROPIC_API_KEY": "",
        "OPENAI_API_KEY": "",
        "TEMPORAL_API_KEY": "",
        "TEMPORAL_TLS": "",
        "ANTHROPIC_BASE_URL": "",
        "OPENAI_BASE_URL": "",
        "HARNESS_PLANNER_MODEL": "",
        "HARNESS_WORKER_MODEL": "",
        "HARNESS_JUDGE_MODEL": "",
        "HARNESS_FALLBACK_MODEL": "",
        "HARNESS_AGENT_MODEL": "",
        "HARNESS_SHUTDOWN_GRACE_SECONDS": "30",
    }
    raw = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))
    raw_env = raw["services"]["worker"]["environment"]
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        assert raw_env[key] == f"${{{key}:-}}", f"{key} must pass through from the host"


def test_workers_are_interchangeable_replicas_that_wait_for_a_healthy_server() -> None:
    worker = service("worker")
    assert int(worker["deploy"]["replicas"]) == 2
    assert "container_name" not in worker, "a fixed container name would prevent replicas"
    assert depends_on("worker") == {
        "temporal": "service_healthy",
        NAMESPACE_JOB: "service_completed_successfully",
        "payments": "service_healthy",
    }
    assert "ports" not in worker, "replicas of one service cannot share a host port"


def test_namespace_is_created_before_workers_start() -> None:
    assert depends_on(NAMESPACE_JOB) == {"temporal": "service_healthy"}
    assert depends_on("worker")[NAMESPACE_JOB] == "service_completed_successfully"
    assert str(service(NAMESPACE_JOB).get("restart", "no")) == "no", (
        "the namespace job must run once and exit, not be restarted"
    )
    assert "ports" not in service(NAMESPACE_JOB)


def test_namespace_job_targets_the_workers_namespace_on_the_temporal_frontend() -> None:
    assert environment(NAMESPACE_JOB)["TEMPORAL_NAMESPACE"] == "default"
    assert (
        environment(NAMESPACE_JOB)["TEMPORAL_NAMESPACE"]
        == environment("worker")["TEMPORAL_NAMESPACE"]
    )
    raw = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))
    raw_env = raw["services"][NAMESPACE_JOB]["environment"]
    assert raw_env["TEMPORAL_NAMESPACE"] == "${TEMPORAL_NAMESPACE:-default}"
    shell = script(NAMESPACE_JOB)
    assert 'NS="$TEMPORAL_NAMESPACE"' in shell
    assert (
        'temporal operator namespace describe --namespace "$NS" --address temporal:7233'
        ' || temporal operator namespace create --namespace "$NS" --address temporal:7233'
        " --retention 72h" in shell
    )
    assert f"--address {TEMPORAL_FRONTEND}" in shell


def registered_in_compose() -> list[tuple[str, str]]:
    """(name, type) of each `register NAME TYPE` call in the namespace job's script, in order."""
    return re.findall(r"^\s*retry register (\S+) (\S+)\s*$", script(NAMESPACE_JOB), re.M)


def test_compose_registers_exactly_the_search_attributes_the_code_uses() -> None:
    registered = registered_in_compose()
    assert len(registered) == len(set(registered)), f"registered twice: {registered}"
    assert dict(registered) == search_attributes.registrations()
    assert {name for name, _ in registered} == {key.name for key in search_attributes.ALL_KEYS}


def test_the_search_attributes_tasks_are_listed_by_are_in_the_one_list() -> None:
    # `harness task/contract/lesson` refuse a server without these (durable_harness._client.tasks),
    # so compose must register them too: they are part of ALL_KEYS, the list everything registers.
    assert set(search_attributes.TASK_KEYS) <= set(search_attributes.ALL_KEYS)
    assert {"HarnessTaskScope", "HarnessTaskStatus", "HarnessTaskParent"} <= dict(
        registered_in_compose()
    ).keys()


@needs_posix_shell
def test_namespace_job_creates_the_namespace_once_the_frontend_answers(tmp_path: Path) -> None:
    code, calls = run_namespace_job(tmp_path, unreachable=3)
    assert code == 0, calls
    assert any(call.startswith("sleep ") for call in calls), "it must wait before retrying"
    creates = [call for call in calls if call.startswith("temporal operator namespace create ")]
    assert creates[-1] == (
        "temporal operator namespace create --namespace default"
        f" --address {TEMPORAL_FRONTEND} --retention 72h"
    )
    assert (tmp_path / "namespace-default").exists()


@needs_posix_shell
def test_namespace_job_leaves_an_existing_namespace_alone(tmp_path: Path) -> None:
    code, calls = run_namespace_job(tmp_path, namespace_exists=True)
    assert code == 0, calls
    assert calls[0] == (
        f"temporal operator namespace describe --namespace default --address {TEMPORAL_FRONTEND}"
    )
    assert not any("namespace create" in call for call in calls)
    assert not any(call.startswith("sleep ") for call in calls)


@needs_posix_shell
def test_namespace_job_registers_the_harness_search_attributes(tmp_path: Path) -> None:
    code, calls = run_namespace_job(tmp_path)
    assert code == 0, calls
    registered = [call for call in calls if "search-attribute create" in call]
    assert registered == [
        "temporal operator search-attribute create --namespace default"
        f" --address {TEMPORAL_FRONTEND} --name {name} --type {kind}"
        for name, kind in HARNESS_SEARCH_ATTRIBUTES.items()
    ]
    namespace_ready = max(i for i, call in enumerate(calls) if "namespace create" in call)
    assert calls.index(registered[0]) > namespace_ready, "attributes need the namespace first"


@needs_posix_shell
def test_namespace_job_can_rerun_when_everything_exists_already(tmp_path: Path) -> None:
    existing = tuple(f"{name}:{kind}" for name, kind in HARNESS_SEARCH_ATTRIBUTES.items())
    code, calls = run_namespace_job(tmp_path, namespace_exists=True, existing=existing)
    assert code == 0, calls
    assert sum("search-attribute create" in call for call in calls) == len(existing)
    assert not any(call.startswith("sleep ") for call in calls), "already exists is not retried"


@needs_posix_shell
def test_namespace_job_fails_at_once_on_a_search_attribute_of_another_type(
    tmp_path: Path,
) -> None:
    clash = ("HarnessPhase:Text",)
    code, calls = run_namespace_job(tmp_path, namespace_exists=True, existing=clash)
    assert code != 0
    assert calls[-1].endswith("--name HarnessPhase --type Keyword")
    assert not any(call.startswith("sleep ") for call in calls), "a type clash is not retried"


@needs_posix_shell
def test_namespace_job_gives_up_when_the_frontend_never_answers(tmp_path: Path) -> None:
    code, calls = run_namespace_job(tmp_path, unreachable=10_000)
    assert code != 0, "the worker must not start without its namespace"
    assert not any("search-attribute" in call for call in calls)
    waited = sum(float(call.split()[1]) for call in calls if call.startswith("sleep "))
    assert 10 <= waited <= 300, f"waited {waited}s in total before giving up"


def test_worker_is_built_from_the_project_dockerfile() -> None:
    build = service("worker")["build"]
    context = build if isinstance(build, str) else build["context"]
    dockerfile = "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
    assert context == "."
    assert (ROOT / context / dockerfile).resolve() == DOCKERFILE
    assert DOCKERFILE.is_file()
    instructions = dockerfile_instructions()
    assert instructions[0] == ("FROM", "python:3.11-slim")
    keyword, arguments = instructions[-1]
    assert keyword == "CMD"
    assert json.loads(arguments) == ["python", "-m", "worker"]


def test_worker_image_runs_as_a_non_root_user() -> None:
    users = [arguments for keyword, arguments in dockerfile_instructions() if keyword == "USER"]
    assert users, "the image must switch away from root"
    assert users[-1].split(":", 1)[0] not in {"root", "0"}


def test_worker_image_installs_the_project_with_every_package_it_declares() -> None:
    instructions = dockerfile_instructions()
    copied_sources = {
        source.rstrip("/")
        for keyword, arguments in instructions
        if keyword == "COPY"
        for source in arguments.split()[:-1]
    }
    assert {"pyproject.toml", "README.md"} <= copied_sources
    pyproject = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {str(pattern).rstrip("*").rstrip(".") for pattern in patterns}
    assert packages <= copied_sources, f"not copied into the image: {packages - copied_sources}"
    assert any(
        keyword == "RUN" and "pip install --no-cache-dir ." in arguments
        for keyword, arguments in instructions
    )


def test_worker_image_defaults_match_the_compose_defaults() -> None:
    env: dict[str, str] = {}
    for keyword, arguments in dockerfile_instructions():
        if keyword == "ENV":
            for pair in arguments.split():
                key, equals, value = pair.partition("=")
                if equals:
                    env[key] = value
    assert env["TEMPORAL_ADDRESS"] == "localhost:7233"
    compose_env = environment("worker")
    for key in ("TEMPORAL_NAMESPACE", "HARNESS_TASK_QUEUE", "HARNESS_LLM_PROVIDER"):
        assert env[key] == compose_env[key]
    assert "ANTHROPIC_API_KEY" not in env and "OPENAI_API_KEY" not in env, "no secrets baked in"


def test_dockerignore_keeps_tests_caches_and_local_state_out_of_the_build() -> None:
    patterns = {
        line.strip().rstrip("/")
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", ".git", ".harness", "out", "tests", "bench"} <= patterns
    assert {".mypy_cache", ".ruff_cache", ".pytest_cache", "**/__pycache__"} <= patterns
    copied_sources = {
        arguments.split()[0].rstrip("/")
        for keyword, arguments in dockerfile_instructions()
        if keyword == "COPY"
    }
    assert not copied_sources & patterns, "the Dockerfile copies something the context excludes"


def test_one_payment_service_with_a_durable_ledger_serves_every_worker() -> None:
    payments = service("payments")
    assert payments["build"]["dockerfile"] == "Dockerfile"
    assert payments["command"][:3] == ["python", "-m", "payments"]
    assert "payments-data:/data" in payments["volumes"]
    assert "/data/payments.db" in payments["command"]
    assert "replicas" not in payments.get("deploy", {}), "one ledger, one service"
    assert environment("payments")["TEMPORAL_ADDRESS"] == TEMPORAL_FRONTEND
    url = environment("worker")["HARNESS_PAYMENTS_URL"]
    assert url == "http://payments:8642" and "payments" in compose()["services"]
    assert "8642/health" in " ".join(payments["healthcheck"]["test"])


def test_the_server_reads_the_dynamic_config_file_the_repo_keeps() -> None:
    env = environment("temporal")
    assert env["DYNAMIC_CONFIG_FILE_PATH"] == "config/dynamicconfig/development.yaml"
    assert (
        "./infra/dynamicconfig:/etc/temporal/config/dynamicconfig:ro"
        in service("temporal")["volumes"]
    )
    config = yaml.safe_load((ROOT / "infra" / "dynamicconfig" / "development.yaml").read_text())
    assert config["system.enableActivityEagerExecution"] == [{"value": True}]


def test_workers_drain_before_docker_kills_them() -> None:
    grace = float(environment("worker")["HARNESS_SHUTDOWN_GRACE_SECONDS"])
    stop = service("worker")["stop_grace_period"]
    assert stop.endswith("s") and float(stop[:-1]) > grace


@pytest.mark.requires_local_server("a worker process in real time")
async def test_a_worker_started_from_the_compose_environment_works_a_run(
    client: Client, task_queue: str, postgres_url: str
) -> None:
    """The service's own environment, with only what names the compose network replaced:
    the Temporal address and the memory database (a real Postgres here)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "HARNESS_"))},
        **environment("worker"),
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "HARNESS_MEMORY_URL": postgres_url,
        "HARNESS_TASK_QUEUE": task_queue,
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        handle = await client.start_workflow(
            AgentRunWorkflow.run, RunRequest(goal="Compare Paris and Tokyo"),
            id=f"compose-{uuid.uuid4().hex[:8]}", task_queue=task_queue,
        )  # fmt: skip
        result = await asyncio.wait_for(result_of(client, handle), timeout=60)
    finally:
        worker.send_signal(signal.SIGTERM)
        _, err = worker.communicate(timeout=60)
    assert result.status is RunPhase.SUCCEEDED
    assert worker.returncode == 0, err.decode()
