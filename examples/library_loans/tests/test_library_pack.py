"""The library pack's own tests, run against the INSTALLED package (CI installs it with pip,
not -e): its tools, its report check, and that the harness finds it through its entry point
with its data files beside it."""

from __future__ import annotations

from datetime import date
from importlib import metadata, resources

import library_loans
import pytest
from library_loans.tools import book_status, fines_owed, loans_report, member_loans

from durable_harness import ToolError
from durable_harness.pack_types import CheckInput


def test_a_member_s_loans_come_in_due_order() -> None:
    loans = member_loans("M-1001")
    assert loans.name == "Ada Okafor"
    assert [(loan.title, loan.due.isoformat()) for loan in loans.loans] == [
        ("Dune", "2026-02-10"),
        ("Middlemarch", "2026-03-20"),
    ]


def test_an_unknown_member_is_missing_info_naming_the_card() -> None:
    with pytest.raises(ToolError) as raised:
        member_loans("M-9999")
    assert raised.value.code.name == "MISSING_INFO"
    assert "M-9999" in str(raised.value)


def test_fines_count_the_days_each_loan_is_late_on_the_day_given() -> None:
    owed = fines_owed("M-1002", date(2026, 3, 1))
    assert [(late.title, late.days_late) for late in owed.late] == [
        ("Dune", 4),
        ("The Left Hand of Darkness", 15),
    ]
    assert owed.total_eur == pytest.approx(3.80)


def test_a_loan_not_yet_due_costs_nothing() -> None:
    assert fines_owed("M-1001", date(2026, 2, 10)).late == []


def test_a_book_s_status_counts_the_copies_out_and_the_first_back() -> None:
    status = book_status("dune")  # titles are matched without regard to case
    assert (status.title, status.copies, status.on_loan, status.available) == ("Dune", 2, 2, 0)
    assert status.next_due == date(2026, 2, 10)


def test_the_report_passes_its_check_with_every_fines_total() -> None:
    loans = member_loans("M-1002")
    owed = fines_owed("M-1002", date(2026, 3, 1))
    report = loans_report(loans=[loans], fines=[owed])
    results = {"fines": owed.model_dump(mode="json")}
    assert library_loans.check_report(CheckInput("goal", report, results)) == []
    assert library_loans.check_report(CheckInput("goal", "# Library report", results)) == [
        "the report leaves out the fines total of fines (EUR 3.80)"
    ]


def test_the_pack_s_tool_schemas_come_from_the_signatures() -> None:
    specs = {tool.spec.name: tool.spec for tool in library_loans.PACK.tools}
    assert sorted(specs) == ["book_status", "fines_owed", "loans_report", "member_loans"]
    on = specs["fines_owed"].arguments_schema["properties"]["on"]
    assert on["format"] == "date"
    assert specs["loans_report"].role.name == "FINAL_SYNTHESIS"


def test_the_installed_distribution_names_the_pack_in_its_entry_point() -> None:
    [entry] = [
        e for e in metadata.entry_points(group="durable_harness.packs") if e.name == "library"
    ]
    assert entry.dist is not None and entry.dist.name == "library-loans-pack"
    assert entry.load() is library_loans.PACK


def test_the_data_files_are_installed_beside_the_modules() -> None:
    """Package data: a wheel built without it holds the modules only."""
    files = resources.files(library_loans)
    assert files.joinpath("catalogue.json").is_file()
    assert files.joinpath("eval_cases.yaml").is_file()
    assert files.joinpath("eval_plans", "member-loans-and-fines.json").is_file()
