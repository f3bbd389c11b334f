"""What keeps other web sites out of `harness web`: a page on another origin may not make the
browser that shows it start goals or answer waits here (cross-site requests are refused), and,
without a token, the app answers only requests addressed to localhost (a DNS-rebinding guard:
a name that resolves to 127.0.0.1 is still another site)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOCAL_NAMES = frozenset({"localhost"})


class SameSiteOnly:
    """A request with an `Origin` other than the app's own: 403. Without a token, a `Host`
    that is not localhost: 403. Programs that send no `Origin` (curl, a worker) pass."""

    def __init__(self, app: ASGIApp, loopback_only: bool) -> None:
        self.app = app
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self.refusal(Request(scope))
            if refusal is not None:
                await JSONResponse({"error": refusal}, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, request: Request) -> str | None:
        host = request.headers.get("host", "")
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != host:
            return f"a request from another site ({origin}) is refused"
        if self.loopback_only and not is_local(urlsplit(f"//{host}").hostname or ""):
            return (
                f"without a token this server answers for localhost only, not {host}; "
                "start it with --token to serve other names"
            )
        return None


def is_local(name: str) -> bool:
    if name in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
