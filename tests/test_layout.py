"""The layout shows the architecture: `harness/` and `starter/` are sub-packages whose imports run
one way. Read from the source's import statements (every one, in functions and under
TYPE_CHECKING too), so nothing is imported and no server is needed."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent

MAY_IMPORT: dict[str, frozenset[str]] = {
    "harness.core": frozenset(),
    "harness.catalog": frozenset({"harness.core"}),
    "harness.governance": frozenset({"harness.core", "harness.catalog"}),
    "harness.recall": frozenset({"harness.core"}),
    "harness.waits": frozenset({"harness.core", "harness.catalog", "harness.governance"}),
    "harness.engine": frozenset(
        {"harness.core", "harness.catalog", "harness.governance", "harness.recall", "harness.waits"}
    ),
    "harness.evals": frozenset(
        {
            "harness.core",
            "harness.catalog",
            "harness.governance",
            "harness.recall",
            "harness.waits",
            "harness.engine",
        }
    ),
    "starter": frozenset(),
    "starter.pages": frozenset(),
    "starter.servers": frozenset({"starter"}),
    "starter.web": frozenset({"starter", "starter.pages"}),
    "starter.cli": frozenset({"starter", "starter.servers", "starter.pages", "starter.web"}),
}
"""Each room and the rooms it may import. `starter` is what the CLI alone uses (the Python API
it shares is the public package's); the package `harness` itself is the front door
that re-exports the domain, and no room imports it."""

CLI_MODULES = frozenset({"errors", "output", "plan_files"})
"""What stays at the top of `starter/`: what the CLI alone uses (its errors and exit codes, its
output, plan and scenario files). The Python API and the modules it uses moved to the public
package (`durable_harness/client.py`, `durable_harness/_client/`)."""


PUBLIC_PACKAGE = "durable_harness"
PUBLIC_MAY_IMPORT = frozenset({"harness", "infra", "tool_servers"})
"""The project's packages the public package may import: the domain, the settings it exports, and
the configuration of an MCP server (`tool_servers.config`, pydantic only) as the type of a pack's
`mcp_servers`, read only while type checking. The built-in scenarios lean on it (a tool's run-time
model is its), so it importing them would close a loop."""

CLIENT = ("client.py", "_client")
"""The client's part of the public package, which may also import the workflows' names (to
query and signal them), and nothing else more: not `starter`, the CLI that imports it."""
CLIENT_MAY_IMPORT = PUBLIC_MAY_IMPORT | {"workflows"}

TESTING = "testing.py"
"""The pytest fixtures for a pack's tests (`durable_harness.testing`), which start a worker, and so
may import it and what it runs; only tests import this module."""
TESTING_MAY_IMPORT = CLIENT_MAY_IMPORT | {"worker", "activities", "memory", "scenarios"}

NEVER_IMPORT_PUBLIC = ("harness", "workflows")
"""The layers under the public face: they never import it (the public package leans on them)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(module: str) -> str | None:
    """The room a module of `harness` or `starter` is in: its sub-package, or the top."""
    parts = module.split(".")
    if parts[0] not in ("harness", "starter"):
        return None
    candidate = ".".join(parts[:2])
    return candidate if candidate in MAY_IMPORT else parts[0]


def imported(tree: ast.AST, package_dir: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for each import: `from harness import x` counts as `harness.x` when x is a
    module or package, else as `harness` itself."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            base = ROOT / Path(*node.module.split("."))
            for alias in node.names:
                child = base / alias.name
                is_module = child.with_suffix(".py").exists() or (child / "__init__.py").exists()
                yield node.lineno, f"{node.module}.{alias.name}" if is_module else node.module


def sources() -> list[Path]:
    return sorted([*(ROOT / "harness").rglob("*.py"), *(ROOT / "starter").rglob("*.py")])


def edges() -> list[tuple[str, str, str]]:
    """(importing room, imported room, where) for every import between two rooms of `harness`, or
    two of `starter`."""
    found = []
    for path in sources():
        module = module_name(path)
        if module == "harness":
            continue  # the front door re-exports every room
        source = room_of(module)
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, name in imported(tree, path.parent):
            target = room_of(name)
            if source is None or target is None or target == source:
                continue
            if source.split(".")[0] != target.split(".")[0]:
                continue  # starter uses the domain; the domain's own purity is tested elsewhere
            where = f"{path.relative_to(ROOT)}:{line} imports {name}"
            found.append((source, target, where))
    return found


def cycle_in(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as a path of its nodes, or [] when there is none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for after in sorted(graph.get(node, ())):
            if state.get(after) == 1:
                return [*stack[stack.index(after) :], after]
            if after not in state and (found := visit(after)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_allowed_arrows_close_no_cycle() -> None:
    assert cycle_in({room: set(allowed) for room, allowed in MAY_IMPORT.items()}) == []


def test_every_import_between_rooms_follows_an_allowed_arrow() -> None:
    wrong = [
        f"{where}: {source} may import {', '.join(sorted(MAY_IMPORT[source])) or 'no other room'}"
        for source, target, where in edges()
        if target not in MAY_IMPORT.get(source, frozenset())
    ]
    assert wrong == []


def test_the_imports_between_rooms_close_no_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for source, target, _ in edges():
        graph.setdefault(source, set()).add(target)
    assert cycle_in(graph) == []


def test_every_module_of_harness_is_in_a_room() -> None:
    loose = sorted(p.name for p in (ROOT / "harness").glob("*.py") if p.name != "__init__.py")
    assert loose == []


def test_the_top_of_starter_holds_only_what_the_cli_alone_uses() -> None:
    top = {p.stem for p in (ROOT / "starter").glob("*.py") if p.stem != "__init__"}
    assert top - CLI_MODULES == set()


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_each_room_opens_with_what_it_owns_and_what_it_may_import(room: str) -> None:
    init = ROOT / Path(*room.split(".")) / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    assert "import" in doc.lower(), f"{init.relative_to(ROOT)} says nothing of its imports"


def test_a_cycle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycle_in(graph) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": set()}) == []


def _project_imports(package: str) -> list[tuple[str, str]]:
    """(where, top-level package) for every import of a project package in `package`'s files."""
    project = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, name in imported(tree, path.parent):
            top = name.split(".")[0]
            if top in project and top != package:
                found.append((f"{path.relative_to(ROOT)}:{line} imports {name}", top))
    return found


def _may_import(where: str) -> frozenset[str]:
    part = where.split(":")[0].split("/")[1]
    if part == TESTING:
        return TESTING_MAY_IMPORT
    return CLIENT_MAY_IMPORT if part in CLIENT else PUBLIC_MAY_IMPORT


def test_the_public_package_imports_only_the_domain_and_its_client_the_workflows_too() -> None:
    wrong = [
        where for where, top in _project_imports(PUBLIC_PACKAGE) if top not in _may_import(where)
    ]
    assert wrong == []
    init = ROOT / PUBLIC_PACKAGE / "__init__.py"
    assert "import" in (ast.get_docstring(ast.parse(init.read_text())) or "").lower()


@pytest.mark.parametrize("package", NEVER_IMPORT_PUBLIC)
def test_the_layers_under_the_public_package_never_import_it(package: str) -> None:
    assert [where for where, top in _project_imports(package) if top == PUBLIC_PACKAGE] == []
