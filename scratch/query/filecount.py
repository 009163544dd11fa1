"""Count-by over a stored JSON or NDJSON file in one DuckDB scan, with the exact answer
:func:`scratch.query.aggregate.count_by` gives over the parsed items.

Why DuckDB and not a column cache: DuckDB's JSON reader groups 100 MB of NDJSON in about
0.2 s on two cores, with nothing built beforehand; a cache would make the first call as slow as
a full Python parse (about 1 s) and need invalidation. Measured side by side with jq in
``tests/bench/bench_count.py``.

How the kinds stay apart: DuckDB groups by the JSON text of each field (SQL NULL: the item
does not have it; the text ``null``: it holds null); the groups are then keyed in Python with
:func:`scratch.query.aggregate.value_key` over the parsed text, so 1 and 1.0 (two texts)
are one key (shown as the integer), ``"1"`` another, and objects with the same members in
another order one key.
DuckDB keeps numbers beyond 64 bits as their text, so they stay exact.

Supported: fields that are plain paths (object keys and non-negative array indexes); items
that are the lines of an NDJSON file, the root array of a JSON file or an array inside it. Anything
else -- and a file DuckDB cannot read (an NDJSON line that is not JSON) -- returns None:
the caller counts over the parsed items instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from scratch.jsonvalues import JSON
from scratch.query.paths import ParsedPath, parse_path
from scratch.valuecounts import MISSING, CountBy, Key, rank, value_key


def _pointer(parsed: ParsedPath) -> str | None:
    """A JSON Pointer for DuckDB's json functions, or None if the path is not plain."""
    segs = parsed.segments
    if segs is None or not parsed.singular:
        return None
    out = []
    for s in segs:
        if isinstance(s, bool) or not isinstance(s, (str, int)):
            return None
        if isinstance(s, int) and s < 0:
            return None
        out.append(str(s).replace("~", "~0").replace("/", "~1"))
    return "/" + "/".join(out) if out else ""


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _items_sql(path: Path, kind: str, location: Sequence[str | int]) -> str | None:
    p = _q(str(path))
    if kind == "ndjson":
        return f"SELECT json FROM read_ndjson_objects({p})"
    if kind != "json":
        return None
    size = max(path.stat().st_size + 1, 16 << 20)
    if not location:
        return (f"SELECT json FROM read_json_objects({p}, format='array', "
                f"maximum_object_size={size})")
    jp = "$"
    for seg in location:
        if isinstance(seg, int):
            if seg < 0:
                return None
            jp += f"[{seg}]"
        else:
            jp += '."' + seg.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return (f"SELECT unnest(json_extract(json, {_q(jp + '[*]')})) AS json FROM "
            f"read_json_objects({p}, format='unstructured', maximum_object_size={size})")


def _parse(text: str) -> JSON:
    import json

    if len(text) > 1 and text[0] == '"' and text[-1] == '"' and "\\" not in text and \
            '"' not in text[1:-1]:
        return text[1:-1]  # a string without escapes is its text (most values counted)
    value: JSON = json.loads(text)  # exact for big integers (orjson would make them floats)
    return value


def count_by_file(path: Path, kind: str, fields: Sequence[str], *, limit: int | None = 10,
                  location: Sequence[str | int] = ()) -> CountBy | None:
    """Value counts of ``fields`` over the items of ``path`` (``kind`` ``ndjson`` or ``json``,
    the array at ``location``), or None when this path cannot answer (see the module
    docstring)."""
    pointers = []
    for f in fields:
        ptr = _pointer(parse_path(f))
        if ptr is None:
            return None
        pointers.append(ptr)
    items = _items_sql(Path(path), kind, location)
    if items is None or not fields:
        return None
    from scratch.query.duck import duckdb_module
    duckdb = duckdb_module()

    # json_extract gives SQL NULL for a path the item lacks and the text null for a null
    cols = ", ".join(f"json_extract(json, {_q(p)})" for p in pointers)
    sql = f"SELECT {cols}, count(*) FROM ({items}) GROUP BY ALL"
    # groups come back in any order (ranked below), so DuckDB need not keep the file's order
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                            "autoload_known_extensions": False,
                                            "preserve_insertion_order": False})
    try:
        from scratch.query.duck import show_progress, watched
        show_progress(con)
        with watched(con, "query"):
            rows = con.execute(sql).fetchall()
    except duckdb.Error:
        return None
    finally:
        con.close()
    return _ranked(rows, fields, limit)


def _ranked(rows: Iterable[Sequence[str | int | None]], fields: Sequence[str],
            limit: int | None) -> CountBy:
    """Rows of (JSON text or None for a missing field, ..., count) as a ranked CountBy."""
    shown: dict[tuple[Key, ...], tuple[object, ...]] = {}  # the values shown for a key
    counts: dict[tuple[Key, ...], int] = {}
    width = len(fields)
    for row in rows:
        values: list[object] = []
        keys: list[Key] = []
        for i in range(width):
            text = row[i]
            v = MISSING if text is None else _parse(str(text))
            values.append(v)
            keys.append(value_key(v))
        k = tuple(keys)
        n = int(row[-1] or 0)
        had = shown.get(k)
        if had is None:
            shown[k] = tuple(values)
            counts[k] = n
        else:  # 1 and 1.0, or reordered object members: one key
            counts[k] += n
            if any(type(a) is float and type(b) is int
                   for a, b in zip(had, values, strict=True)):
                shown[k] = tuple(values)  # shown with the integer spelling, whichever came first
    return rank({k: (shown[k], n) for k, n in counts.items()}, list(fields), limit=limit)


def count_by_scan(path: Path, field: str, *, limit: int | None = 10) -> CountBy | None:
    """Value counts of the top-level key ``field`` over the lines of the NDJSON file ``path``
    by the C scanner (``scratch._fieldcount``: no DuckDB to start, about 1 GB/s), the same
    answer :func:`count_by_file` gives. The lines must all be JSON (the caller checks the index
    found no bad line). None when the scanner is not built, ``field`` is not one plain key, or
    a line is not a plain object the scanner can read as bytes (blank, a key with escapes):
    the caller counts another way."""
    try:
        from scratch._fieldcount import count  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    segs = parse_path(field).segments
    if segs is None or len(segs) != 1 or not isinstance(segs[0], str) or \
            isinstance(segs[0], bool):
        return None
    import mmap

    key = segs[0].encode("utf-8", "surrogatepass")
    try:
        with open(path, "rb") as fh:
            if not fh.seek(0, 2):
                return None
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                found = count(mm, key)
    except (OSError, ValueError):
        return None
    if found is None:
        return None
    texts, missing = found
    try:
        rows: list[tuple[str | None, int]] = [(t.decode("utf-8"), n) for t, n in texts.items()]
    except UnicodeDecodeError:
        return None
    if missing:
        rows.append((None, missing))
    return _ranked(rows, [field], limit)
