"""log tail: the last entries of a log, priced in tokens; with fit paged from the oldest of
them, continuing with ``log read``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import FIT, NAME
from scratch.answers.kernel.candidate import FIT as FIT_STEP
from scratch.answers.kernel.candidate import SHRINK, Alternative, Candidate
from scratch.answers.kernel.result import Result
from scratch.answers.log_pages import Entries, LogEntries, entries_text, past_first
from scratch.calls import Call, call
from scratch.declare import Arg, Command, Tool
from scratch.store import logs

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step
    from scratch.answers.kernel.context import Context

LINES = Arg("How many entries.", flags=("-n",), metavar="N", minimum=1)


class LogTail(Candidate):
    """The last entries of a log; with fit paged from the oldest of them."""

    command = "log tail"
    code = "log_tail_too_large"

    def __init__(self, name: str, entries: Entries, *, total: int, fit: bool,
                 warnings: tuple[str, ...] = (), asked: Call | None = None) -> None:
        super().__init__(asked or call("log tail", name=name, lines=len(entries),
                                       fit=fit or None), fit=fit)
        self.name = name
        self.entries = entries
        self.total = total
        self.warnings = warnings
        self.units = max(1, len(entries))
        self.shrink_units = len(entries)
        first = entries[0]["id"] if entries else 0
        self.what = f"log entry {first} alone"

    def page(self, k: int) -> Result[dict[str, object]]:
        shown = self.entries[:k]
        data = {"name": self.name, "entries": shown, "total": self.total}
        return Result("log tail", data=data, text=entries_text(shown), warnings=self.warnings)

    def estimate(self, k: int) -> int | None:
        return min(k, len(self.entries))

    def resume(self, k: int) -> Call | None:
        if k >= len(self.entries):
            return None
        return call("log read", name=self.name, since=self.entries[k - 1]["id"],
                    limit=len(self.entries) - k, fit=True)

    def fit_call(self) -> Call | None:
        return self.asked.with_args(fit=True)

    def shrunk(self, k: int) -> Candidate | None:  # the last k
        return LogTail(self.name, self.entries[len(self.entries) - k:], total=self.total,
                       fit=False, warnings=self.warnings)

    def plan(self) -> list[Step]:
        first = self.entries[0]["id"] if self.entries else 0
        from_start = LogEntries(self.name, self.entries, since=first - 1,
                                limit=len(self.entries), has_more=False, fit=False,
                                warnings=self.warnings)
        return [SHRINK, Alternative(candidate=from_start, shrink=True), FIT_STEP,
                *past_first(self.name, self.entries, len(self.entries))]

    def details(self) -> dict[str, object]:
        return {"entries": len(self.entries), "total": self.total}


def tail(ctx: Context, name: Annotated[str, NAME], lines: Annotated[int, LINES] = 20,
         fit: Annotated[bool, FIT] = False, *, asked: Call) -> Candidate:
    from scratch.answers.kernel.target import entry_name
    store = ctx.store()
    name = entry_name(store, name)
    rec = logs.tail(store, name, lines)
    return LogTail(name, rec["entries"], total=rec["total"], fit=fit,
                   warnings=tuple(rec["warnings"]),
                   asked=asked.with_args(name=name))


COMMAND = Command(
    "log tail", "The last N entries of log NAME, priced in tokens; --fit pages them from the "
    "first, continuing with log read.\n\n"
    "Example: scratch log tail events -n 5",
    tail,
    tools=(Tool("tail_log", "The last entries of a log.", names={"name": "path"},
                toolset="files"),))
