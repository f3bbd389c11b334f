"""The library's tools, written with the public package only: typed functions made tools by
`@tool`, failing predictably with `ToolError`."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import BaseModel, Field

from durable_harness import ToolError, tool
from library_loans.catalogue import Book, Member, catalogue

MemberId = Annotated[str, Field(description="The member's card number, e.g. 'M-1001'.")]


class Loan(BaseModel):
    title: str
    due: date


class MemberLoans(BaseModel):
    member: str
    name: str
    loans: list[Loan]


class BookStatus(BaseModel):
    title: str
    author: str
    copies: int
    on_loan: int
    available: int
    next_due: date | None
    """When the first copy out comes back (none when no copy is out)."""


class LateLoan(BaseModel):
    title: str
    days_late: int
    fine_eur: float


class Fines(BaseModel):
    member: str
    on: date
    late: list[LateLoan]
    total_eur: float


def _member(member: str) -> Member:
    found = catalogue().member(member)
    if found is None:
        raise ToolError("MISSING_INFO", f"no library member with card number '{member}'")
    return found


def _book(title: str) -> Book:
    found = catalogue().book(title)
    if found is None:
        raise ToolError("MISSING_INFO", f"the library has no book titled '{title}'")
    return found


@tool(local=True)
def member_loans(member: MemberId) -> MemberLoans:
    """The books a member has on loan, each with its due date."""
    found = _member(member)
    loans = [
        Loan(title=loan.title, due=loan.due)
        for loan in sorted(catalogue().loans, key=lambda loan: loan.due)
        if loan.member == found.id
    ]
    return MemberLoans(member=found.id, name=found.name, loans=loans)


@tool(local=True)
def book_status(
    title: Annotated[str, Field(description="The book's title, e.g. 'Dune'.")],
) -> BookStatus:
    """How many copies of a book the library has, how many are out, and when one comes back."""
    book = _book(title)
    due = sorted(loan.due for loan in catalogue().loans if loan.title == book.title)
    return BookStatus(
        title=book.title,
        author=book.author,
        copies=book.copies,
        on_loan=len(due),
        available=book.copies - len(due),
        next_due=due[0] if due else None,
    )


@tool(local=True)
def fines_owed(
    member: MemberId,
    on: Annotated[date, Field(description="The day to count late days up to (YYYY-MM-DD).")],
) -> Fines:
    """What a member owes for late books on a given day: each late loan and the total."""
    found = _member(member)
    rate = catalogue().fine_per_day_eur
    late = [
        LateLoan(
            title=loan.title,
            days_late=(on - loan.due).days,
            fine_eur=round((on - loan.due).days * rate, 2),
        )
        for loan in catalogue().loans
        if loan.member == found.id and loan.due < on
    ]
    total = round(sum(loan.fine_eur for loan in late), 2)
    return Fines(member=found.id, on=on, late=late, total_eur=total)


@tool(final=True, local=True)
def loans_report(
    loans: list[MemberLoans] | None = None,
    books: list[BookStatus] | None = None,
    fines: list[Fines] | None = None,
) -> str:
    """Writes the library report from member_loans, book_status and fines_owed results."""
    lines = ["# Library report"]
    for member in loans or []:
        lines.append(f"\n## {member.name} ({member.member})")
        lines += [f"- {loan.title}, due {loan.due.isoformat()}" for loan in member.loans]
        if not member.loans:
            lines.append("- no books on loan")
    for book in books or []:
        back = f"; next copy back {book.next_due.isoformat()}" if book.next_due else ""
        lines.append(
            f"\n## {book.title} by {book.author}\n"
            f"- {book.available} of {book.copies} copies available{back}"
        )
    for owed in fines or []:
        lines.append(f"\n## Fines of {owed.member} on {owed.on.isoformat()}")
        lines += [
            f"- {late.title}: {late.days_late} days late, EUR {late.fine_eur:.2f}"
            for late in owed.late
        ]
        lines.append(f"- total owed: EUR {owed.total_eur:.2f}")
    return "\n".join(lines)
