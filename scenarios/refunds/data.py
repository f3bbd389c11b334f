"""The refunds scenario's orders, and the refund policy they are judged by.

Dates are fixed, and so is "today" (`AS_OF`), so every policy decision is reproducible. A-1001 (a
damaged item) and A-1005 are eligible, and so are the orders of the eval suite and of the docs'
walkthroughs; the others are outside the window, already refunded or under
dispute. Any other id is unknown.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum

from pydantic import BaseModel, Field

AS_OF = date(2025, 3, 14)


class OrderItem(BaseModel):
    name: str
    quantity: int = Field(ge=1)
    unit_price_cents: int = Field(ge=0)


class Dispute(BaseModel):
    case_id: str
    opened_on: date
    reason: str


class OrderRecord(BaseModel):
    order_id: str
    customer: str
    items: list[OrderItem]
    ordered_on: date
    delivered_on: date | None
    refunded_cents: int = 0
    refunded_on: date | None = None
    dispute: Dispute | None = None

    @property
    def amount_cents(self) -> int:
        return sum(item.quantity * item.unit_price_cents for item in self.items)


def _order(
    order_id: str,
    customer: str,
    ordered_on: str,
    delivered_on: str,
    *items: tuple[str, int, int],
    refunded_cents: int = 0,
    refunded_on: str | None = None,
    dispute: Dispute | None = None,
) -> OrderRecord:
    """One order from a row: ISO dates, and each item as (name, quantity, unit price in cents)."""
    return OrderRecord(
        order_id=order_id,
        customer=customer,
        items=[OrderItem(name=n, quantity=q, unit_price_cents=cents) for n, q, cents in items],
        ordered_on=date.fromisoformat(ordered_on),
        delivered_on=date.fromisoformat(delivered_on),
        refunded_cents=refunded_cents,
        refunded_on=None if refunded_on is None else date.fromisoformat(refunded_on),
        dispute=dispute,
    )


ORDERS: tuple[OrderRecord, ...] = (
    # id, customer, ordered on, delivered on; then each item (name, quantity, unit price in
    # cents) and what happened since (a refund, a dispute)
    _order("A-1001", "Dana Whitfield", "2025-03-03", "2025-03-07",
           ("Ceramic pour-over kettle", 1, 4990), ("Paper filters, 100 pack", 2, 745)),
    _order("A-1002", "Marcus Oyelaran", "2025-01-02", "2025-01-06",
           ("Wireless headphones", 1, 12900)),
    _order("A-1003", "Priya Raman", "2025-02-26", "2025-03-02",
           ("Linen throw blanket", 1, 5900), refunded_cents=5900, refunded_on="2025-03-05"),
    _order("A-1004", "Tomás Ribeiro", "2025-02-25", "2025-03-01",
           ("Burr espresso grinder", 1, 18900),
           dispute=Dispute(case_id="CB-55102", opened_on=date(2025, 3, 9),
                           reason="chargeback: item not received")),
    _order("A-1005", "Lena Vogt", "2025-03-06", "2025-03-10",
           ("Brass desk lamp", 1, 3450), ("LED bulb, warm white", 2, 499)),
    # Orders of the docs' walkthroughs (docs/tasks.md): each walkthrough pays an order of its
    # own, so one told before it (the refund in docs/getting-started.md pays A-1001) cannot have
    # refunded it already.
    _order("A-3001", "Inès Laurent", "2025-03-04", "2025-03-08",
           ("Stoneware mug set", 1, 3200)),
    _order("A-3002", "Kofi Mensah", "2025-03-05", "2025-03-09",
           ("Walnut cutting board", 1, 5400), ("Board oil, 250 ml", 1, 890)),
    _order("A-3003", "Greta Lindqvist", "2025-03-07", "2025-03-11",
           ("Wool blanket", 1, 7600)),
    # Orders of the eval suite (scenarios/refunds/eval_cases.yaml): a case that pays a refund
    # has an order of its own, since the payment service never pays an order twice.
    _order("A-2001", "Hugo Marchetti", "2025-02-28", "2025-03-04",
           ("Cast iron skillet, 26 cm", 1, 3990)),
    _order("A-2002", "Aiko Tanaka", "2025-03-05", "2025-03-08",
           ("Merino wool scarf", 1, 4500)),
    _order("A-2003", "Samuel Okafor", "2025-02-18", "2025-02-21",
           ("Bluetooth speaker", 1, 7999)),
    _order("A-2004", "Freya Lindqvist", "2025-03-01", "2025-03-05",
           ("Hiking backpack, 40 L", 1, 11900)),
    _order("A-2005", "Rafael Duarte", "2025-03-02", "2025-03-06",
           ("Stainless steel water bottle", 2, 2450)),
    _order("A-2006", "Noor Haddad", "2025-03-04", "2025-03-09",
           ("Yoga mat", 1, 3200), ("Yoga blocks, pair", 1, 1800)),
    _order("A-2007", "Ines Carvalho", "2025-03-07", "2025-03-11",
           ("Electric milk frother", 1, 2999)),
    _order("A-2008", "Oliver Brandt", "2025-02-27", "2025-03-03",
           ("Mechanical keyboard", 1, 10950)),
    _order("A-2009", "Chiara Bellini", "2025-03-03", "2025-03-07",
           ("Ceramic planter set", 1, 5400)),
    _order("A-2010", "Kwame Asante", "2025-02-24", "2025-02-27",
           ("Cordless drill", 1, 8900), ("Drill bit set", 1, 1499)),
    _order("A-2011", "Wei Zhang", "2025-03-04", "2025-03-08",
           ("Bamboo desk organiser", 1, 2750)),
    _order("A-2015", "Mateo Rossi", "2025-02-17", "2025-02-20",
           ("Pour-over coffee stand", 1, 3600)),
)  # fmt: skip


def find_order(order_id: str) -> OrderRecord | None:
    wanted = order_id.strip().upper()
    return next((order for order in ORDERS if order.order_id == wanted), None)


class ReasonCategory(StrEnum):
    DAMAGED = "damaged item"
    WRONG_ITEM = "wrong item"
    NOT_AS_DESCRIBED = "not as described"
    CHANGED_MIND = "changed mind"
    OTHER = "other"


_KEYWORDS: tuple[tuple[ReasonCategory, tuple[str, ...]], ...] = (
    (ReasonCategory.DAMAGED, ("damaged", "broken", "defective", "cracked", "faulty", "dented")),
    (ReasonCategory.WRONG_ITEM, ("wrong item", "wrong size", "wrong colour", "wrong color")),
    (ReasonCategory.NOT_AS_DESCRIBED, ("not as described", "different from", "misdescribed")),
    (ReasonCategory.CHANGED_MIND, ("changed their mind", "changed my mind", "no longer want")),
)

WINDOW_DAYS: dict[ReasonCategory, int] = {
    ReasonCategory.DAMAGED: 30,
    ReasonCategory.WRONG_ITEM: 30,
    ReasonCategory.NOT_AS_DESCRIBED: 30,
    ReasonCategory.CHANGED_MIND: 14,
    ReasonCategory.OTHER: 30,
}


def categorize(reason: str) -> ReasonCategory:
    text = reason.lower()
    for category, words in _KEYWORDS:
        if any(word in text for word in words):
            return category
    return ReasonCategory.OTHER


def money(cents: int) -> str:
    """`6480` -> `$64.80`; the one way amounts are written in this scenario."""
    return f"${cents // 100:,}.{cents % 100:02d}"
