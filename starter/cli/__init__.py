"""The `harness` command: its parser (`app` puts together one `*_cli` module a command group,
each naming the handlers of its commands), the work the handlers import when they run
(`commands`, and one `*_actions` module for each of eval, task, rules and memory) and how it
prints results.

May import `starter.servers`, `starter.pages`, `starter.web` and the API modules at the top of
`starter`.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    """The `harness` console script (`starter.cli:main`): the parser and its dispatch."""
    from starter.cli.app import main as run

    run(argv)
