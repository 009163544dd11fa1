"""grep: matching lines of one entry or of all of them, priced and budgeted."""

from typing import Annotated, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.calls import call
from scratch.cli.common import RefArg, command
from scratch.cli.explore_opts import FitOpt


@command("grep", help="Lines of REF matching PATTERN (linear-time regex engine), with context; "
         "matches 'N:', context 'N-', regions with context separated by '--'. With --all, search "
         "every entry of the agent (then the first argument is the PATTERN).\n\n"
         "When -m stops the search, the whole entry's number of matching lines is reported "
         "too. --count gives just the number of matching lines; --count-by 1 (or a group's name) "
         "the counts of the values a capture group took, biggest first.\n\n"
         "Example: scratch grep app-log 'error|timeout' -i -C 2 -m 20\n\n"
         "Example: scratch grep access '\" (\\d{3}) ' --count-by 1")
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
             count: Annotated[bool, typer.Option(
                 "--count", help="Just the number of matching lines (the whole entry).")
             ] = False,
             count_by: Annotated[Optional[str], typer.Option(
                 "--count-by", metavar="GROUP", help="Counts of the values a capture group "
                 "(number or name) took, biggest first.", show_default=False)] = None,
             offset: Annotated[int, typer.Option(
                 "--offset", metavar="N", help="With --count-by: skip the first N values.")
             ] = 0,
             limit: Annotated[Optional[int], typer.Option(
                 "--limit", metavar="N", help="With --count-by: at most N values (default "
                 "10).", show_default=False)] = None,
             fit: FitOpt = False):
    from scratch.errors import UsageError
    flags = {"context": context or None, "ignore_case": ignore_case or None,
             "fixed": fixed or None, "max_count": max_count, "invert": invert or None,
             "count": count or None, "count_by": count_by, "offset": offset or None,
             "limit": limit}
    if all_entries:
        if pattern is not None:
            raise UsageError("with --all give only PATTERN", code="invalid_argument")
        return call("grep", all=True, pattern=ref, fit=fit or None,
                    from_line=None if from_line == 1 else from_line, **flags)
    if pattern is None:
        raise UsageError("missing PATTERN: scratch grep REF PATTERN", code="invalid_argument")
    return call("grep", ref=ref, pattern=pattern, from_line=None if from_line == 1 else from_line,
                fit=fit or None, **flags)
