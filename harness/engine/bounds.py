"""The ranges a run accepts, checked where a request or a delivery enters.

Not in the models: the workflow decodes its input and every delivery again on each replay, so a
model that came to refuse what it once took would fail the replay of every run that took it.
Instead the CLI and the Python API check a request before they start a run, the run checks its
own request when it starts (a request sent by any other client), update validators refuse an
out-of-range delivery before it is accepted, and the signal handler refuses one.
Each function returns the problems, one sentence each; an empty list means in range.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Final

from pydantic import BaseModel, JsonValue

from harness.core.actors import parse_actor
from harness.core.limits import MAX_NAME_CHARS
from harness.engine.budget import BudgetLimits
from harness.engine.run import RunRequest
from harness.engine.run_models import model_problems
from harness.engine.sessions import BUILTIN_RUNTIME
from harness.waits.deliveries import AnswerRequest, ApprovalRequest, CancelRequest, DeliverRequest

AGENT_RUNTIMES: Final = (BUILTIN_RUNTIME, "pydantic-ai")
"""The agent runtimes a run's agent nodes may run on (`agent_runtime`; workflows.runtimes):
pydantic-ai's needs the worker's `pydantic-ai` extra."""

A_YEAR: Final = 366 * 24 * 3600.0
MAX_GOAL_CHARS: Final = 10_000
MAX_PLAN_NODES: Final = 20_000
"""No run takes more nodes than this, whatever its max_nodes: validating more would not fit
in one workflow task."""
MAX_REPLANS: Final = 20
MAX_CONCURRENCY: Final = 10_000
MAX_TOKENS: Final = 10**12
MAX_TOOL_CALLS: Final = 10**9
MAX_COST_USD: Final = 10**6
MAX_COMMENT_CHARS: Final = 2_000
MAX_ANSWER_CHARS: Final = 10_000
MAX_SIGNATURE_CHARS: Final = 200
ED25519_KEY_BYTES: Final = 32
MAX_DATA_BYTES: Final = 256 * 1024
"""Delivered data as JSON: the run keeps it, far below Temporal's 2 MB payload limit."""


def request_problems(request: RunRequest) -> list[str]:
    problems = _at_most("goal", request.goal, MAX_GOAL_CHARS)
    if not request.goal.strip():
        problems.append("goal: a goal needs words, not only spaces")
    problems += _limit_problems(request.limits)
    for name, seconds in request.wait_timeouts.model_dump().items():
        problems += _seconds(f"wait_timeouts.{name}", seconds)
    problems += _number("max_replans", request.max_replans, MAX_REPLANS)
    problems += _number("max_concurrency", request.max_concurrency, MAX_CONCURRENCY)
    problems += _number("max_nodes", request.max_nodes, MAX_PLAN_NODES)
    problems += _actor_key_problems(request.actor_keys)
    problems += model_problems(request.models, request.provider)
    if request.agent_runtime is not None and request.agent_runtime not in AGENT_RUNTIMES:
        problems.append(
            f"agent_runtime: no runtime '{request.agent_runtime}'; the runtimes are "
            + ", ".join(AGENT_RUNTIMES)
        )
    for name in ("session_id", "provider"):
        value = getattr(request, name)
        if value is not None:
            problems += _at_most(name, value, MAX_NAME_CHARS)
    if request.plan is not None and len(request.plan.nodes) > MAX_PLAN_NODES:
        problems.append(
            f"plan: a plan has at most {MAX_PLAN_NODES} nodes; this one has "
            f"{len(request.plan.nodes)}"
        )
    return problems


def _actor_key_problems(keys: dict[str, str]) -> list[str]:
    problems = []
    for actor, key in keys.items():
        try:
            parse_actor(actor)
        except ValueError as error:
            problems.append(f"actor_keys: {error}")
            continue
        try:
            raw = base64.b64decode(key, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != ED25519_KEY_BYTES:
            problems.append(f"actor_keys: the key of {actor} is not an Ed25519 public key (base64)")
    return problems


def _limit_problems(limits: BudgetLimits) -> list[str]:
    problems = []
    if limits.max_tokens is not None:
        problems += _number("max_tokens", limits.max_tokens, MAX_TOKENS)
    if limits.max_tool_calls is not None:
        problems += _number("max_tool_calls", limits.max_tool_calls, MAX_TOOL_CALLS)
    if limits.max_seconds is not None:
        problems += _seconds("max_seconds", limits.max_seconds)
    if limits.max_cost_usd is not None:
        problems += _number("max_cost_usd", limits.max_cost_usd, MAX_COST_USD)
    return problems


def delivery_problems(request: BaseModel) -> list[str]:
    """What is out of range in an approval, an answer, a delivery or a cancel."""
    problems: list[str] = []
    for name in ("wait_id", "operation_id", "event", "actor"):
        value = getattr(request, name, None)
        if isinstance(value, str):
            problems += _at_most(name, value, MAX_NAME_CHARS)
    if isinstance(request, ApprovalRequest) and request.comment is not None:
        problems += _at_most("comment", request.comment, MAX_COMMENT_CHARS)
    signature = getattr(request, "signature", None)
    if isinstance(signature, str):
        problems += _at_most("signature", signature, MAX_SIGNATURE_CHARS)
    if isinstance(request, CancelRequest):
        problems += _at_most("reason", request.reason, MAX_COMMENT_CHARS)
    if isinstance(request, AnswerRequest):
        problems += _at_most("text", request.text, MAX_ANSWER_CHARS)
    if isinstance(request, DeliverRequest):
        problems += _data_problems(request.data)
    return problems


def _data_problems(data: JsonValue) -> list[str]:
    try:
        size = len(json.dumps(data, ensure_ascii=False).encode())
    except (RecursionError, ValueError):
        return ["data: nests too deeply to keep"]
    if size > MAX_DATA_BYTES:
        return [f"data: {size} bytes as JSON; at most {MAX_DATA_BYTES} are taken"]
    return []


MAX_WORKFLOW_ID_BYTES: Final = 1000
"""Temporal's default `limit.maxIDLength`: a child started with a longer id is a command the
server refuses, which fails the parent's workflow task on every retry."""


def workflow_id_problems(name: str, workflow_id: str) -> list[str]:
    size = len(workflow_id.encode())
    if size > MAX_WORKFLOW_ID_BYTES:
        return [f"{name}: at most {MAX_WORKFLOW_ID_BYTES} bytes, not {size}"]
    return []


MAX_WAIT_SECONDS: Final = 1000 * A_YEAR
"""A timer or an event timeout in a plan: past about 8,000 years the deadline is past the
last date Python holds, and the timer raised inside the workflow (a failed task, forever)."""


def wait_seconds_problem(name: str, value: JsonValue) -> str | None:
    """Why a plan's timer or event timeout (read as the workflow reads it, `float(str(v))`)
    cannot be waited for: not a number, NaN, infinite, negative or past MAX_WAIT_SECONDS.
    The schema check lets NaN and infinity through (they compare false to every bound)."""
    try:
        seconds = float(str(value))
    except ValueError:
        return f"{name}: {str(value)[:40]!r} is not a number of seconds"
    if not 0 <= seconds <= MAX_WAIT_SECONDS:
        return f"{name}: 0 to {MAX_WAIT_SECONDS:.0f} seconds, not {shown(seconds)}"
    return None


def _at_most(name: str, text: str, limit: int) -> list[str]:
    if len(text) > limit:
        return [f"{name}: at most {limit} characters, not {len(text)}"]
    return []


def _seconds(name: str, seconds: float) -> list[str]:
    if not _at_most_limit(seconds, A_YEAR):
        return [f"{name}: at most a year ({A_YEAR:.0f} s), not {shown(seconds)}"]
    return []


def _number(name: str, value: float, limit: float) -> list[str]:
    if not _at_most_limit(value, limit):
        return [f"{name}: at most {limit}, not {shown(value)}"]
    return []


def _at_most_limit(value: float, limit: float) -> bool:
    """Compared as numbers, never converted: an int past float's range (10**400, which JSON
    and pydantic take) makes `math.isfinite` raise OverflowError, and NaN compares false to
    everything, so `value <= limit` alone refuses NaN, infinity and huge ints alike."""
    return value <= limit


SHOWN_DIGITS: Final = 30


def shown(value: float) -> str:
    """A number as a refusal shows it: a huge int by its size, not its 400 (or 4,300) digits,
    which `str` may refuse past Python's int-to-string limit."""
    if isinstance(value, int) and abs(value).bit_length() > SHOWN_DIGITS * 3:
        return f"a number of about {int(abs(value).bit_length() * 0.30103) + 1} digits"
    return str(value)
