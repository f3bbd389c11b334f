"""Activity: the critic. A separate role with its own prompt and rubric; it only sees the goal,
the report and the scenario's rubric, never the worker's own calls."""

from __future__ import annotations

import structlog
from temporalio import activity

from activities.heartbeats import with_heartbeats
from activities.llm import ProviderRegistry
from activities.provider_errors import as_temporal_failures
from activities.spending import Spending, charged_attempts
from harness.catalog.llm import JudgeRequest
from harness.engine.contracts import JUDGE_ACTIVITY
from harness.engine.messages import JudgeCallRequest, JudgeCallResult
from scenarios import get_scenario
from scenarios.base import CheckInput

log = structlog.get_logger()


class JudgeActivities:
    def __init__(self, providers: ProviderRegistry) -> None:
        self._providers = providers

    @activity.defn(name=JUDGE_ACTIVITY)
    async def judge(self, request: JudgeCallRequest) -> JudgeCallResult:
        attempt = activity.info().attempt
        spending = Spending()
        with charged_attempts(spending), as_temporal_failures(attempt):
            scenario = get_scenario(request.scenario)
            provider = self._providers.get(request.provider)
            rubric = scenario.rubric(
                CheckInput(goal=request.goal, report=request.report, results=request.results)
            )
            judging = provider.judge(
                JudgeRequest(
                    goal=request.goal,
                    report=request.report,
                    criteria=rubric.criteria,
                    evidence_terms=rubric.evidence_terms,
                    model=request.model,
                    cost_limited=request.cost_limited,
                )
            )
            reply = await with_heartbeats(judging, spending.details)
        log.info("judge.finish", run_id=request.run_id, passed=reply.passed, score=reply.score)
        return JudgeCallResult(
            passed=reply.passed,
            score=reply.score,
            reasons=reply.reasons,
            model=reply.model,
            usage=spending.plus_earlier(reply.usage),
        )
