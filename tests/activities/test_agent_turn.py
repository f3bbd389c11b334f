"""The agent-turn activity: the request in, the run's provider's reply out, its usage on it; a
conversation no API accepts fails at once, without a retry. (That the worker registers it on the
model queue is tests/test_worker_queues.py's to hold.)"""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.agent_turn import AgentTurnActivities
from activities.llm import ProviderRegistry, ScriptedProvider
from harness.catalog.agent_turns import (
    AgentMessage,
    AgentTurnRequest,
    AssistantMessage,
    OfferedTool,
    TurnStop,
    UserMessage,
)
from harness.core.errors import ErrorCode
from scenarios import get_scenario

TOOLS = [OfferedTool.of(spec) for spec in get_scenario("cities").catalog().tools[:2]]


def turn_request(*messages: AgentMessage) -> AgentTurnRequest:
    return AgentTurnRequest(
        run_id="run-1",
        node_id="paris",
        turn=1,
        system="You look up facts about cities.",
        messages=list(messages),
        tools=TOOLS,
        provider="scripted",
    )


async def test_the_activity_returns_the_providers_turn_with_its_usage() -> None:
    activities = AgentTurnActivities(ProviderRegistry(default="scripted"))
    request = turn_request(UserMessage(text="Facts about Paris.\ncity: Paris"))
    reply = await ActivityEnvironment().run(activities.agent_turn, request)
    assert reply == await ScriptedProvider().agent_turn(request)
    assert reply.stop is TurnStop.TOOL_USE
    assert [call.tool for call in reply.tool_calls] == ["get_population", "get_timezone"]
    assert reply.usage.input_tokens > 0


async def test_a_conversation_no_api_accepts_fails_the_activity_without_a_retry() -> None:
    activities = AgentTurnActivities(ProviderRegistry(default="scripted"))
    request = turn_request(UserMessage(text="Paris?"), AssistantMessage(text="Paris is big."))
    with pytest.raises(ApplicationError) as raised:
        await ActivityEnvironment().run(activities.agent_turn, request)
    assert raised.value.type == ErrorCode.INVALID_ARGUMENT.value
    assert raised.value.non_retryable
    assert "ends with the assistant" in raised.value.message
