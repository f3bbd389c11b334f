"""Local stand-ins for the model APIs, served on 127.0.0.1 and driven through the real SDKs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from tests.fakes.server import FakeServer, Recorded, Reply, Responder


@dataclass(frozen=True)
class Usage:
    """Token counts a fake reports. `input` counts every prompt token, cached ones included."""

    input: int
    output: int
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    """The part of `output` spent reasoning."""


@dataclass(frozen=True)
class FakeCall:
    """A tool call a fake model asks for."""

    id: str
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class SentResult:
    """A tool result as a request carried it: the call it answers, its text, if it failed."""

    call_id: str
    content: str
    failed: bool


class FakeApi(Protocol):
    """One API's wire format: the replies a test scripts and what it reads from a request."""

    name: str
    route: str

    def base_url(self, root: str) -> str:
        """The SDK's base URL for a server at `root` (http://127.0.0.1:PORT)."""
        ...

    def text_reply(self, text: str, usage: Usage, *, cut_off: bool = False) -> Responder: ...

    def tool_calls_reply(self, calls: list[FakeCall], usage: Usage, text: str = "") -> Responder:
        """A turn that asks for `calls` (with `text` said alongside, if any)."""
        ...

    def offered_tools(self, request: Recorded) -> list[str]:
        """The names of the tools a request offers."""
        ...

    def sent_results(self, request: Recorded) -> list[SentResult]:
        """The tool results a request sends back, in order."""
        ...

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply: ...

    def system_text(self, request: Recorded) -> str: ...

    def user_text(self, request: Recorded) -> str: ...

    def output_schema(self, request: Recorded) -> dict[str, Any] | None: ...


__all__ = [
    "FakeApi",
    "FakeCall",
    "FakeServer",
    "Recorded",
    "Reply",
    "Responder",
    "SentResult",
    "Usage",
]
