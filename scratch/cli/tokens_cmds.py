"""`scratch tokens` and `scratch budget`."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.calls import call
from scratch.cli.common import app, command, group_default

CHUNK = 1 << 20


def _chunks(source: Optional[str]):
    import sys

    from scratch.errors import UsageError

    if source in (None, "-"):
        if sys.stdin.isatty():
            raise UsageError("no input: stdin is a terminal; pipe data in or give a FILE",
                             code="no_input")
        stream = sys.stdin.buffer
        while block := stream.read(CHUNK):
            yield block
        return
    from scratch.spool import open_input
    with open_input(source) as fh:  # clear errors for a directory, a missing file, ...
        while block := fh.read(CHUNK):
            yield block


@command("tokens", help="Count the tokens of FILE or stdin for the agent's model (exact for "
         "OpenAI and Gemini tokenizers, an estimate for Claude).\n\n"
         "--truncate/--tail print the first/last N tokens' text; --split N cuts the input into "
         "chunks of at most N tokens at line ends (joined, they give the input back).\n\n"
         "Example: kubectl get pods -A -o json | scratch tokens --model gpt-4o")
def tokens_cmd(ctx: Context,
               source: Annotated[Optional[str], typer.Argument(
                   metavar="[FILE|-]", help="Input file; stdin when omitted or '-'.",
                   show_default=False)] = None,
               truncate: Annotated[Optional[int], typer.Option(
                   "--truncate", metavar="N", help="Print the text of the first N tokens.",
                   show_default=False)] = None,
               tail: Annotated[Optional[int], typer.Option(
                   "--tail", metavar="N", help="Print the text of the last N tokens.",
                   show_default=False)] = None,
               split: Annotated[Optional[int], typer.Option(
                   "--split", metavar="N", help="Cut into chunks of at most N tokens.",
                   show_default=False)] = None,
               split_dir: Annotated[Optional[Path], typer.Option(
                   "--split-dir", metavar="DIR", help="With --split: write chunk-00001.txt ... "
                   "into DIR instead of stdout.", show_default=False)] = None,
               delimiter: Annotated[str, typer.Option(
                   "--delimiter", metavar="TEXT", help="With --split to stdout: put TEXT "
                   "between chunks (default: the ASCII record separator, \\x1e).",
                   show_default=False)] = "\x1e",
               ids: Annotated[bool, typer.Option("--ids", help="Print the token ids.")] = False):
    return call("tokens", chunks=_chunks(source), truncate=truncate, tail=tail, split=split,
                split_dir=split_dir, delimiter=delimiter, ids=ids or None)


budget_app = typer.Typer(name="budget", help="The agent's context budget for this session: "
                         "show, reset, record used tokens, set the window.\n\n"
                         "Example: scratch budget --json")
app.add_typer(budget_app, name="budget")


def _show_budget(ctx: Context):
    return call("budget")


group_default(budget_app, "budget", _show_budget)


@command("reset", target=budget_app, help="Start the session's budget over at zero used.\n\n"
         "Example: scratch budget reset")
def budget_reset(ctx: Context):
    return call("budget reset")


@command("used", target=budget_app, help="Record N tokens the LLM reports as used: the estimate "
         "becomes max(current, N).\n\nExample: scratch budget used 48210")
def budget_used(ctx: Context, n: Annotated[int, typer.Argument(metavar="N", min=0,
                                                               help="Tokens used so far.")]):
    return call("budget used", tokens=n)


@command("set-window", target=budget_app, help="Set this session's context window to N tokens "
         "(0 returns to the model's window).\n\nExample: scratch budget set-window 200000")
def budget_set_window(ctx: Context, n: Annotated[int, typer.Argument(
        metavar="N", min=0, help="Window in tokens.")]):
    return call("budget set-window", tokens=n)
