"""Shared plumbing for the worker, the CLI, tests and benchmarks: settings, client, logging."""
