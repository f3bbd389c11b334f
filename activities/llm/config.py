"""Configuration of the hosted providers, read from the environment when a worker builds one.

The API key is read here and nowhere else; it stays in the worker process (it is never part of
an activity's input or output, so it never reaches workflow history).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from activities.llm.base import ProviderConfigError
from activities.llm.http_errors import Endpoint
from activities.llm.pricing import (
    PRICING_FILE_VARIABLE,
    PricingTable,
    how_to_price,
    load_pricing,
)
from activities.llm.reasoning import NO_REASONING_SETTINGS, Reasoning, read_reasoning
from harness.engine.run_models import family_problem


@dataclass(frozen=True)
class RoleModels:
    """The model behind each role: planner (plans), worker (writes inside tools), judge."""

    planner: str
    worker: str
    judge: str
    fallback: str = ""
    """The cheaper model the planner, the writer and the agent switch to under budget pressure
    (from 0.7); empty: the worker's model."""
    agent: str = ""
    """The model of agent nodes' tool-use turns; empty: the planner's (both reason over tools)."""

    def planning(self, economy: bool) -> str:
        return (self.fallback or self.worker) if economy else self.planner

    def writing(self, economy: bool) -> str:
        return (self.fallback or self.worker) if economy else self.worker

    def acting(self, economy: bool) -> str:
        return (self.fallback or self.worker) if economy else (self.agent or self.planner)


@dataclass(frozen=True)
class Vendor:
    name: str
    key_variable: str
    base_url_variable: str
    default_base_url: str
    default_models: RoleModels


ANTHROPIC = Vendor(
    name="anthropic",
    key_variable="ANTHROPIC_API_KEY",
    base_url_variable="ANTHROPIC_BASE_URL",
    default_base_url="https://api.anthropic.com",
    default_models=RoleModels(
        planner="claude-sonnet-5-5",
        worker="claude-haiku-5-5",
        judge="claude-sonnet-5-5",
    ),
)
OPENAI = Vendor(
    name="openai",
    key_variable="OPENAI_API_KEY",
    base_url_variable="OPENAI_BASE_URL",
    default_base_url="https://api.openai.com/v1",
    default_models=RoleModels(planner="gpt-5.5", worker="gpt-5.4-mini", judge="gpt-5.5"),
)

MODEL_CALL_TIMEOUT_MAX_SECONDS = 3600.0
"""The longest a model call may be given: the activities that make them allow a little more
(workflows.activity_calls.steps.PLAN_TIMEOUT, which every model call's activity is given), so
the call, not Temporal, gives up first and the failure names the provider. A dead worker or
server is found sooner, by the heartbeat timeout."""


@dataclass(frozen=True)
class RoleTimeouts:
    """How long one model call of each role may take before the worker abandons it, in seconds.
    The defaults fit a long plan (16,000 tokens) at a slow local server's speed."""

    planner: float = 600.0
    writer: float = 300.0
    judge: float = 300.0
    agent_turn: float = 600.0


TIMEOUT_VARIABLES = {
    "planner": "HARNESS_PLANNER_TIMEOUT_SECONDS",
    "writer": "HARNESS_WRITER_TIMEOUT_SECONDS",
    "judge": "HARNESS_JUDGE_TIMEOUT_SECONDS",
    "agent_turn": "HARNESS_AGENT_TURN_TIMEOUT_SECONDS",
}


def role_timeouts(env: Mapping[str, str]) -> RoleTimeouts:
    """The timeouts the environment sets, each role's default where it sets none; a value that
    is not a number of seconds in (0, 3600] is a ProviderConfigError saying which."""
    chosen: dict[str, float] = {}
    for role, variable in TIMEOUT_VARIABLES.items():
        raw = env.get(variable, "").strip()
        if not raw:
            continue
        try:
            seconds = float(raw)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds <= MODEL_CALL_TIMEOUT_MAX_SECONDS:
            raise ProviderConfigError(
                f"{variable} is {raw!r}; use a number of seconds more than 0 and at most "
                f"{MODEL_CALL_TIMEOUT_MAX_SECONDS:g}"
            )
        chosen[role] = seconds
    return RoleTimeouts(**chosen)


IDLE_TIMEOUT_VARIABLE = "HARNESS_MODEL_IDLE_TIMEOUT_SECONDS"
STREAM_VARIABLE = "HARNESS_LLM_STREAM"
DEFAULT_IDLE_TIMEOUT_SECONDS = 60.0


def idle_timeout(env: Mapping[str, str]) -> float:
    """How long a streamed reply may send nothing before the call is abandoned as TIMEOUT (a
    dead or stuck server is found within it, while a slow live one is not killed); a value
    that is not a number of seconds in (0, 3600] is a ProviderConfigError."""
    raw = env.get(IDLE_TIMEOUT_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_IDLE_TIMEOUT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= MODEL_CALL_TIMEOUT_MAX_SECONDS:
        raise ProviderConfigError(
            f"{IDLE_TIMEOUT_VARIABLE} is {raw!r}; use a number of seconds more than 0 and at "
            f"most {MODEL_CALL_TIMEOUT_MAX_SECONDS:g}"
        )
    return seconds


def stream_setting(env: Mapping[str, str]) -> bool:
    """Whether model calls stream their replies (`on`, the default) or not (`off`, for a server
    that streams badly)."""
    raw = env.get(STREAM_VARIABLE, "").strip().lower()
    if raw in ("", "on"):
        return True
    if raw == "off":
        return False
    raise ProviderConfigError(f"{STREAM_VARIABLE} is {raw!r}; use 'on' or 'off'")


PLAN_MAX_TOKENS = 16_000
VERDICT_MAX_TOKENS = 2_000

MODEL_VARIABLES = RoleModels(
    planner="HARNESS_PLANNER_MODEL",
    worker="HARNESS_WORKER_MODEL",
    judge="HARNESS_JUDGE_MODEL",
    fallback="HARNESS_FALLBACK_MODEL",
    agent="HARNESS_AGENT_MODEL",
)


@dataclass(frozen=True)
class ProviderSettings:
    vendor: Vendor
    api_key: str = field(repr=False)
    models: RoleModels
    pricing: PricingTable = field(repr=False)
    base_url: str | None = None
    timeouts: RoleTimeouts = field(default_factory=RoleTimeouts)
    reasoning: Reasoning = NO_REASONING_SETTINGS
    stream: bool = True
    """Model calls stream their replies (see activities.llm.streaming)."""
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT_SECONDS
    """The longest a streamed reply may send nothing, in seconds."""

    @property
    def url(self) -> str:
        """Where calls go; passed to the SDK, so that it reads no base URL of its own."""
        return self.base_url or self.vendor.default_base_url

    def endpoint(self) -> Endpoint:
        """Who is called, as failures describe it."""
        return Endpoint(
            provider=self.vendor.name,
            base_url=self.url,
            key_variable=self.vendor.key_variable,
            base_url_variable=self.vendor.base_url_variable,
            secret=self.api_key,
        )

    def planner_model(self, asked: str | None, economy: bool) -> str:
        """The run's planner model if it names one (under pressure: the fallback)."""
        if economy:
            return self.models.planning(True)
        return self.served(asked) if asked else self.models.planner

    def worker_model(self, asked: str | None, economy: bool) -> str:
        """The run's worker model if it names one (under pressure: the fallback, if set)."""
        chosen = self.served(asked) if asked else self.models.worker
        return (self.models.fallback or chosen) if economy else chosen

    def agent_model(self, asked: str | None, economy: bool) -> str:
        """The run's agent model if it names one (under pressure: the fallback)."""
        if economy:
            return self.models.acting(True)
        return self.served(asked) if asked else self.models.acting(False)

    def judge_model(self, asked: str | None) -> str:
        return self.served(asked) if asked else self.models.judge

    def served(self, model: str) -> str:
        """`model`, if this provider serves it to a run that asks: one of its family."""
        problem = family_problem(self.vendor.name, model)
        if problem is not None:
            raise ProviderConfigError(problem)
        return model

    def check_priced(self, model: str, cost_limited: bool) -> str:
        """`model`, unless the run has a cost limit and no table prices the model: its calls
        would count 0 and the limit would not hold. (Without a limit the call runs, its cost
        marked unknown.)"""
        if cost_limited and not self.pricing.knows(model):
            raise ProviderConfigError(f"the run has a cost limit and {how_to_price(model)}")
        return model

    @classmethod
    def from_env(cls, vendor: Vendor, env: Mapping[str, str] | None = None) -> ProviderSettings:
        env = os.environ if env is None else env
        base_url = env.get(vendor.base_url_variable, "").strip() or None
        api_key = env.get(vendor.key_variable, "").strip()
        if not api_key:
            hint = (
                " (any value will do for a server that does not check keys)"
                if base_url
                else "; or choose another provider with HARNESS_LLM_PROVIDER (e.g. 'scripted', "
                "which runs offline)"
            )
            raise ProviderConfigError(
                f"{vendor.key_variable} is not set; export it to use the {vendor.name} "
                f"provider{hint}"
            )
        defaults = vendor.default_models
        models = RoleModels(
            planner=env.get(MODEL_VARIABLES.planner, "").strip() or defaults.planner,
            worker=env.get(MODEL_VARIABLES.worker, "").strip() or defaults.worker,
            judge=env.get(MODEL_VARIABLES.judge, "").strip() or defaults.judge,
            fallback=env.get(MODEL_VARIABLES.fallback, "").strip() or defaults.fallback,
            agent=env.get(MODEL_VARIABLES.agent, "").strip() or defaults.agent,
        )
        pricing = load_pricing(env.get(PRICING_FILE_VARIABLE, "").strip() or None, vendor.name)
        return cls(
            vendor=vendor,
            api_key=api_key,
            models=models,
            pricing=pricing,
            base_url=base_url,
            timeouts=role_timeouts(env),
            reasoning=read_reasoning(env, vendor.name),
            stream=stream_setting(env),
            idle_timeout=idle_timeout(env),
        )
