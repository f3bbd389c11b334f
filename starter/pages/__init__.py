"""The pages and charts `harness report` and `harness eval` write: plain HTML and PNG, no server.

Imports nothing else of `starter`.
"""
