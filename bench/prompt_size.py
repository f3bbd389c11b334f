"""`python -m bench.prompt_size`: the planner's prompt per scenario, in characters, as the OpenAI
provider sends it in strict mode (system plus user message), for a run on no task and a run bound
to a task (which is also shown the management tools). No server, no model: the prompt is built
as the provider builds it. The cities figure is compared with version 0.9.0's 8,285 characters;
the target (issue 38) is at most 60% of it. JSON lines, then a table, on stdout."""

from __future__ import annotations

from activities.llm.prompts import planner_catalog, planner_system, planner_user
from bench.report import Measurement, emit, measure
from harness.engine.messages import PlanRequest
from harness.governance.work import TaskBinding
from scenarios import get_scenario

GOALS = {
    "cities": "Compare Lisbon and Seoul",
    "games": "I want something relaxing with a good story, short sessions, under 30 dollars",
    "incidents": "checkout-service 5xx errors increased since 14:00",
    "refunds": "Refund order A-1001, the customer received a damaged item",
    "repo": "What changed in the last 5 commits, and why?",
}
CITIES_0_9_0 = 8285
"""The cities prompt for 'Compare Lisbon and Seoul' in version 0.9.0."""
TARGET = 0.6


def prompt_chars(scenario: str, goal: str, task: TaskBinding | None = None) -> tuple[int, int]:
    """The system and the user message's characters of the scenario's first planning call."""
    pack = get_scenario(scenario)
    request = PlanRequest(
        run_id="bench", goal=goal, scenario=scenario, attempt=1, catalog=pack.catalog(), task=task
    )
    system = planner_system(planner_catalog(request), pack.instructions)
    return len(system), len(planner_user(request))


def measurements() -> list[Measurement]:
    rows = []
    bound = TaskBinding(scope="default", task_id="t-1")
    for scenario, goal in GOALS.items():
        for run, task in (("unbound", None), ("bound", bound)):
            system, user = prompt_chars(scenario, goal, task)
            cities = scenario == "cities" and task is None
            rows.append(
                measure(
                    "prompt_size",
                    f"{scenario}.{run}",
                    system + user,
                    "chars",
                    baseline=CITIES_0_9_0 if cities else None,
                    vs="0.9.0" if cities else None,
                    target=f"<= {TARGET:.0%} of 0.9.0" if cities else None,
                    met=(system + user <= CITIES_0_9_0 * TARGET) if cities else None,
                    note=f"system {system:,} + user {user:,}",
                )
            )
    return rows


if __name__ == "__main__":
    emit(measurements())
