"""The charges the payment service holds for the demo shop: what it captured for each order and
what was refunded before this ledger began. The shop's own order records (the refunds
scenario's data) are another system; a test holds the two to agreeing."""

from __future__ import annotations

from payments.ledger import Charge

SHOP_CHARGES: tuple[Charge, ...] = (
    Charge("A-1001", 6480),
    Charge("A-1002", 12900),
    Charge("A-1003", 5900, refunded_before_cents=5900),
    Charge("A-1004", 18900),
    Charge("A-1005", 4448),
    Charge("A-2001", 3990),
    Charge("A-3001", 3200),
    Charge("A-3002", 6290),
    Charge("A-3003", 7600),
    Charge("A-2002", 4500),
    Charge("A-2003", 7999),
    Charge("A-2004", 11900),
    Charge("A-2005", 4900),
    Charge("A-2006", 5000),
    Charge("A-2007", 2999),
    Charge("A-2008", 10950),
    Charge("A-2009", 5400),
    Charge("A-2010", 10399),
    Charge("A-2011", 2750),
    Charge("A-2015", 3600),
)
