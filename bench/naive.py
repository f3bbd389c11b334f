"""The naive baseline: a Temporal workflow that gathers one activity per node, level by level.

No budget, trace, validation or verification: just `asyncio.gather` over each level of the DAG
(in chunks of `max_in_flight`: the server allows 2,000 pending activities per workflow), with
one zero-logic activity that sleeps for the node's time.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import activity, workflow

from bench.plans import IN_FLIGHT_CAP, BenchDag

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from bench.models import NaiveCall, NaiveNode, NaiveOutput, NaiveRequest, NaiveResult

NAIVE_WORKFLOW = "BenchNaiveLevels"
STEP_TIMEOUT = timedelta(minutes=2)


@activity.defn(name="bench.naive_step")
async def naive_step(call: NaiveCall) -> NaiveOutput:
    await asyncio.sleep(call.ms / 1000)
    return NaiveOutput(id=call.id, ms=call.ms, inputs=len(call.inputs))


@workflow.defn(name=NAIVE_WORKFLOW)
class NaiveLevelsWorkflow:
    @workflow.run
    async def run(self, request: NaiveRequest) -> NaiveResult:
        started = workflow.now()
        results: dict[str, JsonValue] = {}
        step = request.max_in_flight
        for level in request.levels:
            for start in range(0, len(level), step):
                chunk = level[start : start + step]
                outputs = await asyncio.gather(*(self._step(node, results) for node in chunk))
                for node, output in zip(chunk, outputs, strict=True):
                    results[node.id] = output.model_dump()
        elapsed = (workflow.now() - started).total_seconds()
        return NaiveResult(nodes=len(results), wall_seconds=elapsed)

    async def _step(self, node: NaiveNode, results: dict[str, JsonValue]) -> NaiveOutput:
        call = NaiveCall(id=node.id, ms=node.ms, inputs=[results[bind] for bind in node.binds])
        return await workflow.execute_activity(
            naive_step, call, start_to_close_timeout=STEP_TIMEOUT, summary=node.id
        )


def naive_request(dag: BenchDag, max_in_flight: int = IN_FLIGHT_CAP) -> NaiveRequest:
    return NaiveRequest(
        levels=[
            [NaiveNode(id=node.id, ms=node.ms, binds=list(node.binds)) for node in level]
            for level in dag.levels()
        ],
        max_in_flight=max_in_flight,
    )
