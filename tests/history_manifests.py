"""The manifests of tests/histories: `python -m tests.history_manifests [--check]`.

Each release folder of tests/histories holds a MANIFEST.md: one row per recorded history, with
what it exercises and the patch ids it crosses. The patch ids are read from the history's
MARKER_RECORDED patch markers (never written by hand); a new row's description comes from the
case that records it in tests/record_histories.py (its drive's docstring, else the comment at
its `Case(`, else its name) and may then be reworded by hand: a description already in a
manifest is kept. `--check` writes nothing and exits 1 when a manifest is not what this module
would write (tests/workflows/test_history_manifests.py checks the same).

Markdown, not JSON: the manifests are read by people browsing the folders, and a `manifest.json`
would sit among the histories where every `*.json` is taken for one (the replay test's glob,
record_histories' never-overwrite check).
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory

HISTORIES = Path(__file__).parent / "histories"
MANIFEST = "MANIFEST.md"
PATCH_MARKER = "core_patch"
PATCH_DATA = "patch-data"
NONE = "none"
ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| (?P<what>.+) \| (?P<patches>.+) \|$")
OTHER_RECORDERS = {
    "eval_suite": "an eval suite of three cases (a replanning cities goal, an approved side "
    "effect, a failed expectation): child runs, case activities and a scripted update "
    "(tests/record_eval.py)",
    "repo_question": "a repo question answered from git log, show and diff lookups over the "
    "real git MCP server (tests/record_mcp.py)",
    "repo_reset_rejected": "a repo plan whose destructive git_reset is rejected at its "
    "approval (tests/record_mcp.py)",
    "session_conversation_run_1": "an agent session's first run: a message answered DONE by "
    "one slice, then continue-as-new (tests/record_sessions.py)",
    "session_conversation_run_2": "the session's second run: a slice that asks the user ends "
    "WAITING; the wait is carried over continue-as-new (tests/record_sessions.py)",
    "session_conversation_run_3": "the session's third run: the answer (an update) resumes it "
    "and the next slice answers DONE (tests/record_sessions.py)",
    "session_conversation_slice_1": "a session's slice: an AgentLoop child in slice mode, one "
    "tool call and an answer (tests/record_sessions.py)",
    "session_conversation_slice_2": "a session's slice that ends on the model's ask_user, "
    "returning its state (tests/record_sessions.py)",
    "session_conversation_slice_3": "a session's slice resumed with the user's answer "
    "(tests/record_sessions.py)",
}


@dataclass(frozen=True)
class Entry:
    file: str
    what: str
    patches: tuple[str, ...]

    def row(self) -> str:
        crossed = ", ".join(f"`{patch}`" for patch in self.patches) or NONE
        return f"| `{self.file}` | {self.what} | {crossed} |"


def release_folders() -> list[Path]:
    return sorted(
        (folder for folder in HISTORIES.iterdir() if folder.is_dir()),
        key=lambda folder: tuple(int(part) for part in folder.name[1:].split(".")),
    )


def recorded_histories(folder: Path | None = None) -> list[Path]:
    folders = [folder] if folder is not None else release_folders()
    return [path for each in folders for path in sorted(each.glob("*.json"))]


def crossed_patches(path: Path) -> tuple[str, ...]:
    """The patch ids of the history's patch markers, in the order they were first written."""
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    crossed: list[str] = []
    for event in history.events:
        if event.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
            continue
        marker = event.marker_recorded_event_attributes
        if marker.marker_name != PATCH_MARKER:
            continue
        patch_id = json.loads(marker.details[PATCH_DATA].payloads[0].data)["id"]
        if patch_id not in crossed:
            crossed.append(patch_id)
    return tuple(crossed)


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")


def _first_sentence(doc: str) -> str:
    text = _one_line(doc)
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def _comment_at(source: list[str], name: str) -> str | None:
    """The comment on the `Case(` line that records `name`, else the comment block just above
    it when that block heads this case alone (not a section of several)."""
    quoted = f'"{name}"'
    for number, line in enumerate(source):
        if quoted not in line or ("Case(" not in line and "Case(" not in source[number - 1]):
            continue
        start = number if "Case(" in line else number - 1
        inline = source[start].partition("#")[2].strip()
        if inline:
            return inline
        above: list[str] = []
        for earlier in reversed(source[:start]):
            if not earlier.strip().startswith("#"):
                break
            above.insert(0, earlier.strip().lstrip("#").strip())
        return " ".join(above) if above and _heads_one_case(source[start + 1 :]) else None
    return None


def _heads_one_case(after: list[str]) -> bool:
    """No other `Case(` before the next comment or the end of the tuple."""
    for line in after:
        if line.strip().startswith("#") or line == ")":
            return True
        if "Case(" in line:
            return False
    return True


def described_cases() -> dict[str, str]:
    """What each file tests/record_histories.py writes exercises, by file name (no .json)."""
    from tests import record_histories

    source = inspect.getsource(record_histories).splitlines()
    described: dict[str, str] = dict(OTHER_RECORDERS)
    for case in record_histories.CASES:
        doc = case.drive.__doc__ if case.drive.__qualname__ == case.drive.__name__ else None
        what = _first_sentence(doc) if doc else _comment_at(source, case.name)
        what = _one_line(what or case.name.replace("_", " ")).rstrip(".")
        described[case.name] = f"{what[0].upper()}{what[1:]}. Ends {case.expect.value}."
        for child, suffix in case.children.items():
            described[child] = f"The child batch `{suffix[1:]}` of {case.name}."
        for other, workflow_id in case.others.items():
            described[other] = f"The workflow `{workflow_id}` that {case.name} worked with."
    return described


def read_manifest(folder: Path) -> dict[str, Entry]:
    path = folder / MANIFEST
    if not path.exists():
        return {}
    entries: dict[str, Entry] = {}
    for line in path.read_text().splitlines():
        found = ROW.match(line)
        if found is None:
            continue
        patches = found["patches"]
        crossed = () if patches == NONE else tuple(p.strip("` ") for p in patches.split(","))
        entries[found["file"]] = Entry(found["file"], found["what"], crossed)
    return entries


def manifest_of(folder: Path, described: dict[str, str]) -> str:
    kept = read_manifest(folder)
    rows = []
    for path in recorded_histories(folder):
        old = kept.get(path.name)
        what = old.what if old else described.get(path.stem, path.stem.replace("_", " "))
        rows.append(Entry(path.name, what, crossed_patches(path)).row())
    release = folder.name[1:]
    return "\n".join(
        [
            f"# Histories recorded with {release}",
            "",
            f"Each file is the history of one workflow, recorded with the code of {release} "
            "(`python -m tests.record_histories`); every one must go on replaying with the "
            "current code (tests/workflows/test_replay.py). The patches column is read from "
            "each history's patch markers by `python -m tests.history_manifests`, which "
            "writes this file; see docs/changing-workflow-code.md.",
            "",
            "| history | exercises | patches crossed |",
            "|---|---|---|",
            *rows,
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.history_manifests")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    described = described_cases()
    stale = []
    for folder in release_folders():
        text = manifest_of(folder, described)
        path = folder / MANIFEST
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path)
        if not args.check:
            path.write_text(text)
    for path in stale:
        print(f"{path}: {'stale' if args.check else 'written'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
