"""A writer's reply cut at its token limit, in a whole run with each SDK provider against its
fake: the node fails (no truncated report is kept), the run replans with the message naming the
limit, and the next attempt's report is the whole one."""

from __future__ import annotations

from dataclasses import dataclass, field

from temporalio.client import Client

from activities.llm import LLMProvider
from harness.engine.run import RunPhase, RunRequest
from harness.engine.trace import TraceKind
from tests.fakes import FakeApi, FakeServer, Recorded, Reply
from tests.providers.script import REPORT_USAGE, CitiesScript
from tests.support import execute_run, running_worker

GOAL = "Compare Paris and Tokyo"
CUT_REPORT = "# Paris and Tokyo\n\nTokyo is larger than"


@dataclass
class CutOnceScript:
    """The cities script, except that the first report is cut at its limit."""

    script: CitiesScript
    cut: list[str] = field(default_factory=list)

    def __call__(self, request: Recorded) -> Reply:
        if "markdown report" in self.script.api.user_text(request) and not self.cut:
            self.cut.append(request.body["model"])
            return self.script.api.text_reply(CUT_REPORT, REPORT_USAGE, cut_off=True)(request)
        return self.script(request)


async def test_a_report_cut_at_its_limit_fails_its_node_and_the_replan_writes_it_whole(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    script = CutOnceScript(CitiesScript(api, GOAL))
    server.fallback = script
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert script.cut, "the first report was cut"
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempts == 2
    assert result.report == "# Paris and Tokyo\n\nTokyo is larger than Paris."
    (failed,) = [event for event in result.trace if event.kind is TraceKind.NODE_FAIL]
    assert failed.node_id == "report" and failed.data["error_code"] == "INVALID_MODEL_OUTPUT"
    assert failed.message is not None
    assert "cut at its limit of 1200 output tokens" in failed.message
