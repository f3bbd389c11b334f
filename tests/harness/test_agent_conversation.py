"""An agent's conversation under a context budget: old tool results are shortened first, each
cut is marked, and the goal and the latest turn are never touched."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import JsonValue

from harness.catalog.agent_turns import (
    AgentMessage,
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    conversation_problems,
)
from harness.core.usage import estimate_tokens
from harness.engine.agent_conversation import (
    SUMMARY_HEAD_CHARS,
    compact_session,
    conversation_tokens,
    cut_to_mark,
    cuttable,
    fit_conversation,
    latest_turn_start,
    opening_message,
    summarised,
)

GOAL = "Why did checkout latency rise at 14:00?"


def turn(number: int, tool: str, result: JsonValue) -> list[AgentMessage]:
    """One model turn that asked for one call, and that call's result."""
    call_id = f"call-{number}"
    call = ToolCall(id=call_id, tool=tool, arguments={"n": number})
    return [
        AssistantMessage(text=f"turn {number}", tool_calls=[call]),
        ToolResultMessage(call_id=call_id, tool=tool, ok=True, result=result),
    ]


def conversation(*results: tuple[str, JsonValue]) -> list[AgentMessage]:
    messages: list[AgentMessage] = [opening_message(GOAL)]
    for number, (tool, result) in enumerate(results):
        messages += turn(number, tool, result)
    return messages


def result_of(message: AgentMessage) -> JsonValue:
    assert isinstance(message, ToolResultMessage)
    return message.result


def test_a_conversation_within_its_budget_is_left_as_it_is() -> None:
    talk = conversation(("git_log", "a" * 400), ("metrics", "b" * 400))

    fitted = fit_conversation(talk, budget_tokens=conversation_tokens(talk))

    assert fitted.messages == talk
    assert fitted.cut_results == 0
    assert fitted.within_budget


def test_the_oldest_tool_result_is_summarised_first_with_a_visible_mark() -> None:
    talk = conversation(("git_log", "x" * 1634), ("metrics", "y" * 1634), ("logs", "z" * 100))

    fitted = fit_conversation(talk, budget_tokens=conversation_tokens(talk) - 100)

    assert result_of(fitted.messages[2]) == (
        "x" * SUMMARY_HEAD_CHARS + "\n[cut: 1,234 characters of git_log's result]"
    )
    assert fitted.messages[4] == talk[4]
    assert fitted.cut_results == 1
    assert fitted.within_budget


def test_a_result_that_is_not_text_is_cut_as_its_json() -> None:
    rows: list[JsonValue] = [{"sha": f"{n:040d}", "message": "fix"} for n in range(40)]
    talk = conversation(("git_log", rows), ("logs", "z"))

    cut = result_of(fit_conversation(talk, conversation_tokens(talk) - 400).messages[2])

    assert isinstance(cut, str)
    assert cut.startswith('[{"sha": "0000')
    assert cut.endswith("characters of git_log's result]")


def test_results_are_cut_to_their_mark_when_summaries_are_not_enough() -> None:
    talk = conversation(("git_log", "x" * 5000), ("metrics", "y" * 5000), ("logs", "z" * 10))

    fitted = fit_conversation(talk, budget_tokens=fit_conversation(talk, 0).tokens)

    assert result_of(fitted.messages[2]) == "[cut: 5,000 characters of git_log's result]"
    assert result_of(fitted.messages[4]) == "[cut: 5,000 characters of metrics's result]"
    assert fitted.within_budget


def test_the_goal_and_the_latest_turn_are_never_cut_even_over_budget() -> None:
    talk = conversation(("git_log", "x" * 2000), ("logs", "z" * 8000))

    fitted = fit_conversation(talk, budget_tokens=10)

    assert fitted.messages[0] == talk[0]
    assert fitted.messages[3:] == talk[3:]
    assert result_of(fitted.messages[2]) == "[cut: 2,000 characters of git_log's result]"
    assert not fitted.within_budget


def test_a_failed_calls_error_is_never_cut() -> None:
    talk = conversation(("git_log", "x"), ("logs", "z"))
    talk[2] = ToolResultMessage(call_id="call-0", tool="git_log", ok=False, error="e" * 5000)

    fitted = fit_conversation(talk, budget_tokens=10)

    assert fitted.messages[2] == talk[2]


def test_a_cut_result_keeps_its_place_and_call_id_so_the_apis_accept_it() -> None:
    talk = conversation(("git_log", "x" * 5000), ("logs", "z"))

    fitted = fit_conversation(talk, budget_tokens=50).messages

    cut = fitted[2]
    assert isinstance(cut, ToolResultMessage)
    assert (cut.call_id, cut.tool, cut.ok) == ("call-0", "git_log", True)
    assert conversation_problems(fitted, []) == []


def test_fitting_a_fitted_conversation_counts_the_original_length() -> None:
    talk = conversation(("git_log", "x" * 5000), ("metrics", "y" * 3000), ("logs", "z"))
    once = fit_conversation(talk, budget_tokens=conversation_tokens(talk) - 1000).messages
    assert str(result_of(once[2])).endswith("[cut: 4,600 characters of git_log's result]")

    twice = fit_conversation(once, budget_tokens=60).messages

    assert result_of(twice[2]) == "[cut: 5,000 characters of git_log's result]"
    assert fit_conversation(twice, budget_tokens=60).messages == twice


def test_the_opening_message_carries_the_nodes_context() -> None:
    opening = opening_message(GOAL, [{"cpu": 0.97}, "oom"])

    assert opening.text.startswith(GOAL)
    assert '"cpu": 0.97' in opening.text and '"oom"' in opening.text


def test_a_conversation_is_measured_as_the_offline_provider_counts_it() -> None:
    talk = conversation(("git_log", "x" * 5000))

    assert conversation_tokens(talk) == sum(
        estimate_tokens(message.model_dump_json()) for message in talk
    )


texts = st.one_of(st.text(max_size=50), st.integers(0, 6000).map(lambda n: "é" * n))
"""Short texts of any characters, and long ones (which hypothesis would seldom draw itself)."""
results = st.lists(st.tuples(st.sampled_from(["git_log", "metrics", "logs"]), texts), max_size=8)


@settings(max_examples=100, deadline=None)
@given(results=results, budget=st.integers(min_value=1, max_value=4000))
def test_a_fitted_conversation_keeps_the_goal_and_latest_turn_and_fits_when_it_can(
    results: list[tuple[str, str]], budget: int
) -> None:
    talk = conversation(*results)
    start = latest_turn_start(talk)

    fitted = fit_conversation(talk, budget)

    assert len(fitted.messages) == len(talk)
    assert fitted.messages[0] == talk[0]
    assert fitted.messages[start:] == talk[start:]
    assert fitted.tokens == conversation_tokens(fitted.messages)
    assert fitted.tokens <= max(budget, conversation_tokens(talk))
    assert fitted.within_budget == (fitted.tokens <= budget)
    smallest = fit_conversation(talk, 0).tokens
    assert fitted.within_budget or fitted.tokens == smallest
    assert conversation_problems(fitted.messages, []) == conversation_problems(talk, [])


def depth(message: AgentMessage) -> int:
    """0: whole, 1: summarised to its head, 2: cut to its mark."""
    result = str(result_of(message))
    if not result.endswith("'s result]") or "[cut: " not in result:
        return 0
    return 2 if result.startswith("[cut: ") else 1


def shortens(message: AgentMessage, level: int) -> bool:
    """Whether the fit's pass `level` (1: summaries, 2: marks) shortens this original result; a
    result no longer than its summary counts as summarised already."""
    assert isinstance(message, ToolResultMessage)
    head = summarised(message)
    if level == 1:
        return head is not message
    return cut_to_mark(head) is not head


@settings(max_examples=100, deadline=None)
@given(results=results, budget=st.integers(min_value=1, max_value=4000))
def test_a_newer_result_is_cut_only_once_every_older_one_is(
    results: list[tuple[str, str]], budget: int
) -> None:
    talk = conversation(*results)
    old = cuttable(talk)

    fitted = fit_conversation(talk, budget).messages

    for position, newer in enumerate(old):
        for older in old[:position]:
            for level in (1, 2):
                if depth(fitted[newer]) >= level and shortens(talk[older], level):
                    assert depth(fitted[older]) >= level


def test_a_long_session_is_cut_by_whole_exchanges_and_says_so_keeping_the_newest() -> None:
    def exchange(n: int) -> list[AgentMessage]:
        call = ToolCall(id=f"c{n}", tool="echo", arguments={})
        return [
            UserMessage(text=f"question {n} " + "x" * 400),
            AssistantMessage(tool_calls=[call]),
            ToolResultMessage(call_id=f"c{n}", tool="echo", ok=True, result=n),
            AssistantMessage(text=f"answer {n}"),
        ]

    messages = [message for n in range(6) for message in exchange(n)]
    cut = compact_session(messages, max_chars=1_500)
    first = cut[0]
    assert isinstance(first, UserMessage)
    assert (
        first.text.startswith("(")
        and "earlier message(s) of this conversation were cut" in first.text
    )
    assert len(cut) % 4 == 0 and 0 < len(cut) < len(messages)
    assert cut[1:] == messages[len(messages) - len(cut) + 1 :]  # whole exchanges, newest last
    assert compact_session(messages, max_chars=10**6) == messages
