"""Client hooks: capture big tool results where agents already work.

- :mod:`scratch.hooks.run`: ``scratch hook CLIENT``, what a client's hook settings run after
  each tool call (the payload on stdin, the replacement on stdout, always exit 0).
- :mod:`scratch.hooks.clients`: each client's payload and replacement field (Claude Code,
  Gemini CLI, Cursor); :mod:`scratch.hooks.identity`: payload -> (agent, session, worker).
- :mod:`scratch.hooks.capture`: the stored path, through ``ingest`` (imported only then).
- :mod:`scratch.hooks.settings`: ``scratch hooks install/uninstall`` in the clients' files.

An interface like :mod:`scratch.cli` and :mod:`scratch.mcp`; it never imports the CLI (a shell
spelling of calls is handed in by the caller).
"""
