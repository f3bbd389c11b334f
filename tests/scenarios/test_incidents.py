"""The incidents scenario: reading the symptom, the planted telemetry, the evidence steps, the
scoring, the report check and its replan contract, and runs end to end on the dev server."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from harness.core.errors import FailureContext
from harness.core.plan import Plan
from harness.engine.run import RunPhase, RunRequest
from harness.engine.validation import validate_plan
from scenarios import get_scenario
from scenarios.base import PlanningError
from scenarios.incidents.assessment import assess
from scenarios.incidents.check import check_incident_report
from scenarios.incidents.data import (
    CHECKOUT,
    CPU,
    INVENTORY,
    LOGS,
    P99,
    PAYMENTS,
    SEARCH,
    TRACES,
    metric_points,
)
from scenarios.incidents.evidence import (
    Evidence,
    Source,
    compare_series,
    detect,
    evidence_in,
    span_stats,
)
from scenarios.incidents.planning import branches_for, parse_symptom, plan_incidents
from tests.scenarios.inprocess import LocalRun, judge, planning_input, run_plan
from tests.support import execute_run, history_events, running_worker

ACCEPTANCE = "checkout-service 5xx errors increased since 14:00, maybe payments dependency"
VAGUE = "checkout is slow"
HEALTHY = "inventory-service 5xx errors since 14:00"
DATA_TOOLS = ("get_metrics", "get_logs", "get_traces", "get_deployments", "get_config_changes")
BRANCH_TOOLS = (
    "compare_periods",
    "detect_signatures",
    "find_slow_spans",
    "get_deployments",
    "get_config_changes",
)
ALL_SOURCES = list(Source)
INCIDENTS = get_scenario("incidents")


def tools_of(plan: Plan | None) -> list[str]:
    """The tools a plan calls: its nodes' tools, and for an agent node the tools it lists."""
    assert plan is not None
    tools: list[str] = []
    for node in plan.nodes:
        if node.tool != "agent":
            tools.append(node.tool)
            continue
        listed = next(b.value for b in node.arguments if b.name == "tools")
        assert isinstance(listed, list)
        tools += [str(name) for name in listed]
    return tools


def verification_failure(message: str) -> FailureContext:
    return FailureContext(code="VERIFICATION_FAILED", message=message)


def with_cause_line(run: LocalRun, line: str) -> str:
    """The run's report with its root-cause line replaced."""
    lines = run.report.splitlines()
    index = next(i for i, text in enumerate(lines) if text.startswith("**Most likely root cause"))
    lines[index] = line
    return "\n".join(lines)


# --- reading the goal ------------------------------------------------------------------------


def test_the_acceptance_goal_names_service_suspect_symptom_and_onset() -> None:
    symptom = parse_symptom(ACCEPTANCE)
    assert symptom is not None
    assert (symptom.service, symptom.suspects, symptom.kind, symptom.since) == (
        CHECKOUT,
        [PAYMENTS],
        "5xx errors",
        "14:00",
    )


def test_a_vague_goal_gives_the_service_and_the_kind_of_symptom_only() -> None:
    symptom = parse_symptom(VAGUE)
    assert symptom is not None
    assert (symptom.service, symptom.suspects, symptom.kind, symptom.since) == (
        CHECKOUT,
        [],
        "latency",
        None,
    )


def test_a_twelve_hour_time_is_read_as_the_onset() -> None:
    symptom = parse_symptom("payments errors since 2pm")
    assert symptom is not None and symptom.since == "14:00"


def test_an_onset_outside_the_telemetry_window_is_a_planning_error() -> None:
    with pytest.raises(PlanningError, match="09:00 is outside 13:15-14:50"):
        parse_symptom("checkout errors since 09:00")


def test_the_acceptance_goal_calls_for_every_investigation() -> None:
    symptom = parse_symptom(ACCEPTANCE)
    assert symptom is not None and branches_for(ACCEPTANCE, symptom) == ALL_SOURCES


def test_a_vague_goal_calls_for_metrics_and_logs_only() -> None:
    symptom = parse_symptom(VAGUE)
    assert symptom is not None
    assert branches_for(VAGUE, symptom) == [Source.METRICS, Source.LOGS]


def test_a_goal_about_a_deploy_adds_the_deployment_history() -> None:
    goal = "checkout errors after the deploy"
    symptom = parse_symptom(goal)
    assert symptom is not None
    assert branches_for(goal, symptom) == [Source.METRICS, Source.LOGS, Source.DEPLOYMENTS]


# --- planner ---------------------------------------------------------------------------------


def test_the_full_plan_runs_five_independent_agent_nodes_into_one_analysis() -> None:
    plan = plan_incidents(planning_input("incidents", ACCEPTANCE))
    assert validate_plan(plan, INCIDENTS.catalog()) == []
    agents = [node for node in plan.nodes if node.tool == "agent"]
    assert [node.id for node in agents] == [source.value for source in ALL_SOURCES]
    assert all(not node.deps for node in agents)
    assert sorted(tools_of(plan)[:-1]) == sorted(BRANCH_TOOLS)
    analysis = plan.nodes[-1]
    assert analysis.tool == "analyze_evidence"
    bound = [(b.name, b.node_id) for b in analysis.arguments if b.node_id is not None]
    assert bound == [("investigations", node.id) for node in agents]
    assert analysis.deps == [node.id for node in agents]


def test_a_goal_naming_no_known_service_is_a_planning_error_listing_the_services() -> None:
    with pytest.raises(PlanningError, match=r"names no service.*checkout-service"):
        plan_incidents(planning_input("incidents", "the website feels off"))


def test_a_replan_adds_the_investigations_the_check_names_and_keeps_the_rest() -> None:
    first = plan_incidents(planning_input("incidents", VAGUE))
    failure = verification_failure(
        "confidence 0.40 (low) is below 0.60: investigate traces (get_traces -> "
        "find_slow_spans), deployments (get_deployments)"
    )
    second = plan_incidents(planning_input("incidents", VAGUE, [failure], first))
    assert validate_plan(second, INCIDENTS.catalog()) == []
    assert set(tools_of(first)) < set(tools_of(second))
    assert set(tools_of(second)) - set(tools_of(first)) == {"find_slow_spans", "get_deployments"}


def test_a_replan_with_nothing_left_to_investigate_is_a_planning_error() -> None:
    first = plan_incidents(planning_input("incidents", ACCEPTANCE))
    failure = verification_failure("the report names no root cause")
    with pytest.raises(PlanningError, match="already ran every investigation"):
        plan_incidents(planning_input("incidents", ACCEPTANCE, [failure], first))


# --- telemetry and evidence steps ------------------------------------------------------------


def test_payments_latency_rises_at_14_00_and_search_cpu_at_14_05() -> None:
    payments = compare_series(PAYMENTS, P99, metric_points(PAYMENTS, P99), 14 * 60)
    search = compare_series(SEARCH, CPU, metric_points(SEARCH, CPU), 14 * 60)
    assert payments is not None and payments.onset == "14:00" and payments.peak > 1900
    assert search is not None and search.onset == "14:05"
    assert compare_series(INVENTORY, P99, metric_points(INVENTORY, P99), 14 * 60) is None


def test_new_errors_are_notable_and_steady_ones_are_not() -> None:
    signatures = {s.template.split(":")[0]: s for s in detect(list(LOGS), 14 * 60)}
    pool = signatures["ConnectionPoolTimeoutError"]
    assert pool.notable and pool.before == 0 and pool.implicates == PAYMENTS
    declined = signatures["card declined by issuer for order <n>"]
    assert not declined.notable and declined.before > 0


def test_a_checkout_timeout_log_implicates_the_payments_service_it_called() -> None:
    timeouts = [s for s in detect(list(LOGS), 14 * 60) if s.template.startswith("payment auth")]
    assert [(s.service, s.implicates) for s in timeouts] == [(CHECKOUT, PAYMENTS)]


def test_waiting_for_a_pool_connection_is_the_slow_span() -> None:
    slow = [(s.service, s.operation) for s in span_stats(list(TRACES), 14 * 60) if s.slow]
    assert slow == [(PAYMENTS, "db.pool.acquire")]


# --- assessment ------------------------------------------------------------------------------


async def test_full_evidence_names_the_payments_pool_change_with_high_confidence() -> None:
    run = await run_plan("incidents", ACCEPTANCE)
    assessment = assess(evidence_in(run.results), CHECKOUT, "14:00")
    assert assessment.cause == PAYMENTS
    assert assessment.trigger is not None and "db.pool.max_connections" in assessment.trigger
    assert (assessment.confidence, assessment.level) == (1.0, "high")
    inventory = assessment.candidate(INVENTORY)
    assert inventory is not None and not inventory.plausible
    assert inventory.sources == [Source.DEPLOYMENTS, Source.CONFIG]


async def test_metrics_and_logs_alone_give_low_confidence_and_name_what_is_missing() -> None:
    run = await run_plan("incidents", VAGUE)
    assessment = assess(evidence_in(run.results), CHECKOUT, None)
    assert (assessment.cause, assessment.confidence, assessment.level) == (PAYMENTS, 0.4, "low")
    assert assessment.missing == [Source.TRACES, Source.DEPLOYMENTS, Source.CONFIG]


async def test_changes_without_any_sign_of_degradation_name_no_cause() -> None:
    run = await run_plan("incidents", ACCEPTANCE)
    evidence = evidence_in(run.results)
    changes_only = Evidence(deployments=evidence.deployments, config=evidence.config)
    assessment = assess(changes_only, CHECKOUT, "14:00")
    assert (assessment.cause, assessment.confidence) == (None, 0.0)


# --- check -----------------------------------------------------------------------------------


async def test_the_acceptance_report_passes_the_check_and_the_offline_critic() -> None:
    run = await run_plan("incidents", ACCEPTANCE)
    assert check_incident_report(run.check_input()) == []
    assert judge("incidents", run).passed
    rubric = INCIDENTS.rubric(run.check_input())
    assert rubric.evidence_terms == [PAYMENTS, "v2.14.0", "db.pool.max_connections", "1.00"]


async def test_a_low_confidence_report_fails_naming_the_missing_investigations() -> None:
    run = await run_plan("incidents", VAGUE)
    assert check_incident_report(run.check_input()) == [
        "confidence 0.40 (low) is below 0.60: investigate traces (get_traces -> "
        "find_slow_spans), deployments (get_deployments), config (get_config_changes)"
    ]


async def test_naming_the_decoy_deploy_fails_and_points_at_the_supported_cause() -> None:
    run = await run_plan("incidents", ACCEPTANCE)
    report = with_cause_line(run, "**Most likely root cause:** inventory-service deploy v5.3.1")
    assert check_incident_report(run.check_input(report)) == [
        "the report names inventory-service as the cause, but the evidence supports it from 2 "
        "source(s) (deployments, config); a cause needs at least 2, one of them showing "
        "inventory-service degraded (metrics, logs, traces); the evidence points at "
        "payments-service"
    ]


async def test_a_report_citing_one_source_fails() -> None:
    run = await run_plan("incidents", ACCEPTANCE)
    kept = [
        line for line in run.report.splitlines() if not line.startswith("- [") or "[logs]" in line
    ]
    problems = check_incident_report(run.check_input("\n".join(kept)))
    assert len(problems) == 1
    assert problems[0].startswith("the report cites evidence from 1 source(s) (logs)")


async def test_a_report_citing_a_source_it_did_not_investigate_fails() -> None:
    run = await run_plan("incidents", "checkout errors after the deploy")
    report = run.report.replace("## Evidence\n", "## Evidence\n\n- [traces] made up\n", 1)
    assert "the report cites [traces] evidence, but no traces were investigated" in (
        check_incident_report(run.check_input(report))
    )


async def test_a_report_overstating_its_confidence_fails() -> None:
    run = await run_plan("incidents", VAGUE)
    report = run.report.replace("**Confidence:** 0.40 (low)", "**Confidence:** 0.95 (high)")
    problems = check_incident_report(run.check_input(report))
    assert "the report states confidence 0.95, but the evidence gives 0.40" in problems


async def test_a_report_naming_no_cause_fails() -> None:
    run = await run_plan("incidents", HEALTHY)
    problems = check_incident_report(run.check_input())
    assert (
        problems[0]
        == "the report names no root cause ('**Most likely root cause:** <service> ...')"
    )


# --- end to end ------------------------------------------------------------------------------


async def test_the_acceptance_goal_names_the_planted_cause_with_evidence_from_five_sources(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=ACCEPTANCE, scenario="incidents")
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempts == 1
    assert result.report is not None and result.verdict is not None
    assert "incidents.check" in result.verdict.checked_by
    cause = next(line for line in result.report.splitlines() if "root cause" in line)
    assert "payments-service" in cause and "db.pool.max_connections changed from 50 to 5" in cause
    cited = {
        tag
        for tag in ("[metrics]", "[logs]", "[traces]", "[deployments]", "[config]")
        if tag in result.report
    }
    assert len(cited) == 5


async def test_the_five_investigations_all_start_before_any_completes(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=ACCEPTANCE, scenario="incidents")
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
        events = await history_events(client, result.run_id)
    plan = result.plan
    assert plan is not None
    agents = {node.id for node in plan.nodes if node.tool == "agent"}
    assert len(agents) == 5  # one agent per investigated source, each a child workflow
    kinds = [event.event_type for event in events]
    started = kinds.count(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
    first_done = kinds.index(EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
    before = kinds[:first_done].count(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
    assert started == before == 5


async def test_a_vague_goal_without_replans_fails_verification_naming_the_missing_investigations(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=VAGUE, scenario="incidents", max_replans=0)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_VERIFICATION
    assert result.error is not None
    assert "investigate traces (get_traces -> find_slow_spans)" in result.error


async def test_a_vague_goal_is_replanned_with_the_missing_investigations_and_succeeds(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=VAGUE, scenario="incidents")
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempts == 2
    first, second = result.attempt_history
    assert first.outcome is RunPhase.FAILED_VERIFICATION
    assert [failure.code for failure in first.failure] == ["VERIFICATION_FAILED"]
    assert "get_traces" in first.failure[0].message
    assert "find_slow_spans" not in tools_of(first.plan)
    assert {"find_slow_spans", "get_deployments", "get_config_changes"} <= set(
        tools_of(second.plan)
    )
    assert result.report is not None and "db.pool.max_connections" in result.report


async def test_a_goal_naming_no_service_fails_validation_with_the_planners_advice(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal="the website feels off", scenario="incidents", ask_user=False)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and "names no service" in result.error


async def test_a_healthy_service_fails_verification_because_no_cause_is_supported(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=HEALTHY, scenario="incidents", max_replans=0)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_VERIFICATION
    assert result.error is not None and "names no root cause" in result.error
