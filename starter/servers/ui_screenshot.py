"""`python -m starter.servers.ui_screenshot --out FILE`: the Temporal UI, in headless Chromium,
showing a refund that waits for approval, and (`--wide-out`) a 300-node run's result decoded.

Everything it shows is real and its own: a dev server with its UI, the payment service and a
worker, each a process on a free port in a temporary directory, and a refund started with
`harness run ... --scenario refunds --no-wait`. Once the approval is pending, Chromium (Debian's
`chromium`, driven by Playwright, the `ui` extra) opens the run's page, checks that the
timeline names the approval's deadline timer and that the current details name the wait and
the commands that answer it, and saves both views, one above the other, as one PNG. Then a
synthetic run of 300 nodes, whose result is compressed (over 128 KB), runs to its end, and its
page must show that result decoded by the codec server started beside the dev server, as
`harness server` and `make demo` start it: its second PNG.

Exit 0 with the file written; 1 when the UI does not show what it should (the line says what
is missing); 2 when Chromium or Playwright is not installed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib import image

from infra.process import die_with_parent
from infra.settings import Settings
from starter.servers.codec_server import endpoint, ui_origins
from starter.servers.dev_server import dev_server_command

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""The machine's network is closed: without these Chromium keeps dialling Google's hosts."""
GOAL = "Refund order A-1001, the customer received a damaged item"
WAIT_ID = "approve-refund"
VIEWPORT_WIDTH, VIEWPORT_HEIGHT = 1440, 1000
STARTUP_SECONDS = 60.0
UI_SECONDS = 30.0


class ScreenshotError(Exception):
    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def services(directory: Path) -> Iterator[dict[str, str]]:
    """Server (with UI), payment service and worker; yields the environment that reaches them."""
    temporal, ui, payments, codec = free_port(), free_port(), free_port(), free_port()
    ledger = directory / "payments.db"
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": f"127.0.0.1:{temporal}",
        "HARNESS_UI_URL": f"http://127.0.0.1:{ui}",
        "HARNESS_PAYMENTS_URL": f"http://127.0.0.1:{payments}",
        "HARNESS_TASK_QUEUE": "ui-screenshot",
        "HARNESS_STATE_DIR": str(directory),
    }
    origins = [flag for origin in ui_origins(ui) for flag in ("--ui-origin", origin)]
    commands = [
        (
            "codec",
            [sys.executable, "-m", "starter.servers.codec_server", "--port", str(codec), *origins],
        ),
        (
            "server",
            dev_server_command(temporal, ui, directory / "temporal.db", "default", endpoint(codec)),
        ),
        (
            "payments",
            [sys.executable, "-m", "payments", "--port", str(payments), "--db", str(ledger)],
        ),
        ("worker", [sys.executable, "-m", "worker"]),
    ]
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for name, command in commands:
            log = (directory / f"{name}.log").open("ab")
            processes.append(
                subprocess.Popen(
                    command,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    preexec_fn=die_with_parent(),
                )
            )
            if name == "server":
                _wait_for_http(f"{env['HARNESS_UI_URL']}/", "the Temporal UI")
            if name == "payments":
                _wait_for_http(f"{env['HARNESS_PAYMENTS_URL']}/health", "the payment service")
        yield env
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def _wait_for_http(url: str, what: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise ScreenshotError(f"{what} did not answer at {url} within {STARTUP_SECONDS:.0f} s", 1)


def start_refund(env: dict[str, str]) -> str:
    """The user's way in: `harness run ... --no-wait` prints the run id."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "starter.cli.app",
            "run",
            GOAL,
            "--scenario",
            "refunds",
            "--no-wait",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise ScreenshotError(f"harness run failed: {done.stderr.strip()}", 1)
    return done.stdout.strip().splitlines()[-1]


async def _approval_pending(env: dict[str, str], run_id: str) -> None:
    from infra.client import connect
    from workflows import AgentRunWorkflow

    settings = Settings(temporal_address=env["TEMPORAL_ADDRESS"])
    handle = (await connect(settings)).get_workflow_handle(run_id)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        waits = await handle.query(AgentRunWorkflow.waits)
        if any(w.id == WAIT_ID and w.status.value == "PENDING" for w in waits):
            return
        await asyncio.sleep(0.2)
    raise ScreenshotError(f"run {run_id} never waited for {WAIT_ID}", 1)


def expected_texts(run_id: str) -> dict[str, list[str]]:
    """What each view of the run's page must show: the deadline timer by its wait's name, and
    in the current details the wait and both ways to answer it."""
    return {
        "Timeline": [f"approval {WAIT_ID} expires"],
        "User Metadata": [
            "Current Details",
            f"{WAIT_ID} APPROVAL",
            f"harness approve {run_id} {WAIT_ID} --actor human:NAME",
            f"temporal workflow signal --workflow-id {run_id} --name approve",
        ],
    }


WIDE_NODES = 300
WIDE_VALUE = "result of node {} " + "·" * 600
"""Each wide node's value: 300 of them make a result over 128 KB, which the codec compresses."""
WIDE_SHOWN = ["SUCCEEDED", f"collected {WIDE_NODES} results"]
"""What the wide run's page must show of its result, decoded (its summaries name node values
too, so those would prove nothing)."""


async def run_wide(env: dict[str, str]) -> str:
    """A synthetic run of WIDE_NODES nodes and a final one, to its end; its id."""
    from harness.core.plan import ArgumentBinding, Plan, PlanNode
    from harness.engine.run import RunPhase, RunRequest
    from infra.client import connect
    from workflows import AgentRunWorkflow

    leaves = [
        PlanNode(
            id=f"n{index}",
            tool="delay",
            arguments=[
                ArgumentBinding.literal("ms", 0),
                ArgumentBinding.literal("value", WIDE_VALUE.format(index)),
            ],
        )
        for index in range(WIDE_NODES)
    ]
    inputs = [ArgumentBinding.node_result("inputs", leaf.id) for leaf in leaves]
    final = PlanNode(id="final", tool="collect", arguments=inputs, deps=[n.id for n in leaves])
    request = RunRequest(
        goal=f"a wide run of {WIDE_NODES} nodes",
        scenario="synthetic",
        plan=Plan(nodes=[*leaves, final]),
    )
    client = await connect(Settings(temporal_address=env["TEMPORAL_ADDRESS"]))
    run_id = f"wide-{int(time.time())}"
    result = await client.execute_workflow(
        AgentRunWorkflow.run, request, id=run_id, task_queue=env["HARNESS_TASK_QUEUE"]
    )
    if result.status is not RunPhase.SUCCEEDED:
        raise ScreenshotError(f"the wide run ended {result.status.value}: {result.error}", 1)
    return run_id


def capture_result(url: str, chromium: Path, out: Path) -> None:
    """The run's page, once it shows the run's result decoded."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT})
            page.goto(url)
            for text in WIDE_SHOWN:
                if not _shown(page, text):
                    seen = out.with_name(f"{out.stem}.failed.png")
                    page.screenshot(path=str(seen), full_page=True)
                    missing = (
                        f"the wide run's page does not show its result's {text!r} (see {seen})"
                    )
                    raise ScreenshotError(missing, 1)
            page.screenshot(path=str(out))
        finally:
            browser.close()


def check_browser(chromium: Path) -> None:
    """Before anything starts: Playwright to drive the browser, and the browser itself."""
    if importlib.util.find_spec("playwright") is None:
        raise ScreenshotError("Playwright is not installed: .venv/bin/pip install -e '.[ui]'", 2)
    if not chromium.exists():
        raise ScreenshotError(f"no Chromium at {chromium}: apt-get install chromium", 2)


def capture(url: str, run_id: str, chromium: Path, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    shots: list[Path] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT})
            page.goto(url)
            for index, (tab, texts) in enumerate(expected_texts(run_id).items()):
                page.get_by_role("tab", name=tab).click()
                for text in texts:
                    if not _shown(page, text):
                        seen = out.with_name(f"{out.stem}.failed.png")
                        page.screenshot(path=str(seen), full_page=True)
                        missing = f"the UI's {tab} view does not show: {text} (see {seen})"
                        raise ScreenshotError(missing, 1)
                shot = out.with_name(f"{out.stem}.{index}.png")
                page.screenshot(path=str(shot))
                shots.append(shot)
        finally:
            browser.close()
    stack(shots, out)


def _shown(page: Page, text: str) -> bool:
    """Whether `text` is on the page or in one of its frames: the UI renders a run's markdown
    (summary, details, current details) in sandboxed frames of its own."""
    deadline = time.monotonic() + UI_SECONDS
    while time.monotonic() < deadline:
        for frame in page.frames:
            if frame.get_by_text(text).count():
                return True
        page.wait_for_timeout(250)
    return False


def stack(shots: Sequence[Path], out: Path) -> None:
    """One image, the views one above the other."""
    images = [image.imread(str(shot)) for shot in shots]
    image.imsave(str(out), np.concatenate(images, axis=0))
    for shot in shots:
        shot.unlink()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m starter.servers.ui_screenshot")
    parser.add_argument("--out", type=Path, default=Path("docs/ui-approval-wait.png"))
    parser.add_argument(
        "--wide-out",
        type=Path,
        default=None,
        help="the wide run's result, decoded (default: ui-wide-result.png beside --out)",
    )
    parser.add_argument("--chromium", type=Path, default=CHROMIUM)
    args = parser.parse_args(argv)
    try:
        check_browser(args.chromium)
        wide_out = args.wide_out or args.out.with_name("ui-wide-result.png")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp, services(Path(tmp)) as env:
            run_id = start_refund(env)
            asyncio.run(_approval_pending(env, run_id))
            url = f"{env['HARNESS_UI_URL']}/namespaces/default/workflows/{run_id}"
            capture(url, run_id, args.chromium, args.out)
            wide_id = asyncio.run(run_wide(env))
            wide_url = f"{env['HARNESS_UI_URL']}/namespaces/default/workflows/{wide_id}"
            capture_result(wide_url, args.chromium, wide_out)
    except ScreenshotError as error:
        print(f"ui_screenshot: {error}", file=sys.stderr)
        sys.exit(error.exit_code)
    print(args.out)
    print(wide_out)


if __name__ == "__main__":
    main()
