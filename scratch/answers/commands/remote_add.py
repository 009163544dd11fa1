"""remote add: a git remote the store syncs with.

On the command line only (no MCP tool): an agent must not choose where its store is pushed.
Declared here all the same, so a suggestion to add one is a call the CLI spells and MCP simply
does not offer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._remote_args import REMOTE
from scratch.answers.kernel.result import Payload, Result
from scratch.declare import Arg, Command

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context

URL = Arg("Where the remote repository is.", metavar="URL")


def remote_add(ctx: Context, name: Annotated[str, REMOTE], url: Annotated[str, URL]
               ) -> Result[Payload]:
    from scratch.sync import remotes
    data = remotes.add(ctx.store().root, name, url)
    return Result("remote add", data=data, text=f"added remote {data['name']}: {data['url']}\n")


COMMAND = Command(
    "remote add", "Add remote REMOTE at URL: a path to a bare repository, file://, ssh://, "
    "user@host:path, https:// or git://. scratch stores no credentials: https and ssh use "
    "your own git's.\n\nExample: scratch remote add origin git@example.com:me/s.git",
    remote_add)
