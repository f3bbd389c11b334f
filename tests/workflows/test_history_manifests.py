"""Each release folder of tests/histories has a MANIFEST.md with one row per history: what it
exercises and the patches it crosses, read from its markers (tests/history_manifests.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.history_manifests import (
    MANIFEST,
    crossed_patches,
    described_cases,
    manifest_of,
    read_manifest,
    recorded_histories,
    release_folders,
)

FOLDERS = release_folders()


def _name(folder: Path) -> str:
    return folder.name


@pytest.mark.parametrize("folder", FOLDERS, ids=_name)
def test_every_history_of_a_release_has_one_manifest_row_and_every_row_a_history(
    folder: Path,
) -> None:
    assert (folder / MANIFEST).exists(), f"run python -m tests.history_manifests ({folder})"
    rows = set(read_manifest(folder))
    files = {path.name for path in recorded_histories(folder)}
    assert files - rows == set(), "histories without a row: python -m tests.history_manifests"
    assert rows - files == set(), "rows without a history"


@pytest.mark.parametrize("folder", FOLDERS, ids=_name)
def test_each_manifest_row_lists_the_patches_its_history_crosses(folder: Path) -> None:
    for name, entry in read_manifest(folder).items():
        assert entry.patches == crossed_patches(folder / name), name
        assert entry.what.strip(), f"{name}: say what it exercises"


def test_the_manifests_are_what_the_generator_writes() -> None:
    described = described_cases()
    stale = [
        str(folder / MANIFEST)
        for folder in FOLDERS
        if (folder / MANIFEST).read_text() != manifest_of(folder, described)
    ]
    assert not stale, "run python -m tests.history_manifests"
