"""The README and the pages of docs/, read the way their tests need them: a page's text, the
fenced blocks it holds, and the block that follows a marker. Every test that pins a snippet or a
command of the docs to the code reads it through here, so a page that moves breaks loudly."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
_FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```\s*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language tag, and its text."""

    path: Path
    line: int
    lang: str
    body: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def page(name: str) -> str:
    """The text of docs/NAME.md."""
    return (DOCS / f"{name}.md").read_text()


BENCH_README = ROOT / "bench" / "README.md"
"""Included whole in docs/benchmarks.md, so its blocks and links are the site's too."""


def markdown_files() -> list[Path]:
    """The README, every page of docs/ and the benchmarks' page they include."""
    return [README, *sorted(DOCS.glob("*.md")), BENCH_README]


def blocks(path: Path) -> list[Block]:
    text = path.read_text()
    return [
        Block(path, text.count("\n", 0, match.start()) + 1, match["lang"], match["body"])
        for match in _FENCE.finditer(text)
    ]


def block_after(text: str, marker: str, lang: str) -> str:
    """The first ```LANG block after `marker` in `text`."""
    assert marker in text, f"the docs no longer say {marker!r}"
    section = text.split(marker, 1)[1]
    return section.split(f"```{lang}\n", 1)[1].split("```", 1)[0]


def python_block_defining(text: str, name: str) -> str:
    """The python block that defines `name` (a function of a snippet)."""
    python: list[str] = re.findall(r"```python\n(.*?)```", text, re.S)
    found = [block for block in python if f"def {name}" in block]
    assert len(found) == 1, f"expected one python block defining {name}, found {len(found)}"
    return found[0]
