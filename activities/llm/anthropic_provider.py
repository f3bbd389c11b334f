"""The `anthropic` provider: Claude through the Messages API, with the official async SDK.

Plans and verdicts come back as structured outputs (`output_config.format` with a JSON schema),
so the reply is constrained to the schema as it is decoded. An agent's turn offers its tools
(`tools`), gets its calls as `tool_use` blocks and sends their results back as `tool_result`
blocks (activities.llm.tool_use). The planner's system prompt (rules
and catalog) is marked for prompt caching. SDK retries are off: Temporal retries the activity.
"""

from __future__ import annotations

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
from activities.llm.config import (
    AGENT_TURN_TIMEOUT_SECONDS,
    ANTHROPIC,
    JUDGE_TIMEOUT_SECONDS,
    PLAN_MAX_TOKENS,
    PLANNER_TIMEOUT_SECONDS,
    VERDICT_MAX_TOKENS,
    WORKER_TIMEOUT_SECONDS,
    ProviderSettings,
)
from activities.llm.http_errors import connection_error, status_error, timeout_error
from activities.llm.prompts import (
    JUDGE_ROLE,
    cut_off_message,
    judge_user,
    planner_catalog,
    planner_system,
    planner_user,
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
        model = self._settings.planner_model(request.model, request.economy)
        system: TextBlockParam = {
            "type": "text",
            "text": planner_system(planner_catalog(request), scenario.instructions),
            "cache_control": {"type": "ephemeral"},
        }
        message = await self._create(
            model,
            system=[system],
            messages=_asked(planner_user(request)),
            max_tokens=PLAN_MAX_TOKENS,
            timeout=PLANNER_TIMEOUT_SECONDS,
            schema=PLAN_SCHEMA,
        )
        plan = parse_plan(_text(message, whole=True))
        usage = self._usage(message, model)
        return PlanResponse(plan=plan, planned_by=f"{self.name}:{message.model}", usage=usage)

    async def write(self, request: TextRequest) -> TextReply:
        model = self._settings.worker_model(request.model, request.economy)
        message = await self._create(
            model,
            system=[{"type": "text", "text": request.system}],
            messages=_asked(request.prompt),
            max_tokens=request.max_output_tokens,
            timeout=WORKER_TIMEOUT_SECONDS,
        )
        text = _text(message, whole=False)
        return TextReply(text=text, model=message.model, usage=self._usage(message, model))

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        model = self._settings.judge_model(request.model)
        message = await self._create(
            model,
            system=[{"type": "text", "text": JUDGE_ROLE}],
            messages=_asked(judge_user(request)),
            max_tokens=VERDICT_MAX_TOKENS,
            timeout=JUDGE_TIMEOUT_SECONDS,
            schema=VERDICT_SCHEMA,
        )
        verdict = parse_verdict(_text(message, whole=True))
        return JudgeReply(
            passed=verdict.passed,
            score=verdict.score,
            reasons=verdict.reasons,
            model=message.model,
            usage=self._usage(message, model),
        )

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        model = self._settings.agent_model(request.model, request.economy)
        # The same system text and tools every turn: marked, they are read from the cache.
        system: TextBlockParam = {
            "type": "text",
            "text": request.system,
            "cache_control": {"type": "ephemeral"},
        }
        message = await self._create(
            model,
            system=[system],
            messages=anthropic_messages(request.messages),
            max_tokens=request.max_output_tokens,
            timeout=AGENT_TURN_TIMEOUT_SECONDS,
            tools=anthropic_tools(request.tools) or None,
        )
        text = _said(message)
        calls = [
            ToolCall(id=block.id, tool=block.name, arguments=_arguments(block.input))
            for block in message.content
            if block.type == "tool_use"
        ]
        cut_off = message.stop_reason in _CUT_OFF
        usage = self._usage(message, model)
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
    ) -> Message:
        output: OutputConfigParam | anthropic.Omit = (
            {"format": {"type": "json_schema", "schema": schema}} if schema else anthropic.omit
        )
        try:
            return await self._client.messages.create(
                model=model,
                max_tokens=max_tokens,
                system=system,
                messages=messages,
                output_config=output,
                tools=tools if tools else anthropic.omit,
                timeout=timeout,
            )
        except anthropic.APIStatusError as error:
            raise status_error(
                self._endpoint, error.status_code, error.response.headers, error.body
            ) from None
        except anthropic.APITimeoutError:
            raise timeout_error(self._endpoint, timeout) from None
        except anthropic.APIConnectionError:
            raise connection_error(self._endpoint) from None

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
        )
        return self._settings.pricing.priced(usage, message.model, model)


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
    """The reply's text blocks; a refusal is a POLICY_VIOLATION, whatever it says."""
    text = "".join(block.text for block in message.content if block.type == "text")
    if message.stop_reason == "refusal":
        raise ProviderError(ErrorCode.POLICY_VIOLATION, f"{message.model} refused: {text[:200]}")
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
