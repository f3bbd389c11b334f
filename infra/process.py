"""Process exit for commands that used a Temporal client."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """For a child process (`preexec_fn`): on Linux the kernel sends it SIGTERM when the process
    that started it dies, however it dies (kill -9 included), so it never outlives its owner."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def exit_now(code: int) -> None:
    """Flush and exit without interpreter finalisation.

    The Temporal SDK's native runtime keeps threads alive until the process ends; tearing the
    interpreter down under them can abort the process (exit -6) after the work is done. Nothing
    is left to clean up at this point, so skip the teardown and keep the exit code honest.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
