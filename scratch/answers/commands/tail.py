"""tail: the last lines of an entry (errors are usually at the end)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import FIT, LINES, NUMBERS, REF
from scratch.answers.kernel.target import open_target
from scratch.answers.lines.ranges import line_range
from scratch.calls import Call
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Payload, Result


def tail(ctx: Context, ref: Annotated[str, REF], lines: Annotated[int, LINES] = 50,
         fit: Annotated[bool, FIT] = False, numbers: Annotated[bool, NUMBERS] = True,
         *, asked: Call) -> Candidate | Result[Payload]:
    target = open_target(ctx, ref, logs=True)  # opened once: counted here, read by line_range
    total = target.index.line_count
    return line_range(ctx, ref, max(1, total - lines + 1), total, command="tail",
                      numbers=numbers, fit=fit, asked=asked, target=target)


COMMAND = Command(
    "tail", "The last N lines of REF (errors are usually at the end).\n\n"
    "Example: scratch tail app-log -n 40",
    tail,
    tools=(Tool("tail", "The last lines of an entry.",
                names={"ref": "file"}, toolset="explore"),))
