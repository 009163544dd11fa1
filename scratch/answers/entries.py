"""Operations on versioned files and the store. Each returns a Result."""

from __future__ import annotations

from pathlib import Path

from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result
from scratch.gitstore import GitStore
from scratch.names import STORE_DIR_NAME
from scratch.store import Store


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


