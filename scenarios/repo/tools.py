"""The repo scenario's own tool: the report. Its lookups (log, show, diff, and the write tools a
person must approve) come from the git MCP server, listed into the catalog at run time."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.llm import TextRequest
from harness.catalog.tools import ToolRole, ToolSpec
from harness.core.untrusted import fence, with_data_rule
from scenarios.base import Tool, ToolContext
from scenarios.repo.history import log_commits, shown_sha
from scenarios.repo.report import render_report


class RepoReportArgs(BaseModel):
    question: str = Field(min_length=1, max_length=500)
    log: str = Field(description="git_log's answer: the commits to report on.")
    commits: list[str] = Field(
        default_factory=list, description="git_show's answers for commits worth a closer look."
    )
    diff: str | None = Field(default=None, description="git_diff's answer over the range.")
    topic: str | None = Field(
        default=None, max_length=80, description="What the question is about (e.g. scheduler)."
    )


async def write_repo_report(args: RepoReportArgs, ctx: ToolContext) -> JsonValue:
    commits = log_commits(args.log)
    patches = {sha: show for show in args.commits if (sha := shown_sha(show)) is not None}
    draft = render_report(args.question, commits, args.topic, patches, args.diff)
    reply = await ctx.write(
        TextRequest(
            system=with_data_rule(
                "You explain a repository's recent history to its developers. Use only the log, "
                "patches and diff given. Cite each commit you describe by the id in the draft, "
                "in backticks; never cite an id that is not in the data."
            ),
            # The question is the planner's argument, which may carry a user's answer: data too.
            prompt=f"Answer this question:\n{fence('question', args.question)}\n\n"
            + fence("log", args.log[:20_000])
            + "".join(f"\n{fence('commit', show[:8_000])}" for show in args.commits)
            + (f"\n{fence('diff', args.diff[:20_000])}" if args.diff else ""),
            draft=draft,
            max_output_tokens=1500,
        )
    )
    return reply.text.strip()


TOOLS = (
    Tool(
        ToolSpec.from_model(
            "write_repo_report",
            "Write the answer to a question about the repository's history: what changed and "
            "why, citing commit ids. Bind log to git_log, commits to git_show results, diff to "
            "git_diff.",
            RepoReportArgs,
            role=ToolRole.FINAL_SYNTHESIS,
            cost_hint=2.0,
            uses_llm=True,
        ),
        RepoReportArgs,
        write_repo_report,
    ),
)
