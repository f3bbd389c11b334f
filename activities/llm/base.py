"""The provider seam: planner, writer, judge and agent behind one interface, whichever model
answers."""

from __future__ import annotations

from typing import Protocol

from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage
from harness.engine.messages import PlanRequest, PlanResponse
from scenarios.base import Pack


class LLMProvider(Protocol):
    name: str

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        """A plan for the goal over the catalog; raises PlanningError when it cannot make one."""
        ...

    async def write(self, request: TextRequest) -> TextReply: ...

    async def judge(self, request: JudgeRequest) -> JudgeReply: ...

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        """One turn of an agent's tool-use loop: the calls the model asks for, or its answer."""
        ...


class ProviderConfigError(Exception):
    """The provider configuration cannot work (unknown provider, missing key)."""


class ProviderError(Exception):
    """A model call failed. The code decides retry (RATE_LIMITED, TIMEOUT), replan
    (INVALID_MODEL_OUTPUT: output that is not a valid plan) or halt (AUTH_FAILED for a rejected
    key). `retry_after` (seconds) is honoured as the next retry delay. `usage` is what the failed
    call cost (reported by the server, else estimated), so that the budget is charged for it."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        retry_after: float | None = None,
        usage: TokenUsage | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.usage = usage
