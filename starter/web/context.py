"""What every route of `harness web` shares: the connection to Temporal, the token hub and how
the app was started."""

from __future__ import annotations

from dataclasses import dataclass, field

from durable_harness.client import Harness
from starter.web.tokens import TokenHub


@dataclass(frozen=True)
class WebConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = field(default=None, repr=False)
    """Needed on every request when set (`Authorization: Bearer`, or `?token=` for a page's
    EventSource); required to listen on anything but localhost."""
    actor: str = "human:web"
    """Who approves and answers from the page when the request names no actor."""
    key_file: str | None = None
    """The private key deliveries are signed with (else $HARNESS_ACTOR_KEY_FILE, else none)."""


@dataclass
class WebContext:
    harness: Harness
    config: WebConfig
    hub: TokenHub = field(default_factory=TokenHub)
