"""Log entries as priced pages: what ``log read`` answers and ``log tail`` falls back to.

Invariants:
- The price is the exact token count of what the agent reads: the printed entry lines, or
  the JSON envelope.
- Over the per-call cap or what is left of the budget the answer is refused (exit 3,
  ``log_read_too_large`` / ``log_tail_too_large``); the suggestions are pages measured to fit
  (a smaller ``limit``/``lines``, the ``since`` cursor form) and fit.
- With fit, the longest run of entries from the start of the requested ones that fits, plus
  ``next``: ``log read`` from the last shown id for the rest, with fit. Ids only grow, so
  following ``next`` until it is absent shows every requested entry once.
- Cursor fields keep their meaning: ``next_since`` is the id of the last entry shown and
  ``has_more`` says whether entries follow it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from scratch.answers.kernel.candidate import FIT, SHRINK, Alternative, Candidate
from scratch.answers.kernel.result import Result, Words, compact_json
from scratch.calls import Call, call

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step
    from scratch.answers.rows.items import Item


class LogEntry(TypedDict):
    """One entry of a log as the store reads it back (a line of the log file)."""

    id: int
    ts: str
    entry: Item  # the entry's JSON value, or its text when it is not JSON


Entries = list[LogEntry]


def _line(rec: LogEntry) -> str:
    value = rec["entry"]
    shown = value if isinstance(value, str) else compact_json(value)
    return f"{rec['id']}\t{rec['ts']}\t{shown}\n"


def entries_text(entries: Entries) -> str:
    return "".join(_line(rec) for rec in entries)


class LogEntries(Candidate):
    """Entries after the cursor ``since`` (at most ``limit``), oldest first."""

    command = "log read"
    code = "log_read_too_large"

    def __init__(self, name: str, entries: Entries, *, since: int, limit: int, has_more: bool,
                 fit: bool, warnings: tuple[str, ...] = (), asked: Call | None = None) -> None:
        super().__init__(asked or call("log read", name=name, since=since or None, limit=limit,
                                       fit=fit or None), fit=fit)
        self.name = name
        self.entries = entries
        self.since = since
        self.limit = limit
        self.has_more = has_more
        self.warnings = warnings
        self.units = max(1, len(entries))
        self.shrink_units = len(entries)
        first = entries[0]["id"] if entries else since
        self.what = f"log entry {first} alone"

    def page(self, k: int) -> Result[dict[str, object]]:
        shown = self.entries[:k]
        has_more = self.has_more or len(shown) < len(self.entries)
        next_since = shown[-1]["id"] if shown else self.since
        data = {"name": self.name, "entries": shown, "has_more": has_more,
                "next_since": next_since}
        notices: tuple[Words, ...] = ()
        if has_more and len(shown) == len(self.entries):
            notices = (Words(("more entries: ", call("log read", name=self.name,
                                                     since=next_since,
                                                     limit=self.limit))),)
        return Result("log read", data=data, text=entries_text(shown), notices=notices,
                      warnings=self.warnings)

    def estimate(self, k: int) -> int | None:
        return min(k, len(self.entries))  # an entry's line costs at least a token

    def resume(self, k: int) -> Call | None:
        if k >= len(self.entries):
            return None
        return call("log read", name=self.name, since=self.entries[k - 1]["id"],
                    limit=self.limit - k, fit=True)

    def fit_call(self) -> Call | None:
        return self.asked.with_args(fit=True)

    def shrunk(self, k: int) -> Candidate | None:
        return LogEntries(self.name, self.entries[:k], since=self.since, limit=k,
                          has_more=True, fit=False, warnings=self.warnings)

    def plan(self) -> list[Step]:
        return [SHRINK, FIT, *past_first(self.name, self.entries, self.limit)]

    def details(self) -> dict[str, object]:
        return {"entries": len(self.entries), "since": self.since}


def past_first(name: str, entries: Entries, limit: int) -> list[Alternative]:
    """Past a first entry too big for any answer: the entries after it, paged."""
    if not entries:
        return []
    return [Alternative(call=call("log read", name=name, since=entries[0]["id"],
                                  limit=max(1, limit - 1), fit=True), last_resort=True)]
