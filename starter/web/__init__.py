"""`harness web`: an ASGI app that serves runs' and sessions' events as Server-Sent Events, starts
goals, answers waits, and serves the progress page and the run report (docs/web.md).

May import `starter.pages` and the modules at the top of `starter`; talks to Temporal through
the public package (`durable_harness.Harness`), as the CLI does."""
