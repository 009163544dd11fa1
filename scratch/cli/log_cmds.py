"""`scratch log`: append-only logs with cursor pagination."""

from typing import Annotated, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.calls import call
from scratch.cli.common import NameArg, app, command, read_input
from scratch.cli.explore_opts import FitOpt

log_app = typer.Typer(name="log", help="Append-only logs: append, read with a cursor, tail.\n\n"
                      "Example: scratch log tail events -n 5",
                      no_args_is_help=True)
app.add_typer(log_app, name="log")


@command("append", target=log_app,
         help="Append ENTRY (or stdin) to log NAME as one entry; --lines appends each line.\n\n"
         "Entries that parse as JSON are stored as JSON values.\n\n"
         "Example: scratch log append events '{\"step\": 3, \"ok\": true}'")
def append_cmd(ctx: Context, name: NameArg,
               entry: Annotated[Optional[str], typer.Argument(
                   metavar="[ENTRY|-]", help="The entry text; stdin when omitted or '-'.",
                   show_default=False)] = None,
               lines: Annotated[bool, typer.Option(
                   "--lines", help="Append each non-empty stdin line as its own entry.")] = False):
    if entry is not None and entry != "-":
        raw = [entry.encode("utf-8", errors="surrogateescape")]
        if lines:
            raw = [line for line in raw[0].splitlines() if line.strip()]
    else:
        data = read_input(None, what="log entry")
        if lines:
            raw = [line.rstrip(b"\r") for line in data.split(b"\n") if line.strip()]
        else:
            raw = [data[:-1] if data.endswith(b"\n") else data]
    return call("log append", name=name, entries=raw)


@command("read", target=log_app,
         help="Entries of log NAME after the cursor --since, at most --limit; says has_more and "
         "next_since. Priced in tokens; refused over the per-call cap or the budget (--fit "
         "pages).\n\nExample: scratch log read events --since 100 --limit 50")
def read_cmd(ctx: Context, name: NameArg,
             since: Annotated[int, typer.Option("--since", metavar="ID",
                                                help="Return entries with id > ID.")] = 0,
             limit: Annotated[int, typer.Option("--limit", metavar="N",
                                                help="At most N entries.")] = 100,
             fit: FitOpt = False):
    return call("log read", name=name, since=since or None, limit=limit, fit=fit or None)


@command("tail", target=log_app, help="The last N entries of log NAME, priced in tokens; "
         "--fit pages them from the first, continuing with log read.\n\n"
         "Example: scratch log tail events -n 5")
def tail_cmd(ctx: Context, name: NameArg,
             n: Annotated[int, typer.Option("-n", metavar="N", help="How many entries.")] = 20,
             fit: FitOpt = False):
    return call("log tail", name=name, lines=n, fit=fit or None)
