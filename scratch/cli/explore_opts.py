"""Options shared by the exploration commands (declared once)."""

from typing import Annotated

import typer

FitOpt = Annotated[bool, typer.Option(
    "--fit", help="Return the largest part that fits the cap and budget, plus 'next': the "
    "command that continues.")]
