"""The `openai` provider: the Chat Completions API with the official async SDK.

Plans and verdicts use structured outputs with a strict JSON schema. Any server that speaks Chat
Completions works through OPENAI_BASE_URL (vLLM, Ollama, llama.cpp); when such a server reports
no usage, the token counts are estimated and marked as such. An agent's turn offers its tools
as functions (`tools`), gets its calls as the assistant's `tool_calls` and sends each result
back as a `role: tool` message (activities.llm.tool_use). SDK retries are off: Temporal
retries the activity.
"""

from __future__ import annotations

import json
from typing import Any

import openai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionMessageParam,
    ChatCompletionToolParam,
)
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_message_function_tool_call import Function
from openai.types.chat.completion_create_params import ResponseFormat
from pydantic import JsonValue

from activities.llm.base import ProviderError
from activities.llm.config import (
    AGENT_TURN_TIMEOUT_SECONDS,
    JUDGE_TIMEOUT_SECONDS,
    OPENAI,
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
from activities.llm.scripted import estimate_tokens
from activities.llm.structured import PLAN_SCHEMA, VERDICT_SCHEMA, parse_plan, parse_verdict
from activities.llm.tool_use import openai_messages, openai_tools, turn_reply
from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest, ToolCall
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage
from harness.engine.messages import PlanRequest, PlanResponse
from scenarios.base import Pack


class OpenAIProvider:
    name = "openai"

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._client = openai.AsyncOpenAI(
            api_key=settings.api_key, base_url=settings.url, max_retries=0
        )
        self._endpoint = settings.endpoint()

    @classmethod
    def from_env(cls) -> OpenAIProvider:
        return cls(ProviderSettings.from_env(OPENAI))

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        model = self._settings.planner_model(request.model, request.economy)
        system, prompt = (
            planner_system(planner_catalog(request), scenario.instructions),
            planner_user(request),
        )
        completion = await self._create(
            model,
            messages=_asked(system, prompt),
            max_tokens=PLAN_MAX_TOKENS,
            timeout=PLANNER_TIMEOUT_SECONDS,
            schema=("plan", PLAN_SCHEMA),
        )
        text = _text(completion, whole=True)
        plan = parse_plan(text)
        usage = self._usage(completion, model, system + prompt, text)
        return PlanResponse(plan=plan, planned_by=f"{self.name}:{completion.model}", usage=usage)

    async def write(self, request: TextRequest) -> TextReply:
        model = self._settings.worker_model(request.model, request.economy)
        completion = await self._create(
            model,
            messages=_asked(request.system, request.prompt),
            max_tokens=request.max_output_tokens,
            timeout=WORKER_TIMEOUT_SECONDS,
        )
        text = _text(completion, whole=False)
        usage = self._usage(completion, model, request.system + request.prompt, text)
        return TextReply(text=text, model=completion.model, usage=usage)

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        model = self._settings.judge_model(request.model)
        prompt = judge_user(request)
        completion = await self._create(
            model,
            messages=_asked(JUDGE_ROLE, prompt),
            max_tokens=VERDICT_MAX_TOKENS,
            timeout=JUDGE_TIMEOUT_SECONDS,
            schema=("verdict", VERDICT_SCHEMA),
        )
        text = _text(completion, whole=True)
        verdict = parse_verdict(text)
        return JudgeReply(
            passed=verdict.passed,
            score=verdict.score,
            reasons=verdict.reasons,
            model=completion.model,
            usage=self._usage(completion, model, JUDGE_ROLE + prompt, text),
        )

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        model = self._settings.agent_model(request.model, request.economy)
        messages = openai_messages(request.system, request.messages)
        completion = await self._create(
            model,
            messages=messages,
            max_tokens=request.max_output_tokens,
            timeout=AGENT_TURN_TIMEOUT_SECONDS,
            tools=openai_tools(request.tools) or None,
        )
        choice = _choice(completion)
        text = choice.message.content or ""
        calls = [
            ToolCall(id=call.id, tool=call.function.name, arguments=_arguments(call.function))
            for call in choice.message.tool_calls or []
            if call.type == "function"
        ]
        sent = json.dumps(messages, default=str) + json.dumps(openai_tools(request.tools))
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
        schema: tuple[str, dict[str, Any]] | None = None,
        tools: list[ChatCompletionToolParam] | None = None,
    ) -> ChatCompletion:
        response_format: ResponseFormat | openai.Omit = openai.omit
        if schema is not None:
            name, body = schema
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": body, "strict": True},
            }
        try:
            return await self._client.chat.completions.create(
                model=model,
                messages=messages,
                max_completion_tokens=max_tokens,
                response_format=response_format,
                # no tools is no `tools` at all: the API refuses an empty list
                tools=tools if tools else openai.omit,
                timeout=timeout,
            )
        except openai.APIStatusError as error:
            raise status_error(
                self._endpoint, error.status_code, error.response.headers, error.body
            ) from None
        except openai.APITimeoutError:
            raise timeout_error(self._endpoint, timeout) from None
        except openai.APIConnectionError:
            raise connection_error(self._endpoint) from None

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
            )
        return self._settings.pricing.priced(usage, completion.model, model)


def _asked(system: str, prompt: str) -> list[ChatCompletionMessageParam]:
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]


def _choice(completion: ChatCompletion) -> Choice:
    """The reply's one choice; a refusal or a filtered reply is a POLICY_VIOLATION."""
    if not completion.choices:
        raise ProviderError(ErrorCode.INVALID_MODEL_OUTPUT, f"{completion.model} gave no choices")
    choice = completion.choices[0]
    if choice.message.refusal or choice.finish_reason == "content_filter":
        reason = choice.message.refusal or "its content filter stopped the reply"
        raise ProviderError(ErrorCode.POLICY_VIOLATION, f"{completion.model} refused: {reason}")
    return choice


def _arguments(function: Function) -> dict[str, JsonValue]:
    """A call's arguments: JSON text that must spell an object."""
    try:
        arguments = json.loads(function.arguments or "{}")
    except json.JSONDecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT,
            f"the arguments of a call to {function.name} are not a JSON object: "
            f"{function.arguments!r:.120}",
        )
    return arguments


def _text(completion: ChatCompletion, *, whole: bool) -> str:
    """The reply's text. `whole`: a reply cut off at the token limit is no answer at all."""
    choice = _choice(completion)
    text = choice.message.content or ""
    if whole and choice.finish_reason == "length":
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT, cut_off_message(completion.model, "length", text)
        )
    if not text.strip():
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT, f"{completion.model} replied with no text"
        )
    return text
