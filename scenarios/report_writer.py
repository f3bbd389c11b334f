"""`write_report`: the final-synthesis tool every pack's catalog has, so a pack of data tools
alone can finish a run. A pack may bring a final tool of its own instead (the built-in scenarios
do); a plan calls exactly one of them, last.

Its `inputs` is an array argument, so a plan binds it once per result it wants in the report
(each binding adds one item: harness.engine.binding). The worker model writes the report from
them; the draft it is given, and what the offline provider answers, is a deterministic markdown
rendering: a heading with the question, then one section per input.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.llm import TextRequest
from harness.catalog.tools import ToolRole, ToolSpec
from harness.core.untrusted import fence, with_data_rule
from scenarios.base import Tool, ToolContext

WRITE_REPORT = "write_report"

MAX_OUTPUT_TOKENS = 1500


class WriteReportArgs(BaseModel):
    inputs: list[JsonValue] = Field(
        description="The results the report is written from: one NODE_RESULT binding per node."
    )
    question: str | None = Field(
        default=None,
        description="The question the report answers, as a LITERAL (the goal, in its words).",
    )


async def write_report(args: WriteReportArgs, ctx: ToolContext) -> JsonValue:
    """The worker model's report from the inputs (the offline provider's: the draft)."""
    results = fence("results", json.dumps(args.inputs, indent=2, ensure_ascii=False))
    asked = (
        f"Write a markdown report that answers this question:\n{fence('question', args.question)}"
        if args.question
        else "Write a markdown report of these results."
    )
    reply = await ctx.write(
        TextRequest(
            system=with_data_rule(
                "You write concise markdown reports from the results of tool calls. Use only "
                "the facts given; keep names, numbers and dates exactly as given; say plainly "
                "what the results do not answer."
            ),
            prompt=f"{asked}\n\nThe results:\n{results}",
            draft=render_report(args.inputs, args.question),
            max_output_tokens=MAX_OUTPUT_TOKENS,
        )
    )
    return reply.text.strip()


def render_report(inputs: list[JsonValue], question: str | None = None) -> str:
    """A heading with the question (when given), then one section per input."""
    lines = [f"# {' '.join(question.split())}", ""] if question else []
    if not inputs:
        lines.append("No results were given.")
    for number, value in enumerate(inputs, start=1):
        lines += [f"## Result {number}", "", _rendered(value), ""]
    return "\n".join(lines).strip()


def _rendered(value: JsonValue) -> str:
    """A text as it is; a flat object or list as a bulleted list; anything else as JSON."""
    if isinstance(value, str):
        return value.strip() or "(empty text)"
    if isinstance(value, dict) and value and all(_is_scalar(v) for v in value.values()):
        return "\n".join(f"- {key}: {_scalar(item)}" for key, item in value.items())
    if isinstance(value, list) and value and all(_is_scalar(v) for v in value):
        return "\n".join(f"- {_scalar(item)}" for item in value)
    if not isinstance(value, (dict, list)):
        return _scalar(value)
    text = json.dumps(value, indent=2, ensure_ascii=False)
    marks = "```"
    while marks in text:  # a fence the text cannot close early
        marks += "`"
    return f"{marks}json\n{text}\n{marks}"


def _is_scalar(value: JsonValue) -> bool:
    return not isinstance(value, (dict, list))


def _scalar(value: JsonValue) -> str:
    """A string as it is (its lines kept inside a list item), anything else as JSON."""
    if isinstance(value, str):
        return value.replace("\n", "\n  ")
    return json.dumps(value, ensure_ascii=False)


WRITE_REPORT_TOOL = Tool(
    ToolSpec.from_model(
        WRITE_REPORT,
        "Write the final markdown report from the results bound to `inputs`, answering "
        "`question`. A pack's own final-synthesis tool knows its results better: prefer it.",
        WriteReportArgs,
        role=ToolRole.FINAL_SYNTHESIS,
        cost_hint=2.0,
        uses_llm=True,
    ),
    WriteReportArgs,
    write_report,
)
