"""YAML packs: a pack written as a file, for a team whose tools already live in MCP servers.

    name: clock
    description: Questions about the time in places
    instructions: Use the time tools, then write the report.
    mcpServers:
      time: {command: mcp-server-time, args: ["--local-timezone", "UTC"]}
    tools: [get_current_time]      # optional: keep only these of the servers' tools

Each entry of `mcpServers` is what an `mcpServers` entry of an MCP client's JSON file holds
(`tool_servers.config.McpServer`: a command or a URL, `${NAME}` read from the worker's
environment when it connects). The servers' tools are the pack's catalog, listed when a run
starts. A YAML pack has no offline planner (a run needs `--plan` or an LLM planner) and no
check of its own.

`HARNESS_PACKS` names such a file by its path (`.yaml` or `.yml`); the registry loads it.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from durable_harness.pack import Pack, PackDefinitionError
from durable_harness.pack_types import Environment
from tool_servers.config import McpServer

YAML_SUFFIXES = (".yaml", ".yml")
SHOWN_PROBLEMS = 5


class PackFileError(ValueError):
    """A pack file that cannot be loaded; one line saying what to fix (without the file's path:
    the registry puts it first)."""


class PackFile(BaseModel):
    """What a pack file may say; any other key is refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The pack's name, as `harness run --scenario` takes it.")
    description: str = Field(min_length=1)
    instructions: str | None = Field(default=None, description="Guidance for the planner.")
    mcp_servers: dict[str, McpServer] = Field(
        alias="mcpServers", min_length=1, description="The servers whose tools are the pack's."
    )
    tools: list[str] | None = Field(
        default=None,
        min_length=1,
        description="Keep only these of the servers' tools, by the names the servers list.",
    )

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _named(cls, value: Any) -> Any:
        """Each server takes its key as its name, as in an `mcpServers` JSON file."""
        if not isinstance(value, dict):
            return value
        return {
            key: {**body, "name": key} if isinstance(body, dict) and "name" not in body else body
            for key, body in value.items()
        }

    def pack(self) -> Pack:
        servers = tuple(self.mcp_servers.values())

        def mcp_servers(environment: Environment) -> tuple[McpServer, ...]:
            return servers  # `${NAME}`s are read from the worker's environment on connecting

        return Pack(
            self.name,
            self.description,
            [],
            instructions=self.instructions,
            mcp_servers=mcp_servers,
            mcp_tools=self.tools,
        )


def is_pack_file(value: str) -> bool:
    return value.strip().lower().endswith(YAML_SUFFIXES)


def load_pack_file(path: Path) -> Pack:
    """The pack the file describes; PackFileError saying what to fix when it cannot be one."""
    import yaml  # only when a pack file is named: the CLI's start loads the registry

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PackFileError("no such file; give the path of a YAML pack file") from None
    except OSError as error:
        raise PackFileError(f"cannot read it: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise PackFileError(f"not UTF-8 text (byte {error.start})") from None
    try:
        raw: Any = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise PackFileError(f"not YAML: {_yaml_problem(error)}") from None
    if not isinstance(raw, dict):
        raise PackFileError(
            "expected a mapping with name, description and mcpServers (see docs/scenarios.md)"
        )
    try:
        described = PackFile.model_validate(raw)
    except ValidationError as error:
        problems = [_problem(item) for item in error.errors()]
        raise PackFileError("; ".join(problems[:SHOWN_PROBLEMS])) from None
    try:
        return described.pack()
    except PackDefinitionError as error:
        raise PackFileError(str(error).replace("mcp_tools", "tools")) from None


def _yaml_problem(error: Exception) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return f"{problem} (line {mark.line + 1})" if mark is not None else str(problem)


def _problem(item: ErrorDetails) -> str:
    """One problem at its place; an unknown key with the keys allowed there, the closest first."""
    place = ".".join(str(part) for part in item["loc"]) or "the file"
    if item["type"] != "extra_forbidden":
        return f"{place}: {item['msg']}"
    key = str(item["loc"][-1])
    in_server = len(item["loc"]) == 3 and item["loc"][0] == "mcpServers"
    allowed = _keys(McpServer, skip="name") if in_server else _keys(PackFile)
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    where = "a server" if in_server else "a pack file"
    return f"{place}: unknown key; {hint}{where} has {', '.join(allowed)}"


def _keys(model: type[BaseModel], skip: str = "") -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items() if name != skip]
