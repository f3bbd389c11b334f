"""`harness new pack NAME`: a pack's package, ready to install and test. NAME names the directory,
the distribution, the Python package and the pack; the files are written only when every one of
them can be (a bad name or an existing directory: one line, exit 2, nothing written).

The package as written installs (`pip install ./NAME`) and passes its own tests (`pytest NAME`):
tests/starter/test_new_pack_installs.py installs one and runs them."""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path
from string import Template

from scenarios.registry import BUILT_IN_PACKS
from starter.errors import CliError

PACKAGE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""A name that is at once a pack's name (durable_harness.pack.PACK_NAME) and a Python package's."""

PROJECT_PACKAGES = frozenset(
    {
        "activities",
        "bench",
        "durable_harness",
        "harness",
        "infra",
        "memory",
        "payments",
        "scenarios",
        "starter",
        "tests",
        "tool_servers",
        "worker",
        "workflows",
    }
)
"""The project's own top-level packages (pyproject.toml), which a pack's package would shadow."""

BUILT_IN_PACK_NAMES = frozenset(value.split(":")[0].split(".")[-1] for value in BUILT_IN_PACKS)
"""The built-in packs' names: a second pack with one of them would stop every worker that loads
both."""


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a new pack, in words that say what to use instead; None if it can."""
    if not PACKAGE_NAME.fullmatch(name):
        return (
            f"pack name {name!r}: use 1 to 64 lowercase letters, digits and _, starting with a "
            "letter (it names the directory, the Python package and the pack)"
        )
    if keyword.iskeyword(name):
        return f"pack name {name!r} is a Python keyword; pick another"
    if name in PROJECT_PACKAGES or name in sys.stdlib_module_names:
        return f"pack name {name!r} is taken by a Python module it would shadow; pick another"
    if name in BUILT_IN_PACK_NAMES:
        return f"pack name {name!r} is a built-in pack's; pick another"
    return None


def write_pack(name: str, parent: Path) -> Path:
    """Write the package `parent/name`, and return its directory."""
    problem = name_problem(name)
    if problem is not None:
        raise CliError(problem)
    root = parent / name
    if root.exists():
        raise CliError(f"{root} already exists; pick another name or remove it")
    for relative, text in FILES.items():
        path = root / Template(relative).substitute(name=name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(text).substitute(name=name))
    return root


PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "${name}"
version = "0.1.0"
description = "The ${name} pack of tools for durable-harness."
requires-python = ">=3.11"
dependencies = ["durable-harness"]

[project.optional-dependencies]
test = ["pytest>=8", "pytest-asyncio>=1.0"]

# How the harness finds the pack: a worker or CLI in an environment with this package installed
# loads it (see `harness scenarios`).
[project.entry-points."durable_harness.packs"]
${name} = "${name}.tools:PACK"

[tool.setuptools]
packages = ["${name}"]

[tool.setuptools.package-data]
${name} = ["plan.json", "eval_cases.yaml"]

# durable_harness.testing's dev server lives for the session, and so must the event loop
[tool.pytest.ini_options]
testpaths = ["tests"]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "session"
asyncio_default_test_loop_scope = "session"
"""

README = """\
# ${name}

A pack of tools for durable-harness.

```bash
pip install ./${name}                      # the worker's environment finds it by its entry point
pytest ${name}                             # its tools in-process, and its plan end to end
harness run "Greet Ada in English and Grace in French" --scenario ${name} \\
    --plan ${name}/${name}/plan.json
harness eval ${name}
```

Add tools in `${name}/tools.py` (a typed function with `@tool`, listed in `PACK`).
"""

INIT = '''\
"""The ${name} pack: its tools and the `Pack` the entry point names."""

from ${name}.tools import PACK

__all__ = ["PACK"]
'''

TOOLS = '''\
"""The ${name} pack's tools. A tool is a typed function: its arguments' schema comes from the
signature, its description from the docstring. A tool that cannot do what it is asked raises
ToolError with one of the harness's error codes, which decides what the run does next."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from durable_harness import Pack, ToolError, tool

WORDS = {"en": "Hello", "fr": "Bonjour", "es": "Hola"}


class Greeting(BaseModel):
    name: str
    text: str


@tool
def greet(
    name: Annotated[str, Field(description="Who to greet.")],
    language: Annotated[str, Field(description="en, fr or es.")] = "en",
) -> Greeting:
    """A greeting for one person, in a language."""
    if language not in WORDS:
        raise ToolError("MISSING_INFO", f"no greeting in {language!r}; ask for en, fr or es")
    return Greeting(name=name, text=f"{WORDS[language]}, {name}!")


@tool(final=True)
def write_card(greetings: list[Greeting]) -> str:
    """Writes the card from the greetings: the run's report."""
    return "\\n".join(["# Greetings", *(f"- {each.text}" for each in greetings)])


PACK = Pack(
    "${name}",
    "Greetings for people, in their languages.",
    [greet, write_card],
    instructions="Call greet once per person the goal names, then write_card from all of them.",
    example_goal="Greet Ada in English and Grace in French",
    eval_cases=Path(__file__).parent / "eval_cases.yaml",  # what `harness eval ${name}` runs
)
'''

PLAN = """\
{
  "nodes": [
    {"id": "ada", "tool": "greet",
     "arguments": [{"name": "name", "kind": "LITERAL", "value": "Ada"}]},
    {"id": "grace", "tool": "greet",
     "arguments": [{"name": "name", "kind": "LITERAL", "value": "Grace"},
                   {"name": "language", "kind": "LITERAL", "value": "fr"}]},
    {"id": "card", "tool": "write_card", "deps": ["ada", "grace"],
     "arguments": [{"name": "greetings", "kind": "NODE_RESULT", "node_id": "ada"},
                   {"name": "greetings", "kind": "NODE_RESULT", "node_id": "grace"}]}
  ]
}
"""

EVAL_CASES = """\
# The pack's eval cases: `harness eval ${name}` runs each as a real run.
# The pack has no offline planner, so a case runs a plan file (or pass --provider to plan with
# a model).
scenario: ${name}
description: Greetings for people, in their languages.
cases:
  - id: greet-two
    goal: Greet Ada in English and Grace in French
    description: Two greetings, then one card with both.
    options:
      plan_file: plan.json
    expect:
      status: SUCCEEDED
      mentions: ["Hello, Ada!", "Bonjour, Grace!"]
      max_tool_calls: 3
"""

CONFTEST = '''\
"""durable_harness.testing gives the tests their fixtures: call_tool, run_plan."""

pytest_plugins = ["durable_harness.testing"]
'''

TEST = '''\
"""The ${name} pack's tools, called in-process as a worker calls them, and its plan run end to end
on a local Temporal dev server."""

from __future__ import annotations

from importlib import resources

import pytest

from durable_harness import ErrorCode, ToolError
from durable_harness.testing import PlanRunner, ToolCaller
from ${name} import PACK

PLAN = resources.files("${name}").joinpath("plan.json")


async def test_greet_greets_in_the_language_asked(call_tool: ToolCaller) -> None:
    greeting = await call_tool(PACK, "greet", name="Grace", language="fr")
    assert greeting == {"name": "Grace", "text": "Bonjour, Grace!"}


async def test_greet_refuses_a_language_it_has_no_word_in(call_tool: ToolCaller) -> None:
    with pytest.raises(ToolError) as refused:
        await call_tool(PACK, "greet", name="Ada", language="xx")
    assert refused.value.code is ErrorCode.MISSING_INFO


async def test_the_plan_ends_in_a_card_that_greets_everyone(run_plan: PlanRunner) -> None:
    result = await run_plan(PACK, str(PLAN), goal="Greet Ada in English and Grace in French")
    assert result.status == "SUCCEEDED", result.error
    assert result.report == "# Greetings\\n- Hello, Ada!\\n- Bonjour, Grace!"
'''

FILES = {
    "pyproject.toml": PYPROJECT,
    "README.md": README,
    "${name}/__init__.py": INIT,
    "${name}/tools.py": TOOLS,
    "${name}/plan.json": PLAN,
    "${name}/eval_cases.yaml": EVAL_CASES,
    "tests/conftest.py": CONFTEST,
    "tests/test_${name}.py": TEST,
}
"""Each file of the package (its path under NAME/), with `${name}` for the name."""
