"""Optional OpenTelemetry tracing, wired when an OTLP endpoint is configured, and optional
Prometheus metrics, served when a metrics address is.

Install the extra (`pip install -e '.[otel]'`) and set OTEL_EXPORTER_OTLP_ENDPOINT; every
workflow, activity, signal and update then emits spans through Temporal's interceptor.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import structlog
from temporalio.client import Interceptor
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

log = structlog.get_logger()

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"


def tracing_interceptors(env: Mapping[str, str] | None = None) -> list[Interceptor]:
    env = os.environ if env is None else env
    endpoint = env.get(ENDPOINT_VARIABLE, "").strip()
    if not endpoint:
        return []
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from temporalio.contrib.opentelemetry import TracingInterceptor
    except ImportError:
        log.warning(
            "telemetry.unavailable",
            hint=f"{ENDPOINT_VARIABLE} is set but the otel extra is not installed: "
            "pip install -e '.[otel]'",
        )
        return []
    provider = TracerProvider(resource=Resource.create({"service.name": "durable-harness"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(provider)
    log.info("telemetry.enabled", endpoint=endpoint)
    return [TracingInterceptor()]


def metrics_runtime(address: str | None) -> Runtime | None:
    """A Temporal runtime that serves its metrics, the SDK's and the harness's per-tool ones,
    for Prometheus at http://ADDRESS/metrics; None (the default runtime, no metrics) without
    an address."""
    if address is None:
        return None
    log.info("metrics.enabled", address=address)
    return Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(bind_address=address)))
