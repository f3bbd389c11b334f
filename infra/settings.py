"""Configuration from the environment, read in one place, with defaults that work on a laptop.

Why not pydantic-settings: the Temporal connection is not ours to parse. It comes from the
SDK's own `temporalio.envconfig` (a profile of the config file, then the TEMPORAL_* variables),
which pydantic-settings cannot read; what is left is a dozen HARNESS_* values, each checked here
with a message that names the variable and the form it expects (tests/test_settings.py), which
is what pydantic-settings would give, less the dependency."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from infra.state import state_dir

if TYPE_CHECKING:  # the SDK loads at connection time, not for `harness --help`
    from temporalio.envconfig import ClientConnectConfig
    from temporalio.service import TLSConfig

DEFAULT_TASK_QUEUE = "durable-harness"


@dataclass(frozen=True)
class Settings:
    """How to reach Temporal and what the harness runs with: read from the environment with
    `Settings.from_env` (docs/configuration.md)."""

    temporal_address: str = "localhost:7233"
    temporal_namespace: str = "default"
    temporal_api_key: str | None = field(default=None, repr=False)
    temporal_tls: bool | TLSConfig = False
    temporal_rpc_metadata: Mapping[str, str] = field(default_factory=dict)
    task_queue: str = DEFAULT_TASK_QUEUE
    llm_provider: str = "scripted"
    ui_url: str = "http://localhost:8233"
    state_dir: Path = field(default_factory=state_dir)
    """Memory, the dev server's database, eval reports: infra.state says where, and why."""
    max_tokens: int | None = None
    max_tool_calls: int | None = None
    max_seconds: float | None = None
    max_cost_usd: float | None = None
    llm_activities_per_second: float | None = None
    """The server-side rate limit of model calls, shared by every worker of the task queue."""
    metrics_address: str | None = None
    """HOST:PORT where a worker serves Prometheus metrics (the SDK's and the harness's)."""
    shutdown_grace_seconds: float = 30.0
    """How long a stopping worker lets its running activities finish (a model call mid-flight
    is not cancelled and paid for twice); compose's stop_grace_period is longer."""
    memory_url: str | None = None
    """The memory store: postgresql://... for a cluster; unset, SQLite in the state directory."""
    max_concurrent_activities: int | None = None
    """A worker's activity slots (worker.tuning: 200 unless set)."""
    max_cached_workflows: int | None = None
    """A worker's sticky cache of runs (the SDK's 1,000 unless set)."""
    workflow_task_pollers: int | None = None
    """A worker's concurrent workflow-task polls (the SDK's 5 unless set)."""
    activity_task_pollers: int | None = None
    """A worker's concurrent activity-task polls (the SDK's 5 unless set)."""
    sticky_timeout_seconds: float | None = None
    """How long a run's next workflow task waits for the worker that caches it before any
    worker of the queue may take it (the SDK's 10 s unless set): what a run loses when that
    worker died without a word (SIGKILL, a lost machine)."""
    web: WebTarget | None = None
    """The `harness web` app a worker posts its model calls' tokens to, as they stream; none:
    the tokens go nowhere, at no cost."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The connection as the Temporal CLI and SDK read it (`temporalio.envconfig`: a profile
        of TEMPORAL_CONFIG_FILE or the default config file, chosen by TEMPORAL_PROFILE, then the
        TEMPORAL_* variables over it), and the harness's own HARNESS_* settings."""
        env = os.environ if env is None else env
        connection = _temporal_connection(env)
        api_key = connection.get("api_key") or None
        tls = connection.get("tls") or False  # the SDK's rule: an API key turns it on, unless
        # TEMPORAL_TLS=false or the profile's tls says otherwise
        return cls(
            temporal_address=connection.get("target_host") or cls.temporal_address,
            temporal_namespace=connection.get("namespace") or cls.temporal_namespace,
            temporal_api_key=api_key,
            temporal_tls=tls,
            temporal_rpc_metadata=dict(connection.get("rpc_metadata") or {}),
            task_queue=env.get("HARNESS_TASK_QUEUE", cls.task_queue),
            llm_provider=env.get("HARNESS_LLM_PROVIDER", cls.llm_provider),
            ui_url=env.get("HARNESS_UI_URL", "").strip()
            or ui_url_for(connection.get("target_host") or cls.temporal_address),
            state_dir=state_dir(env),
            max_tokens=_number(env, "HARNESS_MAX_TOKENS", int),
            max_tool_calls=_number(env, "HARNESS_MAX_TOOL_CALLS", int),
            max_seconds=_number(env, "HARNESS_MAX_SECONDS", float),
            max_cost_usd=_number(env, "HARNESS_MAX_COST_USD", float),
            llm_activities_per_second=_number(env, "HARNESS_LLM_ACTIVITIES_PER_SECOND", float),
            metrics_address=_address(env, "HARNESS_METRICS_ADDRESS"),
            memory_url=_memory_url(env, "HARNESS_MEMORY_URL"),
            shutdown_grace_seconds=_grace(env, "HARNESS_SHUTDOWN_GRACE_SECONDS"),
            max_concurrent_activities=_number(env, "HARNESS_MAX_CONCURRENT_ACTIVITIES", int),
            max_cached_workflows=_number(env, "HARNESS_MAX_CACHED_WORKFLOWS", int),
            workflow_task_pollers=_number(env, "HARNESS_WORKFLOW_TASK_POLLERS", int),
            activity_task_pollers=_number(env, "HARNESS_ACTIVITY_TASK_POLLERS", int),
            sticky_timeout_seconds=_number(env, "HARNESS_STICKY_TIMEOUT_SECONDS", float),
            web=web_target(env),
        )


@dataclass(frozen=True)
class WebTarget:
    """Where a worker posts model tokens: the web app's URL, and its token if it has one."""

    url: str
    token: str | None = field(default=None, repr=False)


def web_target(env: Mapping[str, str]) -> WebTarget | None:
    """HARNESS_WEB_URL (http://HOST:PORT of `harness web`) and HARNESS_WEB_TOKEN, its token."""
    raw = env.get("HARNESS_WEB_URL", "").strip().rstrip("/")
    if not raw:
        return None
    scheme, _, rest = raw.partition("://")
    if scheme not in ("http", "https") or not rest:
        raise SettingsError(
            f"HARNESS_WEB_URL={raw!r} is not the web app's URL, e.g. http://127.0.0.1:8765"
        )
    token = env.get("HARNESS_WEB_TOKEN", "").strip() or None
    return WebTarget(url=raw, token=token)


_N = TypeVar("_N", int, float)


class SettingsError(ValueError):
    """A configuration value that cannot be used; the message names the variable."""


UI_PORT_OFFSET = 1000
"""The dev server's UI listens on its frontend port + 1000 unless told otherwise (7233 ->
8233), as `harness server` and `make demo` start it, and as compose publishes it."""


def ui_url_for(address: str) -> str:
    """The Temporal UI of the server at `address`, by the dev server's own rule."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or int(port) + UI_PORT_OFFSET > 65535:
        return Settings.ui_url
    return f"http://{host}:{int(port) + UI_PORT_OFFSET}"


def _temporal_connection(env: Mapping[str, str]) -> ClientConnectConfig:
    """An empty TEMPORAL_* variable counts as unset (compose passes `${X:-}` through), never as
    a value: an empty TEMPORAL_TLS would otherwise turn TLS on."""
    from temporalio.envconfig import ClientConfig

    env = {k: v for k, v in env.items() if v.strip() or not k.startswith("TEMPORAL_")}
    profile = env.get("TEMPORAL_PROFILE", "").strip() or None
    config_file = env.get("TEMPORAL_CONFIG_FILE", "").strip() or None
    if config_file is not None and not Path(config_file).is_file():
        raise SettingsError(f"TEMPORAL_CONFIG_FILE={config_file} is not a file")
    try:
        return ClientConfig.load_client_connect_config(
            profile=profile, config_file=config_file, override_env_vars=dict(env)
        )
    except Exception as error:  # the SDK's own errors: a missing file or profile, bad TOML
        where = f"profile {profile!r} of " if profile else ""
        source = config_file or "the default Temporal config file"
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise SettingsError(
            f"the Temporal connection cannot be read from {where}{source} "
            f"(TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE): {reason}"
        ) from None


def _number(env: Mapping[str, str], name: str, kind: type[_N]) -> _N | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        value = kind(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a {kind.__name__}") from None
    # An int is finite whatever its size; math.isfinite would convert it to a float, and
    # raise OverflowError past float's range (HARNESS_MAX_TOKENS=1 and 400 zeros).
    if (isinstance(value, float) and not math.isfinite(value)) or value <= 0:
        raise SettingsError(f"{name} must be a positive finite number, got {raw}")
    return value


def _grace(env: Mapping[str, str], name: str) -> float:
    """Seconds, 0 included (a stop that does not wait)."""
    raw = env.get(name, "").strip()
    if not raw:
        return Settings.shutdown_grace_seconds
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise SettingsError(f"{name} must be 0 or more seconds, got {raw}")
    return value


def _address(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    host, _, port = raw.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise SettingsError(f"{name}={raw!r} is not HOST:PORT, e.g. 127.0.0.1:9464")
    return raw


def _memory_url(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not raw.startswith(("postgresql://", "postgres://", "sqlite:///")):
        scheme = raw.split("://")[0] if "://" in raw else raw[:20]
        raise SettingsError(
            f"{name} must be postgresql://USER@HOST:PORT/DB or sqlite:///PATH, not {scheme}…"
        )
    return raw
