"""budget set-window: this session's context window (0: the model's again)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.budget_view import budget_view
from scratch.declare import Arg, Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result

WINDOW = Arg("Window in tokens.", metavar="N", minimum=0)


def budget_set_window(ctx: Context, tokens: Annotated[int, WINDOW]) -> Result[dict[str, object]]:
    return budget_view(ctx, "set-window", tokens or None)


COMMAND = Command(
    "budget set-window", "Set this session's context window to N tokens (0 returns to the "
    "model's window).\n\nExample: scratch budget set-window 200000",
    budget_set_window,
    tools=(Tool("budget_set_window", "Set this session's context window (0: back to the "
                "model's window).", read_only=False, idempotent=True, toolset="session"),))
