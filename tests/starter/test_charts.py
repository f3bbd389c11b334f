"""`harness report` rendering: four PNG charts and an index.html, from a run's recorded data."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

from matplotlib.image import imread

from harness.core.errors import FailureContext
from harness.core.plan import Plan, PlanNode
from harness.core.usage import TokenUsage
from harness.engine.dag import NodeStatus
from harness.engine.run import AttemptRecord, NodeOutcome, RunPhase, RunResult, Verdict
from harness.engine.trace import TraceEvent, TraceKind
from starter.pages.chart_layout import node_spans, plan_layout, tokens_by_role
from starter.pages.charts import (
    BOX_HALF_HEIGHT,
    BOX_HALF_WIDTH,
    BOX_PAD,
    RunReportFiles,
    edge_points,
    write_run_report,
)
from tests.factories import run_result

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
T0 = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
REPORT = '# Cities <Paris> & "Tokyo"\nParis is larger.'


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def event(
    seconds: float, kind: TraceKind, node_id: str | None = None, **fields: object
) -> TraceEvent:
    return TraceEvent.model_validate(
        {"at": at(seconds), "run_id": "run-1", "kind": kind, "attempt": 1, "node_id": node_id}
        | fields
    )


def outcome(
    node_id: str,
    tool: str,
    status: NodeStatus,
    *,
    role: str = "DATA",
    start: float | None = None,
    finish: float | None = None,
    **fields: object,
) -> NodeOutcome:
    return NodeOutcome.model_validate(
        {
            "id": node_id,
            "tool": tool,
            "role": role,
            "status": status,
            "started_at": None if start is None else at(start),
            "finished_at": None if finish is None else at(finish),
        }
        | fields
    )


def four_node_plan() -> Plan:
    """paris and tokyo gather, ratio needs tokyo, report needs paris."""
    return Plan(
        nodes=[
            PlanNode(id="paris", tool="get_population"),
            PlanNode(id="tokyo", tool="get_population"),
            PlanNode(id="ratio", tool="divide", deps=["tokyo"]),
            PlanNode(id="report", tool="write_report", deps=["paris"]),
        ]
    )


def four_node_outcomes() -> list[NodeOutcome]:
    """paris retried once, tokyo failed, ratio skipped, report done."""
    return [
        outcome("paris", "get_population", NodeStatus.DONE, attempts=2, latency_ms=2000.0),
        outcome(
            "tokyo", "get_population", NodeStatus.FAILED, attempts=3, error_code="TOOL_TIMEOUT"
        ),
        outcome("ratio", "divide", NodeStatus.SKIPPED),
        outcome("report", "write_report", NodeStatus.DONE, role="FINAL_SYNTHESIS", attempts=1),
    ]


def four_node_trace() -> list[TraceEvent]:
    return [
        event(0, TraceKind.RUN_START),
        event(1, TraceKind.PLANNING_FINISH, role="planner", tokens=600, pressure=0.1),
        event(1, TraceKind.NODE_START, "paris", role="DATA", tool="get_population", pressure=0.1),
        event(1, TraceKind.NODE_START, "tokyo", role="DATA", tool="get_population", pressure=0.1),
        event(2, TraceKind.NODE_RETRY, "paris", role="DATA", pressure=0.2),
        event(2.5, TraceKind.NODE_FAIL, "tokyo", role="DATA", pressure=0.3),
        event(2.5, TraceKind.NODE_SKIP, "ratio", role="DATA", pressure=0.3),
        event(3, TraceKind.NODE_FINISH, "paris", role="DATA", pressure=0.4),
        event(3, TraceKind.NODE_START, "report", role="FINAL_SYNTHESIS", pressure=0.4),
        event(5, TraceKind.NODE_FINISH, "report", role="FINAL_SYNTHESIS", tokens=900, pressure=0.8),
        event(6, TraceKind.VERIFICATION_FINISH, role="critic", tokens=300, pressure=0.95),
        event(6, TraceKind.RUN_FINISH, pressure=0.95),
    ]


def usage_by_role() -> dict[str, TokenUsage]:
    return {
        "planner": TokenUsage(input_tokens=500, output_tokens=100),
        "worker": TokenUsage(input_tokens=700, output_tokens=200),
        "critic": TokenUsage(input_tokens=250, output_tokens=50),
    }


def four_node_result() -> RunResult:
    return run_result(
        run_id="run-1 <cities>",
        status=RunPhase.FAILED_EXECUTION,
        goal="Compare <Paris> and Tokyo",
        trace=four_node_trace(),
        plan=four_node_plan(),
        nodes=four_node_outcomes(),
        usage_by_role=usage_by_role(),
        usage=TokenUsage(input_tokens=1450, output_tokens=350, cost_usd=0.0123),
        report=REPORT,
        error="node 'tokyo' failed with TOOL_TIMEOUT",
        verdict=Verdict(
            passed=False, score=0.25, reasons=["tokyo has no population"], checked_by=["judge"]
        ),
        attempts=2,
        attempt_history=[
            AttemptRecord(
                attempt=1,
                outcome=RunPhase.FAILED_EXECUTION,
                failure=[
                    FailureContext(node_id="atlantis", code="MISSING_INFO", message="no data")
                ],
            ),
            AttemptRecord(attempt=2, outcome=RunPhase.FAILED_EXECUTION),
        ],
    )


def write_four_node_report(out_dir: Path) -> RunReportFiles:
    return write_run_report(out_dir, four_node_result(), ui_link="http://ui.example/run-1")


def chart_paths(files: RunReportFiles) -> list[Path]:
    return [files.timeline_png, files.pressure_png, files.tokens_png, files.plan_png]


def assert_valid_png(path: Path) -> None:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = imread(path)
    assert image.shape[0] > 0 and image.shape[1] > 0


def test_report_writes_four_valid_pngs_into_the_out_dir(tmp_path: Path) -> None:
    files = write_four_node_report(tmp_path / "report")

    for path in chart_paths(files):
        assert path.parent == tmp_path / "report"
        assert_valid_png(path)


def test_index_html_shows_each_chart_by_relative_path(tmp_path: Path) -> None:
    files = write_four_node_report(tmp_path)

    html = files.html.read_text(encoding="utf-8")
    for path in chart_paths(files):
        assert f'<img src="{path.name}"' in html
    assert str(tmp_path) not in html


def test_index_html_escapes_the_title_and_report_and_lists_every_node(tmp_path: Path) -> None:
    html = write_four_node_report(tmp_path).html.read_text(encoding="utf-8")

    assert "<title>run run-1 &lt;cities&gt;: FAILED_EXECUTION</title>" in html
    assert "# Cities &lt;Paris&gt; &amp; &quot;Tokyo&quot;\nParis is larger." in html
    assert "<Paris>" not in html
    for node_id in ("paris", "tokyo", "ratio", "report"):
        assert f"<td>{node_id}</td>" in html
    assert "<td>TOOL_TIMEOUT</td>" in html


def test_the_report_page_says_what_was_asked_what_was_decided_and_why(tmp_path: Path) -> None:
    html = write_four_node_report(tmp_path).html.read_text(encoding="utf-8")

    assert "<tr><th>goal</th><td>Compare &lt;Paris&gt; and Tokyo</td></tr>" in html
    assert "<tr><th>score</th><td>0.25</td></tr>" in html
    assert "<li>tokyo has no population</li>" in html
    assert '<td class="failed">node &#x27;tokyo&#x27; failed with TOOL_TIMEOUT</td>' in html
    assert "<td>atlantis: MISSING_INFO: no data</td>" in html
    assert "<tr><td>planner</td><td>500</td><td>100</td><td>600</td><td>0.0000</td></tr>" in html
    assert "<tr><td>all</td><td>1,450</td><td>350</td><td>1,800</td><td>0.0123</td></tr>" in html
    assert '<a href="http://ui.example/run-1">This run in the Temporal UI</a>' in html


def test_the_usage_table_says_which_models_cost_is_unknown(tmp_path: Path) -> None:
    result = four_node_result()
    unpriced = TokenUsage(input_tokens=700, output_tokens=200, unpriced_models=["local-llama"])
    result.usage_by_role["worker"] = unpriced
    result.usage = result.usage.plus(unpriced)
    html = write_run_report(tmp_path, result).html.read_text(encoding="utf-8")
    assert "<td>0.0000 + unknown (local-llama)</td></tr>" in html
    assert "<td>0.0123 + unknown (local-llama)</td></tr>" in html


def test_the_node_table_puts_the_tools_own_latency_beside_the_scheduling_latency(
    tmp_path: Path,
) -> None:
    result = run_result(
        nodes=[
            outcome("paris", "get_population", NodeStatus.DONE, latency_ms=2000.0).model_copy(
                update={"tool_latency_ms": 81.6}
            )
        ]
    )
    html = write_run_report(tmp_path, result).html.read_text(encoding="utf-8")

    assert "<th>tool ms</th><th>scheduled ms</th>" in html
    assert "<td>DONE</td><td>0</td><td>82</td><td>2000</td>" in html


def test_index_html_loads_no_external_resources(tmp_path: Path) -> None:
    html = write_four_node_report(tmp_path).html.read_text(encoding="utf-8")

    assert 'src="http' not in html
    assert "<script" not in html
    assert "<link" not in html


def test_a_plan_of_300_nodes_renders(tmp_path: Path) -> None:
    nodes = [
        PlanNode(id=f"n{i}", tool="delay", deps=[f"n{i // 2}"] if i else []) for i in range(300)
    ]
    outcomes = [
        outcome(node.id, node.tool, NodeStatus.DONE, start=i * 0.01, finish=i * 0.01 + 0.5)
        for i, node in enumerate(nodes)
    ]

    files = write_run_report(tmp_path, run_result(plan=Plan(nodes=nodes), nodes=outcomes))

    for path in chart_paths(files):
        assert_valid_png(path)


def test_an_empty_run_renders_placeholder_charts(tmp_path: Path) -> None:
    files = write_run_report(tmp_path, run_result())

    for path in chart_paths(files):
        assert_valid_png(path)
    assert "(no report)" in files.html.read_text(encoding="utf-8")


def test_a_cyclic_unvalidated_plan_renders_with_the_cycle_in_a_last_layer(tmp_path: Path) -> None:
    cyclic = Plan(
        nodes=[
            PlanNode(id="root", tool="t"),
            PlanNode(id="a", tool="t", deps=["b", "root"]),
            PlanNode(id="b", tool="t", deps=["a"]),
            PlanNode(id="stray", tool="t", deps=["missing"]),
        ]
    )

    layout = plan_layout(cyclic)

    assert {node_id: depth for node_id, (depth, _) in layout.positions.items()} == {
        "root": 0,
        "stray": 0,
        "a": 1,
        "b": 1,
    }
    assert_valid_png(write_run_report(tmp_path, run_result(plan=cyclic)).plan_png)


def test_plan_depth_is_the_longest_path_from_a_root() -> None:
    diamond_with_shortcut = Plan(
        nodes=[
            PlanNode(id="a", tool="t"),
            PlanNode(id="b", tool="t", deps=["a"]),
            PlanNode(id="c", tool="t", deps=["b"]),
            PlanNode(id="d", tool="t", deps=["a", "c"]),
        ]
    )

    layout = plan_layout(diamond_with_shortcut)

    assert [layout.positions[n][0] for n in "abcd"] == [0, 1, 2, 3]
    assert ("a", "d") in layout.edges and ("c", "d") in layout.edges


def crosses_box(
    start: tuple[float, float], end: tuple[float, float], centre: tuple[float, float]
) -> bool:
    """Does the segment pass through the drawn box (padding included) around `centre`?"""
    half_w, half_h = BOX_HALF_WIDTH + BOX_PAD, BOX_HALF_HEIGHT + BOX_PAD
    (x0, y0), (x1, y1) = start, end
    steps = 200
    for step in range(steps + 1):
        t = step / steps
        x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
        if abs(x - centre[0]) < half_w and abs(y - centre[1]) < half_h:
            return True
    return False


def test_no_edge_of_the_plan_graph_runs_through_a_box() -> None:
    """Edges that skip layers (a -> d, a -> e, b -> e) pass them in rows of their own."""
    plan = Plan(
        nodes=[
            PlanNode(id="a", tool="t"),
            PlanNode(id="b", tool="t", deps=["a"]),
            PlanNode(id="x", tool="t", deps=["a"]),
            PlanNode(id="c", tool="t", deps=["b", "x"]),
            PlanNode(id="d", tool="t", deps=["a", "c"]),
            PlanNode(id="e", tool="t", deps=["a", "b", "d"]),
        ]
    )
    layout = plan_layout(plan)

    assert set(layout.routes) == {("a", "d"), ("a", "e"), ("b", "e")}
    for dep, node_id in layout.edges:
        points = edge_points(layout, dep, node_id)
        for start, end in pairwise(points):
            for centre in layout.positions.values():
                assert not crosses_box(start, end, centre), (dep, node_id, centre)


def test_a_straight_edge_through_a_skipped_layer_would_be_caught() -> None:
    """The check above can fail: the straight line from a to c crosses b's box."""
    assert crosses_box((0.35, 0.0), (1.65, 0.0), (1.0, 0.0))


def test_timeline_times_nodes_from_trace_and_falls_back_to_outcome_times() -> None:
    trace = [
        event(10, TraceKind.RUN_START),
        event(11, TraceKind.NODE_START, "tokyo"),
        event(12.5, TraceKind.NODE_FAIL, "tokyo"),
    ]
    nodes = [
        outcome("tokyo", "get_population", NodeStatus.FAILED, start=50, finish=60),
        outcome("late", "t", NodeStatus.DONE, start=12, finish=14),
        outcome("cached", "t", NodeStatus.DONE, start=11, finish=11, reused=True),
        outcome("ratio", "divide", NodeStatus.SKIPPED),
    ]

    spans = {span.node_id: span for span in node_spans(trace, nodes)}

    assert (spans["tokyo"].start, spans["tokyo"].end) == (1.0, 2.5)
    assert (spans["late"].start, spans["late"].end) == (2.0, 4.0)
    assert (spans["cached"].start, spans["cached"].end) == (None, 1.0)
    assert (spans["ratio"].start, spans["ratio"].end) == (None, None)
    assert spans["tokyo"].label == "tokyo get_population"


def test_tokens_come_from_usage_by_role_in_planner_worker_critic_order() -> None:
    usage = {"critic": TokenUsage(input_tokens=1), "planner": TokenUsage(output_tokens=2)}

    rows = tokens_by_role(usage, four_node_trace())

    assert [(row.role, row.input_tokens, row.output_tokens) for row in rows] == [
        ("planner", 0, 2),
        ("critic", 1, 0),
    ]


def test_the_agent_role_is_listed_with_the_runs_roles_before_any_other_name() -> None:
    usage = {
        "FINAL_SYNTHESIS": TokenUsage(input_tokens=4),  # a name that is no role of the run
        "agent": TokenUsage(input_tokens=3),
        "critic": TokenUsage(input_tokens=2),
        "planner": TokenUsage(input_tokens=1),
    }

    rows = tokens_by_role(usage, [])

    assert [row.role for row in rows] == ["planner", "critic", "agent", "FINAL_SYNTHESIS"]


def test_tokens_fall_back_to_trace_totals_by_role_without_usage_by_role() -> None:
    rows = tokens_by_role({}, four_node_trace())

    assert [(row.role, row.unsplit) for row in rows] == [
        ("planner", 600),
        ("critic", 300),
        ("FINAL_SYNTHESIS", 900),
    ]
