"""The one flow of the commands that put scratch into a file a client owns (``scratch hooks
install``, ``scratch mcp install``): ``--print`` shows what to add and touches nothing;
otherwise the command's edit runs (it backs the file up first, once, and refuses to replace a
scratch entry already there without ``--force``, raising its own error) and the answer says
what happened: nothing (the same entry is there already), or added or replaced, and where the
backup is. Each command says only its own words (what it adds, whose file it is).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from scratch.answers.kernel.result import Result


class ClientEdit(NamedTuple):
    """What one install says about its edit of ``path``."""

    command: str  # "hooks install"
    path: Path
    owner: str  # whose file, as --print names it: "Claude Code's settings"
    already: str  # said when the same entry is there: "already runs this scratch hook"
    added: str  # what is added or replaced: "scratch's PostToolUse hook for Bash (...)"
    after: str = ""  # said after the backup: "; restart Cursor to load it"
    notices: tuple[str, ...] = ()  # said with --print and after an edit that changed the file


def install_answer(edit: ClientEdit, *, print_only: bool,
                   printed: Callable[[], tuple[Mapping[str, object], str]],
                   install: Callable[[], Mapping[str, object]]
                   ) -> Result[Mapping[str, object]]:
    """The answer of an install: with ``print_only`` what ``printed()`` gives (the data and
    the text to add) and where to add it; else ``install()``'s record of the edit (its keys
    ``unchanged``, ``replaced`` and ``backup``), said in one line."""
    from scratch.answers.kernel.result import Result
    if print_only:
        data, text = printed()
        return Result(edit.command, data=data, text=text,
                      notices=(f"add this to {edit.path} ({edit.owner})", *edit.notices))
    done = install()
    if done["unchanged"]:
        return Result(edit.command, data=done, text=f"{edit.path}: {edit.already}\n")
    how = "replaced" if done["replaced"] else "added"
    backup = f"; backup: {done['backup']}" if done["backup"] else ""
    return Result(edit.command, data=done,
                  text=f"{edit.path}: {how} {edit.added}{backup}{edit.after}\n",
                  notices=edit.notices)
