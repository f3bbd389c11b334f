"""The run: what a caller asks and what a run reports, its state and phases, plan binding
and validation, DAG bookkeeping and the node ledger, budget, recovery, trace, bounds, the
messages between the workflow and its activities, and the episode a finished run leaves.

May import every sub-package but `harness.evals`.
"""
