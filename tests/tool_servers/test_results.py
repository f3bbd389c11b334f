"""What a tool call's answer becomes: the structured content, else the text, each bounded far
below Temporal's payload limit."""

from __future__ import annotations

from mcp_types import CallToolResult, ImageContent, TextContent

from tool_servers.results import node_result


def test_structured_content_is_the_result_when_the_server_gives_it() -> None:
    result = CallToolResult(content=[TextContent(text='{"a": 1}')], structured_content={"a": 1})
    assert node_result(result) == {"a": 1}


def test_text_blocks_are_joined_and_other_blocks_named() -> None:
    result = CallToolResult(
        content=[TextContent(text="one"), ImageContent(data="AAAA", mime_type="image/png")]
    )
    assert node_result(result) == "one\n[image image/png]"


def test_a_long_text_is_cut_with_a_note() -> None:
    result = CallToolResult(content=[TextContent(text="x" * 50)])
    assert node_result(result, limit=10) == "x" * 10 + "\n[truncated: 10 of 50 characters shown]"


def test_structured_content_too_large_falls_back_to_its_bounded_text() -> None:
    big = {"rows": ["y" * 40] * 10}
    result = CallToolResult(content=[TextContent(text="summary")], structured_content=big)
    answer = node_result(result, limit=200)
    assert isinstance(answer, str)
    assert answer.startswith("[structured content of ") and "summary" in answer
    assert len(answer) <= 200 + 60
