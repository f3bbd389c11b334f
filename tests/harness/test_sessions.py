"""The pure rules of agent sessions (harness.engine.sessions): which tools a session's agent is
offered, how its waits are named, and what its reply says."""

from __future__ import annotations

from pydantic import BaseModel

from harness.catalog.tools import ToolCatalog, ToolSpec
from harness.core.usage import TokenUsage
from harness.engine.sessions import (
    PendingWait,
    RuntimeCheckpoint,
    SessionReply,
    SessionStatus,
    SliceResult,
    session_tools,
    session_workflow_id,
    slice_reply,
    wait_name,
)
from harness.waits.wait_book import WaitKind
from scenarios import get_scenario


def _catalog(scenario: str) -> ToolCatalog:
    return get_scenario(scenario).catalog()


def test_a_session_is_offered_every_tool_an_agent_may_call_when_it_lists_none() -> None:
    tools, problem = session_tools(None, _catalog("synthetic"), bound_to_task=False)
    names = [tool.name for tool in tools]
    assert problem is None
    assert "echo" in names and "delay" in names
    assert "side_effect" not in names and "agent" not in names  # held, or the agent itself
    assert not any(name.startswith("harness_") for name in names)


def test_a_session_bound_to_a_task_is_offered_the_management_tools_too() -> None:
    tools, problem = session_tools(["echo"], _catalog("synthetic"), bound_to_task=True)
    names = [tool.name for tool in tools]
    assert problem is None and names[0] == "echo"
    assert any(name.startswith("harness_") for name in names[1:])


def test_a_tool_an_agent_may_not_call_is_refused_with_what_it_may_call() -> None:
    tools, problem = session_tools(
        ["echo", "side_effect", "nope"], _catalog("synthetic"), bound_to_task=False
    )
    assert tools == []
    assert problem is not None
    assert problem.startswith("tools: side_effect, nope cannot be called by an agent of pack")
    assert "echo" in problem


def test_a_session_wait_is_named_by_what_it_asks_and_its_slice() -> None:
    assert wait_name(WaitKind.USER_INPUT, 3) == "question-3"
    assert wait_name(WaitKind.APPROVAL, 4) == "approval-4"
    assert session_workflow_id("ops", "s-1") == "session:ops:s-1"
    # a scope has no ':', so scope `team-a` and session `x` never meet scope `team`'s `a-x`
    assert session_workflow_id("team-a", "x") != session_workflow_id("team", "a-x")


def test_a_waiting_reply_names_its_wait_and_a_cut_slice_says_how_to_go_on() -> None:
    checkpoint = RuntimeCheckpoint(runtime="builtin", state={"messages": []})
    wait = PendingWait(
        call_id="c1", tool="ask_user", kind=WaitKind.USER_INPUT, prompt="Which year?"
    )
    wait.wait_id = "question-2"
    waiting = slice_reply(
        "s-1", 2, SliceResult(status=SessionStatus.WAITING, checkpoint=checkpoint, wait=wait)
    )
    cut = SessionReply(
        session_id="s-1",
        status=SessionStatus.CONTINUATION_REQUIRED,
        epoch=3,
        turns=6,
        usage=TokenUsage(),
    )
    assert waiting.line() == "WAITING question-2: Which year?"
    assert cut.line().startswith("CONTINUATION_REQUIRED after slice 3 (6 turn(s))")
    assert "--continue" in cut.line()


class PostArgs(BaseModel):
    label: str


def test_a_tool_each_call_of_which_waits_for_approval_is_not_offered_to_a_session() -> None:
    post = ToolSpec.from_model("post", "Post once.", PostArgs, side_effects=True, idempotent=True)
    catalog = ToolCatalog(scenario="p", tools=[post, *_catalog("synthetic").tools])
    offered, _ = session_tools(None, catalog, bound_to_task=False)
    refused, problem = session_tools(["post"], catalog, bound_to_task=False)
    assert "post" not in [tool.name for tool in offered]
    assert refused == [] and problem is not None and problem.startswith("tools: post cannot")
