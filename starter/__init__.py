"""The `harness` CLI and the servers it starts. The Python API it shares is the public package
`durable_harness` (`durable_harness.Harness`, and the internal modules under it in
`durable_harness._client`).

- `starter.cli`: parsers, handlers and output of each command (`starter.cli:main`).
- `starter.servers`: the embedded dev server, the codec server, the UI screenshot.
- `starter.pages`: the run report's and the eval report's pages and charts.
- `starter.web`: `harness web`, runs' and sessions' events as Server-Sent Events, and its page.
- the modules at this level: what the CLI alone uses of the rest: its errors and exit codes
  (`starter.errors`), its output (`starter.output`), plan and scenario files
  (`starter.plan_files`).

Imports run one way: `starter.cli` may import the others; `starter.servers` only the modules at
this level; `starter.web` those and `starter.pages`; `starter.pages` nothing of `starter`; the
modules at this level none of the four.
Any of them may import `durable_harness`; nothing under `durable_harness` imports `starter`.
"""
