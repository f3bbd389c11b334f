"""The eval report's page: one HTML file with its chart inside (a PNG as a data URI), so it can be
kept or mailed as one file. The chart shows, per scenario, the pass rate and the p50/p95
latency; the tables, every case with each unmet expectation in words, and with --chaos how runs
recovered from the mistakes injected."""

from __future__ import annotations

import base64
import io
from html import escape

from matplotlib.figure import Figure

from harness.evals.chaos_report import ChaosTable
from harness.evals.eval_report import CaseResult, EvalReport, PassSummary
from starter.pages.report_page import page_head


def eval_page(report: EvalReport) -> str:
    title = f"eval {report.eval_id}: {report.overall.pass_rate:.0%} passed"
    return f"""{page_head(title)}
<body>
<h1>{escape(title)}</h1>
<p>{len(report.results)} run(s) of {report.overall.cases} case(s), each case run {report.repeat}
time(s); provider: {escape(report.provider or "each case's, else the worker's")};
from {report.started_at:%Y-%m-%d %H:%M:%S} to {report.finished_at:%H:%M:%S} UTC.</p>
<img src="data:image/png;base64,{_chart(report)}" alt="pass rate and latency per scenario">
<h2>Per scenario</h2>
{_summary_table([*report.scenarios, report.overall], report.repeat)}
{_chaos_table(report.chaos) if report.chaos else ""}
<h2>Per case</h2>
{_case_table(report.results)}
</body>
</html>
"""


def _summary_table(summaries: list[PassSummary], repeat: int) -> str:
    repeated = repeat > 1
    head = "<th>scenario</th><th>cases</th><th>runs</th><th>passed</th><th>pass rate</th>"
    head += f"<th>pass@{repeat}</th><th>pass^{repeat}</th>" if repeated else ""
    head += "<th>p50 s</th><th>p95 s</th><th>tokens</th><th>cost USD</th>"
    rows = []
    for s in summaries:
        cells = [escape(s.scenario), s.cases, s.runs, s.passed_runs, f"{s.pass_rate:.0%}"]
        cells += [f"{s.pass_at_k:.0%}", f"{s.pass_all_k:.0%}"] if repeated else []
        cells += [f"{s.p50_seconds:.2f}", f"{s.p95_seconds:.2f}", s.tokens, f"{s.cost_usd:.4f}"]
        rows.append("<tr>" + "".join(f'<td class="n">{cell}</td>' for cell in cells) + "</tr>")
    return f"<table><tr>{head}</tr>\n" + "\n".join(rows) + "\n</table>"


def _chaos_table(table: ChaosTable) -> str:
    head = (
        "<th>mistake</th><th>injected</th><th>runs</th><th>recovered</th><th>rate</th>"
        "<th>extra tokens</th><th>extra s</th><th>outcomes</th>"
    )
    rows = []
    for row in table.rows:
        cells = [
            row.injected,
            row.runs,
            row.recovered,
            f"{row.recovery:.0%}" if row.recovery is not None else "-",
            f"{row.extra_tokens:+,.0f}" if row.extra_tokens is not None else "-",
            f"{row.extra_seconds:+.2f}" if row.extra_seconds is not None else "-",
        ]
        outcomes = ", ".join(f"{phase} {runs}" for phase, runs in row.outcomes.items())
        rows.append(
            f"<tr><td>{escape(row.kind)}</td>"
            + "".join(f'<td class="n">{cell}</td>' for cell in cells)
            + f"<td>{escape(outcomes)}</td></tr>"
        )
    settings = table.settings
    return (
        f"<h2>Recovery from injected mistakes (chaos {settings.rate:g}, seed {settings.seed})"
        f"</h2>\n<table><tr>{head}</tr>\n" + "\n".join(rows) + "\n</table>\n"
        f"<p>Recovered: ended with a status the case expects. Extra: mean over recovered runs, "
        f"against the same case's {table.clean_runs} run(s) without chaos.</p>"
    )


def _case_table(results: list[CaseResult]) -> str:
    head = (
        "<th>case</th><th>#</th><th>result</th><th>status</th><th>attempts</th>"
        "<th>tool calls</th><th>tokens</th><th>cost USD</th><th>latency s</th><th>run</th>"
        "<th>unmet expectations</th>"
    )
    rows = []
    for r in results:
        verdict = "PASS" if r.passed else '<span class="failed">FAIL</span>'
        unmet = "<br>".join(escape(reason) for reason in r.unmet)
        rows.append(
            f"<tr><td>{escape(r.case)}</td><td>{r.repeat}</td><td>{verdict}</td>"
            f"<td>{escape(r.status.value if r.status else '-')}</td><td>{r.attempts}</td>"
            f"<td>{r.tool_calls}</td><td>{r.tokens}</td><td>{r.cost_usd:.4f}</td>"
            f"<td>{r.latency_seconds:.2f}</td><td>{escape(r.run_id)}</td><td>{unmet}</td></tr>"
        )
    return f"<table><tr>{head}</tr>\n" + "\n".join(rows) + "\n</table>"


def _chart(report: EvalReport) -> str:
    """Pass rate per scenario (bars, left) and p50/p95 latency (right), as base64 PNG."""
    summaries = [*report.scenarios, report.overall]
    names = [summary.scenario for summary in summaries]
    figure = Figure(figsize=(10, 3.6), layout="constrained")
    rates, latency = figure.subplots(1, 2)
    bars = rates.bar(names, [s.pass_rate * 100 for s in summaries], color="#4c78a8")
    rates.bar_label(bars, labels=[f"{s.pass_rate:.0%}" for s in summaries])
    rates.set_ylim(0, 110)
    rates.set_ylabel("runs passed (%)")
    rates.set_title("pass rate")
    positions = range(len(names))
    latency.bar([p - 0.2 for p in positions], [s.p50_seconds for s in summaries], 0.4, label="p50")
    latency.bar([p + 0.2 for p in positions], [s.p95_seconds for s in summaries], 0.4, label="p95")
    latency.set_xticks(list(positions), names)
    latency.set_ylabel("seconds")
    latency.set_title("latency per run")
    latency.legend()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
