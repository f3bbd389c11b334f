"""`GET /sessions/SESSION_ID/events`: a session's events as Server-Sent Events."""

from __future__ import annotations

from starlette.routing import BaseRoute

from starter.web.context import WebContext


def routes(context: WebContext) -> list[BaseRoute]:
    return []
