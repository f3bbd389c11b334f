"""Inputs and outputs of the naive baseline workflow (pydantic, like the harness's models)."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue


class NaiveNode(BaseModel):
    id: str
    ms: int = Field(ge=0)
    binds: list[str] = Field(default_factory=list)


class NaiveRequest(BaseModel):
    levels: list[list[NaiveNode]]
    max_in_flight: int = Field(default=1000, ge=1, description="Gather at most this many at once.")


class NaiveCall(BaseModel):
    id: str
    ms: int
    inputs: list[JsonValue] = Field(default_factory=list)


class NaiveOutput(BaseModel):
    id: str
    ms: int
    inputs: int


class NaiveResult(BaseModel):
    nodes: int
    wall_seconds: float
