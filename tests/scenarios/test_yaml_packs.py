"""YAML packs over MCP servers: a file `HARNESS_PACKS` names by its path is a pack whose catalog
is its servers' tools (all, or those its `tools:` keeps); a file that cannot be one is refused
in one line naming the file and what to fix. Two tests use the real `mcp-server-time`: one
lists the catalog, one runs a plan over it to the built-in `write_report`."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.mcp_hub import McpHub, McpSources
from durable_harness import Pack
from durable_harness.pack import PackDefinitionError
from harness.catalog.mcp_tools import McpListedTool, McpServerListing, keep_tools, with_servers
from harness.catalog.tools import ToolCatalog
from harness.core.errors import ErrorCode, ToolError
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.run import RunPhase, RunRequest
from scenarios.management import MANAGEMENT_TOOL_NAMES
from scenarios.registry import PACKS_VARIABLE, PackLoadError, load_packs, registered
from scenarios.yaml_packs import load_pack_file
from starter.cli.tool_listing import catalog_with_servers
from tests.docs_pages import block_after, page
from tests.support import execute_run, running_worker
from tool_servers.config import McpConfigError

CLOCK = """\
name: clock
description: Questions about the time in places
instructions: Use the time tools, then write the report.
mcpServers:
  time: {command: mcp-server-time, args: ["--local-timezone", "UTC"]}
"""

TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
"""The time server's own command, as installed with the project's dev extras."""


def pack_file(tmp_path: Path, text: str, name: str = "clock.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def refusal(path: Path) -> str:
    with pytest.raises(PackLoadError) as refused:
        load_packs([], {PACKS_VARIABLE: str(path)})
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"pack file {path} ({PACKS_VARIABLE}): ")
    return message.removeprefix(f"pack file {path} ({PACKS_VARIABLE}): ")


def test_a_yaml_pack_file_in_harness_packs_is_a_pack_over_its_servers_with_its_path_as_origin(
    tmp_path: Path,
) -> None:
    path = pack_file(tmp_path, CLOCK)

    loaded = load_packs([], {PACKS_VARIABLE: f"tests.durable_harness.weather:WEATHER, {path}"})

    clock = loaded["clock"]
    assert clock.origin == str(path)
    assert loaded["weather"].origin == PACKS_VARIABLE
    assert clock.pack.description == "Questions about the time in places"
    assert clock.pack.instructions == "Use the time tools, then write the report."
    (server,) = clock.pack.mcp_servers({})
    assert (server.name, server.command, server.args) == (
        "time",
        "mcp-server-time",
        ["--local-timezone", "UTC"],
    )
    assert clock.pack.mcp_tools is None  # every tool the server lists
    assert sorted(clock.pack.catalog().names()) == sorted(
        {*MANAGEMENT_TOOL_NAMES, "write_report", "agent"}
    )
    assert clock.pack.offline_plan is None and clock.pack.check is None


def test_a_pack_files_tools_list_keeps_the_pack_to_those_tools(tmp_path: Path) -> None:
    path = pack_file(tmp_path, CLOCK + "tools: [get_current_time]\n", "clock.yml")
    assert load_pack_file(path).mcp_tools == ("get_current_time",)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            CLOCK + "colour: blue\n",
            "colour: unknown key; a pack file has name, description, instructions, "
            "mcpServers, tools",
        ),
        (
            CLOCK.replace("mcpServers:", "mcp_servers:"),
            "mcpServers: Field required; mcp_servers: unknown key; did you mean mcpServers? "
            "a pack file has name, description, instructions, mcpServers, tools",
        ),
        (
            CLOCK.replace("args:", "argv:"),
            "mcpServers.time.argv: unknown key; did you mean args? a server has type, command, "
            "args, env, cwd, url, headers, prefix, arguments, timeout_seconds",
        ),
    ],
    ids=["at-the-top", "a-misspelt-key", "in-a-server"],
)
def test_an_unknown_key_in_a_pack_file_is_refused_naming_the_keys_it_may_have(
    tmp_path: Path, text: str, problem: str
) -> None:
    assert refusal(pack_file(tmp_path, text)) == problem


@pytest.mark.parametrize("name", ["Clock", "9clock", "clock time", "'42'"])
def test_a_pack_file_with_a_bad_name_is_refused_with_the_rules_of_a_packs_name(
    tmp_path: Path, name: str
) -> None:
    problem = refusal(pack_file(tmp_path, CLOCK.replace("name: clock", f"name: {name}")))
    assert problem.startswith("pack name ")
    assert problem.endswith("use 1 to 64 lowercase letters, digits, _ or -, starting with a letter")


def test_a_missing_pack_file_is_refused_in_one_line(tmp_path: Path) -> None:
    assert refusal(tmp_path / "nowhere.yaml") == "no such file; give the path of a YAML pack file"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: [clock\n", "not YAML: expected ',' or ']', but got '<stream end>' (line 2)"),
        ("- clock\n", "expected a mapping with name, description and mcpServers"),
        ("", "expected a mapping with name, description and mcpServers"),
        (CLOCK.split("mcpServers:")[0] + "mcpServers: {}\n", "mcpServers: Dictionary should"),
        (
            CLOCK.replace("command: mcp-server-time, ", ""),
            "mcpServers.time: Value error, give either command (a stdio server) or url",
        ),
        (CLOCK + "tools: []\n", "tools: List should have at least 1 item"),
        (
            CLOCK + "tools: [get_current_time, write_report, harness_time]\n",
            "pack clock: tools names ['write_report', 'harness_time'] are reserved",
        ),
    ],
    ids=[
        "not-yaml",
        "a-list",
        "empty",
        "no-server",
        "a-server-without-command-or-url",
        "an-empty-tools-list",
        "reserved-tool-names",
    ],
)
def test_a_pack_file_that_breaks_a_rule_is_refused_saying_what_to_fix(
    tmp_path: Path, text: str, problem: str
) -> None:
    assert refusal(pack_file(tmp_path, text)).startswith(problem)


@pytest.mark.parametrize(
    ("kept", "problem"),
    [
        ("get_current_time", "pack clock: mcp_tools is a list of tool names, not a string"),
        ([], "pack clock: mcp_tools is empty; name the tools to keep, or leave it out for all"),
        (["agent"], "pack clock: mcp_tools names ['agent'] are reserved"),
    ],
)
def test_a_pack_keeping_mcp_tools_names_them_in_a_list_of_names_no_tool_is_reserved(
    kept: str | list[str], problem: str
) -> None:
    with pytest.raises(PackDefinitionError) as refused:
        Pack("clock", "Time.", [], mcp_tools=kept)
    assert str(refused.value) == problem


def test_the_docs_yaml_pack_is_the_clock_pack_over_the_time_server(tmp_path: Path) -> None:
    block = block_after(page("scenarios"), "## A pack over MCP servers, in YAML", "yaml")
    assert block == CLOCK
    pack = load_pack_file(pack_file(tmp_path, block))
    assert [server.describe() for server in pack.mcp_servers({})] == [
        "mcp-server-time --local-timezone UTC"
    ]


def test_a_pack_files_server_variable_the_worker_lacks_stops_the_worker_at_start(
    tmp_path: Path,
) -> None:
    text = CLOCK.replace('"UTC"', '"${CLOCK_ZONE}"')
    pack = load_pack_file(pack_file(tmp_path, text))
    with registered(pack), pytest.raises(McpConfigError, match=r"needs \$\{CLOCK_ZONE\}"):
        McpSources.from_environment({})
    with registered(pack):
        sources = McpSources.from_environment({"CLOCK_ZONE": "Asia/Tokyo"})
    (server,) = sources.for_scenario("clock")
    assert server.resolved({"CLOCK_ZONE": "Asia/Tokyo"}).args[-1] == "Asia/Tokyo"


def _listing(server: str, *tools: str) -> McpServerListing:
    return McpServerListing(server=server, tools=[McpListedTool(name=name) for name in tools])


def test_keeping_tools_cuts_only_the_packs_own_servers_and_refuses_a_name_none_lists() -> None:
    listings = [
        _listing("time", "get_current_time", "convert_time"),
        _listing("worker", "convert_time"),
    ]

    kept = keep_tools(listings, ["get_current_time"], {"time"}, "clock")

    assert [[t.name for t in listing.tools] for listing in kept] == [
        ["get_current_time"],
        ["convert_time"],  # the worker's own server: not the pack's to cut
    ]
    with pytest.raises(ToolError) as refused:
        keep_tools(listings, ["get_time", "get_current_time"], {"time"}, "clock")
    assert refused.value.code is ErrorCode.CONFIG_INVALID
    assert refused.value.message == (
        "the pack clock keeps get_time, which none of its MCP servers lists (time offers "
        "convert_time, get_current_time); fix the tools list of the pack"
    )


@pytest.mark.timeout(120)
async def test_a_yaml_packs_catalog_lists_the_real_time_servers_tools_or_those_it_keeps(
    tmp_path: Path,
) -> None:
    text = CLOCK.replace("command: mcp-server-time", f"command: {TIME_SERVER}")
    every = load_pack_file(pack_file(tmp_path, text))
    kept_text = text.replace("name: clock", "name: one") + "tools: [get_current_time]\n"
    one = load_pack_file(pack_file(tmp_path, kept_text, "one.yaml"))
    wrong_text = text.replace("name: clock", "name: wrong") + "tools: [get_time]\n"
    wrong = load_pack_file(pack_file(tmp_path, wrong_text, "wrong.yaml"))
    with registered(every, one, wrong):
        hub = McpHub.from_environment(os.environ)  # one connection: the three servers are alike
        try:
            by_the_cli, *listings = await asyncio.gather(  # its own connection, started alongside
                catalog_with_servers(one.catalog(), one.mcp_servers(os.environ), os.environ, one),
                hub.listings("clock"),
                hub.listings("one"),
            )
            with pytest.raises(ToolError) as refused:
                await hub.listings("wrong")
        finally:
            await hub.aclose()
    listed = {
        pack.name: with_servers(pack.catalog(), listing)
        for pack, listing in zip((every, one), listings, strict=True)
    }

    def mcp_tools(catalog: ToolCatalog) -> list[str]:
        return [tool.name for tool in catalog.tools if tool.mcp is not None]

    assert sorted(mcp_tools(listed["clock"])) == ["convert_time", "get_current_time"]
    assert mcp_tools(listed["one"]) == ["get_current_time"]
    assert mcp_tools(by_the_cli) == ["get_current_time"]  # `harness tools` lists what runs see
    assert refused.value.code is ErrorCode.CONFIG_INVALID
    assert "time offers convert_time, get_current_time" in refused.value.message


async def test_a_run_of_a_yaml_pack_over_the_real_time_server_ends_with_write_reports_report(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    text = CLOCK.replace("command: mcp-server-time", f"command: {TIME_SERVER}")
    clock = load_pack_file(pack_file(tmp_path, text))
    now = PlanNode(
        id="now",
        tool="get_current_time",
        arguments=[ArgumentBinding(name="timezone", kind="LITERAL", value="UTC")],
    )
    report = PlanNode(
        id="report",
        tool="write_report",
        deps=["now"],
        arguments=[
            ArgumentBinding(name="question", kind="LITERAL", value="What time is it in UTC?"),
            ArgumentBinding(name="inputs", kind="NODE_RESULT", node_id="now"),
        ],
    )
    request = RunRequest(
        goal="What time is it in UTC?", scenario="clock", plan=Plan(nodes=[now, report])
    )
    with registered(clock):
        async with running_worker(client, task_queue):  # its MCP servers: the packs' own
            result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None
    assert result.report.startswith("# What time is it in UTC?")
    assert "UTC" in result.report.split("## Result 1", 1)[1]  # the server's answer, rendered
