"""Early deliveries parked by sender: a sender is one identity however its name is spelt, so
junk under many spellings of one name is one lot (harness.waits.wait_book,
DeliveryRules.senders_by_identity)."""

from __future__ import annotations

import itertools

from harness.waits.wait_book import MAX_PARKED, Delivery, DeliveryRules, WaitBook, WaitKind
from tests.factories import START
from tests.harness.test_wait_book import handed_over_to, operation_result


def spellings(name: str, count: int) -> list[str]:
    """`count` spellings of `system:NAME` that differ only in letter case."""
    cases = itertools.product(*((c.lower(), c.upper()) for c in f"system:{name}"))
    return ["".join(letters) for letters in itertools.islice(cases, count)]


def junk_under_many_spellings(rules: DeliveryRules) -> WaitBook:
    book = WaitBook()
    real = operation_result("run-1:job:x", {"rows": 3}, actor="system:payments")
    assert book.deliver(real, START, rules).accepted
    for number, actor in enumerate(spellings("junkjunk", MAX_PARKED * 2)):
        junk = Delivery(operation_id=f"junk-{number}", kind=WaitKind.ASYNC_OPERATION, actor=actor)
        book.deliver(junk, START, rules)
    return book


def test_junk_under_a_hundred_spellings_of_one_name_evicted_a_real_result_by_sender() -> None:
    """The bypass of 0.10's lots, kept for the runs that started on them."""
    book = junk_under_many_spellings(DeliveryRules(senders_by_identity=False))

    assert handed_over_to(book, "run-1:job:x") is None


def test_junk_under_many_spellings_of_one_name_cannot_evict_a_real_early_result() -> None:
    book = junk_under_many_spellings(DeliveryRules(senders_by_identity=True))

    assert handed_over_to(book, "run-1:job:x") == {"rows": 3}
