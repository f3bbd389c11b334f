"""Process exit for commands that used a Temporal client."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable
from typing import NoReturn

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None]:
    """A `preexec_fn` for a child that must not outlive this process: on Linux the kernel sends
    it SIGTERM when this process dies, however it dies (kill -9 included). Elsewhere nothing.
    prctl is looked up here, before the fork; in the child only the call itself runs."""
    parent = os.getpid()
    prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None

    def arm() -> None:
        if prctl is None:
            return
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


def exit_now(code: int) -> NoReturn:
    """Flush and exit without interpreter finalisation.

    The Temporal SDK's native runtime keeps threads alive until the process ends; tearing the
    interpreter down under them can abort the process (exit -6) after the work is done. Nothing
    is left to clean up at this point, so skip the teardown and keep the exit code honest.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader left (`| head`): what it did not read is dropped
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    os._exit(code)
