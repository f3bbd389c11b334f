"""`@tool` functions through the tool activity, as a worker runs them: a ToolError maps onto the
error classes that drive recovery, any other exception onto TOOL_EXECUTION_FAILED with its
message redacted; and a run of them on the dev server, planned offline, succeeds.

The weather pack is registered in the process's pack registry for the test (an installed pack
is found by its entry point instead)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.llm import ProviderRegistry, ScriptedProvider
from activities.tool_runner import ToolActivities
from harness.core.errors import ErrorCode
from harness.engine.dag import NodeStatus
from harness.engine.messages import ToolCallRequest, ToolCallResult
from harness.engine.run import RunPhase, RunRequest
from scenarios.registry import registered
from tests.durable_harness.weather import WEATHER
from tests.support import execute_run, running_worker


@pytest.fixture
def weather() -> Iterator[str]:
    with registered(WEATHER):
        yield WEATHER.name


async def _run_tool(scenario: str, tool: str, **arguments: object) -> ToolCallResult:
    activities = ToolActivities(ProviderRegistry.always(ScriptedProvider()))
    request = ToolCallRequest(
        run_id="run-1", scenario=scenario, node_id="n1", tool=tool, arguments=dict(arguments)
    )
    result: ToolCallResult = await ActivityEnvironment().run(activities.run_tool, request)
    return result


async def _failure(scenario: str, tool: str, **arguments: object) -> ApplicationError:
    with pytest.raises(ApplicationError) as failed:
        await _run_tool(scenario, tool, **arguments)
    return failed.value


async def test_a_typed_tools_result_comes_back_from_the_activity_as_json(weather: str) -> None:
    result = await _run_tool(weather, "wind_speed", station="KJFK")
    assert result.result == {"station": "KJFK", "speed": 4.0, "unit": "m/s"}


async def test_the_activity_gives_a_typed_tool_its_run_and_node(weather: str) -> None:
    result = await _run_tool(weather, "seen_async", label="x")
    assert isinstance(result.result, dict)
    assert (result.result["run_id"], result.result["node_id"]) == ("run-1", "n1")


async def test_a_tool_error_by_name_fails_the_call_with_its_code_not_retried(
    weather: str,
) -> None:
    failure = await _failure(weather, "wind_speed", station="LFPG")
    assert (failure.type, failure.non_retryable) == (ErrorCode.MISSING_INFO.value, True)
    assert failure.message == "no weather station 'LFPG'"


async def test_a_transient_tool_error_fails_the_call_as_retryable(weather: str) -> None:
    failure = await _failure(weather, "busy_station", station="EHAM")
    assert (failure.type, failure.non_retryable) == (ErrorCode.RATE_LIMITED.value, False)


async def test_any_other_exception_fails_the_call_with_its_message_redacted(weather: str) -> None:
    failure = await _failure(weather, "leaky", station="EHAM")
    assert (failure.type, failure.non_retryable) == (ErrorCode.TOOL_EXECUTION_FAILED.value, True)
    assert "hunter22" not in failure.message
    assert failure.message.startswith("leaky failed unexpectedly: RuntimeError: could not log in")


async def test_a_result_its_return_type_refuses_fails_the_call(weather: str) -> None:
    failure = await _failure(weather, "wrong_result", station="EHAM")
    assert failure.type == ErrorCode.TOOL_EXECUTION_FAILED.value
    assert "wrong_result returned what its return type refuses" in failure.message


async def test_arguments_the_signature_refuses_fail_the_call_as_invalid(weather: str) -> None:
    failure = await _failure(weather, "wind_speed", unit="kn")
    assert failure.type == ErrorCode.INVALID_ARGUMENT.value
    assert failure.message == "wind_speed: station: Field required"


async def test_a_run_of_typed_tools_planned_offline_succeeds_with_their_results(
    client: Client, task_queue: str, weather: str
) -> None:
    request = RunRequest(goal="How windy is it at EHAM and KJFK?", scenario=weather)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)

    assert result.status is RunPhase.SUCCEEDED, result.error
    assert [(node.id, node.status) for node in result.nodes] == [
        ("read-EHAM", NodeStatus.DONE),
        ("read-KJFK", NodeStatus.DONE),
        ("report", NodeStatus.DONE),
    ]
    assert result.report == "# Wind\n- EHAM: 7.5 m/s\n- KJFK: 4.0 m/s"
