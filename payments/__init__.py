"""The payment service: the external system the refunds scenario pays through.

It runs as its own process (`python -m payments`) with a durable SQLite ledger keyed by
idempotency key, an HTTP API (`api.py` has the wire models and the client the worker uses) and
callbacks that deliver each outcome to its run by the `deliver` signal through a Temporal client,
from an outbox in the same ledger, so an outcome is reported however often any process dies.
"""
