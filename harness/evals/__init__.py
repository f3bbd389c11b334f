"""Evals: the case format, the scoring of a run against its case, and the report with its
figures and baselines.

May import every other sub-package: nothing in `harness` imports it.
"""
