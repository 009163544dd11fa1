"""`scratch read`: the whole entry, one version of it, or what changed since a version."""

import sys
from typing import Annotated, Optional

import typer

from scratch.cli.common import RefArg, command
from scratch.context import Context


@command("read", help="Print the content of REF (NAME or NAME@N), or with --since-version N "
         "what changed since version N as a compact diff.\n\n"
         "Binary content is not printed to a terminal unless --raw.\n\n"
         "Example: scratch read notes/plan.md --since-version 2")
def read_cmd(ctx: Context, ref: RefArg,
             since_version: Annotated[Optional[int], typer.Option(
                 "--since-version", metavar="N", help="Show only what changed since version N.",
                 show_default=False)] = None,
             context: Annotated[int, typer.Option("-U", "--unified", metavar="N",
                                                  help="Context lines in the diff.")] = 3,
             raw: Annotated[bool, typer.Option("--raw", help="Print binary content even to a "
                                                "terminal.")] = False):
    from scratch.ops import files
    if since_version is not None:
        return files.read_since(ctx, ref, since_version, context)
    return files.read_plain(ctx, ref, raw=raw, is_terminal=sys.stdout.isatty())
