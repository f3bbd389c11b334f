"""The run report's page: what the run was asked, what it decided and why, in plain HTML.

Pure: a RunResult in, a string out. The charts beside it are drawn by `starter.pages.charts`; the
page names them by relative path, loads nothing from elsewhere, and links to the run in the
Temporal UI when it knows where the UI is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from harness.core.usage import TokenUsage
from harness.engine.run import AttemptRecord, NodeOutcome, RunResult, Verdict
from starter.pages.chart_layout import ROLE_ORDER

NODE_COLUMNS = (
    "id",
    "tool",
    "tool role",
    "status",
    "attempts",
    "tool ms",
    "scheduled ms",
    "error_code",
    "why",
)
"""`tool ms` is the last attempt's own time (the trace's latency); `scheduled ms` the
workflow's, from admission to settling, with queueing, retries and waits."""


def page_head(title: str) -> str:
    """The start of every page the harness writes, to its <head>'s end: one look, no outside
    file."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
img {{ max-width: 100%; border: 1px solid #ddd; }}
table {{ border-collapse: collapse; margin-bottom: 1em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; vertical-align: top; }}
td.n {{ text-align: right; }}
pre {{ background: #f6f6f6; padding: 1em; white-space: pre-wrap; }}
.failed {{ color: #b00020; }}
</style>
</head>"""


def report_page(
    result: RunResult,
    charts: Sequence[tuple[str, str]],
    *,
    phase: str,
    ui_link: str | None,
) -> str:
    """`charts` are (caption, file name) pairs; `phase` is what the run shows now (WAITING,
    say, while its result still says EXECUTING)."""
    title = f"run {result.run_id}: {phase}"
    images = "\n".join(
        f'<h2>{escape(caption)}</h2>\n<img src="{escape(name)}" alt="{escape(caption)}">'
        for caption, name in charts
    )
    return f"""{page_head(title)}
<body>
<h1>{escape(title)}</h1>
{_summary(result, phase, ui_link)}
<h2>Verdict</h2>
{_verdict(result.verdict)}
<h2>Usage and cost by role</h2>
{_usage(result.usage_by_role, result.usage)}
<h2>Attempts</h2>
{_attempts(result.attempt_history)}
{images}
<h2>Nodes</h2>
{_nodes(result.nodes)}
<h2>Report</h2>
<pre>{escape(result.report) if result.report else "(no report)"}</pre>
</body>
</html>
"""


def _summary(result: RunResult, phase: str, ui_link: str | None) -> str:
    ended = result.status.is_terminal
    rows: list[tuple[str, str]] = [
        ("goal", result.goal),
        ("scenario", result.scenario),
        ("status", phase),
        ("started", result.started_at.isoformat(timespec="milliseconds")),
        (
            "wall time" if ended else "so far",
            f"{result.wall_seconds:.3f} s" + ("" if ended else " (the run has not ended)"),
        ),
        ("attempts", str(result.attempts)),
        ("tool calls", str(result.counts.tool_calls)),
        ("budget pressure", f"{result.budget.pressure:.2f}"),
    ]
    if result.session_id:
        rows.insert(2, ("session", result.session_id))
    if result.error:
        rows.append(("error", result.error))
    table = _key_values(rows, failed="error")
    if ui_link is None:
        return table
    return f'{table}\n<p><a href="{escape(ui_link)}">This run in the Temporal UI</a></p>'


def _verdict(verdict: Verdict | None) -> str:
    if verdict is None:
        return "<p>(no verdict: the run did not reach verification)</p>"
    rows = [
        ("passed", "yes" if verdict.passed else "no"),
        ("score", "" if verdict.score is None else f"{verdict.score:.2f}"),
        ("checked by", ", ".join(verdict.checked_by)),
    ]
    if verdict.judge_skipped_reason:
        rows.append(("judge skipped", verdict.judge_skipped_reason))
    reasons = "".join(f"<li>{escape(reason)}</li>" for reason in verdict.reasons)
    return _key_values(rows) + (f"\n<ul>{reasons}</ul>" if reasons else "")


def _usage(by_role: dict[str, TokenUsage], total: TokenUsage) -> str:
    rows = [_row("th", ("role", "input tokens", "output tokens", "total tokens", "cost USD"))]
    roles = sorted(by_role, key=lambda r: (ROLE_ORDER.index(r) if r in ROLE_ORDER else 9, r))
    for role, usage in [*((r, by_role[r]) for r in roles), ("all", total)]:
        rows.append(
            _row(
                "td",
                (
                    role,
                    f"{usage.input_tokens:,}",
                    f"{usage.output_tokens:,}",
                    f"{usage.total_tokens:,}",
                    _cost(usage),
                ),
            )
        )
    return _table(rows)


def _cost(usage: TokenUsage) -> str:
    """The cost, and the models whose part of it is unknown (no price table lists them)."""
    known = f"{usage.cost_usd:.4f}"
    if usage.cost_known:
        return known
    return f"{known} + unknown ({', '.join(usage.unpriced_models)})"


def _attempts(history: list[AttemptRecord]) -> str:
    if not history:
        return "<p>(no attempt has started)</p>"
    rows = [_row("th", ("attempt", "planned by", "nodes", "outcome", "what failed"))]
    for record in history:
        failures = [f"{f.node_id or 'plan'}: {f.code}: {f.message}" for f in record.failure]
        failures += [issue.describe() for issue in record.validation_issues]
        outcome = record.outcome.value if record.outcome else "(running)"
        nodes = len(record.plan.nodes) if record.plan else 0
        cells = (record.attempt, record.planned_by or "", nodes, outcome)
        rows.append(_row("td", cells, last="<br>".join(escape(f) for f in failures)))
    return _table(rows)


def _nodes(nodes: list[NodeOutcome]) -> str:
    rows = [_row("th", NODE_COLUMNS)]
    for node in nodes:
        cells = (
            node.id,
            node.tool,
            node.tool_role,
            node.status.value,
            node.attempts,
            _ms(node.tool_latency_ms),
            _ms(node.latency_ms),
            node.error_code or "",
        )
        rows.append(_row("td", cells, last=escape(node.error_message or "")))
    return _table(rows)


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.0f}"


def _key_values(rows: list[tuple[str, str]], failed: str | None = None) -> str:
    lines = []
    for key, value in rows:
        marked = ' class="failed"' if key == failed else ""
        lines.append(f"<tr><th>{escape(key)}</th><td{marked}>{escape(value)}</td></tr>")
    return _table(lines)


def _row(tag: str, cells: Iterable[object], last: str | None = None) -> str:
    html = "".join(f"<{tag}>{escape(str(cell))}</{tag}>" for cell in cells)
    return f"<tr>{html}" + ("" if last is None else f"<{tag}>{last}</{tag}>") + "</tr>"


def _table(rows: list[str]) -> str:
    return "<table>\n" + "\n".join(rows) + "\n</table>"
