"""The catalog in the planner's compact notation: each schema as a type a model reads at a glance,
each named type written once, two different types of one name kept apart."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, create_model

from activities.llm.catalog_text import describe_tools
from harness.catalog.tools import ToolSpec


class Item(BaseModel):
    name: str


class Basket(BaseModel):
    items: list[Item] = Field(min_length=1, description="What is in the basket.")
    size: Literal["S", "M"] = "S"
    note: str | None = None
    count: int = Field(default=1, ge=1, le=9)


OtherItem = create_model("Item", code=(int, ...))
"""Another pack's `Item`: the same name, another type."""


class OtherBasket(BaseModel):
    items: list[OtherItem]


def _spec(name: str, arguments: type[BaseModel], result: type[BaseModel] | None = None) -> ToolSpec:
    return ToolSpec.from_model(name, f"{name}.", arguments, result=result)


def test_arguments_read_as_typed_lines_with_bounds_defaults_and_descriptions() -> None:
    types, (basket,) = describe_tools([_spec("fill", Basket)])

    assert types == "Item = {name: string}"
    assert basket == (
        "Arguments:\n"
        "- items: Item[] (>=1 items) - What is in the basket.\n"
        '- size?: "S" | "M" = "S"\n'
        "- note?: string\n"
        "- count?: integer (1..9) = 1"
    )


def test_a_type_shared_by_tools_is_written_once_and_a_typed_result_is_named() -> None:
    types, described = describe_tools(
        [_spec("fill", Basket), _spec("first", OtherBasket, result=Item)]
    )

    assert types.splitlines() == ["Item = {name: string}", "Item2 = {code: integer}"]
    assert described[1] == "Arguments:\n- items: Item2[]\nResult: Item"
