"""log read: the entries of a log after a cursor, priced in tokens (see
:mod:`scratch.answers.log_pages`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import FIT, NAME
from scratch.answers.log_pages import LogEntries
from scratch.declare import Arg, Command, Tool
from scratch.store import logs

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.context import Context

SINCE = Arg("Return entries with an id above this one (the cursor).", flags=("--since",),
            metavar="ID", minimum=0)
LIMIT = Arg("At most this many entries.", flags=("--limit",), metavar="N", minimum=1)


def read(ctx: Context, name: Annotated[str, NAME], since: Annotated[int, SINCE] = 0,
         limit: Annotated[int, LIMIT] = 100, fit: Annotated[bool, FIT] = False) -> Candidate:
    from scratch.answers.kernel.target import entry_name
    store = ctx.store()
    name = entry_name(store, name)
    rec = logs.read(store, name, since, limit)
    return LogEntries(name, rec["entries"], since=since, limit=limit,
                      has_more=rec["has_more"], fit=fit, warnings=tuple(rec["warnings"]))


COMMAND = Command(
    "log read", "Entries of log NAME after the cursor --since, at most --limit; says has_more "
    "and next_since. Priced in tokens; refused over the per-call cap or the budget (--fit "
    "pages).\n\nExample: scratch log read events --since 100 --limit 50",
    read,
    tools=(Tool("read_log", "Entries of a log after a cursor; says has_more and next_since, the "
                "cursor to continue from.", names={"name": "path", "since": "since_entry"},
                toolset="files"),))
