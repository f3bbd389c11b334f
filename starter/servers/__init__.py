"""What the CLI starts and leaves running: the embedded Temporal dev server, the codec
server for the Temporal UI, and the headless browser that screenshots the UI.

May import the modules at the top of `starter` (its errors), never `starter.cli`.
"""
