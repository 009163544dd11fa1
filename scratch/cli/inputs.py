"""What a command line gives besides its words (a FILE, stdin) turned into core arguments.

Each hook is registered by command name in :func:`scratch.cli.generate.input_hooks` and called with
the context and the call the command line made; it returns the call to run. Limits and messages are
those of :func:`scratch.cli.common.read_input`: a terminal on stdin is refused, so is empty input
unless it may be empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.calls import Call
from scratch.cli.common import read_input

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def write_input(ctx: Context, c: Call) -> Call:
    """``write NAME [FILE|-]``: the content of FILE, or of stdin when none (or '-') is given,
    held to ``limits.max_write_bytes`` as it is read."""
    from scratch.store.names import validate_name

    args = dict(c.args)
    validate_name(str(args["name"]))  # a bad name is refused before stdin is read
    source = args.pop("source", None)
    data = read_input(None if source is None else str(source),
                      limit=ctx.config["limits.max_write_bytes"], what="content",
                      allow_empty=bool(args.get("allow_empty")))
    return Call(c.command, {**args, "content": data})


def log_append_input(ctx: Context, c: Call) -> Call:
    """``log append NAME [ENTRY|-]``: with no ENTRY (or '-'), stdin as one entry (its final
    newline left out), or with ``lines`` each of its non-empty lines as one."""
    entry = c.args.get("entry")
    if entry is not None and entry != "-":
        return c  # the core takes the entry as given (and its lines)
    data = read_input(None, what="log entry")
    if c.args.get("lines"):
        raw = [line.rstrip(b"\r") for line in data.split(b"\n") if line.strip()]
    else:
        raw = [data[:-1] if data.endswith(b"\n") else data]
    return Call(c.command, {"name": c.args["name"], "entries": raw})


def artifact_put_input(ctx: Context, c: Call) -> Call:
    """``artifact put RUN NAME [FILE|-]``: as ``write``'s, the run and the name checked before
    the input is read."""
    from scratch.runs import check_artifact_name
    from scratch.store.names import validate_run

    args = dict(c.args)
    validate_run(str(args["run"]))
    check_artifact_name(str(args["name"]))  # a bad name is refused before stdin is read
    source = args.pop("source", None)
    data = read_input(None if source is None else str(source),
                      limit=ctx.config["limits.max_write_bytes"], what="content",
                      allow_empty=bool(args.get("allow_empty")))
    return Call(c.command, {**args, "content": data})
