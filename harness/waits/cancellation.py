"""A run cancelled by its `cancel` signal asks Temporal to cancel it, so it ends Canceled.

A workflow cannot end itself Canceled (the SDK does so only once Temporal has delivered a
cancellation request, and the server refuses a workflow's request to cancel itself). So a run
that stopped on the `cancel` signal has an activity ask the server, through the worker's client,
for the same cancellation `harness cancel` asks for, and ends once it arrives.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class OwnCancellation(BaseModel):
    """Cancel this one execution of the run (its run id pins it: a later run of the same
    workflow id is never touched)."""

    workflow_id: str = Field(min_length=1)
    run_id: str = Field(min_length=1, description="Temporal's run id of the execution.")
    reason: str = Field(description="The run's recorded reason, with the actor.")


class OwnCancellationResult(BaseModel):
    requested: bool = Field(description="Whether the server took the request.")
    detail: str = Field(default="", description="Why not, when it did not.")
