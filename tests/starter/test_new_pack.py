"""`harness new pack NAME` refuses a name that cannot be a pack's package, and a directory that
exists, in one line and exit 2, writing nothing (tests/starter/test_new_pack_installs.py installs
what it writes and runs its tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from starter.cli.app import build_parser
from starter.cli.cli_handlers import dispatch
from starter.cli.pack_template import PROJECT_PACKAGES, name_problem, write_pack
from starter.errors import EXIT_USAGE, CliError
from tests.docs_pages import blocks

ROOT = Path(__file__).parent.parent.parent


def _new_pack(name: str, where: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.chdir(where)
    return dispatch(build_parser().parse_args(["new", "pack", name]))


@pytest.mark.parametrize("name", ["demo", "weather_2", "a"])
def test_a_lowercase_python_name_can_name_a_pack(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ["Demo", "my-pack", "2fast", "_hidden", "", "a" * 65, "x.y"])
def test_a_name_that_is_not_a_lowercase_python_name_is_refused_saying_what_to_use(
    name: str,
) -> None:
    assert name_problem(name) == (
        f"pack name {name!r}: use 1 to 64 lowercase letters, digits and _, starting with a "
        "letter (it names the directory, the Python package and the pack)"
    )


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("class", "is a Python keyword"),
        ("json", "is taken by a Python module it would shadow"),
        ("scenarios", "is taken by a Python module it would shadow"),
        ("cities", "is a built-in pack's"),
    ],
)
def test_a_name_a_keyword_a_module_or_a_built_in_pack_has_is_refused(name: str, why: str) -> None:
    assert name_problem(name) == f"pack name {name!r} {why}; pick another"


def test_the_refused_module_names_are_the_projects_own_packages() -> None:
    assert {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()} == PROJECT_PACKAGES


def test_a_bad_name_is_refused_with_exit_2_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(CliError) as refused:
        _new_pack("My-Pack", tmp_path, monkeypatch)
    assert refused.value.exit_code == EXIT_USAGE
    assert list(tmp_path.iterdir()) == []


def test_an_existing_directory_is_refused_with_exit_2_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "notes.txt").write_text("mine")
    with pytest.raises(CliError) as refused:
        _new_pack("demo", tmp_path, monkeypatch)
    assert refused.value.exit_code == EXIT_USAGE
    assert (
        str(refused.value) == f"{tmp_path / 'demo'} already exists; pick another name or remove it"
    )
    assert [p.name for p in (tmp_path / "demo").iterdir()] == ["notes.txt"]


def test_every_snippet_of_the_your_own_tools_page_is_part_of_what_the_template_writes(
    tmp_path: Path,
) -> None:
    """The page walks through the package `harness new pack greetings` writes, whose own tests
    pass installed (test_new_pack_installs): each code block is a piece of one of its files."""
    root = write_pack("greetings", tmp_path)
    written = [path.read_text() for path in root.rglob("*") if path.is_file()]
    page = ROOT / "docs" / "your-own-tools.md"
    snippets = [
        block
        for block in blocks(page)
        if block.lang in ("python", "json", "yaml") or block.body.startswith("[")
    ]
    assert len(snippets) == 7
    assert [b.where for b in snippets if not any(b.body in text for text in written)] == []
