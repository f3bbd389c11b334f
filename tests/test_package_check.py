"""The project's package data, checked without building anything: every file of the package
folders that is not a module (eval cases, their plans, the baseline...) is declared in
pyproject.toml, so the wheel holds it. `make package` builds the wheel and checks it too."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from tests.package_check import (
    ROOT,
    missing_from_wheel,
    package_folders,
    source_files,
    undeclared_data_files,
)

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_data_file_of_the_package_folders_is_declared_package_data() -> None:
    package_data = PYPROJECT["tool"]["setuptools"].get("package-data", {})
    folders = package_folders(PYPROJECT)
    assert undeclared_data_files(ROOT, folders, package_data) == []


def test_the_shipped_folders_are_the_ones_pyproject_includes() -> None:
    folders = package_folders(PYPROJECT)
    assert {"durable_harness", "harness", "scenarios", "starter", "worker"} <= set(folders)
    assert "tests" not in folders and "examples" not in folders


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


def test_a_data_file_no_pattern_declares_is_named(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        [
            "pack/__init__.py",
            "pack/cities/__init__.py",
            "pack/cities/eval_cases.yaml",
            "pack/cities/eval_plans/one.json",
            "pack/cities/notes.txt",
            "pack/baseline.json",
        ],
    )
    declared = {"*": ["eval_cases.yaml", "eval_plans/*.json"], "pack": ["baseline.json"]}
    assert undeclared_data_files(tmp_path, ["pack"], declared) == ["pack/cities/notes.txt"]
    assert undeclared_data_files(tmp_path, ["pack"], {}) == [
        "pack/baseline.json",
        "pack/cities/eval_cases.yaml",
        "pack/cities/eval_plans/one.json",
        "pack/cities/notes.txt",
    ]


def test_what_python_writes_beside_the_source_is_not_a_file_to_ship(tmp_path: Path) -> None:
    _tree(tmp_path, ["pack/__init__.py", "pack/__pycache__/x.cpython-311.pyc", "pack/y.pyc"])
    assert source_files(tmp_path, ["pack"]) == ["pack/__init__.py"]


def test_a_file_the_wheel_leaves_out_is_named() -> None:
    sources = ["scenarios/cities/data.py", "scenarios/cities/eval_cases.yaml"]
    wheel = ["scenarios/cities/data.py", "durable_harness-0.10.0.dist-info/RECORD"]
    assert missing_from_wheel(sources, wheel) == ["scenarios/cities/eval_cases.yaml"]
    assert missing_from_wheel(sources[:1], wheel) == []


def test_the_temporal_and_llm_sdks_are_bounded_below_their_next_major_version() -> None:
    """A new major version of an SDK the workflows or providers call may change what they
    rely on; a user's install must not take it before the project has been tested on it."""
    bounded = {"temporalio", "anthropic", "openai", "mcp"}
    found: dict[str, str] = {}
    for line in PYPROJECT["project"]["dependencies"]:
        requirement = Requirement(line)
        if requirement.name in bounded:
            found[requirement.name] = str(requirement.specifier)
    assert set(found) == bounded
    for name, specifier in found.items():
        uppers = [part for part in specifier.split(",") if part.startswith("<")]
        assert len(uppers) == 1 and uppers[0].removeprefix("<").isdigit(), (name, specifier)
