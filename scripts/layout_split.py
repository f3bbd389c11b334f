"""Split the flat `harness/` and `starter/` folders into sub-packages by domain (issue 34, item 2).

Run from the repository root, on a clean tree: `python scripts/layout_split.py`. It

1. `git mv`s every module named in HARNESS and STARTER into its sub-package, and writes each
   sub-package's `__init__.py` (what it owns, what it may import);
2. moves the few definitions that sat on the wrong side of an arrow (SYMBOL_MOVES);
3. rewrites every reference to a moved module across the tracked text files: imports
   (`from harness.run import ...`, `from starter import runs`), dotted names in strings and prose
   (`"starter.commands:run"`, `python -m starter.demo`) and paths (`harness/run.py`);
4. sorts the imports it touched and formats the files with ruff.

It is idempotent: a second run finds every module in place and changes nothing. It fails, before
changing anything, on a module at the top of `harness/` or `starter/` that no table places (a new
module: add it to a table) and on a module found both at its old and its new place.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

HARNESS: dict[str, tuple[str, ...]] = {
    "core": (
        "actors",
        "errors",
        "plan",
        "problems",
        "redaction",
        "secret_patterns",
        "untrusted",
        "usage",
    ),
    "catalog": ("llm", "mcp_tools", "schema_check", "tools"),
    "governance": (
        "gates",
        "governance_keys",
        "host_contract",
        "scope_rules",
        "state_size",
        "task_commands",
        "task_graph",
        "task_ledger",
        "work",
    ),
    "recall": ("memory_context", "memory_records"),
    "waits": (
        "approval_cover",
        "cancellation",
        "deliveries",
        "reconcile",
        "signatures",
        "wait_book",
        "wait_hints",
    ),
    "engine": (
        "binding",
        "bounds",
        "budget",
        "compact",
        "contracts",
        "dag",
        "episodes",
        "faults",
        "messages",
        "node_evidence",
        "node_ledger",
        "progress_page",
        "recovery",
        "reuse",
        "run",
        "run_models",
        "run_state",
        "trace",
        "validation",
        "verification",
    ),
    "evals": ("eval_case", "eval_report", "eval_scoring"),
}
"""Each sub-package of `harness/` and the modules it holds, under the same names."""

STARTER: dict[str, tuple[str, ...]] = {
    "cli": (
        "cli",
        "cli_handlers",
        "cli_parser",
        "commands",
        "demo",
        "eval_actions",
        "eval_files",
        "eval_output",
        "memory_actions",
        "memory_cli",
        "progress",
        "rules_actions",
        "rules_cli",
        "task_actions",
        "task_cli",
        "tool_listing",
    ),
    "servers": ("codec_server", "dev_server", "ui_screenshot"),
    "pages": ("chart_layout", "charts", "eval_page", "report_page"),
}
"""Each sub-package of `starter/` and its modules. A module named here and found nowhere is
skipped: `cli_parser` comes with the habits branch, which may merge before or after the split."""

STARTER_STAYS = (
    "api",
    "cli_connection",
    "deliveries",
    "errors",
    "history",
    "input_files",
    "output",
    "plan_files",
    "run_results",
    "runs",
    "signed_actors",
    "tasks",
)
"""The Python API and what it leans on, left at the top of `starter/` by the split. Issue 35 has
since moved the API and what only it uses to the public package (`durable_harness/client.py`,
`durable_harness/_client/`); `errors`, `output` and `plan_files` stay, as the CLI's own."""

RENAMED = {("starter", "cli"): "app"}
"""A module whose name its new package takes: `starter/cli.py` becomes `starter/cli/app.py`."""

PACKAGE_KEEPS = {("starter", "cli"): ("main",)}
"""What the new package itself still answers for its old module: `starter.cli:main`, the console
script every install made so far runs, stays, so the shared environment works on both sides."""

INIT_BODIES = {
    "starter.cli": '''
from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    """The `harness` console script (`starter.cli:main`): the parser and its dispatch."""
    from starter.cli.app import main as run

    run(argv)
''',
}
"""Code a package's `__init__.py` opens with, under its docstring, when the script creates it."""

DOCSTRINGS: dict[str, str] = {
    "harness": """
The pure domain of durable-harness: the rules a run and the work around it follow.

Nothing here knows about Temporal, LLM SDKs or I/O: pydantic and the standard library only. One
sub-package a domain, imports running one way (tests/test_layout.py holds them to it):

- `harness.core`: the words every domain shares: plans, actors, errors, usage, redaction.
- `harness.catalog`: tools: the catalog, MCP tools, what a tool may ask of a model.
- `harness.governance`: work that outlives a run: tasks, ledgers, scopes, rules, gates.
- `harness.recall`: memory: stored records and the planner's context.
- `harness.waits`: durable waits: what a run waits for and what may answer it.
- `harness.engine`: the run: its request and result, state, plan validation, DAG, budget.
- `harness.evals`: eval cases, their scoring and the report.

The names below are the package's front door, re-exported from the sub-packages.
""",
    "harness.core": """
The words every domain shares: plans, actors, errors, token usage, the redaction of
secrets, the fences around untrusted text and the one way to say what a model refused.

Imports nothing else of `harness`: every other sub-package may import it.
""",
    "harness.catalog": """
Tools: the catalog a planner may call, each tool's argument schema and role, how an MCP
server's tool becomes a catalog entry, and what a tool may ask of a language model.

May import `harness.core` only.
""",
    "harness.governance": """
Work that outlives a run: tasks and their ledger's gateway, the task graph, the host's
contract for a scope, lessons and rules, completion gates and the size bounds of entity state.

May import `harness.core` and `harness.catalog` (a contract names tools), never the run.
""",
    "harness.recall": """
Memory: what the memory store holds and is asked (records, scoped), and the planner's
memory context assembled under a character budget. The store itself is the top-level `memory/`.

May import `harness.core` only. A run's episode is written by `harness.engine.episodes`.
""",
    "harness.waits": """
Durable waits: what a run waits for, the deliveries that answer it (approvals, answers,
results, reconciles, cancellation), signed actors, and how a person answers a wait.

May import `harness.core`, `harness.catalog` and `harness.governance` (a contract says which
tools need an approval), never the run.
""",
    "harness.engine": """
The run: what a caller asks and what a run reports, its state and phases, plan binding
and validation, DAG bookkeeping and the node ledger, budget, recovery, trace, bounds, the
messages between the workflow and its activities, and the episode a finished run leaves.

May import every sub-package but `harness.evals`.
""",
    "harness.evals": """
Evals: the case format, the scoring of a run against its case, and the report with its
figures and baselines.

May import every other sub-package: nothing in `harness` imports it.
""",
    "starter": """
The `harness` CLI, the servers it starts, and the Python API.

- `starter.cli`: parsers, handlers and output of each command (`starter.cli:main`).
- `starter.servers`: the embedded dev server, the codec server, the UI screenshot.
- `starter.pages`: the run report's and the eval report's pages and charts.
- the modules at this level: the Python API (`starter.api`) and what it leans on, which the CLI
  shares; they move together to the public package in a later issue.

Imports run one way: `starter.cli` may import the others; `starter.servers` only the modules at
this level; `starter.pages` nothing of `starter`; the modules at this level none of the three.
""",
    "starter.cli": """
The `harness` command: its parsers (`app`, one `*_cli` module a command group), its
handlers (`commands`, one `*_actions` module a command group) and how it prints results.

May import `starter.servers`, `starter.pages` and the API modules at the top of `starter`.
""",
    "starter.servers": """
What the CLI starts and leaves running: the embedded Temporal dev server, the codec
server for the Temporal UI, and the headless browser that screenshots the UI.

May import the modules at the top of `starter` (its errors), never `starter.cli`.
""",
    "starter.pages": """
The pages and charts `harness report` and `harness eval` write: plain HTML and PNG, no server.

Imports nothing else of `starter`.
""",
}
"""Each package's docstring: what it owns and what it may import."""


@dataclass(frozen=True)
class SymbolMove:
    """Definitions that leave a module for another, so that an arrow runs one way."""

    source: str
    target: str
    names: tuple[str, ...]
    why: str


SYMBOL_MOVES = (
    SymbolMove(
        source="harness.engine.bounds",
        target="harness.core.limits",
        names=("MAX_NAME_CHARS", "MAX_ACTOR_CHARS"),
        why="governance bounds names and actors by them; bounds.py imports the run",
    ),
)

LIMITS_HEADER = '''"""The lengths every domain bounds names and actors by: one number each, shared
by the run's deliveries and the entity workflows' commands."""

from __future__ import annotations

from typing import Final
'''

TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt", ".sh", ".json"}
TEXT_NAMES = {"Makefile", "Dockerfile", "run"}
SKIP_PREFIXES = ("tests/histories/",)
SKIP_FILES = (SELF, "tests/test_layout.py")
"""This script and the test that holds the new layout: both name the new packages already."""
PATH_EXEMPT = {"tests/scenarios/test_repo_scenario.py"}
"""Files whose `harness/...` paths are data (a diff the repo scenario reads), not this repo's."""


class LayoutError(Exception):
    """Something the tables do not place: say what, change nothing."""


@dataclass(frozen=True)
class Move:
    top: str
    package: str
    old: str
    new: str

    @property
    def old_dotted(self) -> str:
        return f"{self.top}.{self.old}"

    @property
    def new_dotted(self) -> str:
        return f"{self.top}.{self.package}.{self.new}"

    @property
    def old_path(self) -> Path:
        return ROOT / self.top / f"{self.old}.py"

    @property
    def new_path(self) -> Path:
        return ROOT / self.top / self.package / f"{self.new}.py"


def moves() -> list[Move]:
    found = []
    for top, table in (("harness", HARNESS), ("starter", STARTER)):
        for package, modules in table.items():
            for module in modules:
                new = RENAMED.get((top, module), module)
                found.append(Move(top, package, module, new))
    return found


def check_placed(all_moves: list[Move]) -> None:
    """Fail on a module no table names, or one that is in two places."""
    placed = {(m.top, m.old) for m in all_moves} | {("starter", s) for s in STARTER_STAYS}
    packages = {(m.top, m.package) for m in all_moves}
    stray = []
    for top in ("harness", "starter"):
        for path in sorted((ROOT / top).glob("*.py")):
            if path.stem != "__init__" and (top, path.stem) not in placed:
                if (top, path.stem) in packages:
                    continue
                stray.append(f"{top}/{path.name}")
        for child in sorted((ROOT / top).iterdir()):
            is_package = child.is_dir() and (child / "__init__.py").exists()
            if is_package and (top, child.name) not in packages:
                stray.append(f"{top}/{child.name}/ (a package no table names)")
    both = [m.old_path for m in all_moves if m.old_path.exists() and m.new_path.exists()]
    problems = [f"not placed by any table: {s}" for s in stray]
    problems += [f"found at its old and its new place: {p.relative_to(ROOT)}" for p in both]
    if problems:
        raise LayoutError("\n".join(problems))


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True)
    return done.stdout


def move_modules(all_moves: list[Move]) -> None:
    for move in all_moves:
        if move.old_path.exists():
            move.new_path.parent.mkdir(exist_ok=True)
            git("mv", str(move.old_path.relative_to(ROOT)), str(move.new_path.relative_to(ROOT)))


def write_docstrings() -> list[Path]:
    """Give each package its docstring: a new `__init__.py`, or the old one's docstring replaced."""
    touched = []
    for dotted, doc in DOCSTRINGS.items():
        init = ROOT / Path(*dotted.split(".")) / "__init__.py"
        text = init.read_text() if init.exists() else ""
        body = f'"""{doc.strip()}\n"""\n'
        tree = ast.parse(text)
        first = tree.body[0] if tree.body else None
        has_doc = (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        )
        if has_doc and first is not None and first.end_lineno is not None:
            rest = "".join(text.splitlines(keepends=True)[first.end_lineno :])
        elif not text.strip():
            rest = INIT_BODIES.get(dotted, "")
        else:
            rest = ("\n" + text) if text.strip() else ""
        new = body + rest
        if new != text:
            init.write_text(new)
            git("add", str(init.relative_to(ROOT)))
            touched.append(init)
    return touched


def tracked_text_files() -> list[Path]:
    files = []
    for name in git("ls-files").splitlines():
        if name in SKIP_FILES or name.startswith(SKIP_PREFIXES):
            continue
        path = ROOT / name
        is_text = path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES
        if is_text and path.is_file():
            files.append(path)
    return files


def _package_modules(top: str, package: str, all_moves: list[Move]) -> set[str]:
    return {m.new for m in all_moves if m.top == top and m.package == package}


def quoted_names(files: list[Path]) -> set[str]:
    """Names that a quoted `"harness.NAME"` spells somewhere: activity names, in every history."""
    found: set[str] = set()
    for path in files:
        try:
            found |= set(QUOTED.findall(path.read_text()))
        except UnicodeDecodeError:
            continue
    return found


QUOTED = re.compile(r"[\"']harness\.(\w+)[\"']")


def text_rules(
    all_moves: list[Move], ambiguous: set[str]
) -> list[tuple[re.Pattern[str], str, bool]]:
    """(pattern, replacement, is_path) for every moved module.

    A dotted name is rewritten wherever it stands, except before a call (`harness.run(...)` is
    the Python API's method, not the module). A name some quoted string spells as
    `"harness.NAME"` (the activities `harness.plan`, `harness.eval_case`,
    `harness.task_commands`, whose names are in every recorded history) is a module only in an
    import, after `python -m`, or followed by an attribute (`harness.plan.Plan`). A renamed
    module's name moves only where no module of its new package follows (`starter.cli.app`
    stays, `starter.cli.build_parser` moves).
    """
    rules = []
    for move in all_moves:
        old = re.escape(move.old_dotted)
        guard = r"(?![\w(])"
        if (move.top, move.old) in RENAMED:
            inside = "|".join(sorted(_package_modules(move.top, move.package, all_moves)))
            keeps = "|".join(PACKAGE_KEEPS.get((move.top, move.old), ()))
            guard += rf"(?!\.(?:{inside})\b)(?!\s+import\s+(?:{inside})\b)"
            if keeps:
                guard += rf"(?!:(?:{keeps})\b)(?!\s+import\s+(?:{keeps})\b)"
        if move.top == "harness" and move.old in ambiguous:
            patterns = [
                rf"(?<=\bfrom ){old}(?=\s+import\b)",
                rf"(?<=\bimport ){old}(?![\w.])",
                rf"(?<=-m ){old}(?![\w.])",
                rf"(?<![\w.]){old}(?=[.:][A-Za-z_])",
            ]
        else:
            patterns = [rf"(?<![\w.]){old}{guard}"]
        rules += [(re.compile(pattern), move.new_dotted, False) for pattern in patterns]
        old_path = re.escape(f"{move.top}/{move.old}.py")
        new_path = f"{move.top}/{move.package}/{move.new}.py"
        rules.append((re.compile(rf"(?<![\w.-]){old_path}\b"), new_path, True))
    return rules


def rewrite_from_imports(text: str, all_moves: list[Move]) -> str:
    """`from harness import budget`, `from starter import cli`: a line for each moved module."""
    by_old = {(m.top, m.old): m for m in all_moves}
    tree = ast.parse(text)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module in ("harness", "starter")):
            continue
        if node.level or node.end_lineno is None:
            continue
        top = node.module
        kept = [alias for alias in node.names if (top, alias.name) not in by_old]
        moved = [alias for alias in node.names if (top, alias.name) in by_old]
        if not moved:
            continue
        indent = " " * node.col_offset
        lines = []
        if kept:
            lines.append(f"{indent}from {top} import {', '.join(_alias(a) for a in kept)}")
        for alias in moved:
            move = by_old[(top, alias.name)]
            name = move.new
            bound = alias.asname or alias.name
            spelled = name if bound == name else f"{name} as {bound}"
            lines.append(f"{indent}from {top}.{move.package} import {spelled}")
        edits.append((node.lineno, node.end_lineno, "\n".join(lines) + "\n"))
    return _apply(text, edits)


def _alias(alias: ast.alias) -> str:
    return alias.name if alias.asname is None else f"{alias.name} as {alias.asname}"


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    lines = text.splitlines(keepends=True)
    for start, end, replacement in sorted(edits, reverse=True):
        lines[start - 1 : end] = [replacement]
    return "".join(lines)


def rewrite_file(
    path: Path, all_moves: list[Move], rules: list[tuple[re.Pattern[str], str, bool]]
) -> bool:
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        return False
    new = text
    if path.suffix == ".py":
        new = rewrite_from_imports(new, all_moves)
    relative = path.relative_to(ROOT).as_posix()
    for pattern, replacement, is_path in rules:
        if is_path and relative in PATH_EXEMPT:
            continue
        new = pattern.sub(replacement, new)
    if new != text:
        path.write_text(new)
        return True
    return False


def _defines(tree: ast.Module, name: str) -> int | None:
    for index, node in enumerate(tree.body):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return index
    return None


def _module_path(dotted: str) -> Path:
    return ROOT / Path(*dotted.split(".")).with_suffix(".py")


def move_symbols(files: list[Path]) -> set[Path]:
    """Cut each definition (with the docstring under it) to its new module; re-point importers."""
    touched: set[Path] = set()
    for symbol_move in SYMBOL_MOVES:
        source = _module_path(symbol_move.source)
        target = _module_path(symbol_move.target)
        if not target.exists():
            target.write_text(LIMITS_HEADER)
            git("add", str(target.relative_to(ROOT)))
            touched.add(target)
        source_text = source.read_text()
        tree = ast.parse(source_text)
        lines = source_text.splitlines(keepends=True)
        cut: list[tuple[int, int]] = []
        for name in symbol_move.names:
            index = _defines(tree, name)
            if index is None:
                if _defines(ast.parse(target.read_text()), name) is None:
                    raise LayoutError(
                        f"{name} is in neither {symbol_move.source} nor {symbol_move.target}"
                    )
                continue
            node = tree.body[index]
            end = node.end_lineno or node.lineno
            after = tree.body[index + 1] if index + 1 < len(tree.body) else None
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                end = after.end_lineno or end
            cut.append((node.lineno, end))
        if cut:
            moved_text = "".join("".join(lines[s - 1 : e]) for s, e in sorted(cut))
            target.write_text(target.read_text().rstrip("\n") + "\n\n" + moved_text)
            for start, end in sorted(cut, reverse=True):
                del lines[start - 1 : end]
            names = ", ".join(sorted(symbol_move.names))
            source.write_text(
                _add_import("".join(lines), f"from {symbol_move.target} import {names}")
            )
            touched |= {source, target}
        for path in files:
            if path.suffix == ".py" and path.exists() and _repoint(path, symbol_move):
                touched.add(path)
    return touched


def _add_import(text: str, line: str) -> str:
    tree = ast.parse(text)
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    last = imports[-1].end_lineno if imports else 0
    lines = text.splitlines(keepends=True)
    lines.insert(last or 0, line + "\n")
    return "".join(lines)


def _repoint(path: Path, symbol_move: SymbolMove) -> bool:
    text = path.read_text()
    if symbol_move.source not in text:
        return False
    tree = ast.parse(text)
    edits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module == symbol_move.source):
            continue
        moved = [a for a in node.names if a.name in symbol_move.names]
        kept = [a for a in node.names if a.name not in symbol_move.names]
        if not moved or node.end_lineno is None:
            continue
        indent = " " * node.col_offset
        out = []
        if kept:
            out.append(
                f"{indent}from {symbol_move.source} import {', '.join(_alias(a) for a in kept)}"
            )
        out.append(
            f"{indent}from {symbol_move.target} import {', '.join(_alias(a) for a in moved)}"
        )
        edits.append((node.lineno, node.end_lineno, "\n".join(out) + "\n"))
    if not edits:
        return False
    path.write_text(_apply(text, edits))
    return True


LINE_LIMIT = 100
TRIPLE_QUOTES = ('"""', "'''")


def wrap_long_lines(paths: set[Path]) -> None:
    """Break the prose lines (docstrings, comments) that a longer name pushed past the limit.

    Code lines are ruff format's; what neither can break, `long_lines` reports.
    """
    for path in sorted(p for p in paths if p.suffix == ".py" and p.exists()):
        text = path.read_text()
        lines = text.splitlines(keepends=True)
        if all(len(line.rstrip("\n")) <= LINE_LIMIT for line in lines):
            continue
        prose, comments = _prose_lines(text)
        out: list[str] = []
        for number, line in enumerate(lines, start=1):
            body = line.rstrip("\n")
            if len(body) <= LINE_LIMIT or "noqa" in body:
                out.append(line)
            elif number in comments and body.lstrip().startswith("#"):
                indent = body[: len(body) - len(body.lstrip())]
                out += [piece + "\n" for piece in _wrapped(body, indent + "# ")]
            elif number in prose:
                indent = body[: len(body) - len(body.lstrip())]
                out += [piece + "\n" for piece in _wrapped(body, indent)]
            else:
                out.append(line)
        path.write_text("".join(out))


def long_lines(paths: set[Path]) -> str:
    """What ruff still finds too long in the files this script changed."""
    python = sorted(str(p.relative_to(ROOT)) for p in paths if p.suffix == ".py" and p.exists())
    if not python:
        return ""
    binary = str(Path(sys.executable).with_name("ruff"))
    check = [binary, "check", "--select", "E501", "--output-format", "concise", *python]
    found = subprocess.run(check, cwd=ROOT, capture_output=True, text=True, check=False)
    return found.stdout.strip() if found.returncode else ""


def _prose_lines(text: str) -> tuple[set[int], set[int]]:
    """The lines of a triple-quoted or multi-line string, and the lines with a comment."""
    prose: set[int] = set()
    comments: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        triple = token.string.startswith(TRIPLE_QUOTES)
        if token.type == tokenize.STRING and (triple or token.start[0] != token.end[0]):
            prose |= set(range(token.start[0], token.end[0] + 1))
        elif token.type == tokenize.COMMENT:
            comments.add(token.start[0])
    return prose, comments


def _wrapped(line: str, continuation: str) -> list[str]:
    pieces = []
    while len(line) > LINE_LIMIT:
        cut = line.rfind(" ", len(continuation) + 1, LINE_LIMIT + 1)
        if cut <= len(continuation):
            break
        pieces.append(line[:cut].rstrip())
        line = continuation + line[cut + 1 :].lstrip()
    return [*pieces, line]


def ruff(paths: set[Path]) -> None:
    """Sort the touched files' imports and format them as the project's checks ask."""
    python = sorted(str(p.relative_to(ROOT)) for p in paths if p.suffix == ".py" and p.exists())
    if not python:
        return
    binary = str(Path(sys.executable).with_name("ruff"))
    subprocess.run(
        [binary, "check", "--quiet", "--fix", "--select", "I,F401", *python], cwd=ROOT, check=False
    )
    subprocess.run([binary, "format", "--quiet", *python], cwd=ROOT, check=True)


def main() -> int:
    all_moves = moves()
    try:
        check_placed(all_moves)
    except LayoutError as error:
        print(f"layout_split: {error}", file=sys.stderr)
        return 1
    before = {path: path.read_bytes() for path in tracked_text_files()}
    move_modules(all_moves)
    files = tracked_text_files()
    rules = text_rules(all_moves, quoted_names(files))
    touched = {path for path in files if rewrite_file(path, all_moves, rules)}
    try:
        touched |= move_symbols(files)
    except LayoutError as error:
        print(f"layout_split: {error}", file=sys.stderr)
        return 1
    touched |= set(write_docstrings())
    ruff(touched)
    wrap_long_lines(touched)
    too_long = long_lines(touched)
    origin = {m.new_path: m.old_path for m in all_moves}
    changed = [
        path
        for path in tracked_text_files()
        if before.get(path, before.get(origin.get(path, path))) != path.read_bytes()
    ]
    print(f"layout_split: {len(changed)} files changed")
    if too_long:
        print(f"layout_split: lines over {LINE_LIMIT} characters to shorten by hand:\n{too_long}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
