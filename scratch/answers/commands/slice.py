"""slice: lines START to END of an entry; with fit, a line too long for one answer in pieces."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import FIT, NUMBERS, REF
from scratch.answers.lines.ranges import line_range
from scratch.calls import Call
from scratch.declare import Arg, Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Payload, Result

START = Arg("First line (>= 1).", metavar="START", minimum=1)
END = Arg("Last line (>= START).", metavar="END", minimum=1)
FROM_BYTE = Arg("Line START from this byte on (fit's next gives it).", flags=("--from-byte",),
                metavar="B", minimum=0)


def slice_(ctx: Context, ref: Annotated[str, REF], start: Annotated[int, START],
           end: Annotated[int, END], from_byte: Annotated[int | None, FROM_BYTE] = None,
           fit: Annotated[bool, FIT] = False, numbers: Annotated[bool, NUMBERS] = True,
           *, asked: Call) -> Candidate | Result[Payload]:
    return line_range(ctx, ref, start, end, command="slice", numbers=numbers, fit=fit,
                      from_byte=from_byte,
                      asked=asked)


COMMAND = Command(
    "slice", "Lines START to END of REF (1-indexed, inclusive).\n\n"
    "With --fit, a line too long for one answer comes in pieces: next continues it with "
    "--from-byte.\n\n"
    "Example: scratch slice 1a2b 120 180",
    slice_,
    tools=(Tool("slice", "Lines start..end of an entry (1-indexed, inclusive).",
                names={"ref": "file"}, toolset="explore"),))
