"""Exploration commands: head, tail, slice, grep, schema, get-in, read (priced, budgeted)."""

import sys
from typing import Annotated, Optional

import typer

from scratch.cli.common import RefArg, command
from scratch.context import Context

FitOpt = Annotated[bool, typer.Option(
    "--fit", help="Return the largest part that fits the cap and budget, plus 'next': the "
    "command that continues.")]
NoNumbersOpt = Annotated[bool, typer.Option("--no-numbers", help="Print raw lines without "
                                            "line numbers.")]
LinesOpt = Annotated[int, typer.Option("-n", "--lines", metavar="N", help="How many lines.")]
OffsetOpt = Annotated[int, typer.Option("--offset", metavar="N", help="Skip the first N lines "
                                        "(or items) of the answer.")]
LimitOpt = Annotated[Optional[int], typer.Option("--limit", metavar="N", help="At most N lines "
                                                 "(or items).", show_default=False)]
PathArg = Annotated[str, typer.Argument(
    metavar="PATH", help="Dot path (items.0.metadata.name), JSON Pointer (/items/0) or "
    "JSONPath ($.items[?@.status.phase=='Failed']).", show_default=False)]


@command("head", help="The first N lines of REF, numbered, priced in tokens.\n\n"
         "Example: scratch head kubectl_get/20261130T071502Z-1a2b3c4d -n 20")
def head_cmd(ctx: Context, ref: RefArg, n: LinesOpt = 50, no_numbers: NoNumbersOpt = False,
             fit: FitOpt = False):
    from scratch.explore.lines import head
    return head(ctx, ref, n, numbers=not no_numbers, fit=fit)


@command("tail", help="The last N lines of REF (errors are usually at the end).\n\n"
         "Example: scratch tail app-log -n 40")
def tail_cmd(ctx: Context, ref: RefArg, n: LinesOpt = 50, no_numbers: NoNumbersOpt = False,
             fit: FitOpt = False):
    from scratch.explore.lines import tail
    return tail(ctx, ref, n, numbers=not no_numbers, fit=fit)


@command("slice", help="Lines START to END of REF (1-indexed, inclusive).\n\n"
         "Example: scratch slice 1a2b 120 180")
def slice_cmd(ctx: Context, ref: RefArg,
              start: Annotated[int, typer.Argument(metavar="START", help="First line (>= 1).")],
              end: Annotated[int, typer.Argument(metavar="END", help="Last line (>= START).")],
              no_numbers: NoNumbersOpt = False, fit: FitOpt = False):
    from scratch.explore.lines import slice_
    return slice_(ctx, ref, start, end, numbers=not no_numbers, fit=fit)


@command("grep", help="Lines of REF matching PATTERN (linear-time regex engine), with context; "
         "matches 'N:', context 'N-', regions separated by '--'. With --all, search every entry "
         "of the agent (then the first argument is the PATTERN).\n\n"
         "Example: scratch grep app-log 'error|timeout' -i -C 2 -m 20")
def grep_cmd(ctx: Context, ref: RefArg,
             pattern: Annotated[Optional[str], typer.Argument(
                 metavar="PATTERN", help="Regular expression (RE2 syntax) or, with -F, text.",
                 show_default=False)] = None,
             context: Annotated[int, typer.Option("-C", "--context", metavar="N",
                                                  help="Lines of context.")] = 0,
             ignore_case: Annotated[bool, typer.Option("-i", "--ignore-case",
                                                       help="Ignore case.")] = False,
             fixed: Annotated[bool, typer.Option("-F", "--fixed-strings",
                                                 help="PATTERN is plain text.")] = False,
             max_count: Annotated[Optional[int], typer.Option(
                 "-m", "--max-count", metavar="MAX", help="Stop after MAX matching lines.",
                 show_default=False)] = None,
             invert: Annotated[bool, typer.Option("-v", "--invert-match",
                                                  help="Select non-matching lines.")] = False,
             all_entries: Annotated[bool, typer.Option("--all", help="Search every entry of "
                                                       "the agent.")] = False,
             from_line: Annotated[int, typer.Option("--from-line", metavar="N",
                                                    help="Start searching at line N.")] = 1,
             fit: FitOpt = False):
    from scratch.errors import UsageError
    from scratch.explore.grep import grep, grep_all
    if all_entries:
        if pattern is not None:
            raise UsageError("with --all give only PATTERN", code="invalid_argument")
        return grep_all(ctx, ref, context=context, ignore_case=ignore_case, fixed=fixed,
                        max_count=max_count, invert=invert)
    if pattern is None:
        raise UsageError("missing PATTERN: scratch grep REF PATTERN", code="invalid_argument")
    return grep(ctx, ref, pattern, context=context, ignore_case=ignore_case, fixed=fixed,
                max_count=max_count, invert=invert, fit=fit, from_line=from_line)


@command("schema", help="The shape of REF: JSON/YAML/NDJSON paths with types, lengths and line "
         "ranges; CSV columns; log format, levels and time range; markdown headings.\n\n"
         "Example: scratch schema 1a2b --depth 3")
def schema_cmd(ctx: Context, ref: RefArg,
               depth: Annotated[int, typer.Option("--depth", metavar="N",
                                                  help="How many path levels.")] = 4):
    from scratch.explore.structure import schema
    return schema(ctx, ref, depth)


@command("get-in", aliases=("get_in",),
         help="The value at PATH in REF (only that part is read). Strings page by line with "
         "--offset/--limit. A missing path says what exists instead.\n\n"
         "Example: scratch get-in 1a2b items.0.metadata")
def get_in_cmd(ctx: Context, ref: RefArg, path: PathArg, offset: OffsetOpt = 0,
               limit: LimitOpt = None, fit: FitOpt = False):
    from scratch.explore.structure import get_in
    return get_in(ctx, ref, path, offset=offset, limit=limit, fit=fit)


@command("read", help="The whole content of REF (NAME or NAME@N) if it fits the per-call cap and "
         "budget, or with --since-version N what changed since version N as a compact diff.\n\n"
         "Binary content is not printed to a terminal unless --raw.\n\n"
         "Example: scratch read notes/plan.md --since-version 2")
def read_cmd(ctx: Context, ref: RefArg,
             since_version: Annotated[Optional[int], typer.Option(
                 "--since-version", metavar="N", help="Show only what changed since version N.",
                 show_default=False)] = None,
             context: Annotated[int, typer.Option("-U", "--unified", metavar="N",
                                                  help="Context lines in the diff.")] = 3,
             raw: Annotated[bool, typer.Option("--raw", help="Print binary content even to a "
                                                "terminal.")] = False,
             fit: FitOpt = False):
    from scratch.explore.read import read, read_since
    if since_version is not None:
        return read_since(ctx, ref, since_version, context)
    return read(ctx, ref, raw=raw, is_terminal=sys.stdout.isatty(), fit=fit)


FieldsOpt = Annotated[str, typer.Option(
    "--fields", metavar="A,B.C", help="Comma-separated paths relative to each item.",
    show_default=False)]


@command("item-schema", aliases=("item_schema",),
         help="Union of the keys across the items of the array at PATH (nested keys dotted), "
         "with types and presence k/n; --offset/--limit look at a window.\n\n"
         "Example: scratch item-schema 1a2b items")
def item_schema_cmd(ctx: Context, ref: RefArg, path: PathArg, offset: OffsetOpt = 0,
                    limit: LimitOpt = None):
    from scratch.explore.items import item_schema
    return item_schema(ctx, ref, path, offset=offset, limit=limit)


@command("iterate-over", aliases=("iterate_over",),
         help="One row per item of the array at PATH with the chosen --fields (missing fields "
         "null, long strings cut with the get-in command that shows them). --where takes an "
         "RFC 9535 filter such as \"@.status.phase == 'Failed'\".\n\n"
         "Example: scratch iterate-over 1a2b items --fields metadata.name,status.phase --limit 20")
def iterate_over_cmd(ctx: Context, ref: RefArg, path: PathArg, fields: FieldsOpt,
                     offset: OffsetOpt = 0, limit: LimitOpt = None,
                     where: Annotated[Optional[str], typer.Option(
                         "--where", metavar="EXPR", help="Keep items matching this RFC 9535 "
                         "filter (@ is the item).", show_default=False)] = None,
                     fit: FitOpt = False):
    from scratch.explore.items import iterate_over
    return iterate_over(ctx, ref, path, fields, offset=offset, limit=limit, where=where, fit=fit)


@command("summarize", help="A deterministic local summary of REF, cached per version.\n\n"
         "Format, size, outline, value counts of low-cardinality fields, numeric and time "
         "ranges, log levels and sample error lines; or, with summarize.command configured, "
         "that command's answer over the content in pieces.\n\n"
         "Example: scratch summarize 1a2b")
def summarize_cmd(ctx: Context, ref: RefArg):
    from scratch.explore.summarize import summarize
    return summarize(ctx, ref)
