"""`harness report`: a run drawn as four PNG charts and an index.html that shows them.

Figures are built with `matplotlib.figure.Figure`, never pyplot: no global backend or figure
registry, so rendering works headless and leaves nothing open between calls.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
from matplotlib.path import Path as MplPath
from pydantic import BaseModel, ConfigDict

from harness.core.plan import Plan
from harness.core.usage import TokenUsage
from harness.engine.budget import CONSERVE_AT, MINIMAL_AT
from harness.engine.dag import NodeStatus
from harness.engine.run import RunResult
from harness.engine.trace import TraceEvent
from starter.pages.chart_layout import (
    NodeSpan,
    PlanLayout,
    node_spans,
    plan_layout,
    pressure_steps,
    tokens_by_role,
)
from starter.pages.report_page import report_page

DPI = 100
MAX_INCHES = 40.0
ROLE_COLOURS = {"DATA": "tab:blue", "FINAL_SYNTHESIS": "tab:purple"}
OTHER_ROLE_COLOUR = "tab:orange"
STATUS_COLOURS = {
    NodeStatus.DONE: "#8fd18f",
    NodeStatus.FAILED: "#f08a8a",
    NodeStatus.SKIPPED: "#cccccc",
}
OTHER_STATUS_COLOUR = "#9cc3e6"
SKIPPED_GREY = "#aaaaaa"
PRESSURE_LINES = (
    (CONSERVE_AT, "end of full pipeline"),
    (MINIMAL_AT, "judge skipped"),
    (1.0, "budget exhausted"),
)


class RunReportFiles(BaseModel):
    model_config = ConfigDict(frozen=True)

    timeline_png: Path
    pressure_png: Path
    tokens_png: Path
    plan_png: Path
    html: Path


def write_run_report(
    out_dir: Path, result: RunResult, *, phase: str | None = None, ui_link: str | None = None
) -> RunReportFiles:
    """The charts of `result` (a finished run's, or a running run's as it stands) and the page
    that shows them; `phase` is what the run shows now, if not its result's status."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = RunReportFiles(
        timeline_png=out_dir / "timeline.png",
        pressure_png=out_dir / "pressure.png",
        tokens_png=out_dir / "tokens.png",
        plan_png=out_dir / "plan.png",
        html=out_dir / "index.html",
    )
    trace, nodes = result.trace, result.nodes
    _save(_timeline_figure(node_spans(trace, nodes)), files.timeline_png)
    _save(_pressure_figure(trace), files.pressure_png)
    _save(_tokens_figure(result.usage_by_role, trace), files.tokens_png)
    statuses = {node.id: node.status for node in nodes}
    _save(_plan_figure(result.plan or Plan(), statuses), files.plan_png)
    charts = [
        ("Node timeline", files.timeline_png.name),
        ("Budget pressure", files.pressure_png.name),
        ("Tokens by role", files.tokens_png.name),
        ("Plan", files.plan_png.name),
    ]
    page = report_page(result, charts, phase=phase or result.status.value, ui_link=ui_link)
    files.html.write_text(page, encoding="utf-8")
    return files


def _save(figure: Figure, path: Path) -> None:
    figure.savefig(path, dpi=DPI)


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def _note(axes: Axes, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes, color="grey")


def _role_colour(role: str) -> str:
    return ROLE_COLOURS.get(role, OTHER_ROLE_COLOUR)


def _timeline_figure(spans: list[NodeSpan]) -> Figure:
    height = _clamp(1.5 + 0.25 * len(spans), 3.0, MAX_INCHES)
    figure = Figure(figsize=(11, height), layout="constrained")
    axes = figure.add_subplot()
    axes.set_title("Node timeline")
    axes.set_xlabel("seconds since run start")
    if not spans:
        _note(axes, "no nodes ran")
        return figure
    font = _clamp(0.7 * 72 * (height - 1.5) / len(spans), 3.0, 9.0)
    _draw_spans(axes, spans)
    # Plain texts, not tick labels: a Tick per node is what makes hundreds of rows slow.
    axes.set_yticks([])
    beside_axis = axes.get_yaxis_transform()
    for row, span in enumerate(spans):
        colour = SKIPPED_GREY if span.status is NodeStatus.SKIPPED else "black"
        text = axes.text(-0.01, row, span.label, ha="right", va="center", color=colour)
        text.set(transform=beside_axis, fontsize=font)
    axes.set_ylim(len(spans) - 0.5, -0.5)
    axes.set_xlim(left=0)
    axes.legend(
        handles=_timeline_legend(spans), loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8
    )
    return figure


def _draw_spans(axes: Axes, spans: list[NodeSpan]) -> None:
    """Three batched calls, not one per node: hundreds of nodes stay fast to draw."""
    bars: dict[bool, list[tuple[int, float, float, str]]] = {False: [], True: []}
    marks: list[tuple[int, float, str]] = []
    for row, span in enumerate(spans):
        colour = SKIPPED_GREY if span.status is NodeStatus.SKIPPED else _role_colour(span.role)
        if span.start is not None and span.end is not None:
            width = max(span.end - span.start, 0.0)
            bars[span.status is NodeStatus.FAILED].append((row, span.start, width, colour))
        elif (at := span.end if span.end is not None else span.start) is not None:
            marks.append((row, at, colour))
    for failed, group in bars.items():
        if group:
            rows, lefts, widths, colours = zip(*group, strict=True)
            axes.barh(
                rows,
                widths,
                left=lefts,
                height=0.7,
                color=colours,
                edgecolor="red" if failed else colours,
                hatch="//" if failed else None,
                linewidth=1.5 if failed else 0.5,
            )
    if marks:
        rows, ats, colours = zip(*marks, strict=True)
        axes.scatter(ats, rows, marker="|", s=100, linewidths=2, c=colours)


def _timeline_legend(spans: list[NodeSpan]) -> list[Patch | Line2D]:
    roles = dict.fromkeys(span.role for span in spans if span.status is not NodeStatus.SKIPPED)
    handles: list[Patch | Line2D] = [Patch(color=_role_colour(role), label=role) for role in roles]
    handles.append(Patch(facecolor="white", edgecolor="red", hatch="//", label="failed"))
    handles.append(Patch(color=SKIPPED_GREY, label="skipped"))
    handles.append(
        Line2D([], [], marker="|", linestyle="", color="black", label="reused / not started")
    )
    return handles


def _pressure_figure(trace: list[TraceEvent]) -> Figure:
    figure = Figure(figsize=(10, 4), layout="constrained")
    axes = figure.add_subplot()
    axes.set_title("Budget pressure")
    axes.set_xlabel("seconds since run start")
    axes.set_ylabel("pressure")
    seconds, pressure = pressure_steps(trace)
    if seconds:
        axes.step(seconds, pressure, where="post", color="tab:blue")
    else:
        _note(axes, "no trace events recorded")
    for level, label in PRESSURE_LINES:
        axes.axhline(level, color="grey", linestyle="--", linewidth=0.8)
        axes.annotate(
            f"{level:.1f} {label}",
            (0.0, level),
            xycoords=("axes fraction", "data"),
            xytext=(4, 2),
            textcoords="offset points",
            fontsize=8,
            color="dimgrey",
        )
    axes.set_ylim(0.0, max([1.1, *(p * 1.05 for p in pressure)]))
    axes.set_xlim(left=0)
    return figure


def _tokens_figure(usage_by_role: dict[str, TokenUsage], trace: list[TraceEvent]) -> Figure:
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.add_subplot()
    axes.set_title("Tokens by role")
    axes.set_ylabel("tokens")
    rows = tokens_by_role(usage_by_role, trace)
    if not rows:
        _note(axes, "no token usage recorded")
        return figure
    roles = [row.role for row in rows]
    if any(row.unsplit for row in rows):
        unsplit = [row.unsplit for row in rows]
        axes.bar(roles, unsplit, label="total (trace has no input/output split)", color="grey")
    else:
        inputs = [row.input_tokens for row in rows]
        axes.bar(roles, inputs, label="input", color="tab:blue")
        outputs = [row.output_tokens for row in rows]
        axes.bar(roles, outputs, bottom=inputs, label="output", color="tab:orange")
    for index, row in enumerate(rows):
        axes.annotate(f"{row.total:,}", (index, row.total), ha="center", va="bottom", fontsize=8)
    axes.legend(fontsize=8)
    return figure


def _plan_figure(plan: Plan, statuses: dict[str, NodeStatus]) -> Figure:
    layout = plan_layout(plan)
    width = _clamp(1.5 + 2.2 * layout.depth_count, 6.0, MAX_INCHES)
    height = _clamp(1.0 + 0.6 * layout.widest_layer, 3.0, MAX_INCHES)
    # A fixed frame instead of constrained layout, which would measure every box label twice.
    figure = Figure(figsize=(width, height))
    title_inches = 0.5
    axes = figure.add_axes((0.0, 0.0, 1.0, 1.0 - title_inches / height))
    figure.suptitle("Plan", y=1.0 - 0.1 / height, va="top")
    axes.set_axis_off()
    if not layout.positions:
        _note(axes, "no plan")
        return figure
    half_row = layout.widest_layer / 2
    axes.set_xlim(-0.5, layout.depth_count - 0.5)
    axes.set_ylim(-half_row, half_row)
    row_points = 72 * (height - 1.0) / max(layout.widest_layer, 1)
    longest = max(max(len(node.id), len(node.tool)) for node in plan.nodes) + 1
    column_points = 72 * (width - 0.5) / layout.depth_count
    font = _clamp(min(0.35 * row_points, 1.3 * column_points / longest), 3.0, 9.0)
    for dep, node_id in layout.edges:
        points = edge_points(layout, dep, node_id)
        codes = [MplPath.MOVETO] + [MplPath.LINETO] * (len(points) - 1)
        arrow = FancyArrowPatch(
            path=MplPath(points, codes),
            arrowstyle="-|>",
            mutation_scale=9,
            shrinkA=0,
            shrinkB=0,
            color="dimgrey",
            linewidth=0.7,
        )
        axes.add_artist(arrow)
    for node in plan.nodes:
        x, y = layout.positions[node.id]
        colour = STATUS_COLOURS.get(statuses.get(node.id, NodeStatus.PENDING), OTHER_STATUS_COLOUR)
        box = FancyBboxPatch(
            (x - BOX_HALF_WIDTH, y - BOX_HALF_HEIGHT),
            2 * BOX_HALF_WIDTH,
            2 * BOX_HALF_HEIGHT,
            boxstyle=f"round,pad={BOX_PAD}",
            fc=colour,
            ec="dimgrey",
        )
        axes.add_artist(box)
        axes.text(x, y, f"{node.id}\n{node.tool}", ha="center", va="center", fontsize=font)
    return figure


BOX_HALF_WIDTH = 0.32
BOX_HALF_HEIGHT = 0.3
BOX_PAD = 0.02
"""The rounded corners' pad, drawn outside the box's nominal size."""
EDGE_GAP = 0.01
"""Edges start and end this far outside a box, so an arrowhead is never hidden under one."""


def edge_points(layout: PlanLayout, dep: str, node_id: str) -> list[tuple[float, float]]:
    """The polyline an edge is drawn along: out of its dep's box, through a row of its own in
    each layer it skips, into its node's box; between layers it runs only in the gaps."""
    (x0, y0), (x1, y1) = layout.positions[dep], layout.positions[node_id]
    side = BOX_HALF_WIDTH + BOX_PAD + EDGE_GAP
    if x1 <= x0:  # a cycle in the last layer of an unvalidated plan
        return [(x0, y0 - BOX_HALF_HEIGHT - BOX_PAD), (x1, y1 + BOX_HALF_HEIGHT + BOX_PAD)]
    points = [(x0 + side, y0)]
    for x, y in layout.routes.get((dep, node_id), []):
        points += [(x - side, y), (x + side, y)]
    return [*points, (x1 - side, y1)]
