"""What `harness scenarios` shows of the packs this environment loads (the built-in ones, the
installed ones, those HARNESS_PACKS names): each pack's name, origin, own tools and description,
as a table or, with --json, as a list of objects whose keys stay as they are."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from scenarios.registry import LoadedPack, registry
from starter import output


class PackEntry(BaseModel):
    """One pack in `harness scenarios --json`; a public shape: fields are only ever added."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    origin: str
    """`built-in`, the distribution and version that installed it, or what named it."""
    tools: int
    """The pack's own tools; every pack also has the shared ones (the agent's management
    tools), and the tools its MCP servers list when a worker starts them."""


def pack_entries(loaded: Sequence[LoadedPack]) -> list[PackEntry]:
    return [
        PackEntry(
            name=each.pack.name,
            description=each.pack.description,
            origin=each.origin,
            tools=len(each.pack.tools),
        )
        for each in loaded
    ]


def pack_table(loaded: Sequence[LoadedPack]) -> list[str]:
    """One line per pack (name, own tools, whether it plans offline, origin, description),
    under a heading, then the count."""
    rows = [
        (
            each.pack.name,
            str(len(each.pack.tools)),
            "yes" if each.pack.offline_plan is not None else "no",
            each.origin,
            each.pack.description,
        )
        for each in loaded
    ]
    heading = ("pack", "tools", "offline plan", "origin", "description")
    widths = [max(len(row[column]) for row in [heading, *rows]) for column in range(4)]
    lines = []
    for row in [heading, *rows]:
        name, tools, offline, origin, description = row
        lines.append(
            f"{name:<{widths[0]}}  {tools:>{widths[1]}}  {offline:<{widths[2]}}  "
            f"{origin:<{widths[3]}}  {description}".rstrip()
        )
    lines.append(f"{len(rows)} pack(s); run one with `harness run GOAL --scenario NAME`")
    return lines


def list_packs(as_json: bool) -> int:
    """Print this environment's packs. A pack that cannot load is a PackLoadError (the CLI
    says its one line and exits 2)."""
    loaded = registry().loaded()
    if as_json:
        output.emit_json([entry.model_dump(mode="json") for entry in pack_entries(loaded)])
    else:
        print("\n".join(pack_table(loaded)))
    return 0
