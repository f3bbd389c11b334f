"""`durable_harness` is the one import a user needs: every name it exports exists and says what
it is, its public modules export only names they have, and no snippet of the README or the docs
imports from an internal module (the top-level packages of the design card, or a module whose
name starts with `_`)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re

import durable_harness
from starter.cli.pack_template import PROJECT_PACKAGES
from tests.docs_pages import blocks, markdown_files

INTERNAL_PACKAGES = PROJECT_PACKAGES - {"durable_harness"}
"""The project's own top-level packages other than `durable_harness`: internal, whatever they
hold (docs/architecture.md)."""


def _is_internal(module: str) -> bool:
    parts = module.split(".")
    private = any(part.startswith("_") and not part.startswith("__") for part in parts)
    return parts[0] in INTERNAL_PACKAGES or private  # `__future__` is no private module


def internal_imports(source: str) -> list[str]:
    """The modules `source` imports that a user should not: internal packages, private
    modules (`durable_harness._client`)."""
    found: list[str] = []
    for statement in ast.walk(ast.parse(source)):
        if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            found.append(statement.module)
        elif isinstance(statement, ast.Import):
            found.extend(alias.name for alias in statement.names)
    return [module for module in found if _is_internal(module)]


def _own_docstring(value: object) -> str:
    """The docstring `value` itself declares: not one inherited, nor the signature a dataclass
    writes for itself when it has none."""
    doc = vars(value).get("__doc__") if isinstance(value, type) else getattr(value, "__doc__", "")
    name = getattr(value, "__name__", "")
    if not isinstance(doc, str) or doc.startswith(f"{name}("):
        return ""
    return doc.strip()


def test_every_name_the_package_exports_exists_with_a_docstring_of_its_own() -> None:
    undocumented = [
        name
        for name in durable_harness.__all__
        if not _own_docstring(getattr(durable_harness, name))
    ]
    assert undocumented == []


def test_every_public_module_of_the_package_exports_only_names_it_has() -> None:
    public = [
        f"durable_harness.{info.name}"
        for info in pkgutil.iter_modules(durable_harness.__path__)
        if not info.name.startswith("_")
    ]
    assert "durable_harness.tasks" in public
    missing = [
        f"{name}.{exported}"
        for name in public
        for exported in getattr(importlib.import_module(name), "__all__", [])
        if not hasattr(importlib.import_module(name), exported)
    ]
    assert missing == []


def test_no_snippet_of_the_readme_or_the_docs_imports_an_internal_module() -> None:
    """Excerpts of the project's own files (a block whose first line names its file) show
    internal code on purpose; every other snippet is what a user would write."""
    problems = [
        f"{block.where}: {module}"
        for path in markdown_files()
        for block in blocks(path)
        if block.lang == "python"
        and not re.fullmatch(r"# [\w/]+\.py", block.body.lstrip().split("\n", 1)[0])
        for module in internal_imports(block.body)
    ]
    assert problems == []


def test_the_import_check_finds_internal_and_private_modules_and_passes_public_ones() -> None:
    source = (
        "import asyncio\n"
        "import harness.core.plan\n"
        "from durable_harness import Harness\n"
        "from durable_harness.tasks import Complete\n"
        "from durable_harness._client import tasks\n"
        "from starter.cli import app\n"
        "from infra.client import connect\n"
        "from . import sibling\n"
    )
    assert internal_imports(source) == [
        "harness.core.plan",
        "durable_harness._client",
        "starter.cli",
        "infra.client",
    ]
