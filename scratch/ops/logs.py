"""Log operations: append, read with a cursor, tail. Each returns a Result."""

from __future__ import annotations

from typing import Any

from scratch import logs
from scratch.context import Context
from scratch.result import Result, compact_json


def _text(entries: list[dict[str, Any]]) -> str:
    out = []
    for rec in entries:
        value = rec["entry"]
        shown = value if isinstance(value, str) else compact_json(value)
        out.append(f"{rec['id']}\t{rec['ts']}\t{shown}")
    return "\n".join(out) + ("\n" if out else "")


def append(ctx: Context, name: str, entries: list[bytes]) -> Result:
    rec = logs.append(ctx.store(), name, entries)
    what = (f"entry {rec['first_id']}" if rec["count"] == 1
            else f"{rec['count']} entries, ids {rec['first_id']}-{rec['last_id']}")
    return Result("log append", data=rec, text=f"{name}: appended {what}\n")


def read(ctx: Context, name: str, since: int, limit: int) -> Result:
    rec = logs.read(ctx.store(), name, since, limit)
    warnings = tuple(rec.pop("warnings"))
    notices: tuple[str, ...] = ()
    if rec["has_more"]:
        notices = (f"more entries: scratch log read {name} --since {rec['next_since']}"
                   f" --limit {limit}",)
    return Result("log read", data=rec, text=_text(rec["entries"]), notices=notices,
                  warnings=warnings)


def tail(ctx: Context, name: str, n: int) -> Result:
    rec = logs.tail(ctx.store(), name, n)
    warnings = tuple(rec.pop("warnings"))
    return Result("log tail", data=rec, text=_text(rec["entries"]), warnings=warnings)
