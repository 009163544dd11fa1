"""Log answers: append, read with a cursor, tail. Reads and tails are candidate answers.

Invariants:
- The price is the exact token count of what the agent reads: the printed entry lines, or
  with ``--json`` the envelope.
- Over the per-call cap or what is left of the budget the answer is refused (exit 3,
  ``log_read_too_large`` / ``log_tail_too_large``); the suggestions are pages measured to fit
  (a smaller ``limit``/``lines``, the ``since`` cursor form) and --fit.
- --fit shows the longest run of entries from the start of the requested ones that fits, plus
  ``next``: ``log read NAME --since <last shown id> --limit <the rest> --fit``. Ids only grow,
  so following ``next`` until it is absent shows every requested entry once.
- Cursor fields keep their meaning: ``next_since`` is the id of the last entry shown and
  ``has_more`` says whether entries follow it.
"""

from __future__ import annotations

from typing import Any

from scratch.answers.kernel.candidate import FIT, SHRINK, Alternative, Candidate
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result, Words, compact_json
from scratch.calls import Call, call
from scratch.store import logs

Entries = list[dict[str, Any]]


def _line(rec: dict[str, Any]) -> str:
    value = rec["entry"]
    shown = value if isinstance(value, str) else compact_json(value)
    return f"{rec['id']}\t{rec['ts']}\t{shown}\n"


def entries_text(entries: Entries) -> str:
    return "".join(_line(rec) for rec in entries)


def append(ctx: Context, name: str, entries: list[bytes] | list[str]) -> Result:
    raw = [e.encode("utf-8", errors="surrogateescape") if isinstance(e, str) else e
           for e in entries]
    rec = logs.append(ctx.store(), name, raw)
    what = (f"entry {rec['first_id']}" if rec["count"] == 1
            else f"{rec['count']} entries, ids {rec['first_id']}-{rec['last_id']}")
    return Result("log append", data=rec, text=f"{name}: appended {what}\n")


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

    def page(self, k: int) -> Result:
        shown = self.entries[:k]
        data: dict[str, Any] = {"name": self.name, "entries": shown,
                                "has_more": self.has_more or len(shown) < len(self.entries),
                                "next_since": shown[-1]["id"] if shown else self.since}
        notices: tuple[Any, ...] = ()
        if data["has_more"] and len(shown) == len(self.entries):
            notices = (Words(("more entries: ", call("log read", name=self.name,
                                                     since=data["next_since"],
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

    def plan(self) -> list[Any]:
        return [SHRINK, FIT, *_skip(self.name, self.entries, self.limit)]

    def details(self) -> dict[str, Any]:
        return {"entries": len(self.entries), "since": self.since}


def _skip(name: str, entries: Entries, limit: int) -> list[Alternative]:
    """Past a first entry too big for any answer: the entries after it, paged."""
    if not entries:
        return []
    return [Alternative(call=call("log read", name=name, since=entries[0]["id"],
                                  limit=max(1, limit - 1), fit=True), last_resort=True)]


def read(ctx: Context, name: str, since: int = 0, limit: int = 100, fit: bool = False
         ) -> Candidate:
    rec = logs.read(ctx.store(), name, since, limit)
    return LogEntries(name, rec["entries"], since=since, limit=limit,
                      has_more=rec["has_more"], fit=fit, warnings=tuple(rec["warnings"]))


class LogTail(Candidate):
    """The last entries of a log; with --fit paged from the oldest of them."""

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

    def page(self, k: int) -> Result:
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

    def plan(self) -> list[Any]:
        first = self.entries[0]["id"] if self.entries else 0
        from_start = LogEntries(self.name, self.entries, since=first - 1,
                                limit=len(self.entries), has_more=False, fit=False,
                                warnings=self.warnings)
        return [SHRINK, Alternative(candidate=from_start, shrink=True), FIT,
                *_skip(self.name, self.entries, len(self.entries))]

    def details(self) -> dict[str, Any]:
        return {"entries": len(self.entries), "total": self.total}


def tail(ctx: Context, name: str, lines: int = 20, fit: bool = False) -> Candidate:
    rec = logs.tail(ctx.store(), name, lines)
    return LogTail(name, rec["entries"], total=rec["total"], fit=fit,
                   warnings=tuple(rec["warnings"]),
                   asked=call("log tail", name=name, lines=lines, fit=fit or None))
