"""What a tool may ask of a language model, without knowing which provider answers."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from harness.core.usage import TokenUsage


class TextRequest(BaseModel):
    """A writing task for the worker model.

    `draft` is the deterministic rendering of the same facts from the tool's own template: the
    offline provider returns it as the answer, real providers may ignore it.
    """

    system: str
    prompt: str
    draft: str
    max_output_tokens: int = 1024
    economy: bool = Field(
        default=False, description="Under budget pressure: the provider's fallback model writes."
    )
    model: str | None = Field(default=None, description="The run's worker model, if it names one.")
    cost_limited: bool = Field(
        default=False,
        exclude_if=lambda limited: not limited,
        description="The run has a cost limit: a model no price table lists is refused.",
    )


class TextReply(BaseModel):
    text: str
    model: str
    usage: TokenUsage


class TextWriter(Protocol):
    async def write(self, request: TextRequest) -> TextReply: ...


class JudgeRequest(BaseModel):
    """What the critic sees: the goal, the report, and the scenario's rubric. Never the worker's
    own prompt or reasoning."""

    goal: str
    report: str
    criteria: list[str]
    evidence_terms: list[str] = Field(
        default_factory=list,
        description="Facts from the tool results that a faithful report repeats verbatim.",
    )
    model: str | None = Field(default=None, description="The run's judge model, if it names one.")
    cost_limited: bool = Field(
        default=False,
        exclude_if=lambda limited: not limited,
        description="The run has a cost limit: a model no price table lists is refused.",
    )


class JudgeReply(BaseModel):
    passed: bool
    score: float = Field(ge=0, le=1)
    reasons: list[str]
    model: str
    usage: TokenUsage
