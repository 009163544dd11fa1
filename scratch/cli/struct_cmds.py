"""schema and get-in: the shape of an entry and the value at a path."""

from typing import Annotated

import typer

from scratch.answers.context import Context
from scratch.calls import call
from scratch.cli.common import RefArg, command
from scratch.cli.explore_opts import (
    FitOpt,
    LimitOpt,
    OffsetOpt,
    PathArg,
)


@command("schema", help="The shape of REF: JSON/YAML/NDJSON paths with types, lengths and line "
         "ranges; CSV columns; log format, levels and time range; markdown headings.\n\n"
         "Example: scratch schema 1a2b --depth 3")
def schema_cmd(ctx: Context, ref: RefArg,
               depth: Annotated[int, typer.Option("--depth", metavar="N",
                                                  help="How many path levels.")] = 4):
    return call("schema", ref=ref, depth=None if depth == 4 else depth)

@command("get-in", aliases=("get_in",),
         help="The value at PATH in REF (only that part is read). Strings page by line with "
         "--offset/--limit. A missing path says what exists instead.\n\n"
         "Example: scratch get-in 1a2b items.0.metadata")
def get_in_cmd(ctx: Context, ref: RefArg, path: PathArg, offset: OffsetOpt = 0,
               limit: LimitOpt = None, fit: FitOpt = False):
    return call("get-in", ref=ref, path=path, offset=offset or None, limit=limit,
                fit=fit or None)
