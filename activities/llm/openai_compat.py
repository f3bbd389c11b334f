"""How the `openai` provider asks an OpenAI-compatible server for a plan or a verdict, and for a
token limit, when servers that speak the API differ in what they accept.

A structured output (a plan, a verdict) is asked for in one of four modes, set with
`HARNESS_OPENAI_COMPAT`:

- `strict`: `response_format` json_schema with `strict: true` (OpenAI, vLLM, recent Ollama);
- `json_object`: `response_format` json_object, and the schema in the system message;
- `tools`: one function whose parameters are the schema, its call forced with `tool_choice`;
  the call's arguments are the answer;
- `prompt`: no structured-output parameter at all; the schema and an example in the system
  message, and the reply parsed tolerantly (activities.llm.structured).

Unset (or `auto`) starts strict. When the server refuses a mode's parameters (a 400, 415, 422,
500 or 501 whose message names response_format, json_schema, json_object, schema, grammar,
tool_choice, tools or function; or any 500 answering json_schema from a server that is not
OpenAI's, as llama-cpp-python does), the same call is sent again in the next mode (strict,
json_object, tools, prompt), and that mode is kept for the base URL and model for as long as
the provider lives (the worker's life). A refusal is read from the raw HTTP error, before it is
classified: a refusal that switches mode is no failure of the run.

The token limit: OpenAI's own API takes `max_completion_tokens` (and refuses `max_tokens` for
reasoning models), while llama-cpp-python and Ollama ignore `max_completion_tokens` and honour
`max_tokens`. So OpenAI's hosts get `max_completion_tokens` only, and every other server gets
both, with the same value: a server that ignores one still caps the reply with the other. A
server that refuses one of them by name as a parameter it does not take (400 or 422) gets the
other only from then on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any
from urllib.parse import urlparse

import openai
import structlog
from openai.types.chat import (
    ChatCompletionMessageParam,
    ChatCompletionNamedToolChoiceParam,
    ChatCompletionToolParam,
)
from openai.types.chat.chat_completion import Choice
from openai.types.chat.completion_create_params import ResponseFormat

from activities.llm.base import ProviderConfigError
from activities.llm.http_errors import Endpoint, api_detail

log = structlog.get_logger()

COMPAT_VARIABLE = "HARNESS_OPENAI_COMPAT"
AUTO = "auto"


class CompatMode(StrEnum):
    """How a structured output is asked for; auto mode tries them in this order."""

    STRICT = "strict"
    JSON_OBJECT = "json_object"
    TOOLS = "tools"
    PROMPT = "prompt"


MODES = list(CompatMode)
_REFUSING_STATUSES = frozenset({400, 415, 422, 500, 501})
_STRUCTURED_WORDS = re.compile(
    r"response_format|json_schema|json_object|schema|grammar|tool_choice|\btools?\b|function"
)
_CAP_STATUSES = frozenset({400, 422})
_UNKNOWN_PARAMETER = re.compile(
    r"unsupported|not supported|unknown|unrecognized|unexpected|extra|not permitted|not allowed"
)
_OPENAI_HOSTS = ("openai.com", "openai.azure.com")


def compat_setting(env: Mapping[str, str]) -> CompatMode | None:
    """The mode `HARNESS_OPENAI_COMPAT` fixes, or None for auto."""
    value = env.get(COMPAT_VARIABLE, "").strip().lower()
    if value in ("", AUTO):
        return None
    try:
        return CompatMode(value)
    except ValueError:
        choices = ", ".join([AUTO, *MODES])
        raise ProviderConfigError(
            f"{COMPAT_VARIABLE}={value!r} is not a compatibility mode; choose one of {choices}"
        ) from None


@dataclass(frozen=True)
class Structured:
    """A structured output to ask for: its name, its JSON schema, an example of its shape."""

    name: str
    schema: dict[str, Any]
    example: str


@dataclass(frozen=True)
class ChatShape:
    """One request's parameters besides the model and the timeout, and the mode they ask in
    (None: no structured output)."""

    messages: list[ChatCompletionMessageParam]
    mode: CompatMode | None = None
    response_format: ResponseFormat | openai.Omit = openai.omit
    tools: list[ChatCompletionToolParam] | openai.Omit = openai.omit
    tool_choice: ChatCompletionNamedToolChoiceParam | openai.Omit = openai.omit
    max_completion_tokens: int | openai.Omit = openai.omit
    max_tokens: int | openai.Omit = openai.omit


@dataclass
class Compat:
    """What a server accepts, as set or as learned from its refusals: one per provider, so
    one per worker. `fixed` is the mode `HARNESS_OPENAI_COMPAT` sets (None: auto)."""

    endpoint: Endpoint
    fixed: CompatMode | None = None
    _learned: dict[tuple[str, str], CompatMode] = field(default_factory=dict, init=False)
    _refused_caps: dict[tuple[str, str], set[str]] = field(default_factory=dict, init=False)

    def mode(self, model: str) -> CompatMode:
        return self.fixed or self._learned.get(self._key(model), CompatMode.STRICT)

    def guess(self, model: str, sent: ChatShape, error: openai.APIStatusError) -> CompatMode | None:
        """The mode to send this one call again in after a bare 500 answering a strict schema
        (llama-cpp-python's way to refuse it), when auto mode may: a 500 that names nothing
        may as well be an outage, so the mode is learned only once the server answers in it
        (`adopt`), by the call that tried it."""
        if self.fixed is not None or sent.mode is not CompatMode.STRICT:
            return None
        text = f"{error.message} {json.dumps(error.body, default=str)}".lower()
        if _STRUCTURED_WORDS.search(text) or not refuses_mode(
            error.status_code, text, sent.mode, self._official()
        ):
            return None
        return MODES[MODES.index(sent.mode) + 1]

    def adopt(self, model: str, tried: CompatMode) -> None:
        """The server answered a call sent in `tried` after a bare 500: that mode is kept."""
        key = self._key(model)
        self._learned[key] = max(tried, self.mode(model), key=MODES.index)
        log.warning(
            "openai.compat_mode_switched",
            base_url=self.endpoint.base_url,
            model=model,
            now=tried,
            hint=f"set {COMPAT_VARIABLE}={tried} to ask so from the first call",
        )

    def shape(
        self,
        model: str,
        messages: list[ChatCompletionMessageParam],
        max_tokens: int,
        structured: Structured | None = None,
        tools: list[ChatCompletionToolParam] | None = None,
        trying: CompatMode | None = None,
    ) -> ChatShape:
        """The request for `model` as this server takes it (in `trying`, a mode this one call
        tries after a bare 500). No tools is no `tools` at all: the API refuses an empty list."""
        completion_cap, tokens_cap = self._caps(model, max_tokens)
        if structured is None:
            asked = ChatShape(messages, tools=tools or openai.omit)
        else:
            asked = _asked(trying or self.mode(model), messages, structured)
        return replace(asked, max_completion_tokens=completion_cap, max_tokens=tokens_cap)

    def learn(self, model: str, sent: ChatShape, error: openai.APIStatusError) -> bool:
        """Whether `error` refuses a parameter that `sent` can do without; if so, the next
        request for `model` leaves it out (and this one is to be sent again)."""
        text = f"{error.message} {json.dumps(error.body, default=str)}".lower()
        key = self._key(model)
        cap = _refused_cap(error.status_code, text, sent)
        if cap is not None:
            self._refused_caps.setdefault(key, set()).add(cap)
            self._note("openai.cap_refused", model, error, refused=cap)
            return True
        if self.fixed is not None or sent.mode is None:
            return False
        if not refuses_mode(error.status_code, text, sent.mode, self._official()):
            return False
        if not _STRUCTURED_WORDS.search(text):  # a bare 500: only a guess (see `guess`)
            return False
        following = MODES[MODES.index(sent.mode) + 1]
        self._learned[key] = max(following, self._learned.get(key, following), key=MODES.index)
        self._note(
            "openai.compat_mode_switched",
            model,
            error,
            refused=sent.mode,
            now=following,
            hint=f"set {COMPAT_VARIABLE}={following} to ask so from the first call",
        )
        return True

    def _caps(self, model: str, max_tokens: int) -> tuple[int | openai.Omit, int | openai.Omit]:
        """`max_completion_tokens` and `max_tokens`, each the limit or left out."""
        refused = self._refused_caps.get(self._key(model), set())
        completion = openai.omit if "max_completion_tokens" in refused else max_tokens
        plain = openai.omit if self._official() or "max_tokens" in refused else max_tokens
        return completion, plain

    def official(self) -> bool:
        """Whether the server is OpenAI's own API (or Azure's), not a compatible one."""
        return self._official()

    def _official(self) -> bool:
        host = urlparse(self.endpoint.base_url).hostname or ""
        return any(host == suffix or host.endswith(f".{suffix}") for suffix in _OPENAI_HOSTS)

    def _key(self, model: str) -> tuple[str, str]:
        return self.endpoint.base_url, model

    def _note(self, event: str, model: str, error: openai.APIStatusError, **what: str) -> None:
        detail = self.endpoint.redact(api_detail(error.body))
        log.warning(
            event,
            base_url=self.endpoint.base_url,
            model=model,
            status=error.status_code,
            detail=detail,
            **what,
        )


def _asked(
    mode: CompatMode, messages: list[ChatCompletionMessageParam], structured: Structured
) -> ChatShape:
    """A request for `structured` in `mode`, its token limits still to set."""
    if mode is CompatMode.STRICT:
        strict: ResponseFormat = {
            "type": "json_schema",
            "json_schema": {"name": structured.name, "schema": structured.schema, "strict": True},
        }
        return ChatShape(messages, mode, response_format=strict)
    if mode is CompatMode.JSON_OBJECT:
        told = with_schema(messages, structured, example=False)
        return ChatShape(told, mode, response_format={"type": "json_object"})
    if mode is CompatMode.TOOLS:
        function: ChatCompletionToolParam = {
            "type": "function",
            "function": {
                "name": structured.name,
                "description": f"Give the {structured.name}.",
                "parameters": structured.schema,
            },
        }
        forced: ChatCompletionNamedToolChoiceParam = {
            "type": "function",
            "function": {"name": structured.name},
        }
        return ChatShape(messages, mode, tools=[function], tool_choice=forced)
    return ChatShape(with_schema(messages, structured, example=True), mode)


def refuses_mode(status: int, text: str, mode: CompatMode, official: bool) -> bool:
    """Whether a server's error refuses the structured-output parameters of `mode`."""
    if mode is CompatMode.PROMPT or status not in _REFUSING_STATUSES:
        return False
    if _STRUCTURED_WORDS.search(text):
        return True
    # llama-cpp-python answers json_schema with a bare 500; OpenAI's 500 is an outage.
    return status == 500 and mode is CompatMode.STRICT and not official


def _refused_cap(status: int, text: str, sent: ChatShape) -> str | None:
    """The token-limit parameter a 400/422 refuses by name as one the server does not take, when
    the request can do without it: `max_tokens` first (OpenAI's message for a reasoning model
    names both)."""
    if status not in _CAP_STATUSES or not _UNKNOWN_PARAMETER.search(text):
        return None  # not "no such parameter" (a limit too large for the context, say)
    both = not isinstance(sent.max_tokens, openai.Omit) and not isinstance(
        sent.max_completion_tokens, openai.Omit
    )
    if not both:
        return None
    if re.search(r"\bmax_tokens\b", text):
        return "max_tokens"
    if "max_completion_tokens" in text:
        return "max_completion_tokens"
    return None


def with_schema(
    messages: list[ChatCompletionMessageParam], structured: Structured, *, example: bool
) -> list[ChatCompletionMessageParam]:
    """The messages with the reply's JSON schema (and an example of its shape) at the end of
    the system message: the same for every call, so a server's prefix cache still holds."""
    schema = json.dumps(structured.schema, separators=(",", ":"))
    told = f"Reply with one JSON object that matches this JSON schema, and nothing else:\n{schema}"
    if example:
        told += f"\nAn example of the shape (not of the content):\n{structured.example}"
    system = messages[0].get("content") if messages and messages[0]["role"] == "system" else None
    if not isinstance(system, str):
        return [{"role": "system", "content": told}, *messages]
    return [{"role": "system", "content": f"{system}\n\n{told}"}, *messages[1:]]


def structured_text(choice: Choice) -> str:
    """The text of a structured reply: the message's content, or, when a forced function call
    carries the answer (tools mode), that call's arguments."""
    content = choice.message.content or ""
    if content.strip():
        return content
    for call in choice.message.tool_calls or []:
        if call.type == "function":
            return call.function.arguments or ""
    return content
