"""A scripted model for the cities goal: it plans like the offline planner, writes summaries and
the report, and judges; each reply reports fixed token counts, and the script keeps a ledger."""

from __future__ import annotations

from dataclasses import dataclass, field

from activities.llm.structured import PlanDraft
from harness.core.usage import TokenUsage
from scenarios import get_scenario
from scenarios.base import PlanningInput
from tests.fakes import FakeApi, Recorded, Reply, Usage
from tests.providers.support import MODELS, RATES

PLAN_USAGE = Usage(input=1500, output=400, cache_read=1000, cache_write=200)
SUMMARY_USAGE = Usage(input=60, output=40)
REPORT_USAGE = Usage(input=700, output=350)
VERDICT_USAGE = Usage(input=500, output=60)


def cities_plan_json(goal: str) -> str:
    scenario = get_scenario("cities")
    plan = scenario.plan_offline(
        PlanningInput(
            goal=goal, catalog=scenario.catalog(), attempt=1, failures=[], previous_plan=None
        )
    )
    return PlanDraft.of(plan).model_dump_json()


def expected_cost(model: str, usage: Usage) -> float:
    """The oracle: reported tokens times the test's rates, USD per million tokens."""
    input_rate, output_rate, read_rate, write_rate = RATES[model]
    uncached = usage.input - usage.cache_read - usage.cache_write
    return (
        uncached * input_rate
        + usage.cache_read * read_rate
        + usage.cache_write * write_rate
        + usage.output * output_rate
    ) / 1_000_000


def counted(usage: TokenUsage) -> dict[str, object]:
    """The counts and cost, to compare approximately (the models are compared apart)."""
    return usage.model_dump(exclude={"models"})


def expected_usage(model: str, usage: Usage) -> TokenUsage:
    return TokenUsage(
        input_tokens=usage.input,
        output_tokens=usage.output,
        cached_tokens=usage.cache_read,
        cache_write_tokens=usage.cache_write,
        reasoning_tokens=usage.reasoning,
        cost_usd=expected_cost(model, usage),
        models=[model],
    )


@dataclass
class CitiesScript:
    """A fallback responder for the fake server; `served` lists (model, usage) per reply."""

    api: FakeApi
    goal: str
    served: list[tuple[str, Usage]] = field(default_factory=list)

    def __call__(self, request: Recorded) -> Reply:
        text, usage = self.answer(request)
        return self.api.text_reply(text, usage)(request)

    def answer(self, request: Recorded) -> tuple[str, Usage]:
        """The model's text for `request` and the tokens it reports."""
        model = request.body["model"]
        text, usage = self._answer(model, self.api.user_text(request))
        self.served.append((model, usage))
        return text, usage

    def _answer(self, model: str, prompt: str) -> tuple[str, Usage]:
        if model == MODELS.planner:
            return cities_plan_json(self.goal), PLAN_USAGE
        if model == MODELS.judge:
            verdict = '{"passed": true, "score": 1.0, "reasons": ["every city is compared"]}'
            return verdict, VERDICT_USAGE
        if "markdown report" in prompt:
            return "# Paris and Tokyo\n\nTokyo is larger than Paris.", REPORT_USAGE
        return "A city with a long history.", SUMMARY_USAGE

    def total(self) -> TokenUsage:
        total = TokenUsage()
        for model, usage in self.served:
            total = total.plus(expected_usage(model, usage))
        return total
