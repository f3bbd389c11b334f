"""The OpenAI Responses API (`POST /v1/responses`), for the models that speak only it.

OpenAI's `-pro` and codex models (and others the installed SDK lists as Responses-only) cannot be
called through Chat Completions. `HARNESS_OPENAI_API` chooses: `auto` (the default) sends those
models here and every other model to Chat Completions, `responses` sends every model here,
`chat` none. Plans and verdicts use structured outputs (`text.format`, a strict JSON schema); an
agent's turn offers its tools as function tools, gets its calls as `function_call` items and
sends each result back as a `function_call_output` item. Nothing is stored at OpenAI
(`store: false`): each request carries the whole conversation, as with Chat Completions.

A response that ran out of output tokens is `incomplete` (`max_output_tokens`); one its content
filter stopped is `incomplete` (`content_filter`); one that failed says why in `error`.
"""

from __future__ import annotations

import json
import os
import re
import typing
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, TypeVar

import openai
from openai.types.responses import (
    FunctionToolParam,
    Response,
    ResponseFunctionToolCall,
    ResponseInputParam,
    ResponseTextConfigParam,
)
from openai.types.shared.chat_model import ChatModel
from openai.types.shared.responses_model import ResponsesModel
from pydantic import JsonValue

from activities.llm.base import ProviderConfigError, ProviderError
from activities.llm.charging import charged, charged_estimate
from activities.llm.config import (
    PLAN_MAX_TOKENS,
    VERDICT_MAX_TOKENS,
    ProviderSettings,
)
from activities.llm.http_errors import (
    Endpoint,
    connection_error,
    status_error,
    timeout_error,
)
from activities.llm.prompts import (
    JUDGE_ROLE,
    cut_off_message,
    judge_user,
    planner_catalog,
    planner_system,
    planner_user,
)
from activities.llm.reasoning import Role
from activities.llm.request_options import responses_options
from activities.llm.stops import flagged, refused, writer_cut_off
from activities.llm.structured import PLAN_SCHEMA, VERDICT_SCHEMA, parse_plan, parse_verdict
from activities.llm.tool_use import FAILED_PREFIX, call_arguments, result_text, turn_reply
from harness.catalog.agent_turns import (
    AgentMessage,
    AgentTurnReply,
    AgentTurnRequest,
    OfferedTool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage, estimate_tokens
from harness.engine.messages import PlanRequest, PlanResponse
from scenarios.base import Pack

API_VARIABLE = "HARNESS_OPENAI_API"

Given = TypeVar("Given")
Parsed = TypeVar("Parsed")


class WireApi(StrEnum):
    """Which OpenAI API a model is called through."""

    AUTO = "auto"
    CHAT = "chat"
    RESPONSES = "responses"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WireApi:
        env = os.environ if env is None else env
        given = env.get(API_VARIABLE, "").strip().lower() or cls.AUTO.value
        try:
            return cls(given)
        except ValueError:
            choices = ", ".join(api.value for api in cls)
            raise ProviderConfigError(
                f"{API_VARIABLE}={given!r} is not one of {choices}; unset it for auto"
            ) from None


def _literals(hint: object) -> set[str]:
    if isinstance(hint, str):
        return {hint}
    return set().union(*(_literals(arg) for arg in typing.get_args(hint)))


# The SDK's own list: what the Responses API serves that Chat Completions does not.
_SDK_RESPONSES_ONLY = frozenset(_literals(ResponsesModel) - _literals(ChatModel))
# OpenAI's own model names (the SDK lists some Responses-only ones among its chat models).
_OPENAI_NAME = re.compile(r"^(gpt-|o\d|codex-)")
# The kinds that speak only Responses, by a part of the name: gpt-5-pro, o3-pro-2025-06-10,
# gpt-5.1-codex-max, codex-mini-latest, o3-deep-research.
_RESPONSES_ONLY_PARTS = frozenset({"pro", "codex", "research"})


def responses_only(model: str) -> bool:
    """Whether `model` speaks only the Responses API: the installed SDK lists it so, or it is an
    OpenAI model of a kind that does (`-pro`, codex, deep research)."""
    if model in _SDK_RESPONSES_ONLY:
        return True
    return _OPENAI_NAME.match(model) is not None and not _RESPONSES_ONLY_PARTS.isdisjoint(
        model.split("-")
    )


class ResponsesApi:
    """The OpenAI provider's calls of the models it sends to the Responses API."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        settings: ProviderSettings,
        endpoint: Endpoint,
        wire: WireApi = WireApi.AUTO,
    ) -> None:
        self._client = client
        self._settings = settings
        self._endpoint = endpoint
        self._wire = wire

    def serves(self, model: str) -> bool:
        if self._wire is WireApi.AUTO:
            return responses_only(model)
        return self._wire is WireApi.RESPONSES

    async def plan(self, request: PlanRequest, scenario: Pack, model: str) -> PlanResponse:
        system = planner_system(planner_catalog(request), scenario.instructions)
        prompt = planner_user(request)
        response = await self._create(
            model,
            system,
            _asked(prompt),
            max_tokens=self._settings.reasoning.room(Role.PLANNER, PLAN_MAX_TOKENS),
            timeout=self._settings.timeouts.planner,
            schema=("plan", PLAN_SCHEMA),
            options=responses_options(self._settings, Role.PLANNER, request.scenario),
        )
        usage = self._usage(response, model, system + prompt)
        text = _text(response, usage, whole=True)
        plan = _charged(usage, parse_plan, text)
        return PlanResponse(plan=plan, planned_by=f"openai:{response.model}", usage=usage)

    async def write(self, request: TextRequest, model: str) -> TextReply:
        max_tokens = self._settings.reasoning.room(
            Role.WRITER, request.max_output_tokens, reasons_unasked=True
        )
        response = await self._create(
            model,
            request.system,
            _asked(request.prompt),
            max_tokens=max_tokens,
            timeout=self._settings.timeouts.writer,
            options=responses_options(self._settings, Role.WRITER),
        )
        usage = self._usage(response, model, request.system + request.prompt)
        if _cut_off(response):
            raise writer_cut_off(response.model, max_tokens, usage)
        text = _text(response, usage, whole=False)
        return TextReply(text=text, model=response.model, usage=usage)

    async def judge(self, request: JudgeRequest, model: str) -> JudgeReply:
        prompt = judge_user(request)
        response = await self._create(
            model,
            JUDGE_ROLE,
            _asked(prompt),
            max_tokens=self._settings.reasoning.room(
                Role.JUDGE, VERDICT_MAX_TOKENS, reasons_unasked=True
            ),
            timeout=self._settings.timeouts.judge,
            schema=("verdict", VERDICT_SCHEMA),
            options=responses_options(self._settings, Role.JUDGE),
        )
        usage = self._usage(response, model, JUDGE_ROLE + prompt)
        verdict = _charged(usage, parse_verdict, _text(response, usage, whole=True))
        return JudgeReply(
            passed=verdict.passed,
            score=verdict.score,
            reasons=verdict.reasons,
            model=response.model,
            usage=usage,
        )

    async def agent_turn(self, request: AgentTurnRequest, model: str) -> AgentTurnReply:
        items = input_items(request.messages)
        tools = function_tools(request.tools)
        response = await self._create(
            model,
            request.system,
            items,
            max_tokens=request.max_output_tokens,
            timeout=self._settings.timeouts.agent_turn,
            tools=tools,
            options=responses_options(self._settings, Role.AGENT),
        )
        sent = request.system + json.dumps(items, default=str) + json.dumps(tools)
        usage = self._usage(response, model, sent)
        text = _said(response, usage)
        calls = [
            ToolCall(
                id=item.call_id, tool=item.name, arguments=_charged(usage, _call_arguments, item)
            )
            for item in response.output
            if item.type == "function_call"
        ]
        return turn_reply(
            text, calls, cut_off=_cut_off(response), model=response.model, usage=usage
        )

    async def _create(
        self,
        model: str,
        instructions: str,
        items: ResponseInputParam,
        *,
        max_tokens: int,
        timeout: float,
        schema: tuple[str, dict[str, Any]] | None = None,
        tools: list[FunctionToolParam] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Response:
        text: ResponseTextConfigParam | openai.Omit = openai.omit
        if schema is not None:
            name, body = schema
            text = {"format": {"type": "json_schema", "name": name, "schema": body, "strict": True}}
        sent = instructions + json.dumps(items, default=str)
        priced = lambda usage: self._settings.pricing.priced(usage, model)  # noqa: E731
        with charged_estimate(sent, max_tokens, priced):
            return await self._send(
                model, instructions, items, max_tokens, timeout, text, tools, options or {}
            )

    async def _send(
        self,
        model: str,
        instructions: str,
        items: ResponseInputParam,
        max_tokens: int,
        timeout: float,
        text: ResponseTextConfigParam | openai.Omit,
        tools: list[FunctionToolParam] | None,
        options: Mapping[str, Any],
    ) -> Response:
        """One request; a failure is classified as the chat API's are. `options`: the role's
        reasoning and the plan's prompt cache key (activities.llm.request_options)."""
        try:
            # typed here: the options' Any would make the whole call's result Any
            response: Response = await self._client.responses.create(
                model=model,
                instructions=instructions,
                input=items,
                max_output_tokens=max_tokens,
                text=text,
                # no tools is no `tools` at all, as in Chat Completions
                tools=tools if tools else openai.omit,
                store=False,
                timeout=timeout,
                **options,
            )
        except openai.APIStatusError as error:
            raise status_error(
                self._endpoint, error.status_code, error.response.headers, error.body
            ) from None
        except openai.APITimeoutError:
            raise timeout_error(self._endpoint, timeout) from None
        except openai.APIConnectionError:
            raise connection_error(self._endpoint) from None
        return response

    def _usage(self, response: Response, model: str, sent: str) -> TokenUsage:
        """Token counts as reported (input includes the cached tokens, output the reasoning
        ones); estimated only when the server reports none."""
        reported = response.usage
        if reported is None:
            usage = TokenUsage(
                input_tokens=estimate_tokens(sent),
                output_tokens=estimate_tokens(_output_chars(response)),
                estimated=True,
            )
        else:
            # a server that speaks the API (vLLM, Ollama) may leave the details out
            read, written = reported.input_tokens_details, reported.output_tokens_details
            usage = TokenUsage(
                input_tokens=reported.input_tokens or 0,
                output_tokens=reported.output_tokens or 0,
                cached_tokens=getattr(read, "cached_tokens", 0) or 0,
                cache_write_tokens=getattr(read, "cache_write_tokens", 0) or 0,
                reasoning_tokens=getattr(written, "reasoning_tokens", 0) or 0,
            )
        return self._settings.pricing.priced(usage, response.model, model)


def function_tools(tools: list[OfferedTool]) -> list[FunctionToolParam]:
    """The offered tools as function tools. Not strict: a catalog's argument schemas need not
    meet strict mode's rules (every property required, no other properties)."""
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.arguments_schema,
            "strict": False,
        }
        for tool in tools
    ]


def input_items(messages: list[AgentMessage]) -> ResponseInputParam:
    """The conversation as input items: each message a `user` or `assistant` message, each call
    a `function_call` item and each result a `function_call_output` item (a failed call's output
    opens with `ERROR: `, as in Chat Completions: the API has no error flag)."""
    items: ResponseInputParam = []
    for message in messages:
        if isinstance(message, UserMessage):
            items.append({"role": "user", "content": message.text})
        elif isinstance(message, ToolResultMessage):
            output = result_text(message)
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.call_id,
                    "output": output if message.ok else FAILED_PREFIX + output,
                }
            )
        else:
            if message.text:
                items.append({"role": "assistant", "content": message.text})
            items.extend(
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.tool,
                    "arguments": json.dumps(call.arguments),
                }
                for call in message.tool_calls
            )
    return items


def _asked(prompt: str) -> ResponseInputParam:
    return [{"role": "user", "content": prompt}]


def _charged(usage: TokenUsage, parse: Callable[[Given], Parsed], given: Given) -> Parsed:
    """`parse(given)`; a reply it rejects (or a model's cannot_plan) still cost `usage`, so the
    failure carries it."""
    with charged(usage):
        return parse(given)


def _cut_off(response: Response) -> bool:
    details = response.incomplete_details
    return response.status == "incomplete" and (
        details is None or details.reason in ("max_output_tokens", None)
    )


def _said(response: Response, usage: TokenUsage) -> str:
    """The reply's text. A failed response is classified by its error code; a refusal, a
    filtered reply or a policy error is a POLICY_VIOLATION naming its category."""
    if response.status == "failed" or response.error is not None:
        raise _failed(response, usage)
    details = response.incomplete_details
    refusal = "".join(
        part.refusal
        for item in response.output
        if item.type == "message"
        for part in item.content
        if part.type == "refusal"
    )
    if refusal or (details is not None and details.reason == "content_filter"):
        raise refused(
            response.model,
            said=refusal,
            categories=_flagged(response),
            filtered=not refusal,
            usage=usage,
        )
    return response.output_text


_POLICY_CODES = ("bio_policy", "misalignment_policy_violation", "image_content_policy_violation")


def _failed(response: Response, usage: TokenUsage) -> ProviderError:
    error = response.error
    code = error.code if error is not None else "unknown"
    detail = error.message if error is not None else "no detail given"
    if code in _POLICY_CODES:
        return refused(response.model, said=detail, categories=[code], usage=usage)
    classified = {
        "rate_limit_exceeded": ErrorCode.RATE_LIMITED,
        "server_error": ErrorCode.PROVIDER_UNAVAILABLE,
    }.get(code, ErrorCode.REQUEST_REJECTED)
    return ProviderError(
        classified, f"{response.model}'s response failed ({code}): {detail}", usage=usage
    )


def _flagged(response: Response) -> list[str]:
    moderation = response.moderation
    if moderation is None or moderation.output.type != "moderation_result":
        return []
    return flagged(moderation.output.categories)


def _text(response: Response, usage: TokenUsage, *, whole: bool) -> str:
    """The reply's text. `whole`: a reply cut off at the token limit is no answer at all."""
    text = _said(response, usage)
    if whole and _cut_off(response):
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT,
            cut_off_message(response.model, "max_output_tokens", text),
            usage=usage,
        )
    if not text.strip():
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT, f"{response.model} replied with no text", usage=usage
        )
    return text


def _call_arguments(call: ResponseFunctionToolCall) -> dict[str, JsonValue]:
    return call_arguments(call.name, call.arguments)


def _output_chars(response: Response) -> str:
    """What the model said, to estimate its tokens from: its text and its calls."""
    calls = "".join(
        item.name + item.arguments for item in response.output if item.type == "function_call"
    )
    return response.output_text + calls
