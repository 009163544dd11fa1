"""budget used: record the tokens the model reports as used."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.budget_view import budget_view
from scratch.declare import Arg, Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result

USED = Arg("Tokens used so far.", metavar="N", minimum=0)


def budget_used(ctx: Context, tokens: Annotated[int, USED]) -> Result[dict[str, object]]:
    return budget_view(ctx, "used", tokens)


COMMAND = Command(
    "budget used", "Record N tokens the LLM reports as used: the estimate becomes "
    "max(current, N).\n\nExample: scratch budget used 48210",
    budget_used,
    tools=(Tool("budget_used", "Record the tokens the model reports as used: the estimate "
                "becomes max(current, tokens).", read_only=False, idempotent=True,
                toolset="session"),))
