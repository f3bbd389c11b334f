"""The README stays a front page that tells the truth: short, its two commands are what CI and
the Makefile run, and it links to the pages a newcomer needs."""

from __future__ import annotations

import re

from tests.docs_pages import README, ROOT

TEXT = README.read_text()
MAX_README_LINES = 250


def _two_commands_block() -> list[str]:
    section = TEXT.split("## Two commands", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_readme_names_make_demo_and_make_test_as_the_two_commands() -> None:
    assert _two_commands_block() == ["make demo", "make test"]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """After installing the system packages the tests need (Debian's Postgres server and
    Chromium, each when missing), CI runs the README's test command and nothing else."""
    script = (ROOT / ".ci" / "run").read_text()
    install, rest = script.rsplit("\nfi\n", 1)
    assert "missing+=(postgresql)" in install
    assert "missing+=(chromium)" in install
    assert 'apt-get install -y -qq "${missing[@]}"' in install
    commands = [
        line.strip()
        for line in rest.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "set ", "cd "))
    ]
    assert commands == [_two_commands_block()[1]]


def test_make_targets_create_the_virtual_environment_when_missing() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^demo: \$\(STAMP\)", makefile, re.MULTILINE)
    assert re.search(r"^test: \$\(STAMP\)", makefile, re.MULTILINE)
    assert "-m venv $(VENV)" in makefile
    assert "$(UV) sync --locked --extra dev" in makefile  # from uv.lock, showing each package
    assert re.search(r"^stop:", makefile, re.MULTILINE)


def test_make_test_builds_the_docs_strictly() -> None:
    """`make test` runs `make docs`, which is `mkdocs build --strict`: CI fails on a broken
    link or a page left out of the site."""
    makefile = (ROOT / "Makefile").read_text()
    test_recipe = makefile.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "docs" in test_recipe.split(), "make test no longer runs make docs"
    docs_recipe = makefile.split("\ndocs: ", 1)[1].split("\n\n", 1)[0]
    assert "mkdocs build --strict" in docs_recipe


def test_the_readme_is_a_front_page_under_250_lines() -> None:
    lines = len(TEXT.splitlines())
    assert lines < MAX_README_LINES, f"README.md has {lines} lines; move reference into docs/"


def test_the_readme_links_to_running_a_goal_answering_a_wait_and_tasks() -> None:
    links = set(re.findall(r"\]\((docs/[^)#]+)", TEXT))
    assert {"docs/getting-started.md", "docs/waits.md", "docs/tasks.md"} <= links


def test_the_readme_python_example_is_about_ten_lines_and_is_the_python_api_pages() -> None:
    """The front page's example is short, and the Python API page shows the same script, so the
    one that test_client.py runs is the one both pages show."""
    from tests.docs_pages import block_after, page

    script = block_after(TEXT, "## From Python", "python")
    code = [line for line in script.splitlines() if line.strip()]
    assert len(code) <= 12, f"the README's example has {len(code)} lines of code"
    assert block_after(page("python-api"), "# Python API", "python") == script
