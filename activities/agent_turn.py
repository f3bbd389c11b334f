"""Activity: one model turn of an agent node's tool-use loop, on the model queue.

A plain call: the request in, the provider's reply out, its usage on the reply. The loop (a
child workflow) runs the calls the reply asks for as activities of their own. What the model
says goes to the followers of the run or session as it streams (activities.token_stream),
under the run's id (a session's workflow id), not the loop's own.
"""

from __future__ import annotations

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.heartbeats import with_heartbeats
from activities.llm import ProviderRegistry
from activities.provider_errors import as_temporal_failures
from activities.spending import Spending, charged_attempts
from activities.token_stream import TokenPoster, live_replies
from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest
from harness.core.errors import ErrorCode
from harness.engine.contracts import AGENT_TURN_ACTIVITY

log = structlog.get_logger()


class AgentTurnActivities:
    def __init__(self, providers: ProviderRegistry, tokens: TokenPoster | None = None) -> None:
        """`tokens`: where the turn's text goes as it streams (activities.token_stream)."""
        self._providers = providers
        self._tokens = tokens

    @activity.defn(name=AGENT_TURN_ACTIVITY)
    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        attempt = activity.info().attempt
        logger = log.bind(
            run_id=request.run_id, node_id=request.node_id, turn=request.turn, role="agent"
        )
        if problems := request.problems():
            # A conversation no API accepts would be refused on every attempt.
            raise ApplicationError(
                "the agent's conversation cannot be sent: " + "; ".join(problems),
                type=ErrorCode.INVALID_ARGUMENT.value,
                non_retryable=True,
            )
        spending = Spending()
        live = live_replies(self._tokens, request.run_id, request.node_id)
        with charged_attempts(spending), as_temporal_failures(attempt), live:
            provider = self._providers.get(request.provider)
            reply = await with_heartbeats(provider.agent_turn(request), spending.details)
        reply.usage = spending.plus_earlier(reply.usage)
        logger.info(
            "agent.turn", stop=reply.stop.value, calls=len(reply.tool_calls), model=reply.model
        )
        return reply
