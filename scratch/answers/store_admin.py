"""A store made here and plain git run on it: the CLI's own ``init`` and ``git`` (people's
tools, not agents'). Each returns a Result."""

from __future__ import annotations

from pathlib import Path

from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result
from scratch.store import Store
from scratch.store.gitstore import GitStore
from scratch.store.names import STORE_DIR_NAME


def init(directory: Path) -> Result[dict[str, object]]:
    root = (directory / STORE_DIR_NAME).absolute()
    existed = GitStore(root).exists()
    Store.open(root)
    data = {"store": str(root), "created": not existed}
    verb = "Already a scratch store" if existed else "Created a scratch store"
    return Result("init", data=data, text=f"{verb} at {root}\n")




def git_passthrough(ctx: Context, args: list[str]) -> int:
    """Run git on the whole store (every agent's entries): a tool for people, not agents."""
    return ctx.store(create=False).git.run_user(args)


