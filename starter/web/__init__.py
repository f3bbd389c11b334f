"""`harness web`: an ASGI app that serves runs' and sessions' events as Server-Sent Events, starts
goals, answers waits, and serves the progress page and the run report (docs/web.md)."""
