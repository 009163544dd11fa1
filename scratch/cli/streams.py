"""CLI hooks (``Command.cli_input``) that hand a command its input stream: stdin for ingest
and tokens, and the progress bar a long ingest shows on a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

from scratch.calls import Call
from scratch.cli.common import Cleanup
from scratch.errors import UsageError

CHUNK = 1 << 20


def _progress() -> tuple[Any, Callable[[str, int, int | None], None] | None]:
    """A rich progress bar on stderr when stderr is a terminal, else None."""
    if not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn
    bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                   TransferSpeedColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task("reading", total=None)

    def update(stage: str, done: int, total: int | None) -> None:
        if not bar.live.is_started and done > (8 << 20):
            bar.start()
        bar.update(task, description=stage, completed=done, total=total)
    return bar, update


def with_progress(made: Call) -> Call | Cleanup:
    """``made`` with a progress bar on a terminal, stopped once it ran."""
    bar, update = _progress()
    if bar is None:
        return made
    return Cleanup(made.with_args(progress=update), bar.stop)


def ingest_stdin(ctx: Any, made: Call) -> Call | Cleanup:
    """``ingest``: the output is stdin, never a terminal."""
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no input: stdin is a terminal; pipe a tool's output into scratch "
                         "ingest", code="no_input")
    return with_progress(made.with_args(stream=sys.stdin.buffer))


def _stdin_chunks() -> Iterator[bytes]:
    stream = sys.stdin.buffer
    while block := stream.read(CHUNK):
        yield block


def tokens_stdin(ctx: Any, made: Call) -> Call:
    """``tokens``: FILE is read by the command; none (or '-') is stdin, never a terminal."""
    if made.args.get("source") not in (None, "-"):
        return made
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no input: stdin is a terminal; pipe data in or give a FILE",
                         code="no_input")
    args = {k: v for k, v in made.args.items() if k != "source"}
    return Call(made.command, {**args, "chunks": _stdin_chunks()})
