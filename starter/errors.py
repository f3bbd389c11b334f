"""Errors the CLI shows as one clear line instead of a stack trace, and the exit code of each.

The client (`durable_harness.Harness` and the modules under it) raises the public
`durable_harness.exceptions`; the CLI's own checks raise `CliError`, which is one of them that
carries its exit code. `exit_code_of` maps either to the code docs/cli.md states."""

from __future__ import annotations

from durable_harness.exceptions import (
    HarnessError,
    InvalidInput,
    NotFound,
    RunFailed,
    Unavailable,
)

EXIT_FAILED_RUN = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3

EXIT_CODES: dict[type[HarnessError], int] = {
    InvalidInput: EXIT_USAGE,
    NotFound: EXIT_USAGE,
    Unavailable: EXIT_UNAVAILABLE,
    RunFailed: EXIT_FAILED_RUN,
}
"""The exit code of each public exception: bad input and an unknown id are the caller's to fix
(2), an unreachable server or worker is 3, a failed run 1. A pack that cannot load (an import
error, a bad tool definition, two packs with one name: scenarios.registry.PackLoadError) is bad
input of the environment, an InvalidInput: 2, from every command that loads packs."""


class CliError(HarnessError):
    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def exit_code_of(error: HarnessError) -> int:
    """The CLI's exit code for a failure: a CliError's own, else its public class's (2 for a
    HarnessError of no known kind: it is the caller's to fix)."""
    if isinstance(error, CliError):
        return error.exit_code
    for kind in type(error).__mro__:
        if kind in EXIT_CODES:
            return EXIT_CODES[kind]
    return EXIT_USAGE
