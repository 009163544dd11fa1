"""budget reset: start the session's budget over at zero used."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.budget_view import budget_view
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result


def budget_reset(ctx: Context) -> Result[dict[str, object]]:
    return budget_view(ctx, "reset")


COMMAND = Command(
    "budget reset", "Start the session's budget over at zero used.\n\n"
    "Example: scratch budget reset",
    budget_reset,
    tools=(Tool("budget_reset", "Start this session's budget over at zero used (after the "
                "context was cleared or compacted).", read_only=False, idempotent=True,
                toolset="session"),))
