"""head: the first lines of an entry, numbered, priced in tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import FIT, LINES, NUMBERS, REF
from scratch.answers.lines.ranges import line_range
from scratch.calls import Call
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Payload, Result


def head(ctx: Context, ref: Annotated[str, REF], lines: Annotated[int, LINES] = 50,
         fit: Annotated[bool, FIT] = False, numbers: Annotated[bool, NUMBERS] = True,
         *, asked: Call) -> Candidate | Result[Payload]:
    return line_range(ctx, ref, 1, lines, command="head", numbers=numbers, fit=fit,
                      asked=asked)


COMMAND = Command(
    "head", "The first N lines of REF, numbered, priced in tokens.\n\n"
    "Example: scratch head kubectl_get/20261130T071502Z-1a2b3c4d -n 20",
    head,
    tools=(Tool("head", "The first lines of an entry (structured data: try schema first).",
                names={"ref": "file"}, toolset="explore"),))
