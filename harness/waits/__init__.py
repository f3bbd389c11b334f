"""Durable waits: what a run waits for, the deliveries that answer it (approvals, answers,
results, reconciles, cancellation), signed actors, and how a person answers a wait.

May import `harness.core`, `harness.catalog` and `harness.governance` (a contract says which
tools need an approval), never the run.
"""
