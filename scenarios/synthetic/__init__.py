"""Scenario `synthetic`: any DAG shape from a plan file, for tests and benchmarks.

`delay` sleeps and returns its input, `fail` fails with a chosen error code, `write` makes one
model call, `collect` is the final node. The offline planner does not plan here: pass a plan
with `--plan`.
"""

from __future__ import annotations

import asyncio
import re

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.llm import TextRequest
from harness.catalog.tools import NativeWait, ToolCompletion, ToolRole, ToolSpec
from harness.core.errors import ErrorCode, ToolError
from harness.core.plan import Plan
from harness.core.untrusted import fence, with_data_rule
from scenarios.base import CheckInput, Pack, PlanningError, PlanningInput, Tool, ToolContext

MAX_DELAY_MS = 600_000


class DelayArgs(BaseModel):
    ms: int = Field(ge=0, le=MAX_DELAY_MS, description="How long to sleep, in milliseconds.")
    value: JsonValue = Field(default=None, description="Returned unchanged.")


class FailArgs(BaseModel):
    code: ErrorCode = Field(description="The error code to fail with.")
    times: int = Field(
        default=1_000_000, ge=1, description="Fail the first N attempts, then succeed."
    )
    message: str = "injected failure"


class SleepArgs(BaseModel):
    seconds: float = Field(ge=0, le=30 * 24 * 3600, description="A durable timer.")


class EventArgs(BaseModel):
    event: str = Field(min_length=1, description="Name of the external event to wait for.")
    timeout_seconds: float | None = Field(default=None, gt=0)


class JobArgs(BaseModel):
    job: str = Field(min_length=1, description="Name of the external job to start.")


class EffectArgs(BaseModel):
    target: str = Field(min_length=1, description="What the side effect changes.")


class CollectArgs(BaseModel):
    inputs: list[JsonValue] = Field(default_factory=list, description="Results to collect.")


class WriteArgs(BaseModel):
    topic: str = Field(min_length=1, max_length=200, description="What to write a line about.")


async def write(args: WriteArgs, ctx: ToolContext) -> JsonValue:
    """One model call: a line about the topic (load on the LLM task queue and its limit)."""
    reply = await ctx.write(
        TextRequest(
            system=with_data_rule("You write one short sentence."),
            prompt=f"Write one sentence about this topic:\n{fence('topic', args.topic)}",
            draft=f"A sentence about {args.topic}.",
            max_output_tokens=60,
        )
    )
    return reply.text.strip()


class EchoArgs(BaseModel):
    value: JsonValue = Field(default=None, description="Returned unchanged.")


async def echo(args: EchoArgs, ctx: ToolContext) -> JsonValue:
    return {"value": args.value}


async def delay(args: DelayArgs, ctx: ToolContext) -> JsonValue:
    await asyncio.sleep(args.ms / 1000)
    return {"ms": args.ms, "value": args.value}


async def fail(args: FailArgs, ctx: ToolContext) -> JsonValue:
    if ctx.attempt <= args.times:
        raise ToolError(args.code, f"{args.message} (attempt {ctx.attempt})")
    return {"recovered_after": args.times}


async def _workflow_native(args: BaseModel, ctx: ToolContext) -> JsonValue:
    raise ToolError(ErrorCode.TOOL_EXECUTION_FAILED, "this tool is carried out by the workflow")


async def start_job(args: JobArgs, ctx: ToolContext) -> JsonValue:
    """Starts an external job; its result arrives later through a `deliver` signal."""
    return {"operation_id": f"{ctx.run_id}:{ctx.node_id}:{args.job}", "job": args.job}


async def start_change(args: JobArgs, ctx: ToolContext) -> JsonValue:
    """Starts an external change (approved first); its outcome arrives later by operation id.
    The operation id is the run's and the job's, the same in every attempt, as a payment
    service's idempotent refund is (scenarios.refunds): a replan that starts it again gets the
    same operation back."""
    return {"operation_id": f"{ctx.run_id}:change:{args.job}", "job": args.job}


async def side_effect(args: EffectArgs, ctx: ToolContext) -> JsonValue:
    return {"changed": args.target, "key": f"{ctx.run_id}:{ctx.node_id}"}


async def collect(args: CollectArgs, ctx: ToolContext) -> JsonValue:
    return f"collected {len(args.inputs)} results"


def _no_planner(request: PlanningInput) -> Plan:
    raise PlanningError("the synthetic scenario only runs given plans; pass one with --plan FILE")


def _check(check: CheckInput) -> list[str]:
    match = re.fullmatch(r"collected (\d+) results", check.report)
    if match is None:
        return [f"unexpected report: {check.report[:80]!r}"]
    return []


SCENARIO = Pack(
    name="synthetic",
    description="Delays, failures and a collector: any DAG shape, for tests and benchmarks.",
    example_goal="run the given plan",
    tools=(
        Tool(
            ToolSpec.from_model("delay", "Sleep, then return the input.", DelayArgs),
            DelayArgs,
            delay,
        ),
        Tool(ToolSpec.from_model("fail", "Fail with an error code.", FailArgs), FailArgs, fail),
        Tool(
            ToolSpec.from_model(
                "flaky",
                "A call to a flaky service (sleep, then return the input), with retry settings "
                "of its own: up to 5 attempts of 20 s each, the first retry after 0.5 s.",
                DelayArgs,
                max_attempts=5,
                timeout_seconds=20,
                backoff_seconds=0.5,
            ),
            DelayArgs,
            delay,
        ),
        Tool(
            ToolSpec.from_model(
                "write", "One model call: a sentence about a topic.", WriteArgs, uses_llm=True
            ),
            WriteArgs,
            write,
        ),
        Tool(
            ToolSpec.from_model(
                "echo", "Return the input at once (a local activity).", EchoArgs, local=True
            ),
            EchoArgs,
            echo,
        ),
        Tool(
            ToolSpec.from_model(
                "sleep", "A durable timer.", SleepArgs, native_wait=NativeWait.TIMER
            ),
            SleepArgs,
            _workflow_native,
        ),
        Tool(
            ToolSpec.from_model(
                "await_event",
                "Wait for a named external event; its data is the result.",
                EventArgs,
                native_wait=NativeWait.EXTERNAL_EVENT,
            ),
            EventArgs,
            _workflow_native,
        ),
        Tool(
            ToolSpec.from_model(
                "start_job",
                "Start an external job; the result is delivered later by operation id.",
                JobArgs,
                completion=ToolCompletion.ASYNC_OPERATION,
            ),
            JobArgs,
            start_job,
        ),
        Tool(
            ToolSpec.from_model(
                "side_effect",
                "Change something outside (needs approval).",
                EffectArgs,
                side_effects=True,
            ),
            EffectArgs,
            side_effect,
        ),
        Tool(
            ToolSpec.from_model(
                "start_change",
                "Start an approved external change; its outcome is delivered later by "
                "operation id.",
                JobArgs,
                side_effects=True,
                completion=ToolCompletion.ASYNC_OPERATION,
            ),
            JobArgs,
            start_change,
        ),
        Tool(
            ToolSpec.from_model(
                "collect",
                "Collect results into a report.",
                CollectArgs,
                role=ToolRole.FINAL_SYNTHESIS,
            ),
            CollectArgs,
            collect,
        ),
    ),
    check=_check,
    offline_plan=_no_planner,
)
