"""The agent loop's pure rules between turns: the id of each call, the tools offered, what a
turn may cost and write, what a wait asks and what the model is told of it, and the answer of
a loop that stopped early."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.catalog.agent_turns import (
    DEFAULT_TURN_OUTPUT_TOKENS,
    AgentMessage,
    AssistantMessage,
    ToolCall,
    UserMessage,
)
from harness.engine.agent_allowance import AgentAllowance
from harness.engine.agent_loop import (
    ASK_USER,
    CALL_RESULT_CHARS,
    CALL_RESULTS_CHARS,
    REQUEST_APPROVAL,
    AgentWaitAnswer,
    best_answer,
    bounded_calls,
    call_node_id,
    cost_short,
    offered_tools,
    output_allowed,
    tokens_left,
    turn_need,
    wait_of,
    wait_outcome,
)
from harness.engine.agent_node import AgentStop, AgentToolCall
from harness.engine.budget import BudgetLimits, BudgetUsage
from harness.waits.wait_book import WaitKind, WaitStatus
from tests.factories import synthetic_catalog


def allowance(
    tokens: int | None = None, used: int = 0, cost: float | None = None
) -> AgentAllowance:
    limits = BudgetLimits(max_tokens=tokens, max_cost_usd=cost)
    return AgentAllowance(limits=limits, usage=BudgetUsage(tokens=used, cost_usd=cost or 0.0))


def test_a_calls_id_names_its_node_turn_and_place_from_one() -> None:
    assert call_node_id("scout", 3, 0) == "scout.t3.c1"


def test_the_nodes_tools_are_offered_first_then_the_loops_own_waits() -> None:
    delay = synthetic_catalog().get("delay")
    assert delay is not None
    own = delay.model_copy(update={"name": ASK_USER})  # a pack's own ask_user wins
    assert [t.name for t in offered_tools([delay])] == ["delay", ASK_USER, REQUEST_APPROVAL]
    assert [t.name for t in offered_tools([own])] == [ASK_USER, REQUEST_APPROVAL]
    assert offered_tools([own])[0].description == delay.description


def test_a_turn_needs_its_prompt_and_what_it_may_write() -> None:
    messages: list[AgentMessage] = [UserMessage(text="find it")]
    tools = offered_tools([])
    assert turn_need(messages, tools, 100) == turn_need(messages, tools, 0) + 100
    assert turn_need([*messages, UserMessage(text="x" * 400)], tools, 0) > turn_need(
        messages, tools, 0
    )


def test_a_turn_writes_the_usual_most_or_what_the_allowance_has_left_after_its_prompt() -> None:
    assert output_allowed(allowance(), 10_000) == DEFAULT_TURN_OUTPUT_TOKENS
    assert output_allowed(allowance(tokens=10_000, used=1_000), 500) == DEFAULT_TURN_OUTPUT_TOKENS
    assert output_allowed(allowance(tokens=2_000, used=1_000), 500) == 500
    assert output_allowed(allowance(tokens=1_000, used=900), 500) == 0


def test_what_is_left_counts_only_limited_parts() -> None:
    assert tokens_left(allowance()) == 0
    assert tokens_left(allowance(tokens=100, used=30)) == 70
    assert cost_short(allowance(), 1.0) == 0.0  # cost not limited
    assert cost_short(allowance(cost=0.5), 0.01) == 0.01  # used as much as granted
    fresh = AgentAllowance(limits=BudgetLimits(max_cost_usd=0.5))
    assert cost_short(fresh, 0.2) == 0.0 and cost_short(fresh, 0.7) == pytest.approx(0.2)


def test_a_loop_that_stopped_early_answers_with_the_last_thing_said_and_why() -> None:
    said: list[AgentMessage] = [
        UserMessage(text="g"),
        AssistantMessage(text="first look", tool_calls=[ToolCall(id="1", tool="echo")]),
        AssistantMessage(text="  "),
    ]
    assert best_answer(said, AgentStop.BUDGET, 2).startswith("first look\n\n(stopped after 2")
    assert "budget" in best_answer(said, AgentStop.BUDGET, 2)
    assert best_answer([], AgentStop.MAX_TURNS, 8) == (
        "(stopped after 8 turn(s), its most, without a final answer)"
    )


def test_the_loops_own_tools_open_a_user_input_or_an_approval_wait() -> None:
    ask = ToolCall(id="1", tool=ASK_USER, arguments={"question": "Which port?"})
    approve = ToolCall(
        id="2", tool=REQUEST_APPROVAL, arguments={"action": "restart", "reason": "stuck"}
    )
    assert wait_of(ask) == (WaitKind.USER_INPUT, "Which port?")
    assert wait_of(approve) == (WaitKind.APPROVAL, "approve restart? reason: stuck")
    with pytest.raises(ValidationError):
        wait_of(ToolCall(id="3", tool=ASK_USER, arguments={}))


@pytest.mark.parametrize(
    ("kind", "answer", "told"),
    [
        (WaitKind.USER_INPUT, AgentWaitAnswer(ask_id=1, wait_id="w", status=WaitStatus.DELIVERED,
                                              payload="Brest"),
         (True, {"answer": "Brest", "wait": "w"}, "")),
        (WaitKind.USER_INPUT, AgentWaitAnswer(ask_id=1, wait_id="w", status=WaitStatus.EXPIRED),
         (False, None, "no answer: wait w expired")),
        (WaitKind.APPROVAL, AgentWaitAnswer(ask_id=1, wait_id="w", status=WaitStatus.DELIVERED),
         (True, {"approved": True, "wait": "w"}, "")),
        (WaitKind.APPROVAL, AgentWaitAnswer(ask_id=1, wait_id="w", status=WaitStatus.DELIVERED,
                                            refusal="rejected by human:ops"),
         (False, None, "POLICY_VIOLATION: not approved (rejected by human:ops)")),
    ],
)  # fmt: skip
def test_the_model_is_told_the_answer_the_approval_or_why_there_is_none(
    kind: WaitKind, answer: AgentWaitAnswer, told: tuple[bool, object, str]
) -> None:
    assert wait_outcome(kind, answer) == told


def test_an_agents_call_results_are_kept_within_their_bounds_the_newest_in_full() -> None:
    small = AgentToolCall(tool="echo", ok=True, result={"value": "x"})
    big = AgentToolCall(tool="git_log", ok=True, result="y" * (CALL_RESULT_CHARS + 5_000))
    failed = AgentToolCall(tool="echo", ok=False, error="RATE_LIMITED: slow down")

    kept = bounded_calls([big, small, failed])

    assert kept[1:] == [small, failed]
    assert isinstance(kept[0].result, str) and len(kept[0].result) <= CALL_RESULT_CHARS
    assert kept[0].result.endswith("characters of git_log's result]")
    many = bounded_calls([big] * (CALL_RESULTS_CHARS // CALL_RESULT_CHARS + 3))
    assert sum(len(str(call.result)) for call in many) <= CALL_RESULTS_CHARS + 200
    assert many[0].result == "[cut: 21,000 characters of git_log's result]"  # the oldest
