"""The workflow's calls to its activities, by contract: a fixed name, a request model in and a
result model out. Nothing here imports the activities themselves, so loading the workflows
loads no LLM SDK, no scenario data and no telemetry.

One module per job:
- `placement`: where a call runs (a local activity in the run's own worker, a regular one on
  the run's queue, or the LLM queue for model calls) and how a local activity's failure reaches
  its caller;
- `failures`: what a failed call tells the workflow (its code, message and attempts);
- `stores`: the harness's own stores: the scope's contract and work context, memory;
- `steps`: the run's steps: its catalog, its plan and the plan's validation, the report's check
  and judge, cancelling itself through Temporal;
- `tools`: a node's tool call, cheap calls in groups, their retries, timeouts and summaries.
"""
