"""Configuration from the environment, read in one place, with defaults that work on a laptop."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TASK_QUEUE = "durable-harness"


@dataclass(frozen=True)
class Settings:
    temporal_address: str = "localhost:7233"
    temporal_namespace: str = "default"
    temporal_api_key: str | None = None
    temporal_tls: bool = False
    task_queue: str = DEFAULT_TASK_QUEUE
    llm_provider: str = "scripted"
    ui_url: str = "http://localhost:8233"
    state_dir: Path = Path(".harness")

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        api_key = env.get("TEMPORAL_API_KEY") or None
        return cls(
            temporal_address=env.get("TEMPORAL_ADDRESS", cls.temporal_address),
            temporal_namespace=env.get("TEMPORAL_NAMESPACE", cls.temporal_namespace),
            temporal_api_key=api_key,
            temporal_tls=_flag(env.get("TEMPORAL_TLS")) or api_key is not None,
            task_queue=env.get("HARNESS_TASK_QUEUE", cls.task_queue),
            llm_provider=env.get("HARNESS_LLM_PROVIDER", cls.llm_provider),
            ui_url=env.get("HARNESS_UI_URL", cls.ui_url),
            state_dir=Path(env.get("HARNESS_STATE_DIR", str(cls.state_dir))),
        )


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}
