"""The `anthropic` provider: Claude through the Messages API, with the official async SDK.

Plans and verdicts come back as structured outputs (`output_config.format` with a JSON schema),
so the reply is constrained to the schema as it is decoded. An agent's turn offers its tools
(`tools`), gets its calls as `tool_use` blocks and sends their results back as `tool_result`
blocks (activities.llm.tool_use). The planner's system prompt (rules
and catalog) is marked for prompt caching. SDK retries are off: Temporal retries the activity.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

import anthropic
from anthropic.types import (
    Message,
    MessageParam,
    OutputConfigParam,
    TextBlockParam,
    ToolParam,
)
from pydantic import JsonValue

from activities.llm.base import ProviderError
from activities.llm.caching import warn_if_uncached
from activities.llm.charging import charged, charged_estimate
from activities.llm.config import ANTHROPIC, PLAN_MAX_TOKENS, VERDICT_MAX_TOKENS, ProviderSettings
from activities.llm.http_errors import connection_error, status_error, timeout_error
from activities.llm.prompts import (
    JUDGE_ROLE,
    cut_off_message,
    judge_user,
    planner_catalog,
    planner_system,
    planner_user,
)
from activities.llm.reasoning import Role, anthropic_reasoning_tokens
from activities.llm.request_options import anthropic_options
from activities.llm.stops import refused, writer_cut_off
from activities.llm.streaming import (
    StreamFailed,
    StreamLost,
    StreamTimeout,
    anthropic_message,
)
from activities.llm.structured import PLAN_SCHEMA, VERDICT_SCHEMA, parse_plan, parse_verdict
from activities.llm.tool_use import anthropic_messages, anthropic_tools, turn_reply
from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest, ToolCall
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage
from harness.engine.messages import PlanRequest, PlanResponse
from scenarios.base import Pack

_CUT_OFF = ("max_tokens", "model_context_window_exceeded")
_Limited = PlanRequest | TextRequest | JudgeRequest | AgentTurnRequest


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._client = anthropic.AsyncAnthropic(
            api_key=settings.api_key, base_url=settings.url, max_retries=0
        )
        self._endpoint = settings.endpoint()

    @classmethod
    def from_env(cls) -> AnthropicProvider:
        return cls(ProviderSettings.from_env(ANTHROPIC))

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        model = self._priced(self._settings.planner_model(request.model, request.economy), request)
        system: TextBlockParam = {
            "type": "text",
            "text": planner_system(planner_catalog(request), scenario.instructions),
            "cache_control": {"type": "ephemeral"},
        }
        prompt = planner_user(request)
        max_tokens = self._settings.reasoning.room(Role.PLANNER, PLAN_MAX_TOKENS)
        with self._charged(model, system["text"] + prompt, max_tokens):
            message = await self._create(
                model,
                system=[system],
                messages=_asked(prompt),
                max_tokens=max_tokens,
                timeout=self._settings.timeouts.planner,
                schema=PLAN_SCHEMA,
                options=anthropic_options(self._settings, Role.PLANNER, model),
            )
        usage = self._usage(message, model)
        warn_if_uncached(self.name, message.model, request.scenario, usage)
        with charged(usage):
            plan = parse_plan(_text(message, whole=True))
        return PlanResponse(plan=plan, planned_by=f"{self.name}:{message.model}", usage=usage)

    async def write(self, request: TextRequest) -> TextReply:
        model = self._priced(self._settings.worker_model(request.model, request.economy), request)
        max_tokens = self._settings.reasoning.room(Role.WRITER, request.max_output_tokens)
        with self._charged(model, request.system + request.prompt, max_tokens):
            message = await self._create(
                model,
                system=[{"type": "text", "text": request.system}],
                messages=_asked(request.prompt),
                max_tokens=max_tokens,
                timeout=self._settings.timeouts.writer,
                options=anthropic_options(self._settings, Role.WRITER, model),
            )
        usage = self._usage(message, model)
        if message.stop_reason in _CUT_OFF:
            raise writer_cut_off(message.model, max_tokens, usage)
        with charged(usage):
            text = _text(message, whole=False)
        return TextReply(text=text, model=message.model, usage=usage)

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        model = self._priced(self._settings.judge_model(request.model), request)
        prompt = judge_user(request)
        max_tokens = self._settings.reasoning.room(Role.JUDGE, VERDICT_MAX_TOKENS)
        with self._charged(model, JUDGE_ROLE + prompt, max_tokens):
            message = await self._create(
                model,
                system=[{"type": "text", "text": JUDGE_ROLE}],
                messages=_asked(prompt),
                max_tokens=max_tokens,
                timeout=self._settings.timeouts.judge,
                schema=VERDICT_SCHEMA,
                options=anthropic_options(self._settings, Role.JUDGE, model),
            )
        usage = self._usage(message, model)
        with charged(usage):
            verdict = parse_verdict(_text(message, whole=True))
        return JudgeReply(
            passed=verdict.passed,
            score=verdict.score,
            reasons=verdict.reasons,
            model=message.model,
            usage=usage,
        )

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        model = self._priced(self._settings.agent_model(request.model, request.economy), request)
        # The same system text and tools every turn: marked, they are read from the cache.
        system: TextBlockParam = {
            "type": "text",
            "text": request.system,
            "cache_control": {"type": "ephemeral"},
        }
        messages = anthropic_messages(request.messages)
        tools = anthropic_tools(request.tools)
        sent = request.system + json.dumps(messages, default=str) + json.dumps(tools)
        with self._charged(model, sent, request.max_output_tokens):
            message = await self._create(
                model,
                system=[system],
                messages=messages,
                max_tokens=request.max_output_tokens,
                timeout=self._settings.timeouts.agent_turn,
                tools=tools or None,
                options=anthropic_options(self._settings, Role.AGENT, model),
            )
        usage = self._usage(message, model)
        with charged(usage):
            text = _said(message)
            calls = [
                ToolCall(id=block.id, tool=block.name, arguments=_arguments(block.input))
                for block in message.content
                if block.type == "tool_use"
            ]
        cut_off = message.stop_reason in _CUT_OFF
        return turn_reply(text, calls, cut_off=cut_off, model=message.model, usage=usage)

    async def _create(
        self,
        model: str,
        *,
        system: list[TextBlockParam],
        messages: list[MessageParam],
        max_tokens: int,
        timeout: float,
        schema: dict[str, Any] | None = None,
        tools: list[ToolParam] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Message:
        output: OutputConfigParam | anthropic.Omit = (
            {"format": {"type": "json_schema", "schema": schema}} if schema else anthropic.omit
        )
        try:
            return await anthropic_message(
                self._client,
                stream=self._settings.stream,
                timeout=timeout,
                idle_timeout=self._settings.idle_timeout,
                model=model,
                max_tokens=max_tokens,
                system=system,
                messages=messages,
                output_config=output,
                tools=tools if tools else anthropic.omit,
                **(options or {}),
            )
        except anthropic.APIStatusError as error:
            raise status_error(
                self._endpoint, error.status_code, error.response.headers, error.body
            ) from None
        except StreamTimeout as error:
            raise timeout_error(self._endpoint, error.seconds) from None
        except StreamFailed as error:  # an error event mid-stream: as a 5xx
            raise status_error(self._endpoint, 500, {}, error.body) from None
        except anthropic.APITimeoutError:
            raise timeout_error(self._endpoint, timeout) from None
        except (anthropic.APIConnectionError, StreamLost):
            raise connection_error(self._endpoint) from None

    def _charged(self, model: str, sent: str, max_tokens: int) -> AbstractContextManager[None]:
        """A call that gets no reply is charged an estimate (see activities.llm.charging)."""
        return charged_estimate(
            sent, max_tokens, lambda usage: self._settings.pricing.priced(usage, model)
        )

    def _usage(self, message: Message, model: str) -> TokenUsage:
        """Token counts as reported; Anthropic counts cache reads and writes apart from input."""
        reported = message.usage
        read = reported.cache_read_input_tokens or 0
        written = reported.cache_creation_input_tokens or 0
        usage = TokenUsage(
            input_tokens=reported.input_tokens + read + written,
            output_tokens=reported.output_tokens,
            cached_tokens=read,
            cache_write_tokens=written,
            reasoning_tokens=anthropic_reasoning_tokens(reported),
        )
        return self._settings.pricing.priced(usage, message.model, model)

    def _priced(self, model: str, request: _Limited) -> str:
        return self._settings.check_priced(model, request.cost_limited)


def _asked(prompt: str) -> list[MessageParam]:
    return [{"role": "user", "content": prompt}]


def _arguments(given: object) -> dict[str, JsonValue]:
    """A tool_use block's input: the API gives an object; anything else is no call at all."""
    if not isinstance(given, dict):
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT, f"a tool call's input is not an object: {given!r:.120}"
        )
    return given


def _said(message: Message) -> str:
    """The reply's text blocks; a refusal is a POLICY_VIOLATION naming its category, whatever
    it says."""
    text = "".join(block.text for block in message.content if block.type == "text")
    if message.stop_reason == "refusal":
        details = message.stop_details
        category = details.category if details is not None else None
        explained = details.explanation if details is not None else None
        categories = [category] if category else []
        raise refused(message.model, said=explained or text, categories=categories)
    return text


def _text(message: Message, *, whole: bool) -> str:
    """The reply's text. `whole`: a reply cut off at the token limit is no answer at all."""
    text = _said(message)
    if whole and message.stop_reason in _CUT_OFF:
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT,
            cut_off_message(message.model, str(message.stop_reason), text),
        )
    if not text.strip():
        raise ProviderError(ErrorCode.INVALID_MODEL_OUTPUT, f"{message.model} replied with no text")
    return text
