"""The words every domain shares: plans, actors, errors, token usage, the redaction of
secrets, the fences around untrusted text and the one way to say what a model refused.

Imports nothing else of `harness`: every other sub-package may import it.
"""
