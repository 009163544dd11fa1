"""Options shared by the exploration commands (declared once)."""

from typing import Annotated, Optional

import typer

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

FieldsOpt = Annotated[str, typer.Option(
    "--fields", metavar="A,B.C", help="Comma-separated paths relative to each item.",
    show_default=False)]
