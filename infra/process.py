"""Process exit for commands that used a Temporal client."""

from __future__ import annotations

import os
import sys


def exit_now(code: int) -> None:
    """Flush and exit without interpreter finalisation.

    The Temporal SDK's native runtime keeps threads alive until the process ends; tearing the
    interpreter down under them can abort the process (exit -6) after the work is done. Nothing
    is left to clean up at this point, so skip the teardown and keep the exit code honest.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
