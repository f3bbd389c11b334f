"""The one Temporal client factory: the harness plugin, address, namespace, TLS, API key."""

from __future__ import annotations

from temporalio.client import Client

from infra.plugin import HarnessPlugin
from infra.settings import Settings
from infra.telemetry import metrics_runtime, tracing_interceptors


async def connect(
    settings: Settings | None = None, *, tracing: bool = False, metrics: bool = False
) -> Client:
    """`tracing` adds the OpenTelemetry interceptor when an OTLP endpoint is configured;
    `metrics` serves Prometheus metrics at the configured address (a worker's client: one
    process, one address)."""
    settings = settings or Settings.from_env()
    runtime = metrics_runtime(settings.metrics_address) if metrics else None
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        api_key=settings.temporal_api_key,
        tls=settings.temporal_tls,
        rpc_metadata=dict(settings.temporal_rpc_metadata),
        plugins=[HarnessPlugin()],
        interceptors=tracing_interceptors() if tracing else [],
        runtime=runtime,
    )
