"""The models a run asks for, per role, instead of its worker's: the planner plans, the worker
writes inside tools, the judge gives the verdict, the agent takes agent nodes' tool-use turns. A
role left unset uses the worker's model for it (HARNESS_PLANNER_MODEL, HARNESS_WORKER_MODEL,
HARNESS_JUDGE_MODEL, HARNESS_AGENT_MODEL).

Which models a provider serves is checked here by family, before the run starts, when the run
names its provider (a Claude model is not an OpenAI model). The worker serves a run with a cost
limit only models it can price (activities.llm.pricing), so the limit holds."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from harness.engine.compact import unless_none

MAX_MODEL_CHARS = 100
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]*")

SCRIPTED_FAMILY = "scripted-"
"""The offline provider answers to any name of its family (the name labels its replies)."""
FAMILIES: dict[str, str] = {"scripted": SCRIPTED_FAMILY, "anthropic": "claude-"}
"""The prefix of the models each provider serves; an OpenAI-compatible endpoint serves any
name outside the other families."""


class RunModels(BaseModel):
    planner: str | None = Field(default=None, description="The model that plans this run.")
    worker: str | None = Field(default=None, description="The model tools write with.")
    judge: str | None = Field(default=None, description="The model that judges the report.")
    agent: str | None = unless_none(
        description="The model of the run's agent nodes (a node's own `model` argument wins)."
    )
    """Left out when unset, so a request that names no agent model is the one it was before
    the role existed."""

    def named(self) -> dict[str, str]:
        """The roles given, with their models."""
        return {role: model for role, model in self.model_dump().items() if model is not None}


def model_problems(models: RunModels, provider: str | None) -> list[str]:
    """What is wrong with the models named, for `provider` when the run names one."""
    problems = []
    for role, model in models.named().items():
        if len(model) > MAX_MODEL_CHARS or not _MODEL_NAME.fullmatch(model):
            problems.append(
                f"{role}_model: a model name has 1 to {MAX_MODEL_CHARS} letters, digits and "
                "._:/@- (e.g. claude-sonnet-4-6)"
            )
        elif provider is not None and (problem := family_problem(provider, model)):
            problems.append(f"{role}_model: {problem}")
    return problems


def family_problem(provider: str, model: str) -> str | None:
    """Why `provider` cannot serve `model`, judged by the model's family; None if it may."""
    family = FAMILIES.get(provider)
    if family is not None:
        if model.startswith(family):
            return None
        return f"provider {provider} serves {family}* models, not {model}"
    owner = next((name for name, prefix in FAMILIES.items() if model.startswith(prefix)), None)
    if owner is not None:
        return f"{model} is a {owner} model; provider {provider} cannot serve it"
    return None
