"""What `durable_harness` exports is what `__all__` says, each name resolvable; the client's
names, which load the Temporal SDK, load it only when first named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import durable_harness

ROOT = Path(__file__).parent.parent.parent


def test_every_name_in_all_resolves_and_the_client_is_exported() -> None:
    assert all(getattr(durable_harness, name) is not None for name in durable_harness.__all__)
    assert {"Harness", "Run", "RunResult", "Settings", "HarnessError"} <= set(
        durable_harness.__all__
    )


def test_naming_harness_loads_the_client_and_the_sdk_only_then() -> None:
    script = (
        "import json, sys, durable_harness\n"
        "before = 'temporalio' in sys.modules\n"
        "from durable_harness import Harness\n"
        "print(json.dumps([before, 'temporalio' in sys.modules, Harness.__module__]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.splitlines()[-1]) == [False, True, "durable_harness.client"]


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        getattr(durable_harness, "NoSuchThing")  # noqa: B009  # a name mypy would refuse
