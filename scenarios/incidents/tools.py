"""The incidents tools: five raw sources, three analysis steps, and analyze_evidence.

Branches: get_metrics -> compare_periods; get_logs -> detect_signatures; get_traces ->
find_slow_spans; get_deployments; get_config_changes; all of them -> analyze_evidence.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, JsonValue

from harness.catalog.llm import TextRequest
from harness.catalog.tools import ToolRole, ToolSpec
from harness.core.errors import ErrorCode, ToolError
from harness.core.untrusted import fence, with_data_rule
from scenarios.base import Tool, ToolContext, ToolFunction
from scenarios.incidents.assessment import assess
from scenarios.incidents.data import (
    CONFIG_CHANGES,
    DEPLOYMENTS,
    LOGS,
    METRICS,
    SERVICES,
    TRACES,
    LogLine,
    Trace,
    find_service,
    metric_points,
    minute_of,
)
from scenarios.incidents.evidence import (
    ConfigChangeList,
    DeploymentList,
    Evidence,
    MetricComparison,
    SignatureReport,
    SpanReport,
    compare_series,
    detect,
    span_stats,
)
from scenarios.incidents.report import render_report

_CLOCK = r"^([01]\d|2[0-3]):[0-5]\d$"


def _known(service: str) -> str:
    known = find_service(service)
    if known is None:
        raise ValueError(
            f"no telemetry for a service called '{service}'; known: {', '.join(SERVICES)}"
        )
    return known


ServiceName = Annotated[
    str, AfterValidator(_known), Field(description=f"One of {', '.join(SERVICES)}.")
]
Clock = Annotated[str, Field(pattern=_CLOCK, description="UTC time 'HH:MM' on the incident day.")]


class WindowArgs(BaseModel):
    start: Clock = "13:00"
    end: Clock = "15:00"

    def covers(self, time: str) -> bool:
        return minute_of(self.start) <= minute_of(time) < minute_of(self.end)


class ServicesArgs(WindowArgs):
    services: list[ServiceName] = Field(
        default_factory=list, description="Services to read; every service when empty."
    )

    def chosen(self) -> list[str]:
        return self.services or list(SERVICES)


class TracesArgs(WindowArgs):
    service: ServiceName = Field(description="Traces that pass through this service.")
    limit: int = Field(default=200, ge=1, le=1000)


class MetricSeries(BaseModel):
    service: str
    metric: str
    points: list[tuple[str, float]]


class CompareArgs(BaseModel):
    metrics: list[MetricSeries] = Field(description="The get_metrics result.")
    split_at: Clock = Field(description="Compare before this time with after it.")


class SignaturesArgs(BaseModel):
    logs: list[LogLine] = Field(description="The get_logs result.")
    split_at: Clock


class SlowSpansArgs(BaseModel):
    traces: list[Trace] = Field(description="The get_traces result.")
    split_at: Clock


class AnalyzeArgs(Evidence):
    service: ServiceName = Field(description="The service that shows the symptom.")
    symptom: str = Field(default="errors or latency", description="What the user reports.")
    since: Clock | None = Field(default=None, description="When the user says it started.")


async def get_metrics(args: ServicesArgs, ctx: ToolContext) -> JsonValue:
    series = [
        MetricSeries(
            service=service,
            metric=metric,
            points=[
                (time, value) for time, value in metric_points(service, metric) if args.covers(time)
            ],
        )
        for service in args.chosen()
        for metric in METRICS
    ]
    return [item.model_dump(mode="json") for item in series]


async def compare_periods(args: CompareArgs, ctx: ToolContext) -> JsonValue:
    split = minute_of(args.split_at)
    shifts = [
        shift
        for series in args.metrics
        if (shift := compare_series(series.service, series.metric, series.points, split))
    ]
    services = list(dict.fromkeys(series.service for series in args.metrics))
    comparison = MetricComparison(split_at=args.split_at, services=services, shifts=shifts)
    return comparison.model_dump(mode="json")


async def get_logs(args: ServicesArgs, ctx: ToolContext) -> JsonValue:
    chosen = set(args.chosen())
    lines = [line for line in LOGS if line.service in chosen and args.covers(line.time)]
    return [line.model_dump(mode="json") for line in lines]


async def detect_signatures(args: SignaturesArgs, ctx: ToolContext) -> JsonValue:
    signatures = detect(args.logs, minute_of(args.split_at))
    report = SignatureReport(split_at=args.split_at, lines=len(args.logs), signatures=signatures)
    return report.model_dump(mode="json")


async def get_traces(args: TracesArgs, ctx: ToolContext) -> JsonValue:
    traces = [
        trace
        for trace in TRACES
        if args.covers(trace.time) and any(span.service == args.service for span in trace.spans)
    ]
    return [trace.model_dump(mode="json") for trace in traces[: args.limit]]


async def find_slow_spans(args: SlowSpansArgs, ctx: ToolContext) -> JsonValue:
    stats = span_stats(args.traces, minute_of(args.split_at))
    report = SpanReport(split_at=args.split_at, traces=len(args.traces), spans=stats)
    return report.model_dump(mode="json")


async def get_deployments(args: WindowArgs, ctx: ToolContext) -> JsonValue:
    found = [deploy for deploy in DEPLOYMENTS if args.covers(deploy.time)]
    return DeploymentList(deployments=found).model_dump(mode="json")


async def get_config_changes(args: WindowArgs, ctx: ToolContext) -> JsonValue:
    found = [change for change in CONFIG_CHANGES if args.covers(change.time)]
    return ConfigChangeList(changes=found).model_dump(mode="json")


async def analyze_evidence(args: AnalyzeArgs, ctx: ToolContext) -> JsonValue:
    if not args.investigated():
        raise ToolError(
            ErrorCode.MISSING_REQUIRED_ARGUMENT,
            "analyze_evidence needs at least one source: bind metrics, logs, traces, "
            "deployments or config to the result of its investigation",
        )
    assessment = assess(args, args.service, args.since)
    reply = await ctx.write(
        TextRequest(
            system=with_data_rule(
                "You write incident analyses for on-call engineers. Use only the evidence "
                "given. Keep the lines '**Most likely root cause:**' and '**Confidence:**' and "
                "the '## Evidence' items tagged [metrics], [logs], [traces], [deployments] or "
                "[config] exactly as in the draft; never raise the confidence."
            ),
            prompt="Write the incident analysis from this assessment.\n\n"
            + fence("assessment", assessment.model_dump_json(indent=2)),
            draft=render_report(assessment, args.symptom, args.since),
            max_output_tokens=1500,
        )
    )
    return reply.text.strip()


def _tool(name: str, description: str, arguments: type[BaseModel], run: ToolFunction) -> Tool:
    return Tool(ToolSpec.from_model(name, description, arguments, cost_hint=0.1), arguments, run)


TOOLS = (
    _tool(
        "get_metrics",
        "Per-service time series every 5 minutes: 5xx error rate (%), p99 "
        "latency (ms), CPU (%), requests per minute.",
        ServicesArgs,
        get_metrics,
    ),
    _tool(
        "compare_periods",
        "Metric rises after split_at against the median before it, each "
        "with its onset (bind metrics to get_metrics).",
        CompareArgs,
        compare_periods,
    ),
    _tool(
        "get_logs", "WARN, ERROR and INFO log lines of the given services.", ServicesArgs, get_logs
    ),
    _tool(
        "detect_signatures",
        "Log lines grouped by message template, counted before and "
        "after split_at; new or tripled ERRORs are notable (bind logs to get_logs).",
        SignaturesArgs,
        detect_signatures,
    ),
    _tool(
        "get_traces",
        "Sampled request traces that pass through a service, with every span.",
        TracesArgs,
        get_traces,
    ),
    _tool(
        "find_slow_spans",
        "Mean self time per service and operation before and after split_at; slow when it "
        "at least doubled and grew by 100 ms (bind traces to get_traces).",
        SlowSpansArgs,
        find_slow_spans,
    ),
    _tool(
        "get_deployments",
        "Deployments in the time window, all services.",
        WindowArgs,
        get_deployments,
    ),
    _tool(
        "get_config_changes",
        "Configuration changes in the time window, all services.",
        WindowArgs,
        get_config_changes,
    ),
    Tool(
        ToolSpec.from_model(
            "analyze_evidence",
            "The final incident report: the most likely root cause, its evidence and a "
            "confidence. Bind metrics (compare_periods), logs (detect_signatures), traces "
            "(find_slow_spans), deployments (get_deployments), config (get_config_changes).",
            AnalyzeArgs,
            role=ToolRole.FINAL_SYNTHESIS,
            cost_hint=2.0,
            uses_llm=True,
        ),
        AnalyzeArgs,
        analyze_evidence,
    ),
)
