"""rm: delete an entry (a commit: restore brings a file back)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import NAME
from scratch.answers.kernel.result import Result, Words
from scratch.calls import call
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.store.records import Removed


def rm(ctx: Context, name: Annotated[str, NAME]) -> Result[Removed]:
    from scratch.answers.kernel.target import entry_name
    store = ctx.store()
    name = entry_name(store, name)
    rec = store.remove(name)
    if rec["kind"] == "log":
        return Result("rm", data=rec, text=f"Deleted log {name}\n")
    back = call("restore", ref=f"{name}@{rec['versions']}")
    return Result("rm", data=rec, text=Words((f"Deleted {rec['kind']} {name}; ", back,
                                              " brings it back\n")))


COMMAND = Command(
    "rm", "Delete entry NAME (a commit; 'scratch restore NAME@N' brings it back).\n\n"
    "Example: scratch rm notes/old.md",
    rm,
    tools=(Tool("delete_file", "Delete an entry (a commit: restore brings it back).",
                names={"name": "path"}, read_only=False, destructive=True, idempotent=True,
                toolset="files"),))
