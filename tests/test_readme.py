"""The README stays true: its two commands are what CI and the Makefile run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.run_state import describe_transitions
from starter.cli import build_parser

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def _two_commands_block() -> list[str]:
    section = README.split("## Two commands", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_readme_names_make_demo_and_make_test_as_the_two_commands() -> None:
    assert _two_commands_block() == ["make demo", "make test"]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """After installing the one system package the tests need (Debian's Postgres server, when
    missing), CI runs the README's test command and nothing else."""
    script = (ROOT / ".ci" / "run").read_text()
    install = script.split("\nif ", 1)[1].split("\nfi\n", 1)[0]
    assert "apt-get install -y -qq postgresql" in install
    rest = script.split("\nfi\n", 1)[1]
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


def test_every_cli_command_in_the_readme_exists() -> None:
    documented = set(re.findall(r"`harness ([\w-]+)", README))
    parser = build_parser()
    choices = next(action.choices for action in parser._actions if action.dest == "command")
    assert choices is not None
    assert documented <= set(choices)


def test_the_readme_state_machine_is_the_declared_transition_table() -> None:
    section = README.split("as `harness/run_state.py` declares it", 1)[1]
    block = section.split("```text", 1)[1].split("```", 1)[0]
    assert block.strip().splitlines() == describe_transitions()


def test_the_readme_signing_snippet_signs_a_delivery_the_run_would_take(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.signatures import signature_problem
    from harness.wait_book import WaitKind
    from infra.signing import new_private_key, public_key, verify

    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    snippet = next(block for block in blocks if "def signed_outcome" in block)
    key = new_private_key()
    (tmp_path / "payments.key").write_text(key)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
    signed_outcome = namespace["signed_outcome"]
    assert callable(signed_outcome)
    request = signed_outcome("run-1", "pay-1", {"status": "paid"})
    keys = {"system:payments": public_key(key)}
    assert signature_problem("run-1", request, WaitKind.ASYNC_OPERATION, keys, verify) is None
    assert signature_problem("run-2", request, WaitKind.ASYNC_OPERATION, keys, verify)


def test_the_readme_plan_json_is_a_valid_cities_plan() -> None:
    from harness.plan import Plan
    from harness.validation import validate_plan
    from scenarios import get_scenario

    block = README.split("### Plan JSON", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    plan = Plan.model_validate_json(block)
    assert validate_plan(plan, get_scenario("cities").catalog()) == []


def test_the_readme_case_file_example_is_a_valid_case_file(tmp_path: Path) -> None:
    from starter.eval_files import read_case_file

    block = README.split("### Writing a case file", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    (tmp_path / "eval_plans").mkdir()
    (tmp_path / "eval_plans" / "unknown-tool.json").write_text(
        '{"nodes": [{"id": "r", "tool": "nope", "arguments": [], "deps": []}]}'
    )
    (tmp_path / "cases.yaml").write_text(block)
    (case,) = read_case_file(tmp_path / "cases.yaml").cases
    assert case.options.plan is not None and case.expect.mentions == ["Paris", "Tokyo"]


def test_the_readme_mcp_configuration_is_one_a_worker_reads() -> None:
    from tool_servers.config import parse_servers

    section = README.split("## Tools from MCP servers", 1)[1].split("\n## ", 1)[0]
    block = section.split("```json", 1)[1].split("```", 1)[0]
    servers = {server.name: server for server in parse_servers(json.loads(block), "README")}
    assert servers["time"].transport == "stdio" and servers["tickets"].transport == "http"
    assert "${TICKETS_TOKEN}" in servers["tickets"].headers["Authorization"]
    assert (ROOT / "docs/examples/repo-reset.json").exists()
