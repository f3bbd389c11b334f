"""The incidents tools: five raw sources, three analysis steps, and analyze_evidence.

Branches: get_metrics -> compare_periods; get_logs -> detect_signatures; get_traces ->
find_slow_spans; get_deployments; get_config_changes; all of them -> analyze_evidence.

Each analysis step also reads its telemetry itself when it is given what to read (services or a
service, and a window) instead of the raw result: so an agent investigates a source in one call,
and tens of kilobytes of raw telemetry never pass through its conversation. Both ways give the
same evidence from the same data.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import AfterValidator, BaseModel, Field, JsonValue, model_validator

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
    evidence_among,
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


class _ReadsOrGiven(BaseModel):
    """A step given either the raw result (its `data` field) or what to read (the rest)."""

    _data: ClassVar[str]
    _reading: ClassVar[tuple[str, ...]]

    @model_validator(mode="after")
    def _either_data_or_reading(self) -> _ReadsOrGiven:
        given = sorted(set(self._reading) & self.model_fields_set)
        if getattr(self, self._data) is not None and given:
            raise ValueError(
                f"give either {self._data} (the result to analyse) or {', '.join(given)} (what "
                "to read), not both"
            )
        return self


class CompareArgs(_ReadsOrGiven, ServicesArgs):
    _data = "metrics"
    _reading = ("services", "start", "end")
    metrics: list[MetricSeries] | None = Field(
        default=None,
        description="The get_metrics result; when left out, the metrics of `services` in "
        "`start`-`end` are read.",
    )
    split_at: Clock = Field(description="Compare before this time with after it.")


class SignaturesArgs(_ReadsOrGiven, ServicesArgs):
    _data = "logs"
    _reading = ("services", "start", "end")
    logs: list[LogLine] | None = Field(
        default=None,
        description="The get_logs result; when left out, the logs of `services` in "
        "`start`-`end` are read.",
    )
    split_at: Clock


class SlowSpansArgs(_ReadsOrGiven, WindowArgs):
    _data = "traces"
    _reading = ("service", "start", "end", "limit")
    traces: list[Trace] | None = Field(
        default=None,
        description="The get_traces result; when left out, the traces through `service` in "
        "`start`-`end` are read.",
    )
    service: ServiceName | None = Field(
        default=None, description="Without `traces`: read the traces through this service."
    )
    limit: int = Field(default=200, ge=1, le=1000)
    split_at: Clock

    @model_validator(mode="after")
    def _something_to_analyse(self) -> SlowSpansArgs:
        if self.traces is None and self.service is None:
            raise ValueError(
                "find_slow_spans needs traces (the get_traces result) or a service to read them for"
            )
        return self


class AnalyzeArgs(Evidence):
    service: ServiceName = Field(description="The service that shows the symptom.")
    symptom: str = Field(default="errors or latency", description="What the user reports.")
    since: Clock | None = Field(default=None, description="When the user says it started.")
    investigations: list[JsonValue] = Field(
        default_factory=list,
        description="Results of investigation nodes, bound once each (NODE_RESULT): agent "
        "nodes (the evidence their tool calls returned is read) or the analysis steps "
        "themselves. metrics, logs, traces, deployments and config bound directly come first.",
    )

    def gathered(self) -> Evidence:
        """The evidence bound directly, and for each source not bound, the investigations'."""
        found = evidence_among(self.investigations)
        bound = {source.value: getattr(self, source.value) for source in self.investigated()}
        return found.model_copy(update=bound)


def _metrics(args: ServicesArgs) -> list[MetricSeries]:
    return [
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


def _logs(args: ServicesArgs) -> list[LogLine]:
    chosen = set(args.chosen())
    return [line for line in LOGS if line.service in chosen and args.covers(line.time)]


def _traces(args: WindowArgs, service: str | None, limit: int) -> list[Trace]:
    """The traces through `service` (SlowSpansArgs never lets it be None without traces)."""
    traces = [
        trace
        for trace in TRACES
        if args.covers(trace.time) and any(span.service == service for span in trace.spans)
    ]
    return traces[:limit]


async def get_metrics(args: ServicesArgs, ctx: ToolContext) -> JsonValue:
    return [item.model_dump(mode="json") for item in _metrics(args)]


async def compare_periods(args: CompareArgs, ctx: ToolContext) -> JsonValue:
    metrics = args.metrics if args.metrics is not None else _metrics(args)
    split = minute_of(args.split_at)
    shifts = [
        shift
        for series in metrics
        if (shift := compare_series(series.service, series.metric, series.points, split))
    ]
    services = list(dict.fromkeys(series.service for series in metrics))
    comparison = MetricComparison(split_at=args.split_at, services=services, shifts=shifts)
    return comparison.model_dump(mode="json")


async def get_logs(args: ServicesArgs, ctx: ToolContext) -> JsonValue:
    return [line.model_dump(mode="json") for line in _logs(args)]


async def detect_signatures(args: SignaturesArgs, ctx: ToolContext) -> JsonValue:
    logs = args.logs if args.logs is not None else _logs(args)
    signatures = detect(logs, minute_of(args.split_at))
    report = SignatureReport(split_at=args.split_at, lines=len(logs), signatures=signatures)
    return report.model_dump(mode="json")


async def get_traces(args: TracesArgs, ctx: ToolContext) -> JsonValue:
    return [trace.model_dump(mode="json") for trace in _traces(args, args.service, args.limit)]


async def find_slow_spans(args: SlowSpansArgs, ctx: ToolContext) -> JsonValue:
    traces = args.traces if args.traces is not None else _traces(args, args.service, args.limit)
    stats = span_stats(traces, minute_of(args.split_at))
    report = SpanReport(split_at=args.split_at, traces=len(traces), spans=stats)
    return report.model_dump(mode="json")


async def get_deployments(args: WindowArgs, ctx: ToolContext) -> JsonValue:
    found = [deploy for deploy in DEPLOYMENTS if args.covers(deploy.time)]
    return DeploymentList(deployments=found).model_dump(mode="json")


async def get_config_changes(args: WindowArgs, ctx: ToolContext) -> JsonValue:
    found = [change for change in CONFIG_CHANGES if args.covers(change.time)]
    return ConfigChangeList(changes=found).model_dump(mode="json")


async def analyze_evidence(args: AnalyzeArgs, ctx: ToolContext) -> JsonValue:
    evidence = args.gathered()
    if not evidence.investigated():
        raise ToolError(
            ErrorCode.MISSING_REQUIRED_ARGUMENT,
            "analyze_evidence needs at least one source: bind metrics, logs, traces, "
            "deployments or config to the result of its investigation, or investigations to "
            "agent nodes that investigated them",
        )
    assessment = assess(evidence, args.service, args.since)
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


def _tool(
    name: str,
    description: str,
    arguments: type[BaseModel],
    run: ToolFunction,
    result: type[BaseModel] | None = None,
) -> Tool:
    spec = ToolSpec.from_model(name, description, arguments, cost_hint=0.1, result=result)
    return Tool(spec, arguments, run)


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
        "with its onset (bind metrics to get_metrics, or give services and a window to read).",
        CompareArgs,
        compare_periods,
        MetricComparison,
    ),
    _tool(
        "get_logs", "WARN, ERROR and INFO log lines of the given services.", ServicesArgs, get_logs
    ),
    _tool(
        "detect_signatures",
        "Log lines grouped by message template, counted before and "
        "after split_at; new or tripled ERRORs are notable (bind logs to get_logs, or give "
        "services and a window to read).",
        SignaturesArgs,
        detect_signatures,
        SignatureReport,
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
        "at least doubled and grew by 100 ms (bind traces to get_traces, or give a service "
        "and a window to read).",
        SlowSpansArgs,
        find_slow_spans,
        SpanReport,
    ),
    _tool(
        "get_deployments",
        "Deployments in the time window, all services.",
        WindowArgs,
        get_deployments,
        DeploymentList,
    ),
    _tool(
        "get_config_changes",
        "Configuration changes in the time window, all services.",
        WindowArgs,
        get_config_changes,
        ConfigChangeList,
    ),
    Tool(
        ToolSpec.from_model(
            "analyze_evidence",
            "The final incident report: the most likely root cause, its evidence and a "
            "confidence. Bind metrics (compare_periods), logs (detect_signatures), traces "
            "(find_slow_spans), deployments (get_deployments), config (get_config_changes), "
            "or investigations (once per agent node that investigated them).",
            AnalyzeArgs,
            role=ToolRole.FINAL_SYNTHESIS,
            cost_hint=2.0,
            uses_llm=True,
        ),
        AnalyzeArgs,
        analyze_evidence,
    ),
)
