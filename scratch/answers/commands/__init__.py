"""One module per command of the answers layer, named after it, each declaring ``COMMAND``.

``get-in`` is :mod:`.get_in`, ``log read`` is :mod:`.log_read`: a reader looking for a command
finds it by its name, and :mod:`scratch.answers.kernel.catalogue` finds every command by listing
this folder. The help of a group that is no command itself is here.
"""

GROUPS: dict[str, str] = {
    "artifact": "The artifacts of a run: put one, list them, read one in place (whole when it "
                "fits, else a pointer read commands explore as artifact:RUN/NAME).\n\n"
                "Example: scratch artifact ls r1",
    "log": "Append-only logs: append, read with a cursor, tail.\n\n"
           "Example: scratch log tail events -n 5",
    "remote": "The git remotes this store syncs with (a bare repository's path, ssh://, "
              "user@host:path, https://).\n\nExample: scratch remote add origin /srv/scratch.git",
}
