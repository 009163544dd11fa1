"""iterate-over: one row per item of an array, with the chosen fields, as a candidate answer.

Invariants:
- Rows carry ``_index`` (the item's position in the array); missing fields are null; long
  strings are cut, with the exact get-in call that shows them whole. In the table a string
  holding a tab or a line break is shown as a JSON string, so each row stays one line.
- CSV/TSV entries: the rows are the items (PATH ``.``), read from their stored lines; rows
  also carry ``_line``.
- Without --where only the rows an answer can show are read (a row costs at least one token,
  so a window of more rows than the cap is refused before it is read, its cost estimated from
  a sample of its first rows). With --where the window's items are read and filtered.
- An NDJSON line that is not JSON is a row of nulls and the answer warns with its line. A
  requested field that no item shown has is not an error (rows show null) but the answer
  warns, naming close keys; so does a compared --where key no item has when a close key exists.
- --fit keeps the rows that fit and gives ``next``, which resumes at the first item not shown:
  following it visits every item once.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from scratch.answers.arrays import array_at, table_of, window_end, window_items
from scratch.answers.candidate import FIT, SHRINK, Alternative, Candidate
from scratch.answers.context import Context
from scratch.answers.rendered import not_json_warning
from scratch.answers.result import Result, Table
from scratch.answers.target import Target, open_target
from scratch.calls import Call, call
from scratch.errors import UsageError

if TYPE_CHECKING:
    from scratch.answers.result import Speller
    from scratch.answers.table_rows import CsvRows

SAMPLE_ROWS = 20  # rows rendered to estimate a refused window's cost


def _cell(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        if "\t" in value or "\n" in value or "\r" in value:  # would break the table's lines
            return json.dumps(value, ensure_ascii=False)
        return value
    import orjson
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def render_rows(fields: list[str], rows: list[dict[str, Any]], ref: str, spell: Speller,
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
                whole = spell(call("get-in", ref=ref, path=trunc["path"]))
                cell += f" [{trunc['length']} chars: {whole}]"
            cells.append(cell)
        table_rows.append(cells)
    text = "\n".join("\t".join(c) for c in [columns, *table_rows]) + "\n"
    return text, Table(columns, table_rows)


def split_fields(fields: Any) -> list[str]:
    """``--fields`` as a list: a comma-separated text or a list of paths."""
    parts = fields.split(",") if isinstance(fields, str) else list(fields or [])
    return [f.strip() for f in parts if isinstance(f, str) and f.strip()]


class RowsAnswer(Candidate):
    """The rows of items ``offset..end-1`` of an array; units are rows shown."""

    command = "iterate-over"
    code = "iterate_over_too_large"
    what = "one row alone"

    def __init__(self, target: Target, path: str, fields: list[str], *, offset: int,
                 limit: int | None, where: str | None, fit: bool, preview_chars: int,
                 asked: Call, owner: bool = True, read: tuple[list[Any], dict[int, int]]
                 | None = None) -> None:
        from scratch.query.items import compile_where
        from scratch.query.paths import parse_path
        super().__init__(asked, fit=fit)
        self.target = target
        self.path = path
        self.fields = fields
        self.offset = offset
        self.limit = limit
        self.where = where
        self.preview_chars = preview_chars
        self._owner = owner
        self.flt = compile_where(where) if where else None
        self.table: CsvRows | None = table_of(target, path)
        if self.table is None:
            self.parsed = [parse_path(f) for f in fields]
            self.segments, self.total = array_at(target, path)
        else:
            self.parsed = [self.table.field_path(f) for f in fields]
            self.segments, self.total = (), self.table.total
        self.end = window_end(self.total, offset, limit)
        self.window = self.end - offset
        # the window's items read so far (from offset), and {array index: line} of the NDJSON
        # lines among them that are not JSON; a smaller window shares its parent's
        self._items: list[Any] = list(read[0][:self.window]) if read else []
        self.bad: dict[int, int] = dict(read[1]) if read else {}
        self._rows: list[dict[str, Any]] | None = None  # with --where: the matching rows
        if self.flt is not None:
            self._rows = self._make_rows(self._read(self.window), self.offset)
            self.units = len(self._rows)
        else:
            self.units = self.window
        self.shrink_units = self.window

    # -- reading -------------------------------------------------------------------------------

    def _read(self, n: int) -> list[Any]:
        """The first ``n`` items of the window (read once, then kept)."""
        if len(self._items) < n:
            stop = self.offset + n
            if self.table is not None:
                self._items = self.table.read(self.offset, stop)
            else:
                items, bad = window_items(self.target, self.segments, self.total, self.offset,
                                          n)
                self._items = items
                self.bad.update(bad)
        return self._items[:n]

    def _make_rows(self, items: list[Any], offset: int) -> list[dict[str, Any]]:
        from scratch.query.items import iterate_rows
        rows = iterate_rows(items, self.fields, offset=offset, where=self.flt,
                            preview_chars=self.preview_chars, array_location=self.segments,
                            total=self.total, pre_windowed=True, paths=self.parsed).rows
        if self.table is not None:
            rows = [{"_index": r["_index"], "_line": self.table.line(r["_index"]), **r}
                    for r in rows]
        return rows

    def _shown(self, k: int) -> tuple[list[dict[str, Any]], list[Any]]:
        """The first k rows, and the items they were read from (for the warnings)."""
        if self._rows is not None:
            return self._rows[:k], self._items
        items = self._read(k)
        return self._make_rows(items, self.offset), items

    # -- the answer ----------------------------------------------------------------------------

    def page(self, k: int) -> Result:
        rows, items = self._shown(k)
        ref = self.target.ref
        lines = self.table is not None
        fields = self.fields
        data: dict[str, Any] = {"name": self.target.name, "version": self.target.version,
                                "path": self.path, "length": self.total, "fields": fields,
                                "rows": rows,
                                "window": {"offset": self.offset, "limit": self.limit,
                                           "total": self.total}}
        notices: tuple[str, ...] = ()
        if self.where:
            noun = "items" if self.table is None else "rows"
            notices = (f"{len(rows)} of {len(items)} {noun} in the window "
                       f"({self.offset}..{self.offset + len(items) - 1}) match --where",)
        warnings = (*not_json_warning(self.target, self.bad.values()),
                    *(self.table.warnings if self.table is not None else ()),
                    *self._absent(items))
        return Result("iterate-over", data=data,
                      text=lambda spell: render_rows(fields, rows, ref, spell, lines)[0],
                      table=lambda spell: render_rows(fields, rows, ref, spell, lines)[1],
                      notices=notices, warnings=warnings)

    def _absent(self, items: list[Any]) -> tuple[str, ...]:
        return absent_warnings(items, self.fields, self.parsed, self.flt, self.offset,
                               self.bad.keys(), noun="item" if self.table is None else "row",
                               columns=self.table is not None)

    def estimate(self, k: int) -> int | None:
        return k if self._rows is None else None  # a row costs at least a token

    def about(self, k: int) -> int | None:
        """A refused window's cost, from a sample of its first rows."""
        from scratch.tokens import count_text
        sample = self._make_rows(self._read(min(k, SAMPLE_ROWS)), self.offset)
        if not sample:
            return None
        text = render_rows(self.fields, sample, self.target.ref, _plain,
                           self.table is not None)[0]
        return int(count_text(text, self.target.spec) / len(sample) * k)

    def _resume_at(self, k: int) -> int:
        """The array index after the last item the first k rows looked at."""
        if self._rows is None:
            return self.offset + k
        return self._rows[k - 1]["_index"] + 1 if k else self.offset

    def resume(self, k: int) -> Call | None:
        if k >= self.units:
            return None
        at = self._resume_at(k)
        left = None if self.limit is None else self.offset + self.limit - at
        if at >= self.end or left == 0:
            return None
        return self.asked.with_args(offset=at, limit=left, fit=True)

    def fit_call(self) -> Call | None:
        return self.asked.with_args(fit=True)

    def shrunk(self, k: int) -> Candidate | None:
        """The same rows from a window of k items."""
        return RowsAnswer(self.target, self.path, self.fields, offset=self.offset, limit=k,
                          where=self.where, fit=False, preview_chars=self.preview_chars,
                          asked=self.asked.with_args(limit=k, fit=None), owner=False,
                          read=(self._items, self.bad))

    def plan(self) -> list[Any]:
        steps: list[Any] = [SHRINK, FIT]
        if len(self.fields) > 1:  # the first field alone, over a window that fits
            first = self.asked.with_args(fields=self.fields[:1], fit=None)
            steps.append(Alternative(candidate=lambda cap: RowsAnswer(
                self.target, self.path, self.fields[:1], offset=self.offset, limit=self.limit,
                where=self.where, fit=False, preview_chars=self.preview_chars, asked=first,
                owner=False), shrink=True))
        return steps

    def details(self) -> dict[str, Any]:
        return {"rows": self.units, "items": self.window}

    def close(self) -> None:
        if self._owner:
            self.target.index.close()


def _plain(c: Call) -> str:
    return f"{c.command} {c.args.get('ref', '')} {c.args.get('path', '')}"


def iterate_over(ctx: Context, ref: str, path: str, fields: Any, offset: int = 0,
                 limit: int | None = None, where: str | None = None, fit: bool = False,
                 preview_chars: int = 200) -> Candidate:
    names = split_fields(fields)
    if not names:
        raise UsageError("--fields needs at least one field, e.g. --fields metadata.name",
                         code="invalid_argument")
    if offset < 0 or (limit is not None and limit < 1):
        raise UsageError("--offset must be >= 0 and --limit >= 1", code="invalid_argument")
    asked = call("iterate-over", ref=ref, path=path, fields=names, where=where,
                 offset=offset or None, limit=limit, fit=fit or None)
    target = open_target(ctx, ref)
    try:
        return RowsAnswer(target, path, names, offset=offset, limit=limit, where=where,
                          fit=fit, preview_chars=preview_chars, asked=asked)
    except BaseException:
        target.index.close()
        raise


def absent_warnings(items: list[Any], fields: list[str], parsed: list[Any], flt: Any,
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
