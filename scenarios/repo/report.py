"""The repo report's draft: what changed, commit by commit, and why, as the messages say."""

from __future__ import annotations

from scenarios.repo.history import Commit, touched_files

MAX_LISTED = 30


def render_report(
    question: str,
    commits: list[Commit],
    topic: str | None,
    patches: dict[str, str],
    diff: str | None,
) -> str:
    """`patches`: git_show's answer by full commit id, for the commits the run looked into."""
    if not commits:
        return f"# {question}\n\nThe log returned no commits, so there is nothing to report."
    relevant = [c for c in commits if _about(c, topic, patches.get(c.sha, ""))] if topic else []
    shown = relevant or commits
    lines = [f"# {question}", ""]
    last = _the_last(len(commits))
    if topic and not relevant:
        none = (
            "The last commit does not mention"
            if len(commits) == 1
            else f"None of the last {len(commits)} commits mentions"
        )
        lines += [f"{none} '{topic}' in its message or patch; here is what changed.", ""]
    elif topic:
        lines += [f"{len(relevant)} of {last} touch '{topic}'.", ""]
    else:
        lines += [f"What {last} changed.", ""]
    lines.append("## What changed, and why")
    for commit in shown[:MAX_LISTED]:
        why = commit.body or "not given beyond the subject"
        lines.append(
            f"- `{commit.short}` {commit.subject} ({commit.author}, {commit.date}). Why: {why}"
        )
        files = touched_files(patches.get(commit.sha, ""))
        if files:
            lines.append(f"  Files: {', '.join(files[:8])}{' ...' if len(files) > 8 else ''}")
    if len(shown) > MAX_LISTED:
        lines.append(f"- ... and {len(shown) - MAX_LISTED} more commits")
    if diff:
        files = touched_files(diff)
        if files:
            count = (
                f"at least {len(files)}, the diff was cut"
                if "\n[truncated: " in diff
                else len(files)
            )
            lines += ["", f"## Files changed since then, working tree included ({count})"]
            lines.append(", ".join(files[:20]) + (" ..." if len(files) > 20 else ""))
            matching = [f for f in files if topic and topic.lower() in f.lower()]
            if matching:
                lines.append(f"Of these, {', '.join(matching[:10])} match '{topic}'.")
    return "\n".join(lines)


def _the_last(count: int) -> str:
    return "the last commit" if count == 1 else f"the last {count} commits"


def _about(commit: Commit, topic: str, patch: str) -> bool:
    word = topic.lower()
    return word in commit.message.lower() or any(word in f.lower() for f in touched_files(patch))
