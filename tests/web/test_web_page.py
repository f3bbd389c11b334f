"""The page `harness web` serves, in a real browser (Debian's Chromium driven by Playwright, as
`make screenshot` drives it): a cities run's nodes finish on the page while the run goes on, a
refund's approval is answered from the page, and the page survives a restart of `harness web`
by resuming its stream where it was."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx2
import pytest
from temporalio.client import Client

from activities.llm import ProviderRegistry, ScriptedProvider
from activities.token_stream import TokenPoster
from infra.settings import WebTarget
from starter.servers.ui_screenshot import CHROMIUM, CHROMIUM_FLAGS
from tests.payment_service import payment_service
from tests.support import running_worker
from tests.web.web_server import harness_web
from worker.app import build_worker

if TYPE_CHECKING:
    from playwright.async_api import Page

NOT_INSTALLED = (
    "needs Debian's Chromium (apt-get install chromium, as .ci/run does) and Playwright "
    "(the dev dependencies)"
)
HAS_BROWSER = CHROMIUM.exists() and importlib.util.find_spec("playwright") is not None
WAIT_MS = 90_000
"""How long the page may take to show what it should, on a loaded 2-core machine."""

pytestmark = [
    pytest.mark.skipif(not HAS_BROWSER, reason=NOT_INSTALLED),
    pytest.mark.requires_local_server("runs start with the Harness* search attributes"),
]

TOKYO_RATE_LIMITED_TWICE = {
    "faults": [
        {"tool": "get_population", "argument_value": "Tokyo", "code": "RATE_LIMITED", "times": 2}
    ]
}
"""Tokyo's population fails twice before it is read: the run goes on for the retries' backoff
(1 s, then 2 s) after Paris's nodes have finished."""


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS
        )
        opened = await browser.new_page()
        opened.set_default_timeout(WAIT_MS)
        try:
            yield opened
        finally:
            await browser.close()


async def start_from_the_page(
    page: Page, url: str, goal: str, scenario: str, **more: object
) -> str:
    await page.goto(f"{url}/")
    await page.fill("#goal", goal)
    await page.fill("#scenario", scenario)
    if more:
        await page.click("#start-form summary")  # the fields beyond goal and scenario
        await page.fill("#fields", json.dumps(more))
    await page.click("#start-button")
    await page.wait_for_url("**/runs/*")
    return page.url.rsplit("/", 1)[-1]


async def ended(page: Page) -> None:
    await page.wait_for_function("document.body.dataset.ended === 'true'", timeout=WAIT_MS)


async def node_statuses(page: Page) -> dict[str, list[str]]:
    """Each node the page draws, with the statuses of its boxes (one box per node)."""
    found: dict[str, list[str]] = await page.evaluate(
        """() => {
            const nodes = {};
            for (const box of document.querySelectorAll('.node')) {
                (nodes[box.dataset.node] = nodes[box.dataset.node] || []).push(box.dataset.status);
            }
            return nodes;
        }"""
    )
    return found


async def event_log(page: Page) -> list[tuple[int, str, str | None]]:
    """The page's log of trace events: (id, kind, node) in the order the page received them."""
    rows: list[list[object]] = await page.evaluate(
        """() => [...document.querySelectorAll('#events li')].map(
            (li) => [Number(li.dataset.eventId), li.dataset.kind, li.dataset.node || null])"""
    )
    return [
        (int(str(row[0])), str(row[1]), None if row[2] is None else str(row[2])) for row in rows
    ]


async def test_a_cities_run_started_from_the_page_shows_its_nodes_finishing_before_it_ends(
    client: Client, task_queue: str, tmp_path: Path, page: Page
) -> None:
    async with (
        running_worker(client, task_queue),
        harness_web(client, task_queue, tmp_path) as web,
    ):
        await start_from_the_page(
            page, web.url, "Compare Paris and Tokyo", "cities", **TOKYO_RATE_LIMITED_TWICE
        )
        # true only at a moment when Paris's population is shown done and the run is not over
        await page.wait_for_function(
            """() => document.querySelector('.node[data-node="pop_paris"][data-status="DONE"]')
                && document.body.dataset.ended !== 'true'""",
            timeout=WAIT_MS,
        )
        await ended(page)
        statuses = await node_statuses(page)
        phase = await page.text_content("#phase")
    assert phase == "SUCCEEDED"
    assert statuses and all(shown == ["DONE"] for shown in statuses.values()), statuses


async def test_a_refunds_approval_is_answered_from_the_page_and_the_refund_is_paid(
    client: Client, task_queue: str, tmp_path: Path, page: Page
) -> None:
    goal = "Refund order A-1001, the customer received a damaged item"
    registry = ProviderRegistry.always(ScriptedProvider())
    async with (
        payment_service(client, tmp_path) as service,
        build_worker(client, task_queue, registry, services={"payments": service.client}),
        harness_web(client, task_queue, tmp_path) as web,
    ):
        await start_from_the_page(page, web.url, goal, "refunds")
        approve = page.locator('.wait[data-wait="approve-refund"] button.approve')
        await approve.click()
        await page.wait_for_selector('.receipt[data-accepted="true"]', state="attached")
        await ended(page)
        phase = await page.text_content("#phase")
        paid = await service.payments("A-1001")
        delivered = await page.locator('#events li[data-kind="wait.deliver"]').all_text_contents()
    assert phase == "SUCCEEDED"
    assert len(paid) == 1
    assert len([line for line in delivered if "human:web" in line]) == 1, delivered


async def test_the_page_survives_a_restart_of_harness_web_and_shows_each_event_once(
    client: Client, task_queue: str, tmp_path: Path, page: Page
) -> None:
    async with (
        running_worker(client, task_queue),
        harness_web(client, task_queue, tmp_path) as web,
    ):
        await start_from_the_page(page, web.url, "Compare", "cities")  # no city: it asks
        await page.wait_for_selector('.wait[data-wait="question-1"] input.answer-text')
        before = await event_log(page)
        web.kill()
        await page.wait_for_selector('#connection[data-state="reconnecting"]', state="attached")
        await web.start()  # the same port
        await page.wait_for_selector('#connection[data-state="live"]', state="attached")
        await page.fill('.wait[data-wait="question-1"] input.answer-text', "Paris and Tokyo")
        await page.click('.wait[data-wait="question-1"] button.answer')
        await ended(page)
        log = await event_log(page)
        statuses = await node_statuses(page)
        phase = await page.text_content("#phase")
    assert before and log[: len(before)] == before
    assert [event_id for event_id, _, _ in log] == list(range(len(log)))
    finished = [str(node) for _, kind, node in log if kind == "node.finish"]
    assert sorted(finished) == sorted(set(finished)) == sorted(statuses)
    assert all(shown == ["DONE"] for shown in statuses.values()), statuses
    assert phase == "SUCCEEDED"


async def test_the_page_of_an_unknown_run_stops_with_the_servers_one_line_answer(
    client: Client, task_queue: str, tmp_path: Path, page: Page
) -> None:
    async with harness_web(client, task_queue, tmp_path) as web:
        await page.goto(f"{web.url}/runs/no-such-run")
        await page.wait_for_selector('#connection[data-state="stopped"]', state="attached")
        shown = await page.text_content("#connection")
    assert shown == "stopped: no run with id 'no-such-run'"


async def test_a_page_opened_with_the_token_starts_and_follows_a_run_with_it(
    client: Client, task_queue: str, tmp_path: Path, page: Page
) -> None:
    async with (
        running_worker(client, task_queue),
        harness_web(client, task_queue, tmp_path, token="s3cret") as web,
    ):
        await page.goto(f"{web.url}/?token=s3cret")
        await page.fill("#goal", "Compare Paris and Tokyo")
        await page.click("#start-button")
        await page.wait_for_url("**/runs/*?token=s3cret")
        await ended(page)
        phase = await page.text_content("#phase")
        report = await page.get_attribute("#report-link", "href")
    assert phase == "SUCCEEDED"
    assert report is not None and report.endswith("/report?token=s3cret")


async def test_model_tokens_posted_for_a_run_appear_on_its_page_as_they_come(
    client: Client, task_queue: str, tmp_path: Path, page: Page
) -> None:
    """As a worker posts a streaming reply's chunks (`POST /internal/tokens`), in two batches."""
    async with (
        running_worker(client, task_queue),
        harness_web(client, task_queue, tmp_path) as web,
        httpx2.AsyncClient(base_url=web.url) as http,
    ):
        run_id = await start_from_the_page(page, web.url, "Compare", "cities")  # it waits
        await page.wait_for_selector("#events li", state="attached")  # the stream has begun
        reply = page.locator('#tokens pre[data-call="call-1"]')
        for seq, text in enumerate(["Paris has ", "2.1 million people."]):
            chunk = {"stream": run_id, "node": "write", "call": "call-1", "seq": seq, "text": text}
            posted = await http.post("/internal/tokens", json={"chunks": [chunk]})
            assert posted.status_code == 204
            await reply.filter(has_text=text).wait_for(state="attached")
        shown = await reply.text_content()
        node = await reply.get_attribute("data-node")
    assert (shown, node) == ("Paris has 2.1 million people.", "write")


async def test_a_worker_pointed_at_harness_web_streams_the_writers_reply_onto_the_run_page(
    client: Client, task_queue: str, tmp_path: Path, page: Page
) -> None:
    """End to end: a worker with HARNESS_WEB_URL's poster sends the writer's text as it comes
    (the offline provider says it in words), and the page shows it under the writing node;
    the whole reply is there by the run's end, and the trace still has it."""
    async with harness_web(client, task_queue, tmp_path) as web:
        poster = TokenPoster(WebTarget(url=web.url))
        registry = ProviderRegistry.always(ScriptedProvider())
        async with build_worker(client, task_queue, registry, tokens=poster):
            await start_from_the_page(page, web.url, "Compare Paris and Tokyo", "cities")
            await ended(page)
            replies = page.locator("#tokens pre")
            await replies.first.wait_for(state="attached")
            shown = [await reply.text_content() or "" for reply in await replies.all()]
            phase = await page.text_content("#phase")
    assert phase == "SUCCEEDED"
    assert any(len(text.split()) > 3 for text in shown), shown
