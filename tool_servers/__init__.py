"""MCP servers as tool sources: their configuration (`config`), the worker's connections to them
(`sessions`, which loads the MCP SDK), and which servers serve which scenario (`sources`)."""
