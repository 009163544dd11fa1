"""item-schema and iterate-over: the items of one array, read item by item through the index.

Invariants:
- PATH must name one array (dot path, pointer or plain JSONPath chain). With a window
  (--offset/--limit) only the windowed items' lines are parsed; without one the array is parsed
  once.
- Rows carry ``_index`` (the item's position in the array); missing fields are null; long
  strings are cut with the exact get-in command that shows them whole. In the table a string
  holding a tab or a line break is shown as a JSON string, so each row stays one line.
- CSV/TSV entries: the rows are the items (PATH ``.``), read from their stored lines through
  the index's row positions; rows also carry ``_line`` (see :mod:`scratch.explore.csvrows`).
- An NDJSON line that is not JSON does not sink the answer: its item is left out (a row of
  nulls for iterate-over; not counted by item-schema) and the answer warns with its line.
- A requested field that no item of the window has is not an error (rows show null) but the
  answer warns, naming close keys at the deepest level the items do have; so does a compared
  --where key no item has when a close key exists.
- --fit on iterate-over keeps the rows that fit and gives ``next``, which resumes at the first
  item not shown: following it visits every item once.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from scratch.context import Context
from scratch.errors import FormatError, LineNotJson, UsageError
from scratch.explore.lines import fit_cap, too_big_to_fit
from scratch.explore.structure import not_json_warning, suggest_slice
from scratch.explore.target import Target, open_target
from scratch.pricing import charge_answer, shrink_to_fit
from scratch.result import Result, Table

if TYPE_CHECKING:
    from scratch.explore.csvrows import CsvRows


def _array(target: Target, path: str) -> tuple[tuple[Any, ...], int]:
    from scratch.query.paths import format_path, json_type, parse_path
    parsed = parse_path(path)
    if not parsed.singular:
        raise UsageError(f"{path!r} must name one array (no wildcards or filters here; use "
                         "--where to filter items)", code="invalid_path", path=path)
    segments = tuple(parsed.segments or ())
    try:
        node = target.index.node(list(segments))
        if node is not None and node.complete and node.type == "array" and node.length is not None:
            return segments, int(node.length)
        value = target.index.value_at(list(segments))  # raises key_path_not_found with details
    except FormatError as exc:  # PATH goes into a stored region that does not parse
        suggest_slice(exc, target)
        raise
    if not isinstance(value, list):
        raise UsageError(f"{format_path(segments) or '.'} is {json_type(value)}, not an array",
                         code="not_an_array", path=path, value_type=json_type(value),
                         suggestions=[f"scratch schema {target.ref}"])
    return segments, len(value)


def _items(target: Target, segments: tuple[Any, ...], total: int, offset: int,
           limit: int | None) -> tuple[list[Any], dict[int, int]]:
    """The window's items, and {array index: line} of those that are NDJSON lines that are not
    JSON (``None`` in the list, so the others keep their index)."""
    from scratch.index.structure import lines_left_out
    end = _window_end(total, offset, limit)
    try:
        items = _read_window(target, segments, total, offset, end)
    except FormatError as exc:  # stored JSON that does not parse (not a line left out)
        suggest_slice(exc, target)
        raise
    # only the root of an NDJSON entry has lines for items
    bad = {} if segments else {k: line for line, k in lines_left_out(target.index).items()
                               if offset <= k < end}
    return items, bad


def _window_end(total: int, offset: int, limit: int | None) -> int:
    if offset < 0 or (limit is not None and limit < 1):
        raise UsageError("--offset must be >= 0 and --limit >= 1", code="invalid_argument")
    return total if limit is None else min(total, offset + limit)


def _table(target: Target, path: str) -> CsvRows | None:
    """The rows of a CSV/TSV entry (PATH must be the root), None for other formats."""
    from scratch.explore.csvrows import is_table, rows_of
    return rows_of(target, path) if is_table(target) else None


def _read_window(target: Target, segments: tuple[Any, ...], total: int, offset: int,
                 end: int) -> list[Any]:
    from scratch.index.structure import leave_out
    if offset == 0 and end == total:
        return list(target.index.value_at(list(segments)))
    items = []
    for i in range(offset, end):
        try:
            items.append(target.index.value_at([*segments, i]))
        except LineNotJson as exc:
            if segments:  # the array lies inside a bad item: nothing to leave out
                raise
            leave_out(target.index, exc)
            items.append(None)
    return items


def item_schema(ctx: Context, ref: str, path: str, *, offset: int = 0,
                limit: int | None = None, depth: int | None = None) -> Result:
    from scratch.query.items import item_schema as union
    from scratch.tokens import count_text
    target = open_target(ctx, ref)
    table = _table(target, path)
    items: Iterable[Any]
    if table is None:
        segments, total = _array(target, path)
        items, bad = _items(target, segments, total, offset, limit)
    else:  # CSV/TSV: the rows, streamed from their stored lines
        total = table.total
        items, bad = table.iter_rows(offset, _window_end(total, offset, limit)), {}
    if depth is not None and depth < 1:
        raise UsageError("--depth must be >= 1", code="invalid_argument")
    result = union(items, offset=offset, limit=limit, total=total, pre_windowed=True,
                   depth=depth, not_json=bad.keys())
    n = result["items"]
    lines = []
    window = result.get("window")
    if window and (offset or (limit is not None and offset + n < total)):
        lines.append(f"window: items {offset}..{offset + n - 1} of {total}")
    kinds = [f"{t} {c}" for t, c in result["item_types"].items()]
    if result["not_json"]:
        kinds.append(f"not JSON {result['not_json']}")
    lines.append("item types: " + (", ".join(kinds) or "none"))
    for f in result["fields"]:
        types = "|".join(f["types"])
        elems = (" of " + "|".join(f["element_types"])) if f.get("element_types") else ""
        lines.append(f"{f['path']}: {types}{elems} {f['presence']}")
    text = "\n".join(lines) + "\n"
    cost = count_text(text, ctx.encoding())
    again = f"scratch item-schema {target.ref} {shlex.quote(path)}"
    shown = n or 1
    suggestions = [f"{again} --depth {d}" for d in (2, 1) if depth is None or d < depth]
    if shown > 1:  # a smaller window than the one refused
        suggestions.append(f"{again} --offset {offset} --limit {max(1, shown // 4)}")
    meta = charge_answer(ctx, cost, code="item_schema_too_large", suggestions=suggestions)
    data = {"name": target.name, "version": target.version, "path": path, "length": total,
            **result}
    target.index.close()
    return Result("item-schema", data=data, text=text, meta=meta,
                  warnings=(*not_json_warning(target, bad.values()),
                            *(table.warnings if table is not None else ())))


def _cell(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        if "\t" in value or "\n" in value or "\r" in value:  # would break the table's lines
            return json.dumps(value, ensure_ascii=False)
        return value
    from scratch.formats.jsonnum import dumps  # JSON numbers exactly as stored
    return dumps(value).decode("utf-8", errors="backslashreplace")


def _render_rows(fields: list[str], rows: list[dict[str, Any]], ref: str,
                 lines: bool = False) -> tuple[str, Table]:
    """Tab-separated rows under a header line; ``lines``: a ``_line`` column (CSV rows)."""
    columns = ["_index", *(["_line"] if lines else []), *fields]
    table_rows = []
    for row in rows:
        cells = [str(row["_index"]), *([str(row["_line"])] if lines else [])]
        for f in fields:
            cell = _cell(row.get(f))
            trunc = (row.get("_truncated") or {}).get(f)
            if trunc:
                whole = f"scratch get-in {ref} {shlex.quote(trunc['path'])}"
                cell += f" [{trunc['length']} chars: {whole}]"
            cells.append(cell)
        table_rows.append(cells)
    text = "\n".join("\t".join(c) for c in [columns, *table_rows]) + "\n"
    return text, Table(columns, table_rows)


def iterate_over(ctx: Context, ref: str, path: str, fields_text: str, *, offset: int = 0,
                 limit: int | None = None, where: str | None = None, fit: bool = False,
                 preview_chars: int = 200) -> Result:
    from scratch.query.items import compile_where, iterate_rows, split_fields
    from scratch.tokens import count_text
    fields = split_fields(fields_text)  # at most MAX_FIELDS, refused before any work
    from scratch.query.paths import parse_path
    flt = compile_where(where) if where else None
    target = open_target(ctx, ref)
    table = _table(target, path)
    base = (f"scratch iterate-over {target.ref} {shlex.quote(path)} --fields "
            f"{shlex.quote(','.join(fields))}"
            + (f" --where {shlex.quote(where)}" if where else ""))
    spec = ctx.encoding()
    if table is None:
        parsed = [parse_path(f) for f in fields]
        segments, total = _array(target, path)
        items, bad = _items(target, segments, total, offset, limit)
        end = offset + len(items)
    else:  # CSV/TSV: the window's rows, read from their stored lines only
        parsed = [table.field_path(f) for f in fields]
        segments, total, bad = (), table.total, {}
        end = _window_end(total, offset, limit)
        items = _table_window(ctx, table, fields, offset, end, fit=fit, filtered=bool(flt),
                              suggestions=_row_suggestions(base, fields, offset, end))
    rows = iterate_rows(items, fields, offset=offset, limit=limit, where=flt,
                        preview_chars=preview_chars, array_location=segments, total=total,
                        pre_windowed=True, paths=parsed)
    if table is not None:
        rows.rows = [{"_index": r["_index"], "_line": table.line(r["_index"]), **r}
                     for r in rows.rows]
    absent = _absent_warnings(items, fields, parsed, flt, offset, bad.keys(),
                              noun="item" if table is None else "row", columns=table is not None)
    lines = table is not None
    text, shown_table = _render_rows(fields, rows.rows, target.ref, lines)
    cost = count_text(text, spec)
    shown_rows = rows.rows
    nxt = None
    if fit:
        cap = fit_cap(ctx)
        keep = len(shown_rows)
        while keep > 0 and cost > cap:  # shrink in proportion, then row by row
            keep = min(keep - 1, int(keep * cap / cost))
            text, shown_table = _render_rows(fields, shown_rows[:keep], target.ref, lines)
            cost = count_text(text, spec)
        keep = shrink_to_fit(ctx, cap, keep, lambda k: {
            "name": target.name, "version": target.version, "path": path, "length": total,
            "fields": fields, "rows": shown_rows[:k],
            "window": {"offset": offset, "limit": limit, "total": total}})
        if keep == 0 and shown_rows:
            raise too_big_to_fit(ctx, "iterate_over_too_large", "one row alone", cost,
                                 [f"{base} --limit 1 --offset {shown_rows[0]['_index']}"])
        if keep < len(shown_rows):
            shown_rows = shown_rows[:keep]
            text, shown_table = _render_rows(fields, shown_rows, target.ref, lines)
            cost = count_text(text, spec)
            resume = shown_rows[-1]["_index"] + 1
            left = None if limit is None else max(0, offset + limit - resume)
            if resume < end and left != 0:
                nxt = f"{base} --offset {resume}" + (f" --limit {left}" if left else "") + " --fit"
    meta = charge_answer(ctx, cost, code="iterate_over_too_large",
                         suggestions=_row_suggestions(base, fields, offset, end),
                         details={"rows": len(shown_rows), "items": end - offset})
    data: dict[str, Any] = {"name": target.name, "version": target.version, "path": path,
                            "length": total, "fields": fields, "rows": shown_rows,
                            "window": {"offset": offset, "limit": limit, "total": total}}
    notices: tuple[str, ...] = ()
    if where:
        noun = "items" if table is None else "rows"
        notices = (f"{len(shown_rows)} of {len(items)} {noun} in the window "
                   f"({offset}..{end - 1}) match --where",)
    if nxt:
        data["next"] = meta["next"] = nxt
        notices = (*notices, f"more: {nxt}")
    target.index.close()
    warnings = (*not_json_warning(target, bad.values()),
                *(table.warnings if table is not None else ()), *absent)
    return Result("iterate-over", data=data, text=text, table=shown_table, meta=meta,
                  notices=notices, warnings=warnings)


def _row_suggestions(base: str, fields: list[str], offset: int, end: int) -> list[str]:
    """What a refused iterate-over offers: half the window, --fit, the first field alone."""
    half = max(1, (end - offset) // 2)
    at = f" --offset {offset}" if offset else ""
    out = [f"{base} --offset {offset} --limit {half}", f"{base}{at} --fit"]
    if len(fields) > 1:
        out.append(base.replace(shlex.quote(",".join(fields)), shlex.quote(fields[0]))
                   + f" --limit {half}")
    return out


SAMPLE_ROWS = 20  # rows rendered to estimate a refused CSV window
FIRST_READ = 256  # rows a CSV --fit page reads first


def _rows_cost(ctx: Context, table: CsvRows, fields: list[str], items: list[dict[str, Any]],
               offset: int) -> int:
    """Tokens of rows ``offset..`` as the answer would show them (text, or JSON under --json)."""
    from scratch.query.items import iterate_rows
    from scratch.tokens import count_text
    rows = iterate_rows(items, fields, offset=offset, pre_windowed=True,
                        paths=[table.field_path(f) for f in fields]).rows
    for r in rows:
        r["_line"] = table.line(r["_index"])
    if ctx.json_mode:
        from scratch.result import compact_json
        return count_text(compact_json(rows), ctx.encoding())
    return count_text(_render_rows(fields, rows, table.target.ref, True)[0], ctx.encoding())


def _table_window(ctx: Context, table: CsvRows, fields: list[str], offset: int, end: int, *,
                  fit: bool, filtered: bool, suggestions: list[str]) -> list[dict[str, Any]]:
    """The rows of a CSV window, read only as far as an answer can go (a shown row costs at
    least one token). Without --where: --fit reads rows in growing steps until they cost more
    than the cap (at most cap + 1 rows), and a window of more rows than the cap is refused
    before it is read, estimated from a sample of its first rows."""
    if filtered or end - offset <= 0:
        return table.read(offset, end)
    cap = fit_cap(ctx)
    if fit:
        n = min(end - offset, FIRST_READ, cap + 1)
        while True:
            items = table.read(offset, offset + n)
            if offset + n >= end or n > cap:
                return items
            cost = _rows_cost(ctx, table, fields, items, offset)
            if cost > cap:
                return items
            n = min(end - offset, cap + 1, max(2 * n, int(n * cap / max(1, cost) * 1.25) + 1))
    if end - offset > cap:
        sample = table.read(offset, offset + SAMPLE_ROWS)
        per_row = _rows_cost(ctx, table, fields, sample, offset) / max(1, len(sample))
        estimate = max(end - offset, int(per_row * (end - offset)))
        fits = int(cap / max(1.0, per_row) * 0.9)  # rows like the sample's that fit the cap
        if fits >= 1:
            suggestions = [suggestions[0].rsplit(" --limit ", 1)[0] + f" --limit {fits}",
                           *suggestions[1:]]
        charge_answer(ctx, estimate, code="iterate_over_too_large", suggestions=suggestions,
                      details={"rows": end - offset, "items": end - offset})
    return table.read(offset, end)


def _absent_warnings(items: list[Any], fields: list[str], parsed: list[Any], flt: Any,
                     offset: int, skip: Collection[int], *, noun: str = "item",
                     columns: bool = False) -> tuple[str, ...]:
    """Warnings for the fields no item of the window has (a misspelling reads as a column of
    nulls otherwise), and for --where keys that are compared (not just tested for) and that no
    item has, when a key close to them exists: a key absent from a window is normal, and
    ``!@.metadata.deletionTimestamp`` is about absence."""
    from scratch.query.items import absent_field, absent_warning, where_paths
    if not items:
        return ()
    last = offset + len(items) - 1
    out = []
    for f, p in zip(fields, parsed, strict=True):
        a = absent_field(items, f, p, skip=skip, offset=offset)
        if a is not None:
            out.append(absent_warning(a, offset, last, noun=noun, columns=columns))
    for text, p in where_paths(flt) if flt is not None else ():
        a = absent_field(items, text, p, skip=skip, offset=offset)
        if a is not None and a.near:
            out.append(absent_warning(a, offset, last, noun=noun, where=True, columns=columns))
    return tuple(out)
