"""The worker's plugin: each of its Temporal workers gets what infra.queues says its task queue
carries, the run's queue its workflows and activities, the model queue its model calls only.

The worker builds the activity implementations (they hold the providers, the memory store, the
MCP servers...); the plugin picks from them by name, so which activity runs where is written in
infra.queues and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from temporalio import activity
from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkerConfig

from harness.engine.contracts import llm_task_queue
from infra.queues import QUEUES, queue_of

PLUGIN_NAME = "durable-harness-queues"

Activity = Callable[..., Any]


def activity_name(implementation: Activity) -> str | None:
    """The name an `@activity.defn` callable registers under; None for any other callable. (The
    SDK keeps it in its definition, which has no public reader.)"""
    definition = activity._Definition.from_callable(implementation)
    return definition.name if definition is not None else None


def activities_by_name(*providers: object) -> dict[str, Activity]:
    """Every activity of `providers`, by name: an `@activity.defn` function is one, an object
    gives its `@activity.defn` methods, bound to it."""
    found: dict[str, Activity] = {}
    for provider in providers:
        for implementation in _activities_of(provider):
            name = activity_name(implementation)
            if name is None:
                continue
            if name in found:
                raise ValueError(f"the activity {name} is given twice to the worker")
            found[name] = implementation
    return found


def _activities_of(provider: object) -> Iterable[Activity]:
    if callable(provider) and activity_name(provider) is not None:
        return [provider]
    members = {
        attribute: member
        for cls in reversed(type(provider).__mro__)
        for attribute, member in vars(cls).items()
    }
    return [
        getattr(provider, attribute)
        for attribute, member in members.items()
        if callable(member) and activity_name(member) is not None
    ]


class QueuePlugin(SimplePlugin):
    """One plugin for both of a worker's Temporal workers: `run_queue` and its model queue.

    A set that names an activity no implementation defines, or an implementation no set names,
    stops the worker before it starts: the first would leave calls that nobody polls for, the
    second code that never runs."""

    def __init__(self, run_queue: str, implementations: Mapping[str, Activity]) -> None:
        super().__init__(PLUGIN_NAME)
        named = {name for carried in QUEUES.values() for name in carried.activities}
        if missing := sorted(named - implementations.keys()):
            raise ValueError(f"no implementation of the activities {', '.join(missing)}")
        if unused := sorted(implementations.keys() - named):
            raise ValueError(
                f"the activities {', '.join(unused)} are on no queue: name them in infra.queues"
            )
        self.run_queue = run_queue
        self.implementations = dict(implementations)

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        config = super().configure_worker(config)
        task_queue = config.get("task_queue", "")
        queue = queue_of(task_queue, self.run_queue)
        if queue is None:
            raise ValueError(
                f"the harness worker of {self.run_queue} serves it and"
                f" {llm_task_queue(self.run_queue)}, not {task_queue}"
            )
        carried = QUEUES[queue]
        config["activities"] = [
            *config.get("activities", ()),
            *(self.implementations[name] for name in sorted(carried.activities)),
        ]
        config["workflows"] = [*config.get("workflows", ()), *carried.workflows]
        return config
