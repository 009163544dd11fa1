"""item-schema, iterate-over and summarize: the items of an array, and summaries."""

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


@command("item-schema", aliases=("item_schema",),
         help="Union of the keys across the items of the array at PATH (nested keys dotted), "
         "with types and presence k/n; --offset/--limit look at a window.\n\n"
         "On a CSV/TSV entry PATH . is its rows.\n\n"
         "Example: scratch item-schema 1a2b items")
def item_schema_cmd(ctx: Context, ref: RefArg, path: PathArg, offset: OffsetOpt = 0,
                    limit: LimitOpt = None,
                    depth: Annotated[Optional[int], typer.Option(
                        "--depth", metavar="N", help="List keys down to N levels (all when "
                        "omitted).", show_default=False)] = None):
    return call("item-schema", ref=ref, path=path, offset=offset or None, limit=limit,
                depth=depth)

@command("iterate-over", aliases=("iterate_over",),
         help="One row per item of the array at PATH with the chosen --fields (missing fields "
         "null, long strings cut with the get-in command that shows them); --count and "
         "--count-by count them instead.\n\n"
         "--where takes an RFC 9535 filter such as \"@.status.phase == 'Failed'\" and scans "
         "every item: --offset/--limit page the matching rows (a negative --offset counts "
         "from the end), and the answer says how many of all the items match. --sort orders "
         "the rows by a field (numbers as numbers, nulls last).\n\n"
         "--count gives just the number of items (matching --where); --count-by FIELD[,FIELD] "
         "gives value counts, biggest first: --limit of them (10 unless given), the rest as "
         "'other', and the number of distinct values.\n\n"
         "On a CSV/TSV entry PATH . is its rows, keyed by column and typed as schema types the "
         "columns; on a parsed log, its records (one per line, fields named by the format); "
         "each with the _line it starts on.\n\n"
         "Example: scratch iterate-over 1a2b items --fields metadata.name,status.phase --limit "
         "20\n\n"
         "Example: scratch iterate-over access . --where '@.status == 404' --count-by path")
def iterate_over_cmd(ctx: Context, ref: RefArg, path: PathArg,
                     fields: Annotated[Optional[str], typer.Option(
                         "--fields", metavar="A,B.C", help="Comma-separated paths relative to "
                         "each item.", show_default=False)] = None,
                     offset: Annotated[int, typer.Option(
                         "--offset", metavar="N", help="Skip the first N rows (negative: start "
                         "N rows before the end).")] = 0,
                     limit: Annotated[Optional[int], typer.Option(
                         "--limit", metavar="N", help="At most N rows (with --count-by: N "
                         "values, default 10).", show_default=False)] = None,
                     where: Annotated[Optional[str], typer.Option(
                         "--where", metavar="EXPR", help="Keep items matching this RFC 9535 "
                         "filter (@ is the item).", show_default=False)] = None,
                     sort: Annotated[Optional[str], typer.Option(
                         "--sort", metavar="FIELD", help="Order the rows by FIELD (stable).",
                         show_default=False)] = None,
                     desc: Annotated[bool, typer.Option(
                         "--desc", help="With --sort: largest first (nulls still last).")
                     ] = False,
                     count: Annotated[bool, typer.Option(
                         "--count", help="Just the number of items (that match --where).")
                     ] = False,
                     count_by: Annotated[Optional[str], typer.Option(
                         "--count-by", metavar="FIELD[,FIELD]", help="Value counts of these "
                         "fields, biggest first.", show_default=False)] = None,
                     fit: FitOpt = False):
    return call("iterate-over", ref=ref, path=path,
                fields=fields.split(",") if fields else None, where=where, sort=sort,
                desc=desc or None, count=count or None,
                count_by=count_by.split(",") if count_by else None, offset=offset or None,
                limit=limit, fit=fit or None)

@command("summarize", help="A deterministic local summary of REF, cached per version.\n\n"
         "Format, size, outline, value counts of low-cardinality fields, numeric and time "
         "ranges, log levels and sample error lines; or, with summarize.command configured, "
         "that command's answer over the content in pieces.\n\n"
         "Example: scratch summarize 1a2b")
def summarize_cmd(ctx: Context, ref: RefArg):
    return call("summarize", ref=ref)
