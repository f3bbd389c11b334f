"""The provider seam: planner and writer behind one interface, whatever model answers."""

from __future__ import annotations

from typing import Protocol

from harness.llm import TextReply, TextRequest
from harness.messages import PlanRequest, PlanResponse
from scenarios.base import Scenario


class LLMProvider(Protocol):
    name: str

    async def plan(self, request: PlanRequest, scenario: Scenario) -> PlanResponse:
        """A plan for the goal over the catalog; raises PlanningError when it cannot make one."""
        ...

    async def write(self, request: TextRequest) -> TextReply: ...


class ProviderConfigError(Exception):
    """The provider configuration cannot work (unknown provider, missing key)."""
