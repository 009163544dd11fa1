"""Capture: what every command that stores something runs on the way in.

:mod:`.ingest` stores a tool's output and hands back its pointer (the commands ``ingest`` and
``run``, the client hooks, the MCP proxy); :mod:`.redaction` redacts a capture before it is
stored (ingest, write, log append, artifact put); :mod:`.inputs` reads the file or stream a
write or an artifact put is given, bounded.
"""
