"""MCP servers as tool sources: their configuration (`config`), the worker's connections to them
(`sessions`, which loads the MCP SDK) and what a call's result means (`results`). Which servers
serve which scenario is the worker's to say: activities/mcp_hub.py."""
