"""diff: what changed in an entry between two of its versions, priced like any answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import NAME
from scratch.answers.lines import changes
from scratch.answers.lines.changes import CONTEXT
from scratch.calls import Call
from scratch.declare import Arg, Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.context import Context

A = Arg("Older version.", metavar="A", minimum=1)
B = Arg("Newer version.", metavar="B", minimum=1)


def diff(ctx: Context, name: Annotated[str, NAME], a: Annotated[int, A], b: Annotated[int, B],
         context: Annotated[int, CONTEXT] = 3, *, asked: Call) -> Candidate:
    from scratch.answers.kernel.target import entry_name
    name = entry_name(ctx.store(), name, deleted=True)
    return changes.diff_candidate(changes.between(ctx, name, a, b, context),
                                  asked.with_args(name=name), context,
                                  code="diff_too_large")


COMMAND = Command(
    "diff", "Show what changed in NAME between versions A and B (unified hunks).\n\n"
    "Example: scratch diff notes/plan.md 1 3",
    diff,
    tools=(Tool("diff", "What changed in an entry between versions a and b.",
                names={"name": "path"}, toolset="files"),))
