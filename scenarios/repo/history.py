"""Reading what the git server returns: the commits of a log, the files a patch touches, and the
commit ids a text cites."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import JsonValue

_LOG_ENTRY = re.compile(
    r"^Commit: (?P<sha>[0-9a-f]{40})\nAuthor: (?P<author>[^\n]*)\nDate: (?P<date>[^\n]*)\n"
    r"Message: (?P<message>.*?)(?=^Commit: [0-9a-f]{40}$|\Z)",
    re.MULTILINE | re.DOTALL,
)
_SHOW_HEADER = re.compile(r"^commit (?P<sha>[0-9a-f]{40})$", re.MULTILINE)
_FULL_SHA = re.compile(r"\b[0-9a-f]{40}\b")
_TOUCHED = re.compile(r"^\+\+\+ b/(?P<path>.+)$|^--- a/(?P<gone>.+)$", re.MULTILINE)
_CITED = re.compile(r"`([0-9a-f]{7,40})`")

SHORT = 10
"""How many hex digits of a commit id a report shows."""


@dataclass(frozen=True)
class Commit:
    sha: str
    author: str
    date: str
    message: str

    @property
    def short(self) -> str:
        return self.sha[:SHORT]

    @property
    def subject(self) -> str:
        return self.message.strip().splitlines()[0] if self.message.strip() else "(no message)"

    @property
    def body(self) -> str:
        """The message after its subject: usually the why."""
        lines = self.message.strip().splitlines()[1:]
        return " ".join(line.strip() for line in lines if line.strip())


def log_commits(log: str) -> list[Commit]:
    """The commits of git_log's answer, newest first."""
    return [
        Commit(
            sha=match["sha"],
            author=match["author"].strip(),
            date=match["date"].strip(),
            message=match["message"].rstrip(),
        )
        for match in _LOG_ENTRY.finditer(log)
    ]


def shown_sha(show: str) -> str | None:
    match = _SHOW_HEADER.search(show)
    return match["sha"] if match else None


def touched_files(patch: str) -> list[str]:
    """The paths a patch changes, in order, once each."""
    found: dict[str, None] = {}
    for match in _TOUCHED.finditer(patch):
        found.setdefault(match["path"] or match["gone"], None)
    return list(found)


def known_shas(results: dict[str, JsonValue]) -> set[str]:
    """Every full commit id the run's lookups returned."""
    found: set[str] = set()
    for value in results.values():
        for text in _texts(value):
            found.update(_FULL_SHA.findall(text))
    return found


def cited_ids(text: str) -> list[str]:
    """The commit ids a text cites: 7 to 40 lowercase hex digits in backticks, as the report
    writes them (a hex-like word in an author's name or a message is not a citation)."""
    return list(dict.fromkeys(_CITED.findall(text)))


def _texts(value: JsonValue) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    return []
