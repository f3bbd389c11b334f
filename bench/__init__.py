"""Benchmarks for issue 7: the harness against the critical path and naive baselines.

Run `python -m bench NAME` (skew, fanout, chain, runs, replay, all); see bench/README.md.
"""
