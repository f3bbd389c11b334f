"""The repo scenario's checks: a report answers from the history the run read, and every commit
id it cites is one the repository has (one of its lookups returned it)."""

from __future__ import annotations

from scenarios.base import CheckInput, Rubric
from scenarios.repo.history import cited_ids, known_shas


def check_repo_report(check: CheckInput) -> list[str]:
    report = check.report.strip()
    if not report:
        return ["the report is empty"]
    lookups = {node: value for node, value in check.results.items() if value != check.report}
    known = known_shas(lookups)  # the report's own text proves nothing
    cited = cited_ids(report)
    problems = [
        f"the report cites commit {token}, which the repository does not have (none of the "
        "run's log or show lookups returned it)"
        for token in cited
        if not any(sha.startswith(token) for sha in known)
    ]
    if known and not cited:
        problems.append("the report cites no commit id; name the commits it describes")
    return problems


def repo_rubric(check: CheckInput) -> Rubric:
    return Rubric(
        criteria=[
            "the report says what changed and why, from the commit messages and patches given",
            "every commit it describes is cited by its id, and no id is invented",
        ],
        evidence_terms=[token for token in cited_ids(check.report)][:5],
    )
