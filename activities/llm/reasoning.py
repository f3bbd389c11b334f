"""Reasoning models: how hard each role thinks, the room its token limit leaves for thinking,
and the reasoning tokens a reply reports.

One setting per role (HARNESS_PLANNER_REASONING, HARNESS_WRITER_REASONING,
HARNESS_JUDGE_REASONING, HARNESS_AGENT_REASONING): `off`, `low`, `medium` or `high`; unset, the
request says nothing and the model reasons as it does by default. OpenAI gets it as
`reasoning_effort` (`off` is `none`), Anthropic as extended thinking with a token budget
(`thinking={"type": "enabled", "budget_tokens": N}`; the models whose SDK asks for adaptive
thinking get `{"type": "adaptive"}`). Reasoning tokens count against the output limit, so the
writer's, the judge's and the planner's limits are raised by the role's reasoning budget (unset:
by the medium one, since reasoning models reason by default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import anthropic.types
import openai.types
from anthropic._data import MODELS_TO_WARN_WITH_THINKING_ENABLED

from activities.llm.base import ProviderConfigError


class Effort(StrEnum):
    OFF = "off"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Role(StrEnum):
    PLANNER = "planner"
    WRITER = "writer"
    JUDGE = "judge"
    AGENT = "agent"


VARIABLES: dict[Role, str] = {
    Role.PLANNER: "HARNESS_PLANNER_REASONING",
    Role.WRITER: "HARNESS_WRITER_REASONING",
    Role.JUDGE: "HARNESS_JUDGE_REASONING",
    Role.AGENT: "HARNESS_AGENT_REASONING",
}
BUDGETS: dict[Effort, int] = {
    Effort.OFF: 0,
    Effort.LOW: 2_048,
    Effort.MEDIUM: 8_192,
    Effort.HIGH: 24_576,
}
"""Tokens set aside for reasoning: Anthropic's thinking budget (at least 1,024), and what the
output limit is raised by on either provider."""
_ROOMY = (Role.PLANNER, Role.WRITER, Role.JUDGE)
"""The roles whose output limit is fixed by the harness; an agent's turn is limited by its
node's budget, which reasoning tokens are charged to as any others."""


@dataclass(frozen=True)
class Reasoning:
    """The effort of each role; None: unset, the request says nothing."""

    efforts: Mapping[Role, Effort | None]

    def effort(self, role: Role) -> Effort | None:
        return self.efforts.get(role)

    def room(self, role: Role, limit: int, *, reasons_unasked: bool = False) -> int:
        """`limit` output tokens of answer, plus room for the role's reasoning. Unset, the
        writer and the judge get the medium room only from a model that reasons unasked
        (`reasons_unasked`: OpenAI's own API, whose default models reason by default); a local
        server's model, or Claude without thinking, gets the tool's limit as it is."""
        if role not in _ROOMY:
            return limit
        effort = self.effort(role)
        if effort is None:
            unasked = reasons_unasked and role is not Role.PLANNER
            return limit + BUDGETS[Effort.MEDIUM] if unasked else limit
        return limit + BUDGETS[effort]

    def openai_options(self, role: Role) -> dict[str, Any]:
        """The Chat Completions arguments of `role`'s reasoning."""
        effort = self.effort(role)
        if effort is None:
            return {}
        return {"reasoning_effort": "none" if effort is Effort.OFF else effort.value}

    def anthropic_options(self, role: Role, model: str) -> dict[str, Any]:
        """The Messages API arguments of `role`'s thinking (none when it is off or unset)."""
        effort = self.effort(role)
        if effort is None or effort is Effort.OFF:
            return {}
        if model in MODELS_TO_WARN_WITH_THINKING_ENABLED:
            return {"thinking": {"type": "adaptive"}}
        return {"thinking": {"type": "enabled", "budget_tokens": BUDGETS[effort]}}


NO_REASONING_SETTINGS = Reasoning({})


def read_reasoning(env: Mapping[str, str], provider: str) -> Reasoning:
    """Each role's effort from the environment; a bad value is a one-line configuration error."""
    efforts: dict[Role, Effort | None] = {}
    for role, variable in VARIABLES.items():
        given = env.get(variable, "").strip().lower()
        if not given:
            continue
        try:
            efforts[role] = Effort(given)
        except ValueError:
            choices = ", ".join(effort.value for effort in Effort)
            raise ProviderConfigError(
                f"{variable}={given}: expected one of {choices} (or unset: the model's default)"
            ) from None
    agent = efforts.get(Role.AGENT)
    if provider == "anthropic" and agent not in (None, Effort.OFF):
        raise ProviderConfigError(
            f"{VARIABLES[Role.AGENT]}={agent}: the anthropic provider cannot think in an "
            "agent's tool-use turns (each turn would have to send its thinking back); unset it"
        )
    return Reasoning(efforts)


def openai_reasoning_tokens(usage: openai.types.CompletionUsage) -> int:
    details = usage.completion_tokens_details
    return (details.reasoning_tokens or 0) if details else 0


def anthropic_reasoning_tokens(usage: anthropic.types.Usage) -> int:
    """The thinking tokens of a reply, when the API reports them (they are part of
    `output_tokens` either way)."""
    details = usage.output_tokens_details
    return details.thinking_tokens if details else 0
