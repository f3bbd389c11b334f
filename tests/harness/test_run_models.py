"""A run's models per role are checked by their provider's family before the run starts."""

from __future__ import annotations

import pytest

from harness.engine.bounds import request_problems
from harness.engine.run import ExecutionOptions, RunRequest
from harness.engine.run_models import RunModels, model_problems


def test_models_of_the_providers_family_are_accepted() -> None:
    assert model_problems(RunModels(planner="claude-sonnet-4-6"), "anthropic") == []
    assert model_problems(RunModels(worker="gpt-4.1-mini", judge="llama3:70b"), "openai") == []
    assert model_problems(RunModels(planner="scripted-large"), "scripted") == []


@pytest.mark.parametrize(
    ("provider", "models", "said"),
    [
        ("anthropic", RunModels(planner="gpt-4.1"), "planner_model: provider anthropic serves"),
        ("openai", RunModels(judge="claude-haiku-4-5"), "judge_model: claude-haiku-4-5 is a"),
        ("scripted", RunModels(worker="gpt-4.1"), "worker_model: provider scripted serves"),
        (None, RunModels(planner="a model"), "planner_model: a model name has"),
        (None, RunModels(worker=""), "worker_model: a model name has"),
        ("openai", RunModels(agent="claude-sonnet-4-6"), "agent_model: claude-sonnet-4-6 is a"),
        ("scripted", RunModels(agent="gpt-4.1"), "agent_model: provider scripted serves"),
        (None, RunModels(agent="an agent"), "agent_model: a model name has"),
    ],
)
def test_a_model_the_provider_cannot_serve_is_named_with_its_role(
    provider: str | None, models: RunModels, said: str
) -> None:
    (problem,) = model_problems(models, provider)
    assert problem.startswith(said)


def test_without_a_provider_only_the_name_is_checked_and_the_worker_judges_the_rest() -> None:
    assert model_problems(RunModels(planner="claude-sonnet-4-6", judge="gpt-4.1"), None) == []


def test_a_request_with_a_wrong_family_is_out_of_bounds() -> None:
    request = RunRequest(goal="g", provider="scripted", models=RunModels(planner="claude-x"))
    assert request_problems(request) == [
        "planner_model: provider scripted serves scripted-* models, not claude-x"
    ]


def test_an_agent_model_of_another_family_puts_the_request_out_of_bounds() -> None:
    request = RunRequest(goal="g", provider="openai", models=RunModels(agent="claude-sonnet-4-6"))
    assert request_problems(request) == [
        "agent_model: claude-sonnet-4-6 is a anthropic model; provider openai cannot serve it"
    ]


def test_a_request_that_names_no_agent_model_is_serialized_as_before_the_role() -> None:
    # recorded histories and stored requests have no `agent` key; a new request without one
    # must read the same, and a request that names one keeps it
    assert RunModels(planner="scripted-x").model_dump() == {
        "planner": "scripted-x",
        "worker": None,
        "judge": None,
    }
    assert RunModels.model_validate({"planner": None, "worker": None, "judge": None}).agent is None
    assert RunModels(agent="scripted-agent").named() == {"agent": "scripted-agent"}


def test_the_runs_agent_model_reaches_the_options_its_agent_nodes_run_with() -> None:
    models = RunModels(worker="scripted-writer", agent="scripted-agent")
    request = RunRequest(goal="g", models=models)
    options = ExecutionOptions.of("run-1", request, attempt=1, task=None)
    assert (options.worker_model, options.agent_model) == ("scripted-writer", "scripted-agent")
    assert ExecutionOptions.of("run-1", RunRequest(goal="g"), 1, None).agent_model is None
