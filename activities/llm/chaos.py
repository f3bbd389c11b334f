"""The chaos provider: a real provider whose planner calls go wrong, at a rate, as a real
model's or server's do (`harness eval --chaos`; harness.evals.chaos draws which and when).

- Plan mistakes (unknown tool, missing argument, bad NODE_RESULT path, cycle) change the plan
  the inner provider made, so the validator (or the run) meets them and the run replans.
- Text mistakes render that plan as the JSON a model writes: wrapped in prose, it goes through
  the structured-output parser as a real reply does (it recovers there or by a replan); cut off,
  it fails as a reply stopped at its limit does. A spurious `cannot_plan` is parsed likewise.
- Transport mistakes (500, 429 with Retry-After, timeout) raise the ProviderError a real
  provider raises, before the inner provider is called; Temporal retries the activity, whose
  next attempt draws again.

Every mistake is marked (`[chaos: KIND]`) where the run records it: in `planned_by` of a plan it
changed (with the transport mistakes a retry recovered from before it), or in the error of the
call it failed. The usage is the inner provider's: what the model call it stands for cost.
Writer, judge and agent turns pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities.llm.base import LLMProvider, ProviderError
from activities.llm.structured import ModelCannotPlanError, PlanDraft, parse_plan
from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.catalog.tools import ToolCatalog
from harness.core.errors import ErrorCode
from harness.core.plan import ArgumentKind, Plan
from harness.engine.messages import PlanRequest, PlanResponse
from harness.evals.chaos import KINDS, ChaosKind, ChaosSpec, mark
from scenarios.base import Pack

RETRY_AFTER_SECONDS = 1.0
"""What an injected 429 asks for: short, so an eval with chaos stays fast."""
PLAN_MISTAKES = (
    ChaosKind.UNKNOWN_TOOL,
    ChaosKind.MISSING_ARGUMENT,
    ChaosKind.BAD_PATH,
    ChaosKind.CYCLE,
)
PROSE_BEFORE = "Sure! Here is a plan that reaches the goal with the tools given:\n\n"
PROSE_AFTER = "\n\nEach node runs once its dependencies are done. Let me know if you want changes."
CANNOT_PLAN_REASON = "none of the tools given can reach this goal"


def activity_attempt() -> int:
    """The running activity's attempt (1 outside an activity: a direct call in a test)."""
    return activity.info().attempt if activity.in_activity() else 1


class ChaosProvider:
    name = "chaos"

    def __init__(
        self,
        inner: LLMProvider,
        spec: ChaosSpec,
        attempt: Callable[[], int] = activity_attempt,
    ) -> None:
        self._inner = inner
        self._spec = spec
        self._attempt = attempt

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        attempt = self._attempt()
        call = f"plan-{request.attempt}"
        earlier = [
            kind
            for number in range(1, attempt)
            if (kind := self._spec.draw(call, number)) is not None and kind.transport
        ]
        kind = self._spec.draw(call, attempt)
        if kind is not None and kind.transport:
            raise transport_error(kind, [*earlier, kind], self._inner.name, attempt)
        response = await self._inner.plan(request, scenario)
        if kind is None:
            if earlier:  # a retry recovered from them: the plan says so
                response.planned_by = f"{response.planned_by} {mark(earlier)}"
            return response
        return mistaken(kind, earlier, response, request.catalog)

    async def write(self, request: TextRequest) -> TextReply:
        return await self._inner.write(request)

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        return await self._inner.judge(request)

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        return await self._inner.agent_turn(request)


def transport_error(
    kind: ChaosKind, kinds: list[ChaosKind], provider: str, attempt: int
) -> ProviderError:
    """The error a real provider raises for this failure of the call (nothing was waited)."""
    said = f"{mark(kinds)} {provider}, on attempt {attempt},"
    if kind is ChaosKind.HTTP_500:
        return ProviderError(
            ErrorCode.PROVIDER_UNAVAILABLE, f"{said} failed with a server error (500): injected"
        )
    if kind is ChaosKind.HTTP_429:
        return ProviderError(
            ErrorCode.RATE_LIMITED,
            f"{said} is rate limiting requests (429): injected, retry after "
            f"{RETRY_AFTER_SECONDS:g} s",
            retry_after=RETRY_AFTER_SECONDS,
        )
    return ProviderError(ErrorCode.TIMEOUT, f"{said} did not answer in time: injected")


def mistaken(
    kind: ChaosKind, earlier: list[ChaosKind], response: PlanResponse, catalog: ToolCatalog
) -> PlanResponse:
    """The inner provider's reply with `kind` made in it. A plan that offers no place for a
    plan mistake (no NODE_RESULT binding to get wrong) gets the next kind that fits, in the
    order of KINDS; prose-wrapped JSON always fits."""
    if kind in PLAN_MISTAKES:
        for candidate in KINDS[KINDS.index(kind) : KINDS.index(ChaosKind.PROSE_JSON)]:
            changed = _changed(candidate, response.plan, catalog)
            if changed is not None:
                marked = f"{response.planned_by} {mark([*earlier, candidate])}"
                return response.model_copy(update={"plan": changed, "planned_by": marked})
        kind = ChaosKind.PROSE_JSON
    said = mark([*earlier, kind])
    text = PlanDraft.of(response.plan).model_dump_json()
    if kind is ChaosKind.CUT_OFF:
        cut = len(text) // 2
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT,
            f"{said} {response.planned_by}'s reply was cut off (length) before it was complete "
            f"({cut:,} of {len(text):,} characters)",
            usage=response.usage,
        )
    if kind is ChaosKind.CANNOT_PLAN:
        text = PlanDraft(nodes=[], cannot_plan=f"{said} {CANNOT_PLAN_REASON}").model_dump_json()
    else:
        text = PROSE_BEFORE + text + PROSE_AFTER
    try:
        plan = parse_plan(text)
    except ProviderError as error:
        raise ProviderError(
            error.code, f"{said} {error.message}", error.retry_after, response.usage
        ) from None
    except ModelCannotPlanError as error:  # the real call behind the injected refusal cost
        error.usage = response.usage
        raise
    return response.model_copy(update={"plan": plan, "planned_by": f"{response.planned_by} {said}"})


def _changed(kind: ChaosKind, plan: Plan, catalog: ToolCatalog) -> Plan | None:
    """A copy of `plan` with the mistake made in it; None where it has no place for it."""
    plan = plan.model_copy(deep=True)
    if not plan.nodes:
        return None
    if kind is ChaosKind.UNKNOWN_TOOL:
        node = plan.nodes[0]
        node.tool = _misspelt(node.tool, catalog)
        return plan
    if kind is ChaosKind.MISSING_ARGUMENT:
        for node in plan.nodes:
            required = _required(catalog, node.tool)
            for index, binding in enumerate(node.arguments):
                if binding.name in required:
                    del node.arguments[index]
                    return plan
        return None
    if kind is ChaosKind.BAD_PATH:
        for node in plan.nodes:
            for binding in node.arguments:
                if binding.kind is ArgumentKind.NODE_RESULT:
                    binding.path = f"{binding.path}_value" if binding.path else "result"
                    return plan
        return None
    first, last = plan.nodes[0], plan.nodes[-1]
    first.deps = [*first.deps, last.id]
    return plan


def _misspelt(tool: str, catalog: ToolCatalog) -> str:
    """The tool's name with a letter dropped from its middle, as a model misspells it."""
    middle = len(tool) // 2
    name = tool[:middle] + tool[middle + 1 :]
    return name if name and catalog.get(name) is None else tool + "_tool"


def _required(catalog: ToolCatalog, tool: str) -> set[str]:
    spec = catalog.get(tool)
    required: Any = spec.arguments_schema.get("required", []) if spec else []
    return {str(name) for name in required} if isinstance(required, list) else set()
