"""The docs stay true to the code: every fenced block is a command the CLI parses, a snippet that
compiles or a file format the code reads (the ones that matter are run by the tests named
beside them); every link resolves; the CLI and environment references are the code's; and the
site builds strictly, failing on a broken link."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import pytest
import yaml

from harness.engine.run_state import describe_transitions
from starter.cli.app import build_parser
from tests.docs_pages import (
    DOCS,
    README,
    ROOT,
    Block,
    block_after,
    blocks,
    markdown_files,
    page,
    python_block_defining,
)
from tests.docs_reference import CLI_PAGE, cli_reference, generated_section, variables_in_code

ALL_BLOCKS = [block for path in markdown_files() for block in blocks(path)]
COMMAND_LANGS = {"bash"}
SNIPPET_LANGS = {"python", "json", "yaml"}
OUTPUT_LANGS = {"text", "mermaid"}  # what a command prints, and pictures: nothing to run
EXTERNAL_COMMANDS = {
    *("temporal", "docker", "pip", "export", "git", "head"),
    *("llama-server", "ollama", "vllm"),  # docs/local-models.md: model servers
    *("apt-cache", "apt-get", "dpkg", "echo"),  # docs/local-model-smoke.md: a Debian package
    "curl",  # docs/web.md: resuming a stream (tests/web/test_run_stream.py runs them)
}
"""Commands of other tools the docs show; the harness's own, `make` and `python -m` are checked."""
EXTERNAL_MODULES = {"llama_cpp.server"}
"""`python -m` modules of other tools the docs show (model servers, not installed here)."""
SDK_VARIABLES = {
    "TEMPORAL_API_KEY",
    "TEMPORAL_TLS",
    "TEMPORAL_TLS_CLIENT_CERT_PATH",
    "TEMPORAL_TLS_CLIENT_KEY_PATH",
    "TEMPORAL_CODEC_ENDPOINT",
}
"""Variables the docs name that the Temporal SDK's configuration or the `temporal` CLI reads."""


# --- snippets pinned to the code -------------------------------------------------------------


def test_the_concepts_state_machine_is_the_declared_transition_table() -> None:
    block = block_after(page("concepts"), "as `harness/engine/run_state.py` declares it", "text")
    assert block.strip().splitlines() == describe_transitions()


def test_the_concepts_plan_json_is_a_valid_cities_plan() -> None:
    from harness.core.plan import Plan
    from harness.engine.validation import validate_plan
    from scenarios import get_scenario

    block = block_after(page("concepts"), "## Plans and validation", "json")
    plan = Plan.model_validate_json(block)
    assert validate_plan(plan, get_scenario("cities").catalog()) == []


def test_the_evals_case_file_example_is_a_valid_case_file(tmp_path: Path) -> None:
    from starter.cli.eval_files import read_case_file

    block = block_after(page("evals"), "## Writing a case file", "yaml")
    (tmp_path / "eval_plans").mkdir()
    (tmp_path / "eval_plans" / "unknown-tool.json").write_text(
        '{"nodes": [{"id": "r", "tool": "nope", "arguments": [], "deps": []}]}'
    )
    (tmp_path / "cases.yaml").write_text(block)
    (case,) = read_case_file(tmp_path / "cases.yaml").cases
    assert case.options.plan is not None and case.expect.mentions == ["Paris", "Tokyo"]


def test_the_mcp_configuration_is_one_a_worker_reads_and_says_which_token_it_needs() -> None:
    from tool_servers.config import parse_servers

    text = page("tools-and-mcp")
    marker = "## Adding servers to a worker"
    block = block_after(text, marker, "json")
    servers = {server.name: server for server in parse_servers(json.loads(block), "docs")}
    assert servers["time"].transport == "stdio" and servers["tickets"].transport == "http"
    assert "${TICKETS_TOKEN}" in servers["tickets"].headers["Authorization"]
    before_the_block = text.split(marker, 1)[1].split("```json", 1)[0]
    assert "export\n`TICKETS_TOKEN`" in before_the_block or "TICKETS_TOKEN" in before_the_block
    example = json.loads((DOCS / "examples" / "mcp-time.json").read_text())
    assert example["mcpServers"]["time"] == json.loads(block)["mcpServers"]["time"]
    assert (DOCS / "examples" / "repo-reset.json").exists()


def test_harness_tools_mcp_time_lists_the_configured_time_server_as_the_docs_say(
    tmp_path: Path,
) -> None:
    """The docs' command, run from a clone's root (here a copy, with the project's .venv)."""
    command = block_after(page("tools-and-mcp"), "needs no\ntoken:", "bash").strip()
    assignment, rest = command.split(" ", 1)
    name, value = assignment.split("=", 1)
    (tmp_path / "docs" / "examples").mkdir(parents=True)
    shutil.copy(ROOT / value, tmp_path / value)
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    words = shlex.split(rest)
    assert words[0] == "harness"
    process = subprocess.run(
        [sys.executable, "-m", "starter.cli.app", *words[1:], "--json"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", name: value, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert process.returncode == 0, process.stderr
    tools = {tool["name"] for tool in json.loads(process.stdout)["tools"]}
    assert {"get_current_time", "get_population"} <= tools


# --- every block is checked ------------------------------------------------------------------


def _commands(block: Block) -> list[str]:
    """The block's commands: continuation lines joined, comments dropped, pipes and `&` split."""
    joined = block.body.replace("\\\n", " ")
    commands: list[str] = []
    for line in joined.splitlines():
        code = line.split(" #", 1)[0].strip() if not line.startswith("#") else ""
        for part in re.split(r"\s\|\s|\s&$|&&", code):
            if part.strip():
                commands.append(part.strip())
    return commands


def _without_assignments(words: list[str]) -> list[str]:
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        words = words[1:]
    return words


def _parse_harness(words: list[str]) -> str | None:
    """Why argparse refuses `harness WORDS...`, or None."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            build_parser().parse_args(words)
    except SystemExit as exit_:
        return stderr.getvalue().strip().splitlines()[-1] if exit_.code else None
    return None


def _make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([\w-]+):", makefile, re.MULTILINE))


def _command_problem(command: str) -> str | None:
    words = _without_assignments(shlex.split(command))
    if not words:
        return None
    head = words[0]
    if head == "harness" or head.endswith("/harness"):
        return _parse_harness(words[1:])
    if head == "make":
        unknown = [w for w in words[1:] if "=" not in w and w not in _make_targets()]
        return f"no make target {unknown}" if unknown else None
    if head in ("python", "python3") and words[1:2] == ["-m"]:
        module = words[2]
        if module in EXTERNAL_MODULES:
            return None
        return None if importlib.util.find_spec(module) else f"no module {module}"
    if head in EXTERNAL_COMMANDS or head.startswith(".venv/bin/"):
        return None
    return f"a command the docs tests do not know how to check: {head}"


def test_every_block_of_the_docs_has_a_language_the_tests_know() -> None:
    known = COMMAND_LANGS | SNIPPET_LANGS | OUTPUT_LANGS
    unknown = [f"{b.where} ```{b.lang}" for b in ALL_BLOCKS if b.lang not in known]
    assert unknown == []


@pytest.mark.parametrize(
    "block", [b for b in ALL_BLOCKS if b.lang in COMMAND_LANGS], ids=lambda b: b.where
)
def test_every_command_in_the_docs_is_one_the_project_takes(block: Block) -> None:
    problems = [(c, p) for c in _commands(block) if (p := _command_problem(c))]
    assert problems == []


def _excerpt_of_a_file(body: str) -> bool:
    first = body.lstrip().splitlines()[0] if body.strip() else ""
    return re.fullmatch(r"# [\w/]+\.py", first) is not None


@pytest.mark.parametrize(
    "block", [b for b in ALL_BLOCKS if b.lang in SNIPPET_LANGS], ids=lambda b: b.where
)
def test_every_snippet_in_the_docs_parses(block: Block) -> None:
    if block.lang == "python" and _excerpt_of_a_file(block.body):
        # an excerpt of a function's body (it names its file in its first line, and another
        # test holds it to that file): it must parse as the body of a function
        compile(
            "async def _excerpt():\n" + textwrap.indent(block.body, "    "), block.where, "exec"
        )
    elif block.lang == "python":
        compile(block.body, block.where, "exec")
    elif block.lang == "json":
        json.loads(block.body)
    else:
        yaml.safe_load(block.body)


def _leaf(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    for word in words:
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not nested or word not in nested[0].choices:
            break
        parser = nested[0].choices[word]
    return parser


def test_every_harness_command_written_in_the_docs_exists_with_the_flags_it_shows() -> None:
    """Inline `harness ...` spans, in the prose and the tables: the command exists, and each
    `--flag` the span shows is one of that command's options."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    problems: list[str] = []
    for path in markdown_files():
        text = path.read_text()
        for span in re.findall(r"`(harness [^`]+)`", text):
            words = span.replace("\\|", "|").split()
            if words[1].startswith("-"):  # a flag of `harness` itself (--version, --help)
                if words[1] not in parser._option_string_actions:
                    problems.append(f"{path.name}: `{span}`: no option {words[1]!r}")
                continue
            if words[1] not in commands.choices:
                problems.append(f"{path.name}: `{span}`: no command {words[1]!r}")
                continue
            leaf = _leaf(parser, words[1:])
            options = {o for a in leaf._actions for o in a.option_strings}
            options |= {o for a in parser._actions for o in a.option_strings}
            for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", span):
                if flag not in options:
                    problems.append(f"{path.name}: `{span}`: {flag} is not an option")
    assert problems == []


def test_each_refund_walkthrough_pays_orders_no_other_walkthrough_pays() -> None:
    """Told in any order on one payment service, each walkthrough finds its orders unpaid: the
    seeds' story failed when the getting-started refund had already paid its order."""
    paid_by: dict[str, set[str]] = {}
    for block in ALL_BLOCKS:
        if block.lang in COMMAND_LANGS:
            for order in re.findall(r'harness run "Refund order (A-\d+)', block.body):
                paid_by.setdefault(order, set()).add(block.where)
    assert paid_by, "the docs no longer tell a refund walkthrough"
    shared = {order: sorted(where) for order, where in paid_by.items() if len(where) > 1}
    assert shared == {}


# --- links -----------------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's toc gives a heading (its default slugify)."""
    text = re.sub(r"`|\*\*", "", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(path: Path) -> set[str]:
    text = path.read_text()
    text += "".join(
        (ROOT / included).read_text() for included in re.findall(r'--8<-- "([^"]+)"', text)
    )
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def _broken_links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # https:, mailto:
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists():
            broken.append(f"{path.name}: {target}: no file {file}")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{path.name}: {target}: no heading #{anchor}")
    return broken


def test_every_link_in_the_readme_and_the_docs_resolves() -> None:
    broken = [problem for path in markdown_files() for problem in _broken_links(path)]
    assert broken == []


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    """The link check can fail: a page that links to a missing file and a missing heading."""
    (tmp_path / "other.md").write_text("# Other\n\n## Present\n")
    bad = tmp_path / "page.md"
    links = "[a](missing.md) [b](other.md#absent) [c](other.md#present) [d](#page)"
    bad.write_text(f"{links}\n# Page\n")
    assert _broken_links(bad) == [
        "page.md: missing.md: no file missing.md",
        "page.md: other.md#absent: no heading #absent",
    ]


# --- references written from the code --------------------------------------------------------


def test_the_cli_reference_is_the_parsers() -> None:
    """After changing a command: `python -m tests.docs_reference` writes the section again."""
    assert generated_section(CLI_PAGE.read_text()) == cli_reference()


def test_every_environment_variable_the_code_reads_is_in_the_configuration_page() -> None:
    text = page("configuration")
    documented = set(re.findall(r"`([A-Z][A-Z0-9]*_[A-Z0-9_]+)`", text))
    read = variables_in_code()
    missing = {name: sorted(files) for name, files in read.items() if name not in documented}
    assert missing == {}
    table_names = {
        name
        for row in re.findall(r"^\| (`[A-Z].*?) \|", text, re.MULTILINE)
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row)
    }
    assert table_names - set(read) - SDK_VARIABLES == set()


# --- the site --------------------------------------------------------------------------------


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    built = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "architecture" / "index.html").exists()


def test_the_strict_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    """A copy of the site with one link to a page that does not exist does not build."""
    copy = tmp_path / "copy"
    shutil.copytree(DOCS, copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copytree(ROOT / "bench", copy / "bench", ignore=shutil.ignore_patterns("*.py"))
    index = copy / "docs" / "index.md"
    index.write_text(index.read_text() + "\nSee [a page](no-such-page.md).\n")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode != 0
    assert "no-such-page.md" in built.stderr


def test_every_page_of_the_docs_is_in_the_site_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    nav = set(re.findall(r":\s*([\w-]+\.md)\s*$", config, re.MULTILINE))
    assert nav == {path.name for path in DOCS.glob("*.md")}
    assert README.exists()


def test_the_docs_git_server_snippet_is_the_repo_scenarios_own() -> None:
    import ast

    def function(source: str) -> str:
        tree = ast.parse(source)
        found = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
        return ast.dump(found)

    snippet = python_block_defining(page("tools-and-mcp"), "git_server")
    code = (ROOT / "scenarios" / "repo" / "__init__.py").read_text()
    code_function = code[code.index("def git_server") :]
    assert function(snippet) == function(code_function.split("\n\n\n", 1)[0])
