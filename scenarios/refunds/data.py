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


ORDERS: tuple[OrderRecord, ...] = (
    OrderRecord(
        order_id="A-1001",
        customer="Dana Whitfield",
        items=[
            OrderItem(name="Ceramic pour-over kettle", quantity=1, unit_price_cents=4990),
            OrderItem(name="Paper filters, 100 pack", quantity=2, unit_price_cents=745),
        ],
        ordered_on=date(2025, 3, 3),
        delivered_on=date(2025, 3, 7),
    ),
    OrderRecord(
        order_id="A-1002",
        customer="Marcus Oyelaran",
        items=[OrderItem(name="Wireless headphones", quantity=1, unit_price_cents=12900)],
        ordered_on=date(2025, 1, 2),
        delivered_on=date(2025, 1, 6),
    ),
    OrderRecord(
        order_id="A-1003",
        customer="Priya Raman",
        items=[OrderItem(name="Linen throw blanket", quantity=1, unit_price_cents=5900)],
        ordered_on=date(2025, 2, 26),
        delivered_on=date(2025, 3, 2),
        refunded_cents=5900,
        refunded_on=date(2025, 3, 5),
    ),
    OrderRecord(
        order_id="A-1004",
        customer="Tomás Ribeiro",
        items=[OrderItem(name="Burr espresso grinder", quantity=1, unit_price_cents=18900)],
        ordered_on=date(2025, 2, 25),
        delivered_on=date(2025, 3, 1),
        dispute=Dispute(
            case_id="CB-55102", opened_on=date(2025, 3, 9), reason="chargeback: item not received"
        ),
    ),
    OrderRecord(
        order_id="A-1005",
        customer="Lena Vogt",
        items=[
            OrderItem(name="Brass desk lamp", quantity=1, unit_price_cents=3450),
            OrderItem(name="LED bulb, warm white", quantity=2, unit_price_cents=499),
        ],
        ordered_on=date(2025, 3, 6),
        delivered_on=date(2025, 3, 10),
    ),
    # Orders of the docs' walkthroughs (docs/tasks.md): each walkthrough pays an order of its
    # own, so one told before it (the refund in docs/getting-started.md pays A-1001) cannot have
    # refunded it already.
    OrderRecord(
        order_id="A-3001",
        customer="Inès Laurent",
        items=[OrderItem(name="Stoneware mug set", quantity=1, unit_price_cents=3200)],
        ordered_on=date(2025, 3, 4),
        delivered_on=date(2025, 3, 8),
    ),
    OrderRecord(
        order_id="A-3002",
        customer="Kofi Mensah",
        items=[
            OrderItem(name="Walnut cutting board", quantity=1, unit_price_cents=5400),
            OrderItem(name="Board oil, 250 ml", quantity=1, unit_price_cents=890),
        ],
        ordered_on=date(2025, 3, 5),
        delivered_on=date(2025, 3, 9),
    ),
    OrderRecord(
        order_id="A-3003",
        customer="Greta Lindqvist",
        items=[OrderItem(name="Wool blanket", quantity=1, unit_price_cents=7600)],
        ordered_on=date(2025, 3, 7),
        delivered_on=date(2025, 3, 11),
    ),
    # Orders of the eval suite (scenarios/refunds/eval_cases.yaml): a case that pays a refund
    # has an order of its own, since the payment service never pays an order twice.
    OrderRecord(
        order_id="A-2001",
        customer="Hugo Marchetti",
        items=[
            OrderItem(name="Cast iron skillet, 26 cm", quantity=1, unit_price_cents=3990),
        ],
        ordered_on=date(2025, 2, 28),
        delivered_on=date(2025, 3, 4),
    ),
    OrderRecord(
        order_id="A-2002",
        customer="Aiko Tanaka",
        items=[
            OrderItem(name="Merino wool scarf", quantity=1, unit_price_cents=4500),
        ],
        ordered_on=date(2025, 3, 5),
        delivered_on=date(2025, 3, 8),
    ),
    OrderRecord(
        order_id="A-2003",
        customer="Samuel Okafor",
        items=[
            OrderItem(name="Bluetooth speaker", quantity=1, unit_price_cents=7999),
        ],
        ordered_on=date(2025, 2, 18),
        delivered_on=date(2025, 2, 21),
    ),
    OrderRecord(
        order_id="A-2004",
        customer="Freya Lindqvist",
        items=[
            OrderItem(name="Hiking backpack, 40 L", quantity=1, unit_price_cents=11900),
        ],
        ordered_on=date(2025, 3, 1),
        delivered_on=date(2025, 3, 5),
    ),
    OrderRecord(
        order_id="A-2005",
        customer="Rafael Duarte",
        items=[
            OrderItem(name="Stainless steel water bottle", quantity=2, unit_price_cents=2450),
        ],
        ordered_on=date(2025, 3, 2),
        delivered_on=date(2025, 3, 6),
    ),
    OrderRecord(
        order_id="A-2006",
        customer="Noor Haddad",
        items=[
            OrderItem(name="Yoga mat", quantity=1, unit_price_cents=3200),
            OrderItem(name="Yoga blocks, pair", quantity=1, unit_price_cents=1800),
        ],
        ordered_on=date(2025, 3, 4),
        delivered_on=date(2025, 3, 9),
    ),
    OrderRecord(
        order_id="A-2007",
        customer="Ines Carvalho",
        items=[
            OrderItem(name="Electric milk frother", quantity=1, unit_price_cents=2999),
        ],
        ordered_on=date(2025, 3, 7),
        delivered_on=date(2025, 3, 11),
    ),
    OrderRecord(
        order_id="A-2008",
        customer="Oliver Brandt",
        items=[
            OrderItem(name="Mechanical keyboard", quantity=1, unit_price_cents=10950),
        ],
        ordered_on=date(2025, 2, 27),
        delivered_on=date(2025, 3, 3),
    ),
    OrderRecord(
        order_id="A-2009",
        customer="Chiara Bellini",
        items=[
            OrderItem(name="Ceramic planter set", quantity=1, unit_price_cents=5400),
        ],
        ordered_on=date(2025, 3, 3),
        delivered_on=date(2025, 3, 7),
    ),
    OrderRecord(
        order_id="A-2010",
        customer="Kwame Asante",
        items=[
            OrderItem(name="Cordless drill", quantity=1, unit_price_cents=8900),
            OrderItem(name="Drill bit set", quantity=1, unit_price_cents=1499),
        ],
        ordered_on=date(2025, 2, 24),
        delivered_on=date(2025, 2, 27),
    ),
    OrderRecord(
        order_id="A-2011",
        customer="Wei Zhang",
        items=[
            OrderItem(name="Bamboo desk organiser", quantity=1, unit_price_cents=2750),
        ],
        ordered_on=date(2025, 3, 4),
        delivered_on=date(2025, 3, 8),
    ),
    OrderRecord(
        order_id="A-2015",
        customer="Mateo Rossi",
        items=[
            OrderItem(name="Pour-over coffee stand", quantity=1, unit_price_cents=3600),
        ],
        ordered_on=date(2025, 2, 17),
        delivered_on=date(2025, 2, 20),
    ),
)


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
