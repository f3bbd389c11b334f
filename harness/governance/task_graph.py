"""A scope's tasks and the edges between them: parents, and DEPENDS_ON edges that must never close
a cycle. One graph per scope, so a cycle across any number of tasks is seen in one place, at once.

Like the ledger, `check` is the gateway (an update's validator) and `apply` the change (its
handler). A task's status is its own ledger's to decide; the graph is told of it, to answer
which tasks are runnable.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from harness.core.limits import MAX_NAME_CHARS
from harness.governance.state_size import (
    Tally,
    actor_problem,
    growth_estimate,
    json_bytes,
    names_problem,
)
from harness.governance.task_commands import (
    ForScope,
    GovernanceCommand,
    IdempotencyKeys,
    LedgerReceipt,
)
from harness.governance.work import TEXT, TaskStatus

SCOPE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
MAX_DEPENDENCIES = 100
MAX_GRAPH_BYTES = 600_000
"""The most a scope's graph takes as JSON. It travels through continue-as-new with the scope's
rules (harness.governance.scope_rules.MAX_RULES_BYTES) as one payload, which Temporal refuses past 2
MB:
together about 1 MB. About 900 tasks with 500-character titles fit (178 with every field, the
actor and the key at their longest)."""
INHERITED_BYTES = 128
"""A subtask takes its parent's preset, which its command does not spell out."""


def scope_problem(scope: str) -> str | None:
    if SCOPE_PATTERN.match(scope):
        return None
    return f"scope '{scope}' must be 1-63 letters, digits, '-' or '_', led by a letter or digit"


class GraphTask(BaseModel):
    id: str
    title: str
    parent_id: str | None = None
    depends_on: list[str] = Field(default_factory=list)
    status: TaskStatus = TaskStatus.ACTIVE
    preset: str | None = None
    created_by: str
    created_at: datetime


class CreateTask(BaseModel):
    op: Literal["create_task"] = "create_task"
    title: str = TEXT
    parent_id: str | None = None
    depends_on: list[str] = Field(default_factory=list, max_length=MAX_DEPENDENCIES)
    preset: str | None = Field(
        default=None, max_length=100, description="The task type: its scope contract's preset."
    )


class AddDependency(BaseModel):
    op: Literal["add_dependency"] = "add_dependency"
    task_id: str
    depends_on: str


class StatusChanged(BaseModel):
    """A task's ledger tells the graph its new status (the ledger decided it)."""

    op: Literal["status_changed"] = "status_changed"
    task_id: str
    status: TaskStatus


GraphOperation = Annotated[CreateTask | AddDependency | StatusChanged, Field(discriminator="op")]


class GraphCommand(GovernanceCommand, ForScope):
    operation: GraphOperation


class TaskGraphState(BaseModel):
    scope: str
    tasks: dict[str, GraphTask] = Field(default_factory=dict)
    keys: dict[str, str] = Field(default_factory=dict)
    key_ids: dict[str, str | None] = Field(default_factory=dict)


class TaskGraph:
    def __init__(self, state: TaskGraphState) -> None:
        self.state = state
        self._tally = Tally(lambda: json_bytes(self.state))

    @property
    def size(self) -> int:
        """Bytes of the graph as JSON, as continue-as-new carries it."""
        return self._tally.bytes

    def check(self, command: GraphCommand) -> str | None:
        if command.scope != self.state.scope:
            return f"the command is for scope '{command.scope[:200]}', not '{self.state.scope}'"
        problem = actor_problem(command.actor)
        if problem is not None:
            return problem
        keys = self._keys()
        if keys.seen(command.idempotency_key):
            return keys.problem(command.idempotency_key, command.fingerprint())
        operation = command.operation
        problem = names_problem(_names(operation), MAX_NAME_CHARS)
        if problem is not None:
            return problem
        if isinstance(operation, StatusChanged):  # a task's one status, replaced: no growth
            return self._unknown(operation.task_id)
        if isinstance(operation, CreateTask):
            problem = self._create_problem(operation)
        else:
            problem = self._dependency_problem(operation.task_id, operation.depends_on)
        return problem or self._size_problem(command)

    def _size_problem(self, command: GraphCommand) -> str | None:
        """Refused before it is journalled: the graph stays far below Temporal's limit."""
        growth = growth_estimate(command, command.idempotency_key, INHERITED_BYTES)
        if self.size + growth <= MAX_GRAPH_BYTES:
            return None
        return (
            f"scope '{self.state.scope}' is full ({self.size:,} of {MAX_GRAPH_BYTES:,} bytes of "
            "tasks): put new tasks in a new scope"
        )

    def apply(
        self, command: GraphCommand, now: datetime, *, checked: bool = False
    ) -> LedgerReceipt:
        """`checked`: an update's validator already ran the check (see TaskLedger.apply)."""
        problem = None if checked else self.check(command)
        if problem is not None:
            return LedgerReceipt(accepted=False, reason=problem)
        content = command.fingerprint()
        operation, state = command.operation, self.state
        changed = state.tasks.get(getattr(operation, "task_id", ""))
        self._tally.changing(
            touched=[changed] if changed else [], maps=(state.tasks, state.keys, state.key_ids)
        )
        receipt = self._keys().once(
            command.idempotency_key, content, lambda: self._apply(command, now)
        )
        self._tally.changed()
        return receipt

    def _keys(self) -> IdempotencyKeys:
        return IdempotencyKeys(self.state.keys, self.state.key_ids)

    def seen(self, command: GraphCommand) -> bool:
        """Its key was applied already: applying it again answers "duplicate"."""
        return self._keys().seen(command.idempotency_key)

    def _apply(self, command: GraphCommand, now: datetime) -> tuple[str | None, str]:
        operation = command.operation
        tasks = self.state.tasks
        if isinstance(operation, CreateTask):
            task_id = f"task-{len(tasks) + 1}"
            parent = tasks.get(operation.parent_id) if operation.parent_id else None
            tasks[task_id] = GraphTask(
                id=task_id,
                title=operation.title,
                parent_id=operation.parent_id,
                depends_on=list(dict.fromkeys(operation.depends_on)),
                preset=operation.preset or (parent.preset if parent else None),  # its type
                created_by=command.actor,
                created_at=now,
            )
            return task_id, "task created"
        if isinstance(operation, AddDependency):
            tasks[operation.task_id].depends_on.append(operation.depends_on)
            return operation.task_id, f"now depends on {operation.depends_on}"
        tasks[operation.task_id].status = operation.status
        return operation.task_id, f"task is {operation.status.value}"

    # -- reading ----------------------------------------------------------------------------

    def unfinished_dependencies(self, task_id: str) -> list[str]:
        task = self.state.tasks[task_id]
        return [d for d in task.depends_on if self.state.tasks[d].status is not TaskStatus.DONE]

    def runnable(self) -> list[GraphTask]:
        """ACTIVE tasks whose every dependency is DONE: what the next worker may take up."""
        return [
            task
            for task in self.state.tasks.values()
            if task.status is TaskStatus.ACTIVE and not self.unfinished_dependencies(task.id)
        ]

    def children(self, task_id: str) -> list[GraphTask]:
        return [task for task in self.state.tasks.values() if task.parent_id == task_id]

    # -- checks -----------------------------------------------------------------------------

    def _unknown(self, task_id: str) -> str | None:
        if task_id not in self.state.tasks:
            return f"scope '{self.state.scope}' has no task '{task_id}'"
        return None

    def _create_problem(self, operation: CreateTask) -> str | None:
        if operation.parent_id is not None:
            unknown = self._unknown(operation.parent_id)
            if unknown:
                return unknown
            parent = self.state.tasks[operation.parent_id]
            if parent.status.is_terminal:
                return f"task '{parent.id}' is {parent.status.value}: it takes no new subtasks"
        for dep in operation.depends_on:
            unknown = self._unknown(dep)
            if unknown:
                return unknown
        return None

    def _dependency_problem(self, task_id: str, dep: str) -> str | None:
        for unknown in (self._unknown(task_id), self._unknown(dep)):
            if unknown:
                return unknown
        task = self.state.tasks[task_id]
        if task.status.is_terminal:
            return f"task '{task_id}' is {task.status.value}: a finished task is final"
        if dep == task_id:
            return f"task '{task_id}' cannot depend on itself"
        if dep in task.depends_on:
            return f"task '{task_id}' already depends on '{dep}'"
        if len(task.depends_on) >= MAX_DEPENDENCIES:
            return f"task '{task_id}' has {MAX_DEPENDENCIES} dependencies, the most a task may"
        path = self._path(dep, task_id)
        if path:
            return "the dependency would close a cycle: " + " -> ".join([task_id, *path])
        return None

    def _path(self, start: str, goal: str) -> list[str]:
        """A DEPENDS_ON path from `start` to `goal` (both included), or [] when there is none."""
        came_from: dict[str, str | None] = {start: None}
        frontier = [start]
        while frontier:
            current = frontier.pop()
            if current == goal:
                path = [current]
                while (previous := came_from[path[-1]]) is not None:
                    path.append(previous)
                return path[::-1]
            for dep in self.state.tasks[current].depends_on:
                if dep not in came_from:
                    came_from[dep] = current
                    frontier.append(dep)
        return []


def _names(operation: GraphOperation) -> dict[str, str | None]:
    """The task ids an operation names, which its model does not bound."""
    if isinstance(operation, CreateTask):
        names = {f"depends_on[{n}]": dep for n, dep in enumerate(operation.depends_on)}
        return {"parent_id": operation.parent_id, **names}
    if isinstance(operation, AddDependency):
        return {"task_id": operation.task_id, "depends_on": operation.depends_on}
    return {"task_id": operation.task_id}
