"""The `openai` provider: the Chat Completions API with the official async SDK.

Plans and verdicts use structured outputs with a strict JSON schema, or, for a server that
refuses it, the compatibility mode HARNESS_OPENAI_COMPAT sets or the provider learns
(activities.llm.openai_compat). Any server that speaks Chat Completions works through
OPENAI_BASE_URL (vLLM, Ollama, llama.cpp); when such a server reports no usage, the token counts
are estimated and marked as such. An agent's turn offers its tools as functions (`tools`), gets
its calls as the assistant's `tool_calls` and sends each result back as a `role: tool` message
(activities.llm.tool_use). SDK retries are off: Temporal retries the activity. A model that
speaks only the Responses API (`-pro`, codex) is called through it instead
(activities.llm.openai_responses; HARNESS_OPENAI_API chooses).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

import openai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionMessageParam,
    ChatCompletionToolParam,
)
from openai.types.chat.chat_completion import Choice

from activities.llm.base import ProviderError
from activities.llm.caching import warn_if_uncached
from activities.llm.charging import charged, charged_estimate
from activities.llm.config import OPENAI, PLAN_MAX_TOKENS, VERDICT_MAX_TOKENS, ProviderSettings
from activities.llm.http_errors import connection_error, status_error, timeout_error
from activities.llm.openai_compat import (
    Compat,
    CompatMode,
    Structured,
    compat_setting,
    structured_text,
)
from activities.llm.openai_responses import ResponsesApi, WireApi
from activities.llm.prompts import (
    JUDGE_ROLE,
    cut_off_message,
    judge_user,
    planner_catalog,
    planner_system,
    planner_user,
)
from activities.llm.reasoning import Role, openai_reasoning_tokens
from activities.llm.request_options import openai_options
from activities.llm.stops import chat_refused, writer_cut_off
from activities.llm.streaming import (
    StreamFailed,
    StreamLost,
    StreamTimeout,
    openai_completion,
)
from activities.llm.structured import (
    PLAN_EXAMPLE,
    PLAN_SCHEMA,
    VERDICT_EXAMPLE,
    VERDICT_SCHEMA,
    parse_plan,
    parse_verdict,
)
from activities.llm.tool_use import call_arguments, openai_messages, openai_tools, turn_reply
from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest, ToolCall
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage, estimate_tokens
from harness.engine.messages import PlanRequest, PlanResponse
from scenarios.base import Pack

PLAN_OUTPUT = Structured("plan", PLAN_SCHEMA, PLAN_EXAMPLE)
VERDICT_OUTPUT = Structured("verdict", VERDICT_SCHEMA, VERDICT_EXAMPLE)
_Limited = PlanRequest | TextRequest | JudgeRequest | AgentTurnRequest


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        settings: ProviderSettings,
        *,
        compat: CompatMode | None = None,
        wire: WireApi = WireApi.AUTO,
    ) -> None:
        """`compat`: the compatibility mode of structured outputs; None learns it (auto).
        `wire`: which OpenAI API a model is called through (chat, or Responses for the models
        that speak only it)."""
        self._settings = settings
        self._client = openai.AsyncOpenAI(
            api_key=settings.api_key, base_url=settings.url, max_retries=0
        )
        self._endpoint = settings.endpoint()
        self._compat = Compat(self._endpoint, compat)
        self._responses = ResponsesApi(self._client, settings, self._endpoint, wire)

    @classmethod
    def from_env(cls) -> OpenAIProvider:
        return cls(
            ProviderSettings.from_env(OPENAI),
            compat=compat_setting(os.environ),
            wire=WireApi.from_env(),
        )

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        model = self._priced(self._settings.planner_model(request.model, request.economy), request)
        if self._responses.serves(model):
            return await self._responses.plan(request, scenario, model)
        system, prompt = (
            planner_system(planner_catalog(request), scenario.instructions),
            planner_user(request),
        )
        max_tokens = self._settings.reasoning.room(Role.PLANNER, PLAN_MAX_TOKENS)
        with self._charged(model, system + prompt, max_tokens):
            completion = await self._create(
                model,
                messages=_asked(system, prompt),
                max_tokens=max_tokens,
                timeout=self._settings.timeouts.planner,
                structured=PLAN_OUTPUT,
                # the cache key only to OpenAI's own API: a compatible server may refuse it
                options=openai_options(
                    self._settings,
                    Role.PLANNER,
                    request.scenario if self._compat.official() else None,
                ),
            )
        usage = self._usage(completion, model, system + prompt, _said(completion))
        warn_if_uncached(self.name, completion.model, request.scenario, usage)
        with charged(usage):
            plan = parse_plan(_text(completion, whole=True))
        return PlanResponse(plan=plan, planned_by=f"{self.name}:{completion.model}", usage=usage)

    async def write(self, request: TextRequest) -> TextReply:
        model = self._priced(self._settings.worker_model(request.model, request.economy), request)
        if self._responses.serves(model):
            return await self._responses.write(request, model)
        sent = request.system + request.prompt
        max_tokens = self._settings.reasoning.room(
            Role.WRITER, request.max_output_tokens, reasons_unasked=self._compat.official()
        )
        with self._charged(model, sent, max_tokens):
            completion = await self._create(
                model,
                messages=_asked(request.system, request.prompt),
                max_tokens=max_tokens,
                timeout=self._settings.timeouts.writer,
                options=openai_options(self._settings, Role.WRITER),
            )
        usage = self._usage(completion, model, sent, _said(completion))
        with charged(usage):
            if _choice(completion).finish_reason == "length":
                raise writer_cut_off(completion.model, max_tokens, usage)
            text = _text(completion, whole=False)
        return TextReply(text=text, model=completion.model, usage=usage)

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        model = self._priced(self._settings.judge_model(request.model), request)
        if self._responses.serves(model):
            return await self._responses.judge(request, model)
        prompt = judge_user(request)
        max_tokens = self._settings.reasoning.room(
            Role.JUDGE, VERDICT_MAX_TOKENS, reasons_unasked=self._compat.official()
        )
        with self._charged(model, JUDGE_ROLE + prompt, max_tokens):
            completion = await self._create(
                model,
                messages=_asked(JUDGE_ROLE, prompt),
                max_tokens=max_tokens,
                timeout=self._settings.timeouts.judge,
                structured=VERDICT_OUTPUT,
                options=openai_options(self._settings, Role.JUDGE),
            )
        usage = self._usage(completion, model, JUDGE_ROLE + prompt, _said(completion))
        with charged(usage):
            verdict = parse_verdict(_text(completion, whole=True))
        return JudgeReply(
            passed=verdict.passed,
            score=verdict.score,
            reasons=verdict.reasons,
            model=completion.model,
            usage=usage,
        )

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        model = self._priced(self._settings.agent_model(request.model, request.economy), request)
        if self._responses.serves(model):
            return await self._responses.agent_turn(request, model)
        messages = openai_messages(request.system, request.messages)
        sent = json.dumps(messages, default=str) + json.dumps(openai_tools(request.tools))
        with self._charged(model, sent, request.max_output_tokens):
            completion = await self._create(
                model,
                messages=messages,
                max_tokens=request.max_output_tokens,
                timeout=self._settings.timeouts.agent_turn,
                tools=openai_tools(request.tools) or None,
                options=openai_options(self._settings, Role.AGENT),
            )
        with charged(self._usage(completion, model, sent, _said(completion))):
            choice = _choice(completion)
            text = choice.message.content or ""
            calls = [
                ToolCall(
                    id=call.id,
                    tool=call.function.name,
                    arguments=call_arguments(call.function.name, call.function.arguments),
                )
                for call in choice.message.tool_calls or []
                if call.type == "function"
            ]
        got = text + "".join(call.model_dump_json() for call in calls)
        usage = self._usage(completion, model, sent, got)
        # Servers that speak the API (Ollama, vLLM) may finish a turn with calls as "stop":
        # the calls, not the finish reason, say that the model wants tools run.
        cut_off = choice.finish_reason == "length"
        return turn_reply(text, calls, cut_off=cut_off, model=completion.model, usage=usage)

    async def _create(
        self,
        model: str,
        *,
        messages: list[ChatCompletionMessageParam],
        max_tokens: int,
        timeout: float,
        structured: Structured | None = None,
        tools: list[ChatCompletionToolParam] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> ChatCompletion:
        """One completion. A refusal of a parameter the server can do without (auto mode's
        structured output, a token-limit parameter) sends the call again without it. `options`:
        the role's extra parameters (reasoning effort, prompt cache key)."""
        trying: CompatMode | None = None  # a mode this call tries after a bare 500
        while True:
            shape = self._compat.shape(model, messages, max_tokens, structured, tools, trying)
            try:
                completion = await openai_completion(
                    self._client,
                    stream=self._settings.stream,
                    timeout=timeout,
                    idle_timeout=self._settings.idle_timeout,
                    model=model,
                    messages=shape.messages,
                    max_completion_tokens=shape.max_completion_tokens,
                    max_tokens=shape.max_tokens,
                    response_format=shape.response_format,
                    tools=shape.tools,
                    tool_choice=shape.tool_choice,
                    **(options or {}),
                )
            except openai.APIStatusError as error:
                if self._compat.learn(model, shape, error):
                    trying = None
                    continue
                if trying is None and (guessed := self._compat.guess(model, shape, error)):
                    trying = guessed
                    continue
                raise status_error(
                    self._endpoint, error.status_code, error.response.headers, error.body
                ) from None
            except StreamTimeout as error:
                raise timeout_error(self._endpoint, error.seconds) from None
            except StreamFailed as error:  # an error event mid-stream: as a 5xx
                raise status_error(self._endpoint, 500, {}, error.body) from None
            except openai.APITimeoutError:
                raise timeout_error(self._endpoint, timeout) from None
            except (openai.APIConnectionError, StreamLost):
                raise connection_error(self._endpoint) from None
            if trying is not None:
                self._compat.adopt(model, trying)
            return completion

    def _charged(self, model: str, sent: str, max_tokens: int) -> AbstractContextManager[None]:
        """A call that gets no reply is charged an estimate (see activities.llm.charging)."""
        return charged_estimate(
            sent, max_tokens, lambda usage: self._settings.pricing.priced(usage, model)
        )

    def _usage(self, completion: ChatCompletion, model: str, sent: str, got: str) -> TokenUsage:
        """Token counts as reported (prompt tokens include the cached ones); estimated only when
        the server reports none."""
        reported = completion.usage
        if reported is None:
            usage = TokenUsage(
                input_tokens=estimate_tokens(sent),
                output_tokens=estimate_tokens(got),
                estimated=True,
            )
        else:
            details = reported.prompt_tokens_details
            usage = TokenUsage(
                input_tokens=reported.prompt_tokens,
                output_tokens=reported.completion_tokens,
                cached_tokens=(details.cached_tokens or 0) if details else 0,
                cache_write_tokens=(details.cache_write_tokens or 0) if details else 0,
                reasoning_tokens=openai_reasoning_tokens(reported),
            )
        return self._settings.pricing.priced(usage, completion.model, model)

    def _priced(self, model: str, request: _Limited) -> str:
        return self._settings.check_priced(model, request.cost_limited)


def _asked(system: str, prompt: str) -> list[ChatCompletionMessageParam]:
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]


def _choice(completion: ChatCompletion) -> Choice:
    """The reply's one choice; a refusal or a filtered reply is a POLICY_VIOLATION naming the
    categories a moderated reply was flagged for."""
    if not completion.choices:
        raise ProviderError(ErrorCode.INVALID_MODEL_OUTPUT, f"{completion.model} gave no choices")
    choice = completion.choices[0]
    if choice.message.refusal or choice.finish_reason == "content_filter":
        raise chat_refused(completion, choice)
    return choice


def _said(completion: ChatCompletion) -> str:
    """The reply's text, whatever it is (a forced call's arguments in tools mode): what its
    output is estimated from, if not reported."""
    choice = completion.choices[0] if completion.choices else None
    return structured_text(choice) if choice else ""


def _text(completion: ChatCompletion, *, whole: bool) -> str:
    """The reply's text. `whole` (a plan, a verdict): a reply cut off at the token limit is no
    answer at all, and a forced function call's arguments are the text (tools mode)."""
    choice = _choice(completion)
    text = structured_text(choice) if whole else choice.message.content or ""
    if whole and choice.finish_reason == "length":
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT, cut_off_message(completion.model, "length", text)
        )
    if not text.strip():
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT, f"{completion.model} replied with no text"
        )
    return text
