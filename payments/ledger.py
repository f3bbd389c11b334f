"""The payment service's durable ledger: SQLite, one row per idempotency key.

Every write is one `BEGIN IMMEDIATE` transaction, so any number of threads and processes on the
same file see one order of events: a key is paid once, and no charge is refunded past what was
captured. The same file is the callback outbox: a settled payment stays `reported = 0` until
its outcome has reached the run.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from payments.api import (
    KEY_REUSED,
    KEY_VOIDED,
    OVER_REFUND,
    UNKNOWN_CHARGE,
    KeyReuseError,
    OverRefundError,
    Payment,
    PaymentsError,
    PaymentStatus,
    RefundAccepted,
    RefundOrder,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS charges (
    order_id TEXT PRIMARY KEY,
    captured_cents INTEGER NOT NULL,
    refunded_before_cents INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS payments (
    operation_id TEXT PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    run_id TEXT NOT NULL,
    order_id TEXT NOT NULL REFERENCES charges(order_id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    settle_after REAL NOT NULL,
    settled_at TEXT,
    reason TEXT,
    reported INTEGER NOT NULL DEFAULT 0,
    report_after REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS voided_keys (
    idempotency_key TEXT PRIMARY KEY,
    voided_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_by_order ON payments(order_id);
CREATE INDEX IF NOT EXISTS payments_outbox ON payments(reported, status);
"""
_COLUMNS = (
    "operation_id, idempotency_key, run_id, order_id, amount_cents, status, created_at, "
    "settled_at, reason"
)


@dataclass(frozen=True)
class Charge:
    """Money the shop captured for an order, and what was refunded before this ledger began."""

    order_id: str
    captured_cents: int
    refunded_before_cents: int = 0


class PaymentLedger:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connection() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)

    def seed(self, charges: Iterable[Charge]) -> None:
        """Record captured charges; charges already on file are kept as they are."""
        with self._transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO charges VALUES (?, ?, ?)",
                [(c.order_id, c.captured_cents, c.refunded_before_cents) for c in charges],
            )

    def refund(self, order: RefundOrder, settle_after: float) -> RefundAccepted:
        """Pay `order` once per key. The same key with the same run, order and amount returns
        the first payment (`created` false); with another run, order or amount it is refused: a
        key is bound to what it first paid, so no one can take over another run's payment."""
        with self._transaction() as db:
            if _voided(db, order.idempotency_key):
                raise PaymentsError(
                    KEY_VOIDED,
                    f"idempotency key '{order.idempotency_key}' was voided: its caller was told "
                    "nothing was paid under it, so nothing will be",
                )
            existing = _one(db, "WHERE idempotency_key = ?", order.idempotency_key)
            if existing is not None:
                if (existing.run_id, existing.order_id, existing.amount_cents) != (
                    order.run_id,
                    order.order_id,
                    order.amount_cents,
                ):
                    raise KeyReuseError(
                        KEY_REUSED,
                        f"idempotency key '{order.idempotency_key}' was used for "
                        f"{existing.amount_cents} cents on order {existing.order_id} by another "
                        "request; a different refund needs a new key",
                    )
                return RefundAccepted(payment=existing, created=False)
            left = _refundable(db, order.order_id)
            if order.amount_cents > left:
                raise OverRefundError(
                    OVER_REFUND,
                    f"a refund of {order.amount_cents} cents exceeds the {left} cents left of "
                    f"the charge for order {order.order_id}; nothing was paid",
                )
            payment = Payment(
                operation_id=f"pay-{uuid.uuid4().hex[:12]}",
                idempotency_key=order.idempotency_key,
                run_id=order.run_id,
                order_id=order.order_id,
                amount_cents=order.amount_cents,
                status=PaymentStatus.PENDING,
                created_at=datetime.now(UTC),
            )
            db.execute(
                "INSERT INTO payments (operation_id, idempotency_key, run_id, order_id, "
                "amount_cents, status, created_at, settle_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    payment.operation_id,
                    payment.idempotency_key,
                    payment.run_id,
                    payment.order_id,
                    payment.amount_cents,
                    payment.status.value,
                    payment.created_at.isoformat(),
                    settle_after,
                ),
            )
            return RefundAccepted(payment=payment, created=True)

    def payment(self, operation_id: str) -> Payment | None:
        with self._connection() as db:
            return _one(db, "WHERE operation_id = ?", operation_id)

    def payment_by_key(self, idempotency_key: str) -> Payment | None:
        with self._connection() as db:
            return _one(db, "WHERE idempotency_key = ?", idempotency_key)

    def void_unpaid(self, idempotency_key: str) -> Payment | None:
        """The payment under the key; if there is none, the key is voided in the same
        transaction, so a request still on its way can never pay under it later (the caller is
        about to conclude that nothing was paid)."""
        with self._transaction() as db:
            payment = _one(db, "WHERE idempotency_key = ?", idempotency_key)
            if payment is None:
                db.execute(
                    "INSERT OR IGNORE INTO voided_keys VALUES (?, ?)", (idempotency_key, _now())
                )
            return payment

    def payments(self, order_id: str | None = None) -> list[Payment]:
        with self._connection() as db:
            if order_id is None:
                return _many(db, "ORDER BY created_at")
            return _many(db, "WHERE order_id = ? ORDER BY created_at", order_id)

    def settle_due(self, now: float) -> int:
        """Settle every pending payment whose time has come; how many were settled."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE payments SET status = ?, settled_at = ? "
                "WHERE status = ? AND settle_after <= ?",
                (PaymentStatus.PAID.value, _now(), PaymentStatus.PENDING.value, now),
            )
            return cursor.rowcount

    def unreported(self, now: float, limit: int = 100) -> list[Payment]:
        """Settled payments whose outcome has not reached their run yet (the outbox)."""
        with self._connection() as db:
            return _many(
                db,
                "WHERE reported = 0 AND status != ? AND report_after <= ? "
                "ORDER BY created_at LIMIT ?",
                PaymentStatus.PENDING.value,
                now,
                limit,
            )

    def mark_reported(self, operation_id: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE payments SET reported = 1 WHERE operation_id = ?", (operation_id,))

    def report_later(self, operation_id: str, after: float) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE payments SET report_after = ? WHERE operation_id = ?",
                (after, operation_id),
            )

    def report_again(self, operation_id: str) -> None:
        """The caller asked again for a payment it made: it may have lost the first report."""
        with self._transaction() as db:
            db.execute(
                "UPDATE payments SET reported = 0, report_after = 0 WHERE operation_id = ?",
                (operation_id,),
            )

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout = 30000")
            yield db
        finally:
            db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")


def _voided(db: sqlite3.Connection, idempotency_key: str) -> bool:
    found = db.execute(
        "SELECT 1 FROM voided_keys WHERE idempotency_key = ?", (idempotency_key,)
    ).fetchone()
    return found is not None


def _refundable(db: sqlite3.Connection, order_id: str) -> int:
    charge = db.execute(
        "SELECT captured_cents, refunded_before_cents FROM charges WHERE order_id = ?",
        (order_id,),
    ).fetchone()
    if charge is None:
        raise PaymentsError(UNKNOWN_CHARGE, f"no captured charge for order '{order_id}'")
    (refunded,) = db.execute(
        "SELECT COALESCE(SUM(amount_cents), 0) FROM payments WHERE order_id = ? AND status != ?",
        (order_id, PaymentStatus.FAILED.value),
    ).fetchone()
    return int(charge[0]) - int(charge[1]) - int(refunded)


def _one(db: sqlite3.Connection, where: str, *values: object) -> Payment | None:
    found = _many(db, where, *values)
    return found[0] if found else None


def _many(db: sqlite3.Connection, clause: str, *values: object) -> list[Payment]:
    rows = db.execute(f"SELECT {_COLUMNS} FROM payments {clause}", values).fetchall()
    return [
        Payment(
            operation_id=row[0],
            idempotency_key=row[1],
            run_id=row[2],
            order_id=row[3],
            amount_cents=row[4],
            status=PaymentStatus(row[5]),
            created_at=datetime.fromisoformat(row[6]),
            settled_at=datetime.fromisoformat(row[7]) if row[7] else None,
            reason=row[8],
        )
        for row in rows
    ]


def _now() -> str:
    return datetime.now(UTC).isoformat()
