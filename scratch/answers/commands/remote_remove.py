"""remote remove: forget a remote (on the command line only, as remote add)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._remote_args import REMOTE
from scratch.answers.kernel.result import Payload, Result
from scratch.declare import Command

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def remote_remove(ctx: Context, name: Annotated[str, REMOTE]) -> Result[Payload]:
    from scratch.sync import remotes
    data = remotes.remove(ctx.store().root, name)
    return Result("remote remove", data=data, text=f"removed remote {name}\n")


COMMAND = Command(
    "remote remove", "Remove remote REMOTE (and what was fetched from it; nothing stored is "
    "removed).\n\nExample: scratch remote remove origin", remote_remove)
