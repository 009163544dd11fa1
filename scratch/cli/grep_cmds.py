"""grep: matching lines of one entry or of all of them, priced and budgeted."""

from typing import Annotated, Optional

import typer

from scratch.cli.common import RefArg, command
from scratch.cli.explore_opts import FitOpt
from scratch.context import Context


@command("grep", help="Lines of REF matching PATTERN (linear-time regex engine), with context; "
         "matches 'N:', context 'N-', regions with context separated by '--'. With --all, search "
         "every entry of the agent (then the first argument is the PATTERN).\n\n"
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
        if fit or from_line != 1:
            raise UsageError("--fit and --from-line work on one entry, not with --all; narrow "
                             "with -m or grep one entry", code="invalid_argument")
        return grep_all(ctx, ref, context=context, ignore_case=ignore_case, fixed=fixed,
                        max_count=max_count, invert=invert)
    if pattern is None:
        raise UsageError("missing PATTERN: scratch grep REF PATTERN", code="invalid_argument")
    return grep(ctx, ref, pattern, context=context, ignore_case=ignore_case, fixed=fixed,
                max_count=max_count, invert=invert, fit=fit, from_line=from_line)
