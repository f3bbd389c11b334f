"""Agent nodes through each SDK provider against its fake API: the model asks for a pack's
tool, reads its result and answers, in two agent nodes that run side by side; the run ends
SUCCEEDED with their answers in its report, and each agent's call is an activity of its child."""

from __future__ import annotations

import json
from dataclasses import dataclass

from temporalio.client import Client

from activities.llm import LLMProvider
from activities.llm.pricing import PricingTable
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.agent_node import AgentResult, AgentStop
from harness.engine.run import RunPhase, RunRequest
from harness.engine.trace import AgentRole, TraceKind
from scenarios.registry import registered
from tests.fakes import FakeApi, FakeCall, FakeServer, Recorded, Reply
from tests.providers.script import SUMMARY_USAGE
from tests.providers.support import MODELS, PRICING, build_provider
from tests.scenarios.tides import HIGH_WATER, QUESTION, TIDES
from tests.support import activity_timeline, execute_run, history_events, running_worker


def port_agent(port: str) -> PlanNode:
    return PlanNode(
        id=port.lower(),
        tool="agent",
        arguments=[
            ArgumentBinding.literal("goal", f"When is high water at {port} today?"),
            ArgumentBinding.literal("tools", ["tide"]),
            ArgumentBinding.literal("max_turns", 3),
        ],
    )


AGENTS_PLAN = Plan(
    nodes=[
        port_agent("Brest"),
        port_agent("Cherbourg"),
        PlanNode(
            id="report",
            tool="write_report",
            arguments=[
                ArgumentBinding.node_result("inputs", "brest", "answer"),
                ArgumentBinding.node_result("inputs", "cherbourg", "answer"),
                ArgumentBinding.literal("question", QUESTION),
            ],
            deps=["brest", "cherbourg"],
        ),
    ]
)


@dataclass
class TideAgentScript:
    """A model that, as an agent, calls `tide` for the port its conversation names, then
    answers from the result; as the writer, reports the times its prompt carries; as the
    judge, passes."""

    api: FakeApi

    def __call__(self, request: Recorded) -> Reply:
        if "tide" in self.api.offered_tools(request):
            return self._turn(request)
        if request.body["model"] == MODELS.judge:
            verdict = '{"passed": true, "score": 1.0, "reasons": ["both ports are answered"]}'
            return self.api.text_reply(verdict, SUMMARY_USAGE)(request)
        prompt = self.api.user_text(request)
        lines = [
            f"- {port}: high water at {t}" for port, (t, _) in HIGH_WATER.items() if t in prompt
        ]
        return self.api.text_reply("\n".join(["# High water", "", *lines]), SUMMARY_USAGE)(request)

    def _turn(self, request: Recorded) -> Reply:
        port = "Brest" if "Brest" in json.dumps(request.body) else "Cherbourg"
        results = self.api.sent_results(request)
        if not results:
            call = FakeCall(f"call_{port.lower()}", "tide", {"port": port})
            return self.api.tool_calls_reply([call], SUMMARY_USAGE, "Looking it up.")(request)
        time = HIGH_WATER[port][0]
        assert time in results[0].content and not results[0].failed
        return self.api.text_reply(f"High water at {port} is at {time}.", SUMMARY_USAGE)(request)


async def test_two_agent_nodes_succeed_through_the_providers_tool_use(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer
) -> None:
    pricing = PricingTable({**PRICING.prices(), MODELS.planner: PRICING.prices()[MODELS.planner]})
    provider: LLMProvider = build_provider(api, api.base_url(server.url), pricing=pricing)
    server.fallback = TideAgentScript(api)
    request = RunRequest(goal=QUESTION, scenario=TIDES.name, plan=AGENTS_PLAN)
    with registered(TIDES):
        async with running_worker(client, task_queue, provider):
            result = await execute_run(client, task_queue, request)
            child = await history_events(client, f"{result.run_id}-attempt-1-agent-brest")
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None
    assert "Brest: high water at 06:12" in result.report
    assert "Cherbourg: high water at 07:40" in result.report
    for port in ("brest", "cherbourg"):
        agent = AgentResult.model_validate(next(n for n in result.nodes if n.id == port).result)
        assert agent.stopped is AgentStop.ANSWERED and agent.turns == 2
        assert [(call.tool, call.ok) for call in agent.tool_calls] == [("tide", True)]
    summaries = [summary for _, summary in activity_timeline(child)]
    assert any(summary.startswith("tide brest.t1.c1 (port=Brest)") for summary in summaries)
    agent_usage = result.usage_by_role[AgentRole.AGENT]
    assert agent_usage.total_tokens == 4 * (SUMMARY_USAGE.input + SUMMARY_USAGE.output)
    assert [e.tool for e in result.trace if e.kind is TraceKind.AGENT_CALL] == ["tide", "tide"]
