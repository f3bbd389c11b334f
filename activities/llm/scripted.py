"""The offline provider: plans with the scenario's rules, writes from the tool's own template,
and plays agents' tool-use loops by a fixed rule (activities.llm.offline_agent).

Deterministic and free of network access, so every demo and test runs without keys. Token counts
are estimates (about four characters a token) and marked as such. What it writes, and an agent's
answer, go to followers word by word when the activity streams to them (activities.token_stream).
"""

from __future__ import annotations

from activities.llm.base import ProviderConfigError
from activities.llm.offline_agent import next_turn, stop_of
from activities.token_stream import say_in_words
from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.core.usage import TokenUsage, estimate_tokens
from harness.engine.messages import PlanRequest, PlanResponse
from harness.engine.run_models import family_problem
from harness.engine.verification import VERIFICATION_FAILED
from scenarios.base import Pack, PlanningInput

MODEL_NAME = "scripted-v1"
FALLBACK_MODEL_NAME = "scripted-v1-fallback"
"""The same rules under budget pressure, named apart so that the switch shows."""


class ScriptedProvider:
    name = "scripted"

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        plan = scenario.plan_offline(
            PlanningInput(
                goal=request.goal,
                catalog=request.catalog,
                attempt=request.attempt,
                failures=request.failures,
                previous_plan=request.previous_plan,
                bound_to_task=request.task is not None,
                work_notes=tuple(request.work_notes),
                carried_tools=tuple(request.carried_tools),
                remembered_missing=_remembered(request),
            )
        )
        memory = request.memory.text if request.memory else ""
        prompt = request.goal + memory + request.catalog.model_dump_json()
        usage = TokenUsage(
            input_tokens=estimate_tokens(prompt),
            output_tokens=estimate_tokens(plan.model_dump_json()),
            estimated=True,
        )
        model = FALLBACK_MODEL_NAME if request.economy else served(request.model)
        usage.models = [model]
        return PlanResponse(plan=plan, planned_by=f"{self.name}:{model}", usage=usage)

    async def write(self, request: TextRequest) -> TextReply:
        usage = TokenUsage(
            input_tokens=estimate_tokens(request.system + request.prompt),
            output_tokens=estimate_tokens(request.draft),
            estimated=True,
        )
        model = FALLBACK_MODEL_NAME if request.economy else served(request.model)
        usage.models = [model]
        await say_in_words(request.draft)
        return TextReply(text=request.draft, model=model, usage=usage)

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        return judge_offline(request)

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        calls, answer = next_turn(request)
        model = FALLBACK_MODEL_NAME if request.economy else served(request.model)
        sent = request.system + request.model_dump_json(include={"messages", "tools"})
        said = answer if answer is not None else "".join(c.model_dump_json() for c in calls)
        usage = TokenUsage(
            input_tokens=estimate_tokens(sent),
            output_tokens=estimate_tokens(said),
            estimated=True,
            models=[model],
        )
        if answer:
            await say_in_words(answer)
        return AgentTurnReply(
            tool_calls=calls, answer=answer, stop=stop_of(calls), model=model, usage=usage
        )


def _remembered(request: PlanRequest) -> tuple[str, ...]:
    """What earlier runs found missing, on every attempt (a replan for another failure must not
    look it up again), but for a name a failed verification says the report lacks: a memory
    that misled the plan is looked at again."""
    if request.memory is None:
        return ()
    contradicted = " ".join(
        f.message.lower() for f in request.failures if f.code == VERIFICATION_FAILED
    )
    names = request.memory.remembered_missing(request.scenario)
    return tuple(name for name in names if name.lower() not in contradicted)


PASS_SCORE = 0.8


def judge_offline(request: JudgeRequest) -> JudgeReply:
    """A deterministic critic: how many facts from the tool results the report repeats."""
    report = request.report.lower()
    terms = list(dict.fromkeys(request.evidence_terms))
    missing = [term for term in terms if term.lower() not in report]
    score = 1.0 if not terms else (len(terms) - len(missing)) / len(terms)
    reasons = [f"the report repeats {len(terms) - len(missing)} of {len(terms)} facts"]
    if missing:
        reasons.append("missing: " + ", ".join(missing[:5]))
    if not report.strip():
        score, reasons = 0.0, ["the report is empty"]
    model = served(request.model)
    usage = TokenUsage(
        input_tokens=estimate_tokens(request.report + " ".join(request.criteria)),
        output_tokens=estimate_tokens(" ".join(reasons)),
        estimated=True,
        models=[model],
    )
    return JudgeReply(
        passed=score >= PASS_SCORE,
        score=round(score, 3),
        reasons=reasons,
        model=model,
        usage=usage,
    )


def served(asked: str | None) -> str:
    """The model a run asks for, if of the offline family (its name labels the replies)."""
    if asked is None:
        return MODEL_NAME
    problem = family_problem("scripted", asked)
    if problem is not None:
        raise ProviderConfigError(problem)
    return asked
