"""Scenario `refunds`: check an order, refund it after approval through the payment service (its
own process, `python -m payments`), which reports the outcome by callback, and report what was
refunded."""

from pathlib import Path

from payments.api import DEFAULT_URL, PaymentsClient
from scenarios.base import Environment, Pack
from scenarios.refunds.acceptance import ACCEPTANCE_CHECKS
from scenarios.refunds.check import check_refund_report, refunds_rubric
from scenarios.refunds.data import WINDOW_DAYS
from scenarios.refunds.outcome import refund_outcome
from scenarios.refunds.planning import plan_refund
from scenarios.refunds.tools import PAYMENTS, TOOLS

PAYMENTS_URL_VARIABLE = "HARNESS_PAYMENTS_URL"


def _services(environment: Environment) -> dict[str, object]:
    """The client of the payment service at $HARNESS_PAYMENTS_URL (default on localhost)."""
    return {PAYMENTS: PaymentsClient(environment.get(PAYMENTS_URL_VARIABLE) or DEFAULT_URL)}


SCENARIO = Pack(
    name="refunds",
    eval_cases=Path(__file__).parent / "eval_cases.yaml",
    description="Refund an order after policy and dispute checks and a person's approval; the "
    "payment service reports the outcome later, and a refund is never paid twice.",
    example_goal="Refund order A-1001, the customer received a damaged item",
    tools=TOOLS,
    check=check_refund_report,
    offline_plan=plan_refund,
    rubric=refunds_rubric,
    services=_services,
    acceptance_checks=ACCEPTANCE_CHECKS,
    outcome_check=refund_outcome,
    facts=(
        *(
            f"A refund for the reason '{reason.value}' may be asked within {days} days of delivery."
            for reason, days in WINDOW_DAYS.items()
        ),
        "An order under dispute is not refunded here: the dispute process decides it.",
        "A refund is paid at most once: the payment service answers a request sent again "
        "with its idempotency key with the payment it already made.",
    ),
)
