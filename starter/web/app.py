"""The ASGI app of `harness web`: the routes of runs and sessions, the token hub's intake, and
the token check when the app was started with one."""

from __future__ import annotations

import hmac

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from starter.web import run_routes, session_routes
from starter.web.context import WebContext
from starter.web.guards import SameSiteOnly
from starter.web.tokens import TokenBatch

MAX_TOKEN_BATCH_BYTES = 4 * 1024 * 1024


def create_app(context: WebContext) -> Starlette:
    async def take_tokens(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_TOKEN_BATCH_BYTES:
            return JSONResponse({"error": "the batch is over 4 MB"}, status_code=413)
        try:
            batch = TokenBatch.model_validate_json(body)
        except ValidationError as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        for chunk in batch.chunks:
            context.hub.publish(chunk)
        return Response(status_code=204)

    routes = [
        Route("/internal/tokens", take_tokens, methods=["POST"]),
        *run_routes.routes(context),
        *session_routes.routes(context),
    ]
    app = Starlette(routes=routes)
    app.state.context = context
    if context.config.token is not None:
        app.add_middleware(TokenRequired, token=context.config.token)
    app.add_middleware(SameSiteOnly, loopback_only=context.config.token is None)
    return app


class TokenRequired:
    """Every request carries the app's token: `Authorization: Bearer TOKEN`, or `?token=TOKEN`
    (a browser's EventSource cannot set a header); else 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        given = given or request.query_params.get("token", "")
        if not hmac.compare_digest(given.encode(), self.token):
            response = JSONResponse({"error": "this server needs its token"}, status_code=401)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
