"""`harness run --agent-model` as the other roles' flags: parsed into the run's request, and a
model the run's provider cannot serve refused before anything is sent (no server needed)."""

from __future__ import annotations

import pytest

from durable_harness import InvalidInput
from infra.settings import Settings
from starter.cli.app import build_parser
from starter.cli.commands import run_request

GOAL = "Compare Paris and Tokyo"


def test_agent_model_names_the_runs_agent_model_beside_the_other_roles() -> None:
    args = build_parser().parse_args(
        ["run", GOAL, "--agent-model", "scripted-agent", "--judge-model", "scripted-judge"]
    )
    assert run_request(args, Settings()).models.named() == {
        "judge": "scripted-judge",
        "agent": "scripted-agent",
    }
    plain = build_parser().parse_args(["run", GOAL])
    assert run_request(plain, Settings()).models.agent is None


def test_an_agent_model_the_named_provider_cannot_serve_is_refused_naming_the_role() -> None:
    args = build_parser().parse_args(
        ["run", GOAL, "--provider", "scripted", "--agent-model", "gpt-4.1"]
    )
    with pytest.raises(InvalidInput) as refused:
        run_request(args, Settings())
    assert str(refused.value) == (
        "cannot start this run: agent_model: provider scripted serves scripted-* models, "
        "not gpt-4.1"
    )
