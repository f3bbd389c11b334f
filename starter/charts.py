"""`harness report`: a run drawn as four PNG charts and an index.html that shows them.

Figures are built with `matplotlib.figure.Figure`, never pyplot: no global backend or figure
registry, so rendering works headless and leaves nothing open between calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
from pydantic import BaseModel, ConfigDict

from harness.budget import CONSERVE_AT, MINIMAL_AT
from harness.dag import NodeStatus
from harness.plan import Plan
from harness.run import NodeOutcome
from harness.trace import TraceEvent
from harness.usage import TokenUsage
from starter.chart_layout import (
    NodeSpan,
    node_spans,
    plan_layout,
    pressure_steps,
    tokens_by_role,
)

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
NODE_COLUMNS = ("id", "tool", "tool role", "status", "attempts", "latency_ms", "error_code")
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
    out_dir: Path,
    trace: list[TraceEvent],
    plan: Plan | None,
    nodes: list[NodeOutcome],
    usage_by_role: dict[str, TokenUsage],
    report: str | None,
    title: str,
) -> RunReportFiles:
    out_dir.mkdir(parents=True, exist_ok=True)
    files = RunReportFiles(
        timeline_png=out_dir / "timeline.png",
        pressure_png=out_dir / "pressure.png",
        tokens_png=out_dir / "tokens.png",
        plan_png=out_dir / "plan.png",
        html=out_dir / "index.html",
    )
    _save(_timeline_figure(node_spans(trace, nodes)), files.timeline_png)
    _save(_pressure_figure(trace), files.pressure_png)
    _save(_tokens_figure(usage_by_role, trace), files.tokens_png)
    _save(_plan_figure(plan or Plan(), {node.id: node.status for node in nodes}), files.plan_png)
    files.html.write_text(_index_html(files, nodes, report, title), encoding="utf-8")
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
        (x0, y0), (x1, y1) = layout.positions[dep], layout.positions[node_id]
        arrow = FancyArrowPatch(
            (x0 + 0.33, y0),
            (x1 - 0.33, y1),
            arrowstyle="->",
            mutation_scale=8,
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
            (x - 0.32, y - 0.3), 0.64, 0.6, boxstyle="round,pad=0.02", fc=colour, ec="dimgrey"
        )
        axes.add_artist(box)
        axes.text(x, y, f"{node.id}\n{node.tool}", ha="center", va="center", fontsize=font)
    return figure


def _index_html(
    files: RunReportFiles, nodes: list[NodeOutcome], report: str | None, title: str
) -> str:
    images = "\n".join(
        f'<h2>{caption}</h2>\n<img src="{escape(path.name)}" alt="{caption}">'
        for caption, path in (
            ("Node timeline", files.timeline_png),
            ("Budget pressure", files.pressure_png),
            ("Tokens by role", files.tokens_png),
            ("Plan", files.plan_png),
        )
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
img {{ max-width: 100%; border: 1px solid #ddd; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }}
pre {{ background: #f6f6f6; padding: 1em; white-space: pre-wrap; }}
</style>
</head>
<body>
<h1>{escape(title)}</h1>
{images}
<h2>Nodes</h2>
{_nodes_table(nodes)}
<h2>Report</h2>
<pre>{escape(report) if report else "(no report)"}</pre>
</body>
</html>
"""


def _nodes_table(nodes: list[NodeOutcome]) -> str:
    rows = [_table_row("th", NODE_COLUMNS)]
    for node in nodes:
        latency = "" if node.latency_ms is None else f"{node.latency_ms:.0f}"
        cells = (node.id, node.tool, node.tool_role, node.status.value, node.attempts, latency)
        rows.append(_table_row("td", (*cells, node.error_code or "")))
    return "<table>\n" + "\n".join(rows) + "\n</table>"


def _table_row(tag: str, cells: Iterable[object]) -> str:
    return "<tr>" + "".join(f"<{tag}>{escape(str(cell))}</{tag}>" for cell in cells) + "</tr>"
