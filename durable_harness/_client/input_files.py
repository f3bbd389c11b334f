"""Files the CLI reads, read by size first: a file past its bound is refused before a byte of
it is parsed (a 15 MB YAML case file took minutes to parse, a deeply nested one raised out of
the parser), and output places are tried before any work starts."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Final

from pydantic import JsonValue

from durable_harness.exceptions import InvalidInput

MAX_FILE_BYTES: Final = 4 * 1024 * 1024
"""Plans, contracts, actor keys, baselines, delivered data: a plan of 20,000 nodes (the most a
run takes) is about 2.3 MB of JSON."""
MAX_CASE_FILE_BYTES: Final = 1024 * 1024
"""Eval case files are YAML, which parses at about 0.25 MB/s: a megabyte is thousands of cases."""


def read_text_file(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The file's text, or one line: it cannot be read, it is larger than `limit` bytes
    (measured before reading, and again while reading, for files whose size the system does
    not know, such as /proc and pipes), or it is not UTF-8."""
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > limit:
                raise InvalidInput(f"{what} is {size:,} bytes; at most {limit:,} are read")
            raw = file.read(limit + 1)
    except OSError as error:
        raise InvalidInput(f"cannot read {what}: {error.strerror or error}") from error
    if len(raw) > limit:
        raise InvalidInput(f"{what} is more than {limit:,} bytes; at most {limit:,} are read")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidInput(f"{what} is not UTF-8 text (byte {error.start})") from error


def check_writable(flag: str, path: Path, *, folder: bool) -> None:
    """Before anything starts: refuse a place the output could not be written to. The nearest
    existing folder is tried with a file made and removed at once (permission bits say
    nothing for root, and /proc is a folder root may not write in); nothing is left behind."""
    if path.exists() and path.is_dir() is not folder:
        kind = "a file" if folder else "a folder"
        raise InvalidInput(f"{flag} {path}: cannot write there (it is {kind})")
    start = path if folder else path.parent
    existing = next((p for p in (start, *start.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise InvalidInput(f"{flag} {path}: cannot write there ({existing} is not a folder)")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        reason = error.strerror or str(error)
        raise InvalidInput(
            f"{flag} {path}: cannot write there ({existing} is not a writable folder: {reason})"
        ) from error


def read_json(text: str, what: str) -> JsonValue:
    """JSON text, or one line that says why not (bad syntax, NaN, nesting too deep)."""
    try:
        data: JsonValue = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise InvalidInput(
            f"{what} is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from error
    except ValueError as error:
        raise InvalidInput(f"{what} is not valid JSON: {error}") from error
    except RecursionError as error:
        raise InvalidInput(f"{what} nests too deeply to read") from error
    return data


def _no_constant(name: str) -> JsonValue:
    raise ValueError(f"{name} is not a JSON number")
