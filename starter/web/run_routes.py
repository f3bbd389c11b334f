"""`POST /runs`, `GET /runs/RUN_ID/events` and the pages: a run's events as Server-Sent Events,
the answers to its waits, and the page, progress page and report that show it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from importlib import resources

from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from durable_harness.exceptions import HarnessError, InvalidInput, NotFound, Unavailable
from harness.waits.wait_book import DeliveryReceipt
from starter.pages.report_page import report_page
from starter.web.context import WebContext
from starter.web.run_bodies import (
    AnswerBody,
    ApproveBody,
    parsed_body,
    resume_point,
    start_fields,
)
from starter.web.run_events import closed_run_events, live_run_events

PING_SECONDS = 15
"""A comment this often keeps an idle stream open through proxies."""

STATIC_FILES = ("index.html", "web.css", "web.js")

Endpoint = Callable[[Request], Awaitable[Response]]


def routes(context: WebContext) -> list[BaseRoute]:
    harness = context.harness

    page_html = the_page()

    async def page(request: Request) -> Response:
        return HTMLResponse(page_html)

    async def start(request: Request) -> Response:
        goal, fields = start_fields(await request.body())
        run = await harness.start(goal, **fields)
        return JSONResponse({"run_id": run.run_id}, status_code=201)

    async def events(request: Request) -> Response:
        after = resume_point(request)
        run = harness.run(request.path_params["run_id"])
        if await run.closed():  # NotFound (404) for no such run, before the stream starts
            return EventSourceResponse(closed_run_events(run, after), ping=PING_SECONDS)
        stream = live_run_events(run, context.hub, after)
        return EventSourceResponse(stream, ping=PING_SECONDS)

    async def plan(request: Request) -> Response:
        status = await harness.run(request.path_params["run_id"]).status()
        shown = status.plan.model_dump(mode="json") if status.plan else None
        return JSONResponse({"plan": shown})

    async def report(request: Request) -> Response:
        run = harness.run(request.path_params["run_id"])
        replayed = await run.replayed()
        phase = replayed.status.phase.value
        return HTMLResponse(report_page(replayed.result, [], phase=phase, ui_link=run.ui_link))

    async def approve(request: Request) -> Response:
        body = parsed_body(ApproveBody, await request.body())
        run = harness.run(request.path_params["run_id"])
        receipt = await run.approve(
            request.path_params["wait_id"],
            body.actor or context.config.actor,
            reject=body.reject,
            comment=body.comment,
            key_file=context.config.key_file,
        )
        return JSONResponse(receipt.model_dump(mode="json"), status_code=_receipt_status(receipt))

    async def answer(request: Request) -> Response:
        body = parsed_body(AnswerBody, await request.body())
        run = harness.run(request.path_params["run_id"])
        receipt = await run.answer(
            request.path_params["wait_id"],
            body.text,
            body.actor or context.config.actor,
            key_file=context.config.key_file,
        )
        return JSONResponse(receipt.model_dump(mode="json"), status_code=_receipt_status(receipt))

    wait = "/runs/{run_id}/waits/{wait_id}"
    return [
        Route("/", _one_line_errors(page)),
        Route("/runs", _one_line_errors(start), methods=["POST"]),
        Route("/runs/{run_id}", _one_line_errors(page)),
        Route("/runs/{run_id}/events", _one_line_errors(events)),
        Route("/runs/{run_id}/plan", _one_line_errors(plan)),
        Route("/runs/{run_id}/report", _one_line_errors(report)),
        Route(f"{wait}/approve", _one_line_errors(approve), methods=["POST"]),
        Route(f"{wait}/answer", _one_line_errors(answer), methods=["POST"]),
    ]


def the_page() -> str:
    """The page, its style and its script in one document: one request, which carries the
    token when the app has one (a stylesheet or script the page named would not)."""
    static = resources.files("starter.web").joinpath("static")
    html, css, js = (static.joinpath(name).read_text(encoding="utf-8") for name in STATIC_FILES)
    return html.replace("/* web.css */", css).replace("/* web.js */", js)


def _receipt_status(receipt: DeliveryReceipt) -> int:
    """200 for a delivery the run took, 409 for one it refused (the receipt says why)."""
    return 200 if receipt.accepted else 409


ERROR_STATUS: dict[type[HarnessError], int] = {NotFound: 404, Unavailable: 503, InvalidInput: 400}


def _one_line_errors(endpoint: Endpoint) -> Endpoint:
    """The client's errors as one line of JSON with their status: 400 for bad input, 404 for
    no such run, 503 for no server or worker (the CLI's exit codes 2, 2 and 3)."""

    @wraps(endpoint)
    async def answered(request: Request) -> Response:
        try:
            return await endpoint(request)
        except HarnessError as error:
            status = next(
                (code for kind, code in ERROR_STATUS.items() if isinstance(error, kind)), 400
            )
            return JSONResponse({"error": error.message}, status_code=status)

    return answered
