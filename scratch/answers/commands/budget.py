"""budget: this session's context budget (``budget`` alone; the group of the budget commands)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.budget_view import budget_view
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result


def budget_show(ctx: Context) -> Result[dict[str, object]]:
    return budget_view(ctx, "show")


COMMAND = Command(
    "budget", "The agent's context budget for this session: model, tokenizer, window, usable, "
    "used, remaining.\n\nExample: scratch budget --json",
    budget_show,
    tools=(Tool("budget", "This session's context budget: model, tokenizer, window, usable, "
                "used, remaining, intercepted, extracted.", toolset="session"),),
    group_help="The agent's context budget for this session: show, reset, record used tokens, "
    "set the window.\n\nExample: scratch budget --json")
