"""The worker's MCP server configuration (tool_servers/config.py): the `mcpServers` file other
MCP clients write, its transports, `${VAR}` references filled from the worker's environment,
secrets kept out of repr, and one-line errors that say what to fix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.worker_processes import worker_refusal
from tool_servers.config import (
    MCP_CONFIG_VARIABLE,
    McpConfigError,
    McpServer,
    load_servers,
    parse_servers,
    worker_servers,
)

GIT = {"command": "python", "args": ["-m", "mcp_server_git"]}
SEARCH = {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer t0ken"}}


def one(raw: object) -> McpServer:
    (server,) = parse_servers(raw, "test.json")
    return server


def config_error(raw: object) -> str:
    with pytest.raises(McpConfigError) as raised:
        parse_servers(raw, "test.json")
    message = str(raised.value)
    assert "\n" not in message
    return message


def load_error(path: Path) -> str:
    with pytest.raises(McpConfigError) as raised:
        load_servers(path)
    message = str(raised.value)
    assert "\n" not in message
    return message


# --- parse_servers ---------------------------------------------------------------------------


def test_servers_are_read_from_the_mcp_servers_object() -> None:
    servers = parse_servers({"mcpServers": {"git": GIT, "search": SEARCH}}, "test.json")

    assert [server.name for server in servers] == ["git", "search"]


def test_servers_are_read_from_a_bare_mapping_by_name() -> None:
    servers = parse_servers({"git": GIT}, "test.json")

    assert [server.name for server in servers] == ["git"]
    assert servers[0].args == ["-m", "mcp_server_git"]


def test_a_server_with_a_command_is_stdio() -> None:
    server = one({"git": GIT})

    assert server.transport == "stdio"
    assert server.describe() == "python -m mcp_server_git"


def test_a_server_with_a_url_is_streamable_http() -> None:
    server = one({"search": SEARCH})

    assert server.transport == "http"
    assert server.describe() == "https://mcp.example.com/mcp"


@pytest.mark.parametrize(
    "body",
    [{"command": "python", "url": "https://mcp.example.com/mcp"}, {"args": ["-m", "x"]}],
    ids=["both", "neither"],
)
def test_a_server_needs_exactly_one_of_command_and_url(body: dict[str, object]) -> None:
    message = config_error({"mcpServers": {"broken": body}})

    assert "'broken'" in message
    assert "command" in message
    assert "url" in message


def test_an_unknown_field_is_refused_by_name() -> None:
    message = config_error({"git": {**GIT, "autostart": True}})

    assert "'git'" in message
    assert "autostart" in message


def test_a_server_that_is_not_an_object_is_refused() -> None:
    assert "'git'" in config_error({"git": "python -m mcp_server_git"})


def test_a_configuration_that_is_not_an_object_is_refused() -> None:
    message = config_error(["git"])

    assert message.startswith("test.json:")
    assert "mcpServers" in message


# --- resolved --------------------------------------------------------------------------------


def test_references_in_a_command_server_are_filled_from_the_given_environment() -> None:
    server = one(
        {
            "remote": {
                "command": "npx",
                "args": ["--token=${TOKEN}", "${ROOT}/repo"],
                "env": {"API_KEY": "${KEY}", "PLAIN": "as is"},
            }
        }
    )

    resolved = server.resolved({"TOKEN": "t", "ROOT": "/src", "KEY": "k3y"})

    assert resolved.args == ["--token=t", "/src/repo"]
    assert resolved.env == {"API_KEY": "k3y", "PLAIN": "as is"}
    assert server.args == ["--token=${TOKEN}", "${ROOT}/repo"]


def test_references_in_an_http_server_are_filled_from_the_given_environment() -> None:
    server = one(
        {"search": {"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${KEY}"}}}
    )

    resolved = server.resolved({"HOST": "mcp.example.com", "KEY": "k3y"})

    assert resolved.url == "https://mcp.example.com/mcp"
    assert resolved.headers == {"Authorization": "Bearer k3y"}


def test_a_missing_variable_is_an_error_naming_it_and_the_server() -> None:
    server = one({"search": {"url": "https://x/mcp", "headers": {"Authorization": "${KEY}"}}})

    with pytest.raises(McpConfigError) as raised:
        server.resolved({"OTHER": "v"})

    message = str(raised.value)
    assert "KEY" in message
    assert "'search'" in message
    assert "\n" not in message


def test_repr_does_not_show_environment_or_header_values() -> None:
    command = one({"git": {**GIT, "env": {"API_KEY": "s3cret-env"}}}).resolved({})
    http = one({"search": SEARCH}).resolved({})

    assert "s3cret-env" not in repr(command)
    assert "t0ken" not in repr(http)
    assert "s3cret-env" not in str(command)
    assert "t0ken" not in http.describe()


# --- load_servers and worker_servers ---------------------------------------------------------


def test_servers_are_loaded_from_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"git": GIT}}))

    assert [server.name for server in load_servers(path)] == ["git"]


def test_a_missing_file_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"

    assert str(path) in load_error(path)


def test_a_file_that_is_not_json_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"git": \n')

    message = load_error(path)

    assert str(path) in message
    assert "not JSON" in message


def test_an_invalid_server_in_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"git": {}}}))

    message = load_error(path)

    assert message.startswith(f"{path}:")
    assert "'git'" in message


def test_a_worker_without_the_variable_has_no_servers() -> None:
    assert worker_servers({}) == ()


def test_a_blank_variable_means_no_servers() -> None:
    assert worker_servers({MCP_CONFIG_VARIABLE: "  "}) == ()


def test_the_worker_reads_the_file_the_variable_names(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"git": GIT, "search": SEARCH}))

    servers = worker_servers({MCP_CONFIG_VARIABLE: str(path)})

    assert [server.name for server in servers] == ["git", "search"]
    assert [server.transport for server in servers] == ["stdio", "http"]


def test_the_worker_refuses_to_start_with_an_mcp_configuration_it_cannot_read(
    tmp_path: Path,
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"git": {"command": "x", "url": "http://h/mcp"}}}')
    env = {**os.environ, "HARNESS_MCP_CONFIG": str(config), "TEMPORAL_ADDRESS": "127.0.0.1:1"}
    finished = worker_refusal(env)
    assert finished.returncode == 2
    assert "worker.config_error" in finished.stderr
    assert "server 'git'" in finished.stderr and "either command" in finished.stderr
    assert "Traceback" not in finished.stderr


def test_a_configuration_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b'{"mcpServers": {"caf\xe9": {}}}')
    with pytest.raises(McpConfigError, match="not UTF-8 text"):
        load_servers(path)
