"""Errors the CLI shows as one clear line instead of a stack trace."""

from __future__ import annotations

EXIT_FAILED_RUN = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3


class CliError(Exception):
    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
