"""A durable-harness pack for a small lending library: who has which book, when copies come
back, and what is owed for late ones. Installed, it is found through its entry point
(`durable_harness.packs`: `library = "library_loans:PACK"`); `harness scenarios` lists it.

It has no offline planner: its eval cases give their plans (eval_plans/), and a run of it takes
`--plan FILE` or an LLM planner. `harness eval library` runs its cases: the pack names its case
file, shipped as package data."""

from __future__ import annotations

from pathlib import Path

from durable_harness import Pack
from durable_harness.pack_types import CheckInput
from library_loans.tools import book_status, fines_owed, loans_report, member_loans

__all__ = ["PACK"]


def check_report(check: CheckInput) -> list[str]:
    """A report starts with its heading and states every fines total the run found."""
    problems = []
    if not check.report.startswith("# Library report"):
        problems.append("the report does not start with '# Library report'")
    for node, result in sorted(check.results.items()):
        if isinstance(result, dict) and isinstance(result.get("total_eur"), int | float):
            total = f"EUR {result['total_eur']:.2f}"
            if total not in check.report:
                problems.append(f"the report leaves out the fines total of {node} ({total})")
    return problems


PACK = Pack(
    "library",
    "Loans, copies and late fines at a small lending library.",
    [member_loans, book_status, fines_owed, loans_report],
    instructions=(
        "Look members up by card number (M-1001) and books by title; count fines up to the day "
        "the goal names; end with loans_report, given every result it reads."
    ),
    check=check_report,
    example_goal="What does member M-1002 owe on 2026-03-01?",
    eval_cases=Path(__file__).parent / "eval_cases.yaml",
)
