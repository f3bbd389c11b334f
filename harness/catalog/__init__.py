"""Tools: the catalog a planner may call, each tool's argument schema and role, how an MCP
server's tool becomes a catalog entry, and what a tool may ask of a language model.

May import `harness.core` only.
"""
