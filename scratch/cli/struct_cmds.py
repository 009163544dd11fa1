"""schema and get-in: the shape of an entry and the value at a path."""

from typing import Annotated, Optional

import typer

from scratch.answers.kernel.context import Context
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

@command("get-in", aliases=("get_in",), context_settings={"ignore_unknown_options": True},
         help="The value at PATH in REF (only that part is read). Strings page by line with "
         "--offset/--limit. A missing path says what exists instead.\n\n"
         "Negative indexes count from the end: -1, items.-1.metadata, $.items[-1]; so does a "
         "negative --offset (-20: the last 20 lines).\n\n"
         "--keys lists an object's keys with the type and size of each value (an array: its "
         "length and item types); --fields a,b.c keeps only those fields of each item of an "
         "array; --count gives the number of nodes a JSONPath query selects.\n\n"
         "Example: scratch get-in 1a2b items.0.metadata\n\n"
         "Example: scratch get-in 1a2b '$.items[?@.status.phase==\"Failed\"]' --fields "
         "metadata.name,status.reason")
def get_in_cmd(ctx: Context, ref: RefArg, path: PathArg, offset: OffsetOpt = 0,
               limit: LimitOpt = None,
               keys: Annotated[bool, typer.Option(
                   "--keys", help="The keys of the object (type and size of each value), or "
                   "the length and item types of the array.")] = False,
               fields: Annotated[Optional[str], typer.Option(
                   "--fields", metavar="A,B.C", help="Keep only these fields of each item.",
                   show_default=False)] = None,
               count: Annotated[bool, typer.Option(
                   "--count", help="Just the number of nodes PATH selects.")] = False,
               fit: FitOpt = False):
    if path.startswith("-") and not path[1:2].isdigit():  # -1, -2.name are paths
        from scratch.errors import UsageError
        raise UsageError(f"no such option: {path}", code="usage_error")
    return call("get-in", ref=ref, path=path, keys=keys or None,
                fields=fields.split(",") if fields else None, count=count or None,
                offset=offset or None, limit=limit, fit=fit or None)
