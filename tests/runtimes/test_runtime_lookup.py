"""Finding an agent runtime by name: the built-in loop always; an adapter only where its extra
is installed, and else one line that says what to install. No server, no pydantic-ai needed."""

from __future__ import annotations

import pytest

from harness.engine.sessions import BUILTIN_RUNTIME
from workflows import runtimes
from workflows.runtimes.builtin import BuiltinRuntime


def test_the_built_in_loop_is_always_a_runtime() -> None:
    assert isinstance(runtimes.runtime_named(BUILTIN_RUNTIME), BuiltinRuntime)


def test_an_adapter_whose_extra_is_missing_is_no_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(runtimes.ADAPTERS, "elsewhere", ("no_such_package.adapter", "elsewhere"))
    assert runtimes.runtime_named("elsewhere") is None
    assert runtimes.runtime_missing("elsewhere") == (
        "the agent runtime 'elsewhere' is not installed on the worker: install the extra"
        " (pip install 'durable-harness[elsewhere]') and restart the worker"
    )
    assert runtimes.runtime_named("no-such-runtime") is None
