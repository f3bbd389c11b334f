"""The library's catalogue, members and loans: a JSON file shipped inside the package (package
data, declared in pyproject.toml), read once through importlib.resources, so it is found
wherever the package is installed."""

from __future__ import annotations

import functools
import json
from datetime import date
from importlib import resources

from pydantic import BaseModel


class Book(BaseModel):
    title: str
    author: str
    copies: int


class Member(BaseModel):
    id: str
    name: str


class LoanRecord(BaseModel):
    member: str
    title: str
    due: date


class Catalogue(BaseModel):
    fine_per_day_eur: float
    books: list[Book]
    members: list[Member]
    loans: list[LoanRecord]

    def book(self, title: str) -> Book | None:
        wanted = title.strip().casefold()
        return next((b for b in self.books if b.title.casefold() == wanted), None)

    def member(self, member_id: str) -> Member | None:
        wanted = member_id.strip().upper()
        return next((m for m in self.members if m.id == wanted), None)


@functools.cache
def catalogue() -> Catalogue:
    text = resources.files(__package__).joinpath("catalogue.json").read_text(encoding="utf-8")
    return Catalogue.model_validate(json.loads(text))
