"""Reading eval case files: a typo is refused with the field named, bad values are one line, a
plan file is read relative to its case file, and every scenario's own cases load."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.engine.run import RunPhase
from harness.evals.eval_case import EvalCase
from scenarios.registry import registered
from starter.cli.eval_files import load_cases, read_case_file, scenario_case_file
from starter.errors import CliError
from tests.scenarios.tides import TIDES

SCENARIOS_WITH_CASES = ("cities", "games", "incidents", "refunds", "repo")
CATEGORIES = {
    "ordinary",
    "budget",
    "transient",
    "fatal",
    "unknown-entity",
    "vague",
    "unreachable",
    "invalid-plan",
}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(text)
    return path


def refusal(path: Path) -> str:
    with pytest.raises(CliError) as refused:
        read_case_file(path)
    return refused.value.message


def test_a_case_file_with_a_typo_in_a_field_name_is_refused_with_the_field_named(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "scenario: cities\ncases:\n  - id: two\n    goal: Compare Paris and Tokyo\n"
        "    expect: {mentions: [Paris], max_replan: 1}\n",
    )
    assert refusal(path) == (
        f"case file '{path}': cases[0] (id 'two'): expect.max_replan: unknown field; "
        "did you mean 'max_replans'?"
    )


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("options: {approvals: [{actor: 'agent:planner'}]}", "never agent:"),
        ("options: {faults: ['get_population=NOPE']}", "unknown error code 'NOPE'"),
        ("options: {provider: gpt}", "unknown provider 'gpt'"),
        ("expect: {status: DONE}", "expect.status"),
        ("expect: {error_codes: [OOPS]}", "expect.error_codes.0"),
        ("id: Two Cities", "is not a case id"),
        ("options: {plan_file: missing.json}", "cannot read plan file"),
    ],
)
def test_a_bad_value_in_a_case_is_one_line_that_says_where(
    tmp_path: Path, case: str, said: str
) -> None:
    fields = {"id": "two", "goal": "Compare Paris and Tokyo"}
    key = case.split(":")[0]
    fields.pop(key, None)
    lines = "".join(f"    {name}: {value}\n" for name, value in fields.items())
    path = write(tmp_path, f"scenario: cities\ncases:\n  - {case}\n{lines}")
    message = refusal(path)
    assert said in message and "\n" not in message


def test_a_scenario_unknown_here_is_read_with_the_closest_name_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "scenario: citys\ncases:\n  - {id: a, goal: g}\n")
    assert read_case_file(path).scenario == "citys"  # the workers' packs decide
    assert "did you mean 'cities'?" in capsys.readouterr().err


def test_a_scenario_no_pack_can_be_named_is_refused_with_the_closest_name(tmp_path: Path) -> None:
    path = write(tmp_path, "scenario: Cities\ncases:\n  - {id: a, goal: g}\n")
    assert "is not a pack name" in refusal(path)
    assert "did you mean 'cities'?" in refusal(path)


def test_a_case_id_used_twice_in_a_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "scenario: cities\ncases:\n  - {id: a, goal: g}\n  - {id: a, goal: h}\n")
    assert "case id 'a' is used twice" in refusal(path)


def test_a_plan_file_is_read_relative_to_its_case_file(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "p.json").write_text(
        '{"nodes": [{"id": "r", "tool": "aggregate_report", "arguments": [], "deps": []}]}'
    )
    path = write(
        tmp_path,
        "scenario: cities\ncases:\n  - id: given\n    goal: g\n"
        "    options: {plan_file: plans/p.json}\n",
    )
    (case,) = read_case_file(path).cases
    assert case.options.plan is not None and case.options.plan.nodes[0].id == "r"
    assert EvalCase.model_validate_json(case.model_dump_json()) == case  # as a worker reads it
    assert case.run_request().plan == case.options.plan


def test_a_case_becomes_the_run_request_its_options_describe() -> None:
    case = EvalCase.model_validate(
        {
            "id": "tight",
            "goal": "Compare Paris and Tokyo",
            "scenario": "cities",
            "options": {
                "max_replans": 0,
                "limits": {"max_tool_calls": 3},
                "faults": ["get_population:Tokyo=RATE_LIMITED*2"],
                "ask_user": False,
            },
        }
    )
    request = case.run_request(provider="scripted")
    assert (request.max_replans, request.limits.max_tool_calls, request.ask_user) == (0, 3, False)
    assert request.faults[0].argument_value == "Tokyo" and request.faults[0].times == 2
    assert request.memory.enabled is False and request.provider == "scripted"


def test_load_cases_keeps_only_the_cases_a_pattern_names() -> None:
    cases = load_cases(["cities"], ["cities/*atlantis*"])
    assert cases and all("atlantis" in case.id for case in cases)
    with pytest.raises(CliError, match="no case matches"):
        load_cases(["cities"], ["games/*"])


def case_file(scenario: str) -> Path:
    file = scenario_case_file(scenario)
    assert file is not None, f"{scenario} names no case file"
    return file


def test_a_case_file_given_twice_is_refused() -> None:
    with pytest.raises(CliError, match="is given twice"):
        load_cases(["cities", str(case_file("cities"))])


@pytest.mark.parametrize("scenario", SCENARIOS_WITH_CASES)
def test_each_scenario_has_twenty_cases_that_cover_the_categories(scenario: str) -> None:
    cases = read_case_file(case_file(scenario)).cases
    assert len(cases) >= 20
    tags = {tag for case in cases for tag in case.tags}
    assert tags >= CATEGORIES, f"{scenario} lacks {sorted(CATEGORIES - tags)}"
    failing = [case for case in cases if RunPhase.SUCCEEDED not in case.expect.statuses()]
    assert failing, "some cases must expect a run that does not succeed"


def test_refund_cases_cover_approvals_granted_and_rejected() -> None:
    tags = {tag for case in read_case_file(case_file("refunds")).cases for tag in case.tags}
    assert {"approval-granted", "approval-rejected"} <= tags


def test_harness_eval_by_a_packs_name_reads_the_case_file_the_pack_names(tmp_path: Path) -> None:
    cases = tmp_path / "tides_cases.yaml"
    cases.write_text(
        "scenario: tides\ncases:\n"
        "  - id: brest\n    goal: When is high water at Brest?\n"
        "    expect: {status: SUCCEEDED}\n"
    )
    pack = dataclasses.replace(TIDES, eval_cases=cases)
    with registered(pack):
        assert scenario_case_file("tides") == cases
        loaded = load_cases(["tides"])
        every = load_cases([])  # no target: every pack with cases, this one among them
    assert [case.key for case in loaded] == ["tides/brest"]
    assert "tides/brest" in {case.key for case in every}


def test_a_pack_without_eval_cases_is_refused_by_name_in_one_line() -> None:
    with pytest.raises(CliError) as refused:
        load_cases(["synthetic"])
    assert refused.value.message == (
        "the pack synthetic has no eval cases; give a case file's path instead"
    )
