"""remote list: the store's remotes, name and URL (on the command line only, as remote add)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.result import Payload, Result, Table
from scratch.declare import Command

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def remote_list(ctx: Context) -> Result[Payload]:
    from scratch.sync import remotes
    found = remotes.remotes(ctx.store().root)
    rows = [{"name": k, "url": v} for k, v in found.items()]
    if not rows:
        return Result("remote list", data={"remotes": []}, text="no remotes\n")
    return Result("remote list", data={"remotes": rows},
                  table=Table(["name", "url"], [[r["name"], r["url"]] for r in rows]))


COMMAND = Command("remote list", "List the remotes: name and URL.\n\n"
                  "Example: scratch remote list --json", remote_list)
