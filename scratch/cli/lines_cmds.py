"""head, tail, slice and read: line ranges of an entry, priced and budgeted."""

import sys
from typing import Annotated, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.calls import call
from scratch.cli.common import RefArg, command
from scratch.cli.explore_opts import (
    FitOpt,
)


def _numbers(no_numbers: bool) -> Optional[bool]:
    return False if no_numbers else None


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
    return call("read", ref=ref, since_version=since_version,
                context=context if context != 3 else None, raw=raw or None, fit=fit or None,
                terminal=sys.stdout.isatty() or None)


@command("export", help="Write the stored bytes of REF exactly, to FILE or stdout: no cap, no "
         "charge, no pointer. For people getting an entry back whole; agents explore with "
         "head, grep, get-in and the rest, which are priced and held to the budget.\n\n"
         "Example: scratch export kubectl_get/20261130T071502Z-1a2b3c4d -o pods.json")
def export_cmd(ctx: Context, ref: RefArg,
               output: Annotated[Optional[str], typer.Option(
                   "-o", "--output", metavar="FILE", show_default=False,
                   help="Write to FILE instead of stdout.")] = None):
    return call("export", ref=ref, output=output)
