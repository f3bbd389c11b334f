"""One registry of patch ids (workflows.patches, a module per workflow): every id the workflow
code asks is in it, with its date, release and reason; every entry is asked somewhere; every
workflow's module is in the registry; every patch marker a recorded history carries names an
entry. A new patch cannot skip the registry, and a patch cannot be removed while a recorded
history still crosses it."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.history_manifests import HISTORIES, crossed_patches, recorded_histories
from workflows import patches
from workflows.patches import BY_ID, PATCHES, Patch

REGISTRY = Path(patches.__file__).parent
WORKFLOWS = REGISTRY.parent
PATCH_CALLS = {"patched", "deprecate_patch"}


@dataclass(frozen=True)
class Asked:
    """One `workflow.patched(...)` in the workflow code: the constant it names, whether it is
    numbered (an f-string that starts with the constant), and where."""

    constant: str | None
    numbered: bool
    where: str


def _imported_from_registry(tree: ast.Module) -> set[str]:
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "workflows.patches"
        for alias in node.names
    }


def _constant_of(argument: ast.expr) -> tuple[str | None, bool]:
    if isinstance(argument, ast.Name):
        return argument.id, False
    if isinstance(argument, ast.JoinedStr) and argument.values:
        first = argument.values[0]
        if isinstance(first, ast.FormattedValue) and isinstance(first.value, ast.Name):
            return first.value.id, True
    return None, False


def _assigned(tree: ast.Module) -> dict[str, ast.expr]:
    """`patch = f"{IDENTITY_PATCH}:..."` before `workflow.patched(patch)`: what a name holds."""
    return {
        target.id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def asked_in(path: Path) -> Iterator[Asked]:
    tree = ast.parse(path.read_text(), filename=str(path))
    imported = _imported_from_registry(tree)
    assigned = _assigned(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in PATCH_CALLS:
            continue
        where = f"{path.relative_to(WORKFLOWS.parent)}:{node.lineno}"
        argument = node.args[0] if node.args else None
        if isinstance(argument, ast.Name) and argument.id not in imported:
            argument = assigned.get(argument.id)
        constant, numbered = _constant_of(argument) if argument else (None, False)
        yield Asked(constant if constant in imported else None, numbered, where)


def all_asked() -> list[Asked]:
    return [asked for path in sorted(WORKFLOWS.rglob("*.py")) for asked in asked_in(path)]


def test_every_patch_the_workflow_code_asks_is_imported_from_the_registry() -> None:
    stray = [asked.where for asked in all_asked() if asked.constant is None]
    assert not stray, (
        "workflow.patched(...) takes a constant imported from workflows.patches (add the id "
        f"there, with its date, release and reason): {stray}"
    )


def test_every_id_asked_is_registered_and_every_registered_id_is_asked() -> None:
    asked = {getattr(patches, a.constant) for a in all_asked() if a.constant is not None}
    registered = set(BY_ID)
    assert asked - registered == set(), "asked but not in workflows.patches.PATCHES"
    assert registered - asked == set(), "registered but asked nowhere: remove or use it"


def test_a_numbered_patch_is_registered_as_numbered() -> None:
    numbered = {getattr(patches, a.constant) for a in all_asked() if a.numbered and a.constant}
    assert numbered == {patch.id for patch in PATCHES if patch.numbered}


def test_no_patch_id_is_spelt_outside_the_registry() -> None:
    """A `X_PATCH = "..."` elsewhere would be an id the registry does not know of."""
    spelt = re.compile(r'^\s*[A-Z_]+_PATCH\s*=\s*[f]?"', re.MULTILINE)
    elsewhere = [
        str(path.relative_to(WORKFLOWS.parent))
        for path in sorted(WORKFLOWS.rglob("*.py"))
        if REGISTRY not in path.parents and spelt.search(path.read_text())
    ]
    assert not elsewhere


def test_each_registered_patch_has_a_date_a_release_and_a_reason() -> None:
    assert len(BY_ID) == len(PATCHES), "an id registered twice"
    for patch in PATCHES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", patch.id), patch.id
        assert re.fullmatch(r"([0-9a-f]{7,40})?", patch.commit), patch.id
        assert re.fullmatch(r"\d+\.\d+\.\d+", patch.release), patch.id
        assert len(patch.reason) > 20, patch.id
    for name, entries in _modules_of_the_registry().items():
        dates = [patch.added for patch in entries]
        assert dates == sorted(dates), f"{name} reads in the order its patches came"


def test_the_registry_holds_every_workflows_patches_and_nothing_else() -> None:
    """A workflow's module whose entries the registry leaves out would be ids nobody checks."""
    modules = _modules_of_the_registry()
    assert {"run", "task", "scope"} <= set(modules), "the registry found no module per workflow"
    held = [patch.id for entries in modules.values() for patch in entries]
    assert sorted(held) == sorted(patch.id for patch in PATCHES)


def _modules_of_the_registry() -> dict[str, tuple[Patch, ...]]:
    """Each module of workflows.patches that lists patches (one per workflow): its entries."""
    found: dict[str, tuple[Patch, ...]] = {}
    for module in pkgutil.iter_modules(patches.__path__):
        entries = getattr(
            importlib.import_module(f"{patches.__name__}.{module.name}"), "PATCHES", None
        )
        if entries is not None:
            found[module.name] = entries
    return found


def test_every_patch_marker_in_a_recorded_history_names_a_registered_patch() -> None:
    """Retire the histories that cross a patch before removing it (see
    docs/changing-workflow-code.md): they would no longer replay."""
    unknown = {
        f"{path.relative_to(HISTORIES)}: {marker}"
        for path in recorded_histories()
        for marker in crossed_patches(path)
        if _registered_id(marker) is None
    }
    assert not unknown


def _registered_id(marker: str) -> str | None:
    """`task-contract-v1:2:1` is the numbered patch `task-contract-v1`."""
    if marker in BY_ID:
        return marker
    base = marker.split(":", 1)[0]
    return base if base in BY_ID and BY_ID[base].numbered else None
