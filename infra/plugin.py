"""The one Temporal plugin: what every client, worker and replayer of the harness must share.

It sets the data converter (pydantic JSON, large payloads compressed), gives a replayer every
workflow (infra.queues), and runs workflows in a sandbox that passes the pure domain and pydantic
through instead of re-importing them for every run. A client connected with it hands it on to its
workers; which workflows and activities each worker registers is the worker's queue plugin's
business (worker.queue_plugin), since its two task queues carry different sets.
"""

from __future__ import annotations

from temporalio.plugin import SimplePlugin
from temporalio.worker import ReplayerConfig, UnsandboxedWorkflowRunner, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from infra.converter import DATA_CONVERTER
from infra.queues import WORKFLOWS

PLUGIN_NAME = "durable-harness"
PASSTHROUGH_MODULES = (
    "harness",
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "cryptography",
)
"""The pure domain, its models and the Ed25519 check of signed actors: deterministic code the
workflows use, loaded once per worker instead of once per run."""

_SANDBOX = SandboxedWorkflowRunner(
    restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES)
)


def _workflow_runner(configured: WorkflowRunner | None) -> WorkflowRunner:
    """The harness sandbox, unless the caller chose to run unsandboxed (the trace replayer).
    Any other runner a caller passes is replaced: the workflows need this passthrough."""
    if isinstance(configured, UnsandboxedWorkflowRunner):
        return configured
    return _SANDBOX


class HarnessPlugin(SimplePlugin):
    def __init__(self) -> None:
        super().__init__(
            PLUGIN_NAME,
            data_converter=DATA_CONVERTER,
            workflow_runner=_workflow_runner,
        )

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        """A replayer replays any of the harness's workflows. (A worker is not given them here:
        the model queue's worker must poll for no workflow task.)"""
        config = super().configure_replayer(config)
        config["workflows"] = [*config.get("workflows", ()), *WORKFLOWS]
        return config
