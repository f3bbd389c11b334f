"""The packs a process knows: the built-in scenarios, every pack installed under the entry point
group `durable_harness.packs` (value `module:attribute` naming a `Pack`), and those that
`HARNESS_PACKS` names (`module:attribute`, or the path of a YAML pack file, separated by
commas; see `scenarios.yaml_packs`). Loaded once, on
first use; every caller (the catalog, tool, planner, check and judge activities, the worker's
services, the CLI's scenario names) asks here.

The project registers its built-in packs through the same group (pyproject.toml); they are also
loaded by their module path, so a checkout whose installed metadata predates the group still has
them, and an entry point naming a built-in is the built-in, not a second pack.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import importlib
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Protocol

from durable_harness.exceptions import InvalidInput
from durable_harness.pack import Pack
from durable_harness.pack_types import AcceptanceCheck
from scenarios.agent_tool import AGENT_TOOL
from scenarios.management import MANAGEMENT_TOOLS
from scenarios.report_writer import WRITE_REPORT_TOOL
from scenarios.yaml_packs import PackFileError, is_pack_file, load_pack_file

PACK_ENTRY_POINTS = "durable_harness.packs"

BUILT_IN_PACKS = (
    "scenarios.cities:SCENARIO",
    "scenarios.games:SCENARIO",
    "scenarios.incidents:SCENARIO",
    "scenarios.refunds:SCENARIO",
    "scenarios.repo:SCENARIO",
    "scenarios.synthetic:SCENARIO",
)
"""The built-in packs, as their entry points name them."""

BUILT_IN = "built-in"

PACKS_VARIABLE = "HARNESS_PACKS"
"""More packs for this process, by `module:attribute` or a YAML pack file's path, separated by
commas."""


class UnknownScenarioError(LookupError):
    pass


class PackLoadError(InvalidInput, ValueError):
    """A pack that cannot be loaded; one line naming the pack, where it comes from, and why.
    It is bad input of the environment (HARNESS_PACKS, an installed package): the CLI shows the
    line and exits 2, as for any InvalidInput (starter.errors)."""


class PackSource(Protocol):
    """What the loader reads of an entry point (`importlib.metadata.EntryPoint` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def value(self) -> str: ...


@dataclass(frozen=True)
class LoadedPack:
    pack: Pack
    origin: str
    """Where it comes from: `built-in`, the distribution (and version) that installed it, or
    `HARNESS_PACKS`, or the path of its YAML file."""


def load_packs(
    entry_points: Iterable[PackSource] | None = None,
    environment: Mapping[str, str] | None = None,
) -> dict[str, LoadedPack]:
    """The built-in packs, then those of the entry points (default: the installed ones), then
    those `HARNESS_PACKS` names in the environment (default: this process's), each with the
    tools every pack has. Two packs with one name are refused, naming both origins."""
    found: dict[str, LoadedPack] = {}
    for value in BUILT_IN_PACKS:
        _add(found, LoadedPack(_load(value, value, BUILT_IN), BUILT_IN))
    installed = metadata.entry_points(group=PACK_ENTRY_POINTS) if entry_points is None else ()
    for entry in [*(entry_points or ()), *installed]:
        if entry.value.strip() in BUILT_IN_PACKS:
            continue  # the project's own registration of a built-in pack
        origin = _origin(entry)
        _add(found, LoadedPack(_load(entry.name, entry.value, origin), origin))
    for value in _named(os.environ if environment is None else environment):
        if is_pack_file(value):
            _add(found, LoadedPack(_load_file(value), value))
        else:
            _add(found, LoadedPack(_load(value, value, PACKS_VARIABLE), PACKS_VARIABLE))
    return {
        name: dataclasses.replace(loaded, pack=_with_shared_tools(loaded.pack))
        for name, loaded in sorted(found.items())
    }


def _named(environment: Mapping[str, str]) -> list[str]:
    return [v.strip() for v in environment.get(PACKS_VARIABLE, "").split(",") if v.strip()]


def _load_file(path: str) -> Pack:
    """The pack a YAML file describes (a relative path is the process's working directory's)."""
    try:
        return load_pack_file(Path(path))
    except PackFileError as error:
        raise PackLoadError(f"pack file {path} ({PACKS_VARIABLE}): {error}") from None


def _origin(entry: PackSource) -> str:
    dist = getattr(entry, "dist", None)
    if dist is not None:
        return f"{dist.name} {dist.version}"
    return f"entry point {entry.name} = {entry.value}"


def _load(name: str, value: str, origin: str) -> Pack:
    module_name, _, attribute = value.strip().partition(":")
    where = f"pack {name} ({origin})"
    if not module_name or not attribute:
        raise PackLoadError(f"{where}: '{value}' is not module:attribute")
    try:
        found: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except Exception as error:  # a pack's own import error, reported in one line
        reason = str(error).splitlines()[0] if str(error) else ""
        raise PackLoadError(
            f"{where}: cannot load {value}: {type(error).__name__}: {reason}"
        ) from None
    if not isinstance(found, Pack):
        raise PackLoadError(f"{where}: {value} is a {type(found).__name__}, not a Pack")
    return found


def _add(found: dict[str, LoadedPack], loaded: LoadedPack) -> None:
    first = found.setdefault(loaded.pack.name, loaded)
    if first is not loaded:
        raise PackLoadError(
            f"two packs are named {loaded.pack.name}: from {first.origin} and from "
            f"{loaded.origin}; uninstall or rename one"
        )


SHARED_TOOLS = (WRITE_REPORT_TOOL, AGENT_TOOL, *MANAGEMENT_TOOLS)
"""The tools every pack's catalog has after its own: the final report writer, so a pack of data
tools alone can finish a run, agent nodes over the pack's tools, and the agent's management
tools."""


def _with_shared_tools(pack: Pack) -> Pack:
    return dataclasses.replace(pack, shared_tools=SHARED_TOOLS)


class PackRegistry:
    """The packs of this process, by name."""

    def __init__(self, loaded: Mapping[str, LoadedPack]) -> None:
        self._loaded = dict(sorted(loaded.items()))

    def names(self) -> list[str]:
        return list(self._loaded)

    def packs(self) -> list[Pack]:
        return [loaded.pack for loaded in self._loaded.values()]

    def loaded(self) -> list[LoadedPack]:
        return list(self._loaded.values())

    def get(self, name: str) -> Pack:
        loaded = self._loaded.get(name)
        if loaded is not None:
            return loaded.pack
        message = f"unknown scenario '{name}'"
        close = difflib.get_close_matches(name, self._loaded, n=1)
        message += f"; did you mean '{close[0]}'?" if close else ""
        raise UnknownScenarioError(f"{message} (available: {', '.join(self.names())})")

    def with_packs(self, packs: Iterable[Pack], origin: str) -> PackRegistry:
        """This registry and more packs (a name it has already is refused)."""
        found = dict(self._loaded)
        for pack in packs:
            _add(found, LoadedPack(_with_shared_tools(pack), origin))
        return PackRegistry(found)

    def acceptance_checks(self) -> dict[str, AcceptanceCheck]:
        """Every pack's completion gates, by id (an id two packs register is an error)."""
        found: dict[str, AcceptanceCheck] = {}
        for pack in self.packs():
            for check in pack.acceptance_checks:
                if check.id in found:
                    raise ValueError(f"acceptance check '{check.id}' is registered twice")
                found[check.id] = check
        return found


_lock = threading.Lock()
_current: PackRegistry | None = None


def registry() -> PackRegistry:
    """The process's packs, loaded on first use (a pack that cannot load: PackLoadError)."""
    global _current
    with _lock:
        if _current is None:
            _current = PackRegistry(load_packs())
        return _current


@contextlib.contextmanager
def registered(*packs: Pack, origin: str = "test") -> Iterator[PackRegistry]:
    """The process's packs and these, until the block ends (a test's own packs)."""
    global _current
    before = registry()
    with _lock:
        _current = before.with_packs(packs, origin)
    try:
        yield _current
    finally:
        with _lock:
            _current = before
