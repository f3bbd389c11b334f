"""The `harness` CLI, the servers it starts, and the Python API.

- `starter.cli`: parsers, handlers and output of each command (`starter.cli:main`).
- `starter.servers`: the embedded dev server, the codec server, the UI screenshot.
- `starter.pages`: the run report's and the eval report's pages and charts.
- the modules at this level: the Python API (`starter.api`) and what it leans on, which the CLI
  shares; they move together to the public package in a later issue.

Imports run one way: `starter.cli` may import the others; `starter.servers` only the modules at
this level; `starter.pages` nothing of `starter`; the modules at this level none of the three.
"""
