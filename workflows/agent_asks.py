"""How an agent's loop asks its run: for more of the budget, and to open a wait for its
model (`ask_user`, `request_approval`); and how it tells the run its progress. Each ask is a
signal to the run; its answer comes back as a signal to the loop, whose handlers hand it here,
and the ask waits for it durably.

Since AGENT_PROGRESS_UNAWAITED_PATCH a report goes out beside the loop's next step instead of
before it: the loop no longer waits for the server to deliver it (two workflow-task round trips
per turn with tool calls, about 100 ms on the bench's dev server). Reports and asks still reach
the run in the order they were made: each waits until the report before it was delivered, and
the loop settles the last before it ends or continues as new."""

from __future__ import annotations

import asyncio

from temporalio import workflow

from harness.engine.agent_loop import (
    AgentProgress,
    AgentStep,
    AgentWaitAnswer,
    AgentWaitAsk,
    AllowanceAnswer,
    AllowanceAsk,
)
from harness.engine.budget import BudgetLimits, BudgetUsage
from harness.engine.contracts import (
    AGENT_ALLOWANCE_ASK_SIGNAL,
    AGENT_PROGRESS_SIGNAL,
    AGENT_WAIT_ASK_SIGNAL,
)
from harness.waits.wait_book import WaitKind
from workflows.patches import AGENT_PROGRESS_UNAWAITED_PATCH


class RunAsks:
    """The asks of one agent node's loop to its run (`run_id`), and their answers."""

    def __init__(self, run_id: str, node_id: str) -> None:
        self._run_id = run_id
        self._node_id = node_id
        self._allowances: dict[int, AllowanceAnswer] = {}
        self._waits: dict[int, AgentWaitAnswer] = {}
        self._unawaited = False
        self._telling: asyncio.Task[None] | None = None

    def reports_unawaited(self) -> None:
        """Decide (in the loop's first workflow task) whether reports go out unawaited."""
        self._unawaited = workflow.patched(AGENT_PROGRESS_UNAWAITED_PATCH)

    async def settle(self) -> None:
        """The last report delivered and every handler finished: the loop may end."""
        await self._told()
        await workflow.wait_condition(workflow.all_handlers_finished)

    async def _told(self) -> None:
        telling, self._telling = self._telling, None
        if telling is not None:
            await telling

    def allowance_answered(self, answer: AllowanceAnswer) -> None:
        self._allowances[answer.ask_id] = answer

    def wait_answered(self, answer: AgentWaitAnswer) -> None:
        self._waits[answer.ask_id] = answer

    async def more(self, ask_id: int, wanted: BudgetLimits, spent: BudgetUsage) -> AllowanceAnswer:
        """Ask for `wanted` on top of the allowance, saying what was `spent`; the answer."""
        ask = AllowanceAsk(node_id=self._node_id, ask_id=ask_id, wanted=wanted, spent=spent)
        await self._told()
        await self._run().signal(AGENT_ALLOWANCE_ASK_SIGNAL, ask)
        await workflow.wait_condition(lambda: ask_id in self._allowances)
        return self._allowances.pop(ask_id)

    async def report(self, spent: BudgetUsage, steps: list[AgentStep]) -> None:
        """Tell the run what the loop has spent in all and its new steps (no answer comes)."""
        progress = AgentProgress(node_id=self._node_id, spent=spent, steps=steps)
        await self._told()
        telling = self._run().signal(AGENT_PROGRESS_SIGNAL, progress)
        if self._unawaited:
            self._telling = asyncio.ensure_future(telling)
        else:
            await telling

    async def wait(self, ask_id: int, call_id: str, kind: WaitKind, prompt: str) -> AgentWaitAnswer:
        """Ask the run to open a wait for the call `call_id`; how it ended."""
        ask = AgentWaitAsk(
            node_id=self._node_id, ask_id=ask_id, call_id=call_id, kind=kind, prompt=prompt
        )
        await self._told()
        await self._run().signal(AGENT_WAIT_ASK_SIGNAL, ask)
        await workflow.wait_condition(lambda: ask_id in self._waits)
        return self._waits.pop(ask_id)

    def _run(self) -> workflow.ExternalWorkflowHandle[object]:
        return workflow.get_external_workflow_handle(self._run_id)
