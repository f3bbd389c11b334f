"""The argparse types the command groups share: whole numbers, ports and ids, each refused with
one line that says what it must be (cli_parser prints it, exit 2)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from harness.core.limits import MAX_NAME_CHARS
from harness.engine.contracts import PROVIDER_NAMES

MAX_PORT = 65535
MAX_RUN_ID_CHARS = 200


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None


def positive(text: str) -> int:
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def non_negative(text: str) -> int:
    value = _whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must not be negative")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be more than 0")
    return value


def port(text: str) -> int:
    value = positive(text)
    if value > MAX_PORT:
        raise argparse.ArgumentTypeError(f"{value} is not a port (1 to {MAX_PORT})")
    return value


def provider(text: str) -> str:
    if text not in PROVIDER_NAMES:
        raise argparse.ArgumentTypeError(
            f"unknown provider {text!r}; one of {', '.join(PROVIDER_NAMES)}"
        )
    return text


PACK_HELP = "a pack (scenario) by name; `harness scenarios` lists those installed here"
"""The help of `--scenario`. It names no packs: listing them would load every pack each time the
parser is built, for every command (and a pack that cannot load would break `--help`)."""


def name(what: str, limit: int) -> Callable[[str], str]:
    """An argparse type for an id: 1 to `limit` characters, not only spaces."""

    def checked(text: str) -> str:
        if not text.strip() or len(text) > limit:
            raise argparse.ArgumentTypeError(f"{what} has 1 to {limit} characters")
        return text

    return checked


RUN_ID = name("a run id", MAX_RUN_ID_CHARS)
WAIT_ID = name("a wait id", MAX_NAME_CHARS)
SESSION = name("a session id", MAX_RUN_ID_CHARS)
