"""The eval report as text: a line per case as it finishes, then the per-case table with every
unmet expectation in words, the pass rates, latency, tokens and cost per scenario, and with
--chaos the recovery table."""

from __future__ import annotations

from harness.evals.chaos_report import ChaosRow, ChaosTable
from harness.evals.eval_report import CaseResult, EvalReport, PassSummary


def case_line(result: CaseResult, total: int) -> str:
    verdict = "PASS" if result.passed else "FAIL"
    status = result.status.value if result.status else "-"
    line = f"{verdict}  {result.case}"
    if total and result.repeat > 1:
        line += f" #{result.repeat}"
    line += f"  {status}  {result.latency_seconds:.2f} s"
    if result.unmet:
        line += f"  ({result.unmet[0]})"
    return line


def report_table(report: EvalReport) -> str:
    width = max([len(_name(result, report)) for result in report.results] + [4])
    header = (
        f"{'case':<{width}}  result  {'status':<19}  attempts  tools  tokens  "
        f"{'cost USD':>8}  {'latency':>8}"
    )
    lines = [header, "-" * len(header)]
    for result in report.results:
        lines.append(
            f"{_name(result, report):<{width}}  {'PASS' if result.passed else 'FAIL':<6}  "
            f"{result.status.value if result.status else '-':<19}  {result.attempts:>8}  "
            f"{result.tool_calls:>5}  {result.tokens:>6}  {result.cost_usd:>8.4f}  "
            f"{result.latency_seconds:>6.2f} s"
        )
        lines += [f"{'':<{width}}    - {reason}" for reason in result.unmet]
    lines += ["", summary_table(report)]
    if report.chaos is not None:
        lines += ["", chaos_table(report.chaos)]
    return "\n".join(lines)


def chaos_table(table: ChaosTable) -> str:
    """Per kind of mistake: injected, runs, recovered, how the runs ended, what it cost."""
    settings = table.settings
    header = (
        f"{'mistake':<16}  injected  runs  recovered  {'rate':>5}  {'extra tokens':>12}  "
        f"{'extra s':>7}  outcomes"
    )
    lines = [
        f"chaos {settings.rate:g} (seed {settings.seed}): recovery from injected mistakes",
        header,
        "-" * len(header),
    ]
    lines += [_chaos_row(row) for row in table.rows]
    lines.append(
        f"(recovered: ended as the case expects; extra: mean over recovered runs, against the "
        f"same case's {table.clean_runs} run(s) without chaos)"
    )
    return "\n".join(lines)


def _chaos_row(row: ChaosRow) -> str:
    rate = f"{row.recovery:.0%}" if row.recovery is not None else "-"
    tokens = f"{row.extra_tokens:+,.0f}" if row.extra_tokens is not None else "-"
    seconds = f"{row.extra_seconds:+.2f}" if row.extra_seconds is not None else "-"
    outcomes = ", ".join(f"{phase} {runs}" for phase, runs in row.outcomes.items()) or "-"
    return (
        f"{row.kind:<16}  {row.injected:>8}  {row.runs:>4}  {row.recovered:>9}  {rate:>5}  "
        f"{tokens:>12}  {seconds:>7}  {outcomes}"
    )


def summary_table(report: EvalReport) -> str:
    repeated = report.repeat > 1
    width = max([len(summary.scenario) for summary in report.scenarios] + [10])
    header = f"{'scenario':<{width}}  cases  passed  pass rate"
    header += "  pass@k  pass^k" if repeated else ""
    header += f"  {'p50':>7}  {'p95':>7}  {'tokens':>8}  {'cost USD':>8}"
    lines = [header, "-" * len(header)]
    for summary in [*report.scenarios, report.overall]:
        lines.append(_summary_row(summary, repeated, width))
    if repeated:
        lines.append(f"(k = {report.repeat}: pass@k, one of k runs passed; pass^k, all k passed)")
    endings = report.overall.endings.items()
    lines.append("endings: " + ", ".join(f"{ending} {runs}" for ending, runs in endings))
    return "\n".join(lines)


def _summary_row(summary: PassSummary, repeated: bool, width: int) -> str:
    row = (
        f"{summary.scenario:<{width}}  {summary.cases:>5}  {summary.passed_runs:>6}  "
        f"{summary.pass_rate:>9.0%}"
    )
    if repeated:
        row += f"  {summary.pass_at_k:>6.0%}  {summary.pass_all_k:>6.0%}"
    return row + (
        f"  {summary.p50_seconds:>5.2f} s  {summary.p95_seconds:>5.2f} s  "
        f"{summary.tokens:>8}  {summary.cost_usd:>8.4f}"
    )


def _name(result: CaseResult, report: EvalReport) -> str:
    return f"{result.case} #{result.repeat}" if report.repeat > 1 else result.case
