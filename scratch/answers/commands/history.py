"""history: the versions of an entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import NAME
from scratch.answers.kernel.result import Result, Table
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def history(ctx: Context, name: Annotated[str, NAME]) -> Result[dict[str, object]]:
    from scratch.answers.kernel.target import entry_name
    store = ctx.store()
    name = entry_name(store, name, deleted=True)
    rows = store.history(name)
    table = Table(["version", "time", "bytes", "lines", "commit", "message"],
                  [[r["version"], r["time"], r["bytes"], r["lines"], r["commit"], r["message"]]
                   for r in rows])
    return Result("history", data={"name": name, "versions": rows}, table=table)


COMMAND = Command(
    "history", "List the versions of NAME: number, time, bytes, lines, commit, message.\n\n"
    "Example: scratch history notes/plan.md",
    history,
    tools=(Tool("history", "The versions of an entry: number, time, bytes, lines.",
                names={"name": "path"}, toolset="files"),))
