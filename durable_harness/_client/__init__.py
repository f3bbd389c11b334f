"""What the client (`durable_harness.client`) leans on, and the `harness` CLI with it: connecting,
starting and reading runs, deliveries and their signatures, tasks, replaying a run's history.
Internal: an application imports `durable_harness`, never these; they raise the public
`durable_harness.exceptions`."""
