"""The pydantic-ai runtime's pure parts: its checkpoint, its usage, the results a wait gives
the call that waited, and the conversation its offline model reads. No server."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage, RunUsage

from activities.pydantic_ai_model import (
    harness_messages,
    offline_model,
)
from harness.catalog.agent_turns import AssistantMessage, ToolResultMessage, UserMessage
from harness.engine.sessions import WaitResult
from workflows.runtimes import runtime_missing
from workflows.runtimes.pydantic_ai import PydanticAIRuntime, build_agent
from workflows.runtimes.pydantic_ai_state import (
    CallResult,
    DeferredCall,
    PydanticAIState,
    checkpoint_of,
    state_of,
    token_usage,
)


def conversation() -> list[ModelRequest | ModelResponse]:
    return [
        ModelRequest(parts=[UserPromptPart("Find the port.\nvalue: kelp")]),
        ModelResponse(
            parts=[ToolCallPart("echo", {"value": "kelp"}, tool_call_id="c1")],
            usage=RequestUsage(input_tokens=10, output_tokens=3),
            model_name="m1",
        ),
        ModelRequest(parts=[ToolReturnPart("echo", {"value": "kelp"}, tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("kelp it is")], model_name="m1"),
    ]


def test_a_checkpoint_round_trips_the_history_as_json_on_any_worker() -> None:
    messages = conversation()
    state = PydanticAIState(
        deferred=[DeferredCall(call_id="c9", tool="ask_user", arguments={"question": "?"})],
        results={"c8": CallResult(ok=True, result={"a": 1})},
        turns=2,
    ).with_history(messages)
    checkpoint = checkpoint_of(state)
    again = state_of(checkpoint.model_validate_json(checkpoint.model_dump_json()))
    assert checkpoint.runtime == "pydantic-ai"
    assert again == state
    assert again.history() == messages
    assert [call.call_id for _, call in again.unresolved()] == ["c9"]


def test_the_next_run_is_given_each_deferred_calls_result_or_its_failure() -> None:
    state = PydanticAIState(
        deferred=[DeferredCall(call_id="a", tool="echo"), DeferredCall(call_id="b", tool="echo")],
        results={
            "a": CallResult(ok=True, result={"value": 1}),
            "b": CallResult(ok=False, error="TIMEOUT: too slow"),
        },
    )
    results = state.deferred_results()
    assert results is not None and results.calls["a"] == {"value": 1}
    failed = results.calls["b"]
    assert isinstance(failed, ToolFailed) and failed.message == "TIMEOUT: too slow"
    assert PydanticAIState().deferred_results() is None  # nothing was deferred


def test_a_runs_usage_is_counted_as_the_harness_counts_tokens_with_its_models() -> None:
    usage = RunUsage(input_tokens=120, output_tokens=30, cache_read_tokens=20, requests=2)
    counted = token_usage(usage, conversation())
    assert (counted.input_tokens, counted.output_tokens, counted.cached_tokens) == (120, 30, 20)
    assert counted.total_tokens == 150 and counted.models == ["m1"]


def runtime() -> PydanticAIRuntime:
    return PydanticAIRuntime(build_agent(offline_model()))


def test_an_answered_question_is_the_result_of_the_call_that_asked_it() -> None:
    waiting = checkpoint_of(
        PydanticAIState(deferred=[DeferredCall(call_id="q", tool="ask_user")], waiting="q")
    )
    answered = WaitResult(call_id="q", tool="ask_user", ok=True, result={"answer": "Lisbon"})
    state = state_of(runtime().apply_wait_result(waiting, answered))
    assert state.results == {"q": CallResult(ok=True, result={"answer": "Lisbon"})}
    assert state.waiting is None and state.unresolved() == []


def test_an_approved_tool_call_is_made_next_slice_and_a_refused_one_is_told_why() -> None:
    waiting = checkpoint_of(
        PydanticAIState(deferred=[DeferredCall(call_id="w", tool="write")], waiting="w")
    )
    approved = runtime().apply_wait_result(waiting, WaitResult(call_id="w", tool="write", ok=True))
    assert state_of(approved).approved == ["w"] and state_of(approved).results == {}
    refused = WaitResult(call_id="w", tool="write", ok=False, error="POLICY_VIOLATION: no")
    state = state_of(runtime().apply_wait_result(waiting, refused))
    assert state.results == {"w": CallResult(ok=False, error="POLICY_VIOLATION: no")}


def test_a_new_message_is_the_prompt_of_the_next_run_and_two_are_sent_together() -> None:
    opened = runtime().open(None, "first")
    again = runtime().open(opened, "second")
    assert state_of(opened).prompt == "first"
    assert state_of(again).prompt == "first\n\nsecond"


def test_the_offline_model_reads_pydantic_ais_history_as_the_harness_conversation() -> None:
    assert harness_messages(conversation()) == [
        UserMessage(text="Find the port.\nvalue: kelp"),
        AssistantMessage(tool_calls=[{"id": "c1", "tool": "echo", "arguments": {"value": "kelp"}}]),
        ToolResultMessage(call_id="c1", tool="echo", ok=True, result={"value": "kelp"}),
        AssistantMessage(text="kelp it is"),
    ]


def test_a_runtime_the_worker_lacks_is_one_line_saying_what_to_install() -> None:
    assert runtime_missing("pydantic-ai") == (
        "the agent runtime 'pydantic-ai' is not installed on the worker: install the extra"
        " (pip install 'durable-harness[pydantic-ai]') and restart the worker"
    )
    assert runtime_missing("langgraph") == (
        "no agent runtime 'langgraph': the runtimes are builtin, pydantic-ai"
    )


def test_a_long_history_is_cut_at_a_users_prompt_and_keeps_every_call_with_its_return() -> None:
    def exchange(n: int) -> list[ModelMessage]:
        return [
            ModelRequest(parts=[UserPromptPart(content=f"question {n} " + "x" * 400)]),
            ModelResponse(parts=[ToolCallPart(tool_name="echo", args={}, tool_call_id=f"c{n}")]),
            ModelRequest(parts=[ToolReturnPart(tool_name="echo", content=n, tool_call_id=f"c{n}")]),
            ModelResponse(parts=[TextPart(content=f"answer {n}")]),
        ]

    history = [message for n in range(6) for message in exchange(n)]
    state = PydanticAIState().with_history(history)
    cut = state.compacted(max_chars=1_500).history()
    first = cut[0]
    assert isinstance(first, ModelRequest) and isinstance(first.parts[0], UserPromptPart)
    assert len(cut) % 4 == 0 and 0 < len(cut) < len(history)
    assert cut[-4:] == history[-4:]  # the newest exchange, whole
    assert state.compacted(max_chars=10**6) is state  # nothing to cut
