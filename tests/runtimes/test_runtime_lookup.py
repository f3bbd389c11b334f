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


def test_a_worker_whose_setting_turns_pydantic_ai_off_has_no_such_runtime() -> None:
    from worker.pydantic_ai import runtime_plugins

    assert runtime_plugins({"HARNESS_PYDANTIC_AI_MODEL": "off"}) == []


def test_a_pydantic_ai_model_the_worker_cannot_build_stops_it_in_one_line() -> None:
    pytest.importorskip("pydantic_ai")
    from activities.llm import ProviderConfigError
    from worker.pydantic_ai import runtime_plugins

    with pytest.raises(ProviderConfigError) as refused:
        runtime_plugins({"HARNESS_PYDANTIC_AI_MODEL": "nonsense"})
    assert str(refused.value) == (
        "HARNESS_PYDANTIC_AI_MODEL=nonsense: pydantic-ai cannot build this model (Unknown model:"
        " nonsense); name another, or `offline`, or `off` for no pydantic-ai runtime"
    )
