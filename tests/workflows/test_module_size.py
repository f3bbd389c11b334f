"""Every module under workflows/ does one job and stays short: none over MAX_LINES lines
(issue 34). A reader should find a workflow's step, its calls or its patches in a file that
fits in a sitting."""

from __future__ import annotations

from pathlib import Path

import workflows

WORKFLOWS = Path(workflows.__file__).parent
MAX_LINES = 350


def lines_of(path: Path) -> int:
    return len(path.read_text().splitlines())


def modules_over(limit: int) -> dict[str, int]:
    """Each module under workflows/ longer than `limit` lines, by its path inside workflows/."""
    return {
        path.relative_to(WORKFLOWS).as_posix(): count
        for path in sorted(WORKFLOWS.rglob("*.py"))
        if (count := lines_of(path)) > limit
    }


def test_no_workflow_module_is_over_the_bound() -> None:
    over = modules_over(MAX_LINES)
    assert not over, f"workflow modules over {MAX_LINES} lines (split them by job): {over}"


def test_a_long_module_is_found_and_named() -> None:
    """The check can fail: with a bound below the longest module, that module is named."""
    longest = max(WORKFLOWS.rglob("*.py"), key=lines_of)
    found = modules_over(lines_of(longest) - 1)
    assert found == {longest.relative_to(WORKFLOWS).as_posix(): lines_of(longest)}
