"""CLI input hooks (registered in :func:`scratch.cli.generate.input_hooks`) that hand a command its
input stream: stdin for ingest and tokens (a long ingest shows its progress as every command does:
scratch.cli.common)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scratch.calls import Call
from scratch.errors import UsageError

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context

CHUNK = 1 << 20


def ingest_stdin(ctx: Context, made: Call) -> Call:
    """``ingest``: the output is stdin, never a terminal."""
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no input: stdin is a terminal; pipe a tool's output into scratch "
                         "ingest", code="no_input")
    return made.with_args(stream=sys.stdin.buffer)


def _stdin_chunks() -> Iterator[bytes]:
    stream = sys.stdin.buffer
    while block := stream.read(CHUNK):
        yield block


def tokens_stdin(ctx: Context, made: Call) -> Call:
    """``tokens``: FILE is read by the command; none (or '-') is stdin, never a terminal."""
    if made.args.get("source") not in (None, "-"):
        return made
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no input: stdin is a terminal; pipe data in or give a FILE",
                         code="no_input")
    args = {k: v for k, v in made.args.items() if k != "source"}
    return Call(made.command, {**args, "chunks": _stdin_chunks()})
