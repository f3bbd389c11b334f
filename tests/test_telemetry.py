"""OpenTelemetry is off by default and wired when an OTLP endpoint is configured."""

from __future__ import annotations

from temporalio.contrib.opentelemetry import TracingInterceptor

from infra.telemetry import tracing_interceptors


def test_no_endpoint_means_no_tracing_interceptor() -> None:
    assert tracing_interceptors({}) == []


def test_an_otlp_endpoint_installs_temporals_tracing_interceptor() -> None:
    interceptors = tracing_interceptors({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"})
    assert len(interceptors) == 1
    assert isinstance(interceptors[0], TracingInterceptor)
