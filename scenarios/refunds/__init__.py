"""Scenario `refunds`: check an order, refund it after approval through a payment service that
calls back, and report what was refunded."""

from scenarios.base import DeliverResult, Scenario
from scenarios.refunds.check import check_refund_report, refunds_rubric
from scenarios.refunds.payments import FakePaymentService
from scenarios.refunds.planning import plan_refund
from scenarios.refunds.tools import PAYMENTS, TOOLS


def _services(deliver: DeliverResult) -> dict[str, object]:
    """The fake payment service, which reports each outcome to its run through `deliver`."""
    return {PAYMENTS: FakePaymentService(deliver)}


SCENARIO = Scenario(
    name="refunds",
    description="Refund an order after policy and dispute checks and a person's approval; the "
    "payment service reports the outcome later, and a refund is never paid twice.",
    example_goal="Refund order A-1001, the customer received a damaged item",
    tools=TOOLS,
    check=check_refund_report,
    offline_plan=plan_refund,
    rubric=refunds_rubric,
    services=_services,
)
