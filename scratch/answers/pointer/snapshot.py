"""What a pointer says about NDJSON whose lines are snapshots of one state: its last one.

A status API polled into a file (NGINX Plus ``/status``, a metrics endpoint, ``kubectl get
--watch -o json`` of one object) gives one whole state per line: the same nested keys on
every line, the same identity (address, version) in the first and the last. Its question is
what the state is now, so the pointer summarizes the last item (one line read at ingest, as
the error grep reads the content), and its next calls read that item whole (``get-in REF
-1``), where the pointer of a list of records samples items and lists fields.

Recognised (:func:`repeated_snapshots`, from the index's item union and its first and last
samples): NDJSON of objects, at least two; at least :data:`MIN_KEYS` keys in all with nesting
(at least twice the top-level ones), :data:`SAME_KEYS` of them on every line; and at least one
top-level scalar equal in the first and the last item. Anything else is records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scratch.answers.kernel.target import Target
    from scratch.answers.rows.items import Info

MIN_KEYS = 20
SAME_KEYS = 0.9
ROWS = 14  # rows of the last item's outline kept (the pointer shows fewer at less detail)
ROW_CHARS = 160
NAMES = 5  # names of a map's members shown
SCALARS_A_ROW = 6


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def repeated_snapshots(info: Info) -> bool:
    """Whether an NDJSON entry's lines are snapshots of one state (see the module)."""
    schema = info.get("schema")
    if info.get("layout") != "ndjson" or not isinstance(schema, dict) or info.get("kubernetes"):
        return False
    items = schema.get("items")
    if not isinstance(items, dict):
        return False
    total = int(items.get("count") or 0)
    if total < 2 or (items.get("types") or {}) != {"object": total} or items.get("more_keys"):
        return False
    keys = items.get("keys") or []
    tops = [k for k in keys if "." not in str(k["key"])]
    if len(keys) < MIN_KEYS or len(keys) < 2 * len(tops):
        return False
    if sum(1 for k in keys if k.get("count") == total) < SAME_KEYS * len(keys):
        return False
    samples = {s.get("index"): s.get("value") for s in items.get("samples") or []}
    first, last = samples.get(0), samples.get(total - 1)
    if not isinstance(first, dict) or not isinstance(last, dict):
        return False
    return any(_scalar(v) and k in last and last[k] == v for k, v in first.items())


def _text(value: object) -> str:
    """A value as the entry holds it (numbers exactly, to be copied into a filter)."""
    import orjson
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def _cut(text: str) -> str:
    return text if len(text) <= ROW_CHARS else text[: ROW_CHARS - 1] + "…"


def outline(value: dict[str, object]) -> list[list[str]]:
    """``[[key, what], ...]`` of one item: its top-level scalars a few to a row (key ``""``),
    an object of scalars by its values, a map by its members' names, an array by its
    length."""
    rows: list[list[str]] = []
    scalars: list[str] = []

    def flush() -> None:
        while scalars:
            rows.append(["", _cut(", ".join(scalars[:SCALARS_A_ROW]))])
            del scalars[:SCALARS_A_ROW]

    for key, v in value.items():
        if _scalar(v):
            scalars.append(f"{key} {_text(v)}")
            continue
        flush()
        if isinstance(v, list):
            rows.append([key, f"{len(v):,} items"])
        elif isinstance(v, dict) and all(_scalar(x) for x in v.values()):
            parts = [f"{k} {_text(x)}" for k, x in v.items()]
            rows.append([key, _cut(", ".join(parts)) if parts else "{}"])
        elif isinstance(v, dict):
            names = list(v)[:NAMES]
            more = f", … {len(v) - len(names)} more" if len(v) > len(names) else ""
            rows.append([f"{key} ({len(v):,})", _cut(", ".join(names) + more)])
    flush()
    return rows[:ROWS]


def snapshot_for(target: Target, info: Info) -> Info | None:
    """``{"line", "index", "same", "outline"}`` of the last item of an NDJSON entry whose lines
    are snapshots (None for anything else): the line it is on, the top-level scalars equal in
    the first and the last item, and :func:`outline` of it."""
    if not repeated_snapshots(info):
        return None
    import orjson

    from scratch.jsonvalues import loads_exact
    items = info["schema"]["items"]
    total = int(items["count"])
    n = target.index.line_count
    for line_no in range(n, max(0, n - 16), -1):  # the last item (blank lines may follow)
        raw = b"".join(target.index.read_lines(line_no, line_no)).strip()
        if not raw:
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            try:
                value = loads_exact(raw)
            except ValueError:
                return None
        if not isinstance(value, dict):
            return None
        first: object = next((s.get("value") for s in items.get("samples") or []
                              if s.get("index") == 0), {})
        same = {k: v for k, v in value.items() if _scalar(v) and isinstance(first, dict)
                and first.get(k) == v and isinstance(v, str)}
        return {"line": line_no, "index": total - 1, "same": same, "outline": outline(value)}
    return None


def snapshot_lines(snap: Info, total: int, detail: int) -> list[str]:
    """The pointer's lines of the last snapshot (``detail`` 1: fewer rows)."""
    same = snap.get("same") or {}
    alike = ", ".join(f"{k} {v}" for k, v in list(same.items())[:3])
    out = [f"snapshots: each of the {total:,} lines is a whole state"
           + (f" ({alike} in the first and the last)" if alike else "")
           + f"; the last, line {int(snap['line']):,}:"]
    rows = snap.get("outline") or []
    limit = ROWS if detail >= 3 else 8 if detail == 2 else 4
    for key, what in rows[:limit]:
        out.append(f"  {key}: {what}" if key else f"  {what}")
    if len(rows) > limit:
        out.append(f"  … {len(rows) - limit} more rows")
    return out
