"""`scratch ingest` and `scratch run`: the main job."""

import sys
from typing import Annotated, List, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.calls import call
from scratch.cli.argv import rewrite_run_argv  # noqa: F401  (kept importable here)
from scratch.cli.common import command

ToolOpt = Annotated[Optional[str], typer.Option(
    "--tool", metavar="TOOL", help="Tool name: picks the [thresholds] entry and the automatic "
    "name's folder.", show_default=False)]
FormatOpt = Annotated[Optional[str], typer.Option(
    "--format", metavar="F", help="Declare the format (json, ndjson, yaml, csv, tsv, markdown, "
    "log, text) instead of detecting it.", show_default=False)]
RawOpt = Annotated[bool, typer.Option("--raw", help="Keep JSON bytes as received instead of "
                                      "pretty-printing.")]
AlwaysOpt = Annotated[bool, typer.Option("--store-always", help="Store even below the "
                                         "threshold.")]
NameOpt = Annotated[Optional[str], typer.Argument(
    metavar="[NAME]", help="Entry name (default: TOOL/<UTC time>-<hash>).", show_default=False)]


def _progress():
    """A rich progress bar on stderr when stderr is a terminal, else None."""
    if not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn
    bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                   TransferSpeedColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task("reading", total=None)

    def update(stage: str, done: int, total: Optional[int]) -> None:
        if not bar.live.is_started and done > (8 << 20):
            bar.start()
        bar.update(task, description=stage, completed=done, total=total)
    return bar, update


def _with_progress(c):
    """``c`` with a progress bar on a terminal, stopped once it ran."""
    from scratch.cli.common import Cleanup
    bar, update = _progress()
    if bar is None:
        return c
    return Cleanup(c.with_args(progress=update), bar.stop)


@command("ingest", help="Read a tool's output on stdin: below the tool's threshold pass it "
         "through untouched; above it store and index it and print a pointer (format, size in "
         "tokens, schema outline, samples, next commands).\n\n"
         "Example: kubectl get pods -A -o json | scratch ingest --tool kubectl_get_pods")
def ingest_cmd(ctx: Context, name: NameOpt = None, tool: ToolOpt = None,
               format: FormatOpt = None, raw: RawOpt = False, store_always: AlwaysOpt = False):
    from scratch.errors import UsageError
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no input: stdin is a terminal; pipe a tool's output into scratch "
                         "ingest", code="no_input")
    return _with_progress(call("ingest", stream=sys.stdin.buffer, name=name, tool=tool,
                               format=format, raw=raw or None,
                               store_always=store_always or None))


@command("run", help="Run CMD, pass its stderr through, treat its stdout like 'ingest', and exit "
         "with its exit code. Output of a command that fails or is killed is kept and flagged "
         "partial.\n\nOn Ctrl-C or SIGTERM to scratch itself the signal is passed on to CMD (a "
         "second one kills it); what arrived is kept and flagged partial, and scratch exits "
         "with 128 + the signal's number. A CMD that is not found exits 127, one that cannot "
         "be executed 126, as in a shell.\n\nTOOL defaults to the program and its first "
         "non-option word (kubectl_get).\n\nExample: scratch run -- kubectl get pods -A -o json",
         context_settings={"allow_interspersed_args": False})
def run_cmd(ctx: Context,
            command_words: Annotated[List[str], typer.Argument(
                metavar="[NAME] -- CMD [ARGS]...", help="Optional entry name, then the command "
                "after --.", show_default=False)],
            tool: ToolOpt = None, format: FormatOpt = None, raw: RawOpt = False,
            store_always: AlwaysOpt = False,
            name: Annotated[Optional[str], typer.Option(
                "--name", metavar="NAME", help="Entry name (same as NAME before --).",
                show_default=False)] = None):
    return _with_progress(call("run", words=command_words, name=name, tool=tool,
                               format=format, raw=raw or None,
                               store_always=store_always or None))
