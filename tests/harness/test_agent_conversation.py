"""An agent's conversation under a context budget: old tool results are shortened first, each
cut is marked, and the goal and the latest turn are never touched."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.usage import estimate_tokens
from harness.engine.agent_conversation import (
    SUMMARY_HEAD_CHARS,
    Conversation,
    ConversationMessage,
    MessageRole,
    ToolRequest,
    cut_to_mark,
    fit_conversation,
    summarised,
)

GOAL = "Why did checkout latency rise at 14:00?"


def turn(number: int, tool: str, result: str) -> list[ConversationMessage]:
    """One model turn that asked for one call, and that call's result."""
    call_id = f"call-{number}"
    return [
        ConversationMessage.assistant(
            f"turn {number}", [ToolRequest(call_id=call_id, tool=tool, arguments={"n": number})]
        ),
        ConversationMessage.tool_result(call_id, tool, result),
    ]


def conversation(*results: tuple[str, str]) -> Conversation:
    messages = [ConversationMessage.user(GOAL)]
    for number, (tool, result) in enumerate(results):
        messages += turn(number, tool, result)
    return Conversation(messages=messages)


def test_a_conversation_within_its_budget_is_left_as_it_is() -> None:
    talk = conversation(("git_log", "a" * 400), ("metrics", "b" * 400))

    fitted = fit_conversation(talk, budget_tokens=talk.tokens())

    assert fitted.conversation == talk
    assert fitted.cut_results == 0
    assert fitted.within_budget


def test_the_oldest_tool_result_is_summarised_first_with_a_visible_mark() -> None:
    talk = conversation(("git_log", "x" * 1634), ("metrics", "y" * 1634), ("logs", "z" * 100))

    fitted = fit_conversation(talk, budget_tokens=talk.tokens() - 100)

    oldest, newer = fitted.conversation.messages[2], fitted.conversation.messages[4]
    assert oldest.text == "x" * SUMMARY_HEAD_CHARS + "\n[cut: 1,234 characters of git_log's result]"
    assert newer == talk.messages[4]
    assert fitted.cut_results == 1
    assert fitted.within_budget


def test_results_are_cut_to_their_mark_when_summaries_are_not_enough() -> None:
    talk = conversation(("git_log", "x" * 5000), ("metrics", "y" * 5000), ("logs", "z" * 10))

    fitted = fit_conversation(talk, budget_tokens=100)

    messages = fitted.conversation.messages
    assert messages[2].text == "[cut: 5,000 characters of git_log's result]"
    assert messages[4].text == "[cut: 5,000 characters of metrics's result]"
    assert fitted.within_budget


def test_the_goal_and_the_latest_turn_are_never_cut_even_over_budget() -> None:
    talk = conversation(("git_log", "x" * 2000), ("logs", "z" * 8000))

    fitted = fit_conversation(talk, budget_tokens=10)

    messages = fitted.conversation.messages
    assert messages[0] == talk.messages[0]
    assert messages[3:] == talk.messages[3:]
    assert messages[2].text == "[cut: 2,000 characters of git_log's result]"
    assert not fitted.within_budget


def test_a_cut_result_keeps_its_place_and_call_id() -> None:
    talk = conversation(("git_log", "x" * 5000), ("logs", "z"))

    cut = fit_conversation(talk, budget_tokens=50).conversation.messages[2]

    assert (cut.role, cut.call_id, cut.tool) == (MessageRole.TOOL, "call-0", "git_log")


def test_fitting_a_fitted_conversation_counts_the_original_length() -> None:
    talk = conversation(("git_log", "x" * 5000), ("metrics", "y" * 3000), ("logs", "z"))
    summarised = fit_conversation(talk, budget_tokens=talk.tokens() - 1000).conversation
    assert summarised.messages[2].cut is not None and summarised.messages[2].cut.head_kept

    fitted = fit_conversation(summarised, budget_tokens=60)

    assert fitted.conversation.messages[2].text == "[cut: 5,000 characters of git_log's result]"


def test_the_opening_message_carries_the_nodes_context() -> None:
    opening = ConversationMessage.user(GOAL, [{"cpu": 0.97}, "oom"])

    assert opening.text.startswith(GOAL)
    assert '"cpu": 0.97' in opening.text and '"oom"' in opening.text


def test_a_message_is_measured_by_its_text_and_its_tool_calls() -> None:
    plain = ConversationMessage.assistant("look at the logs")
    calling = ConversationMessage.assistant(
        "look at the logs", [ToolRequest(call_id="c", tool="logs", arguments={"q": "error"})]
    )

    assert plain.tokens() == estimate_tokens("look at the logs")
    assert calling.tokens() > plain.tokens()


texts = st.one_of(st.text(max_size=50), st.integers(0, 6000).map(lambda n: "é" * n))
"""Short texts of any characters, and long ones (which hypothesis would seldom draw itself)."""
results = st.lists(st.tuples(st.sampled_from(["git_log", "metrics", "logs"]), texts), max_size=8)


@settings(max_examples=100, deadline=None)
@given(results=results, budget=st.integers(min_value=1, max_value=4000))
def test_a_fitted_conversation_keeps_the_goal_and_latest_turn_and_fits_when_it_can(
    results: list[tuple[str, str]], budget: int
) -> None:
    talk = conversation(*results)
    start = talk.latest_turn_start()

    fitted = fit_conversation(talk, budget)

    messages = fitted.conversation.messages
    assert len(messages) == len(talk.messages)
    assert messages[0] == talk.messages[0]
    assert messages[start:] == talk.messages[start:]
    assert fitted.tokens == fitted.conversation.tokens() <= max(budget, talk.tokens())
    smallest = fit_conversation(talk, 0).tokens
    assert fitted.within_budget == (fitted.tokens <= budget)
    assert fitted.within_budget or fitted.tokens == smallest
    if budget >= smallest:
        assert fitted.within_budget


def depth(message: ConversationMessage) -> int:
    """0: whole, 1: summarised to its head, 2: cut to its mark."""
    return 0 if message.cut is None else (1 if message.cut.head_kept else 2)


def shortens(message: ConversationMessage, level: int) -> bool:
    """Whether the fit's pass `level` (1: summaries, 2: marks) shortens this original result; a
    result no longer than its summary counts as summarised already."""
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
    old = talk.cuttable()

    fitted = fit_conversation(talk, budget).conversation.messages

    for position, newer in enumerate(old):
        for older in old[:position]:
            for level in (1, 2):
                if depth(fitted[newer]) >= level and shortens(talk.messages[older], level):
                    assert depth(fitted[older]) >= level
