"""The `harness` command: its parsers (`app`, one `*_cli` module a command group), its
handlers (`commands`, one `*_actions` module a command group) and how it prints results.

May import `starter.servers`, `starter.pages` and the API modules at the top of `starter`.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    """The `harness` console script (`starter.cli:main`): the parser and its dispatch."""
    from starter.cli.app import main as run

    run(argv)
