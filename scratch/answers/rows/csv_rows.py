"""CSV/TSV entries as an array of rows, read through the index.

The items of a CSV/TSV entry are its data rows: ``iterate-over REF .`` and ``item-schema REF .``
read them (``.`` or ``$`` names the rows; no other path does), ``get-in REF N`` answers row N and
``get-in REF N.column`` one cell.

Invariants:
- A window reads only its rows' stored lines. The index's ``rows`` section holds the first line
  of every record, header first, so row k spans lines ``rows[k+1] .. rows[k+2]-1`` (the last row
  runs to the end, or to the line before a parse error that stopped the index: the rows after
  it are left out, with a warning). A record whose quoted field holds newlines spans several
  lines and is one row; the window's lines go through the stdlib ``csv`` reader, which joins
  them back.
- Rows are objects keyed by the header's names, in header order. A byte-order mark before the
  first name is dropped; an empty name becomes ``_colN`` (N: the 1-based column); a repeated
  name gets ``_2``, ``_3`` ... A row with fewer fields than the header lacks the missing columns;
  extra fields go under ``_rest`` as a list of strings.
- Values are typed as ``schema`` types the column (the index infers one type per column over
  all its rows): integer columns hold integers, number columns numbers, boolean columns
  true/false (from the spellings the index accepts: true/false, yes/no, TRUE, True ...); date
  and string columns hold strings. An empty cell is null in every column. The index types a
  column integer or number only when every value reads back as written, so a zero-padded
  code (``007``), ``+1``, ``1.50`` or ``1e5`` makes its column text; a value that still does
  not read back as its column's type (an index of an older format) stays a string.
- A quoted value keeps its embedded line breaks as stored (``\\n`` or ``\\r\\n``).
- Rows are numbered from 0 (``_index``, like the items of any array); ``_line`` is the stored
  line where the row starts.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeAlias

from scratch.answers.kernel.candidate import Candidate
from scratch.answers.kernel.target import Target
from scratch.answers.rows.base import Item, Row, register_table, rows_in_chunks
from scratch.calls import Call, call
from scratch.errors import FormatError, KeyPathNotFound, UsageError

if TYPE_CHECKING:
    from scratch.query.paths import ParsedPath

Cell: TypeAlias = "str | int | float | bool"  # a cell as its column's type reads it

CSV_FORMATS = ("csv", "tsv")
CHUNK_ROWS = 4096  # rows read per stored-lines read when a window is streamed

# the shapes the index's column typing accepts (scratch.index.textinfo)
_INT = re.compile(r"[+-]?\d+\Z")
_NUM = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_BOOL = {"true": True, "yes": True, "TRUE": True, "True": True,
         "false": False, "no": False, "FALSE": False, "False": False}


def is_table(target: Target) -> bool:
    return target.format in CSV_FORMATS


def _integer(v: str) -> Cell:
    if not _INT.match(v):
        return v
    digits = v.lstrip("+-")
    return v if len(digits) > 1 and digits[0] == "0" else int(v)


def _number(v: str) -> Cell:
    if _INT.match(v):
        return _integer(v)
    if _NUM.match(v):
        f = float(v)
        return f if math.isfinite(f) else v
    return v


def _boolean(v: str) -> Cell:
    return _BOOL.get(v, v)


_CONVERT: dict[str, Callable[[str], Cell]] = {"integer": _integer, "number": _number,
                                             "boolean": _boolean}


def column_keys(header: Sequence[str]) -> list[str]:
    """The row keys of a header: see the module docstring."""
    keys: list[str] = []
    seen: set[str] = set()
    for i, name in enumerate(header):
        if i == 0 and name.startswith("\ufeff"):
            name = name[1:]
        key = name or f"_col{i + 1}"
        n = 1
        while key in seen:
            n += 1
            key = f"{name or f'_col{i + 1}'}_{n}"
        seen.add(key)
        keys.append(key)
    return keys


class CsvRows:
    """The data rows of one CSV/TSV entry (see the module docstring)."""

    def __init__(self, target: Target) -> None:
        index = target.index
        info = index.info
        self.target = target
        self.index = index
        self.delimiter = str(info.get("delimiter") or ("\t" if index.format == "tsv" else ","))
        self.columns = column_keys([str(h) for h in info.get("header") or []])
        types = [str(c.get("type")) for c in info.get("column_info") or []]
        self._convert = [_CONVERT.get(types[i]) if i < len(types) else None
                         for i in range(len(self.columns))]
        self.rest_key = "_rest"
        while self.rest_key in self.columns:
            self.rest_key = "_" + self.rest_key
        starts = index.section("rows")
        if starts is None and info.get("rows"):
            raise FormatError("the index of this csv entry has no row positions",
                              format=index.format)
        self.starts: Sequence[int] = starts if starts is not None else ()
        self.total = max(0, len(self.starts) - 1)
        # a parse error stopped the index: the rows after it are not rows here, and the last
        # row ends before the line the error was met on
        errors = [w for w in index.warnings if w.startswith("CSV parse error")]
        self.warnings = tuple(f"{w}; the rows from there on are left out" for w in errors)
        met = re.match(r"CSV parse error at line (\d+)", errors[0]) if errors else None
        self.last_line = index.line_count
        if met and 1 <= int(met.group(1)) - 1 < index.line_count:
            self.last_line = max(int(met.group(1)) - 1, self.line(self.total - 1)
                                 if self.total else 1)

    def line(self, k: int) -> int:
        """The stored line where row ``k`` starts."""
        return int(self.starts[k + 1])

    def field_path(self, text: str) -> ParsedPath:
        """A --fields entry as a path into a row: a column name as it is (``a.b`` is the column
        ``a.b`` when there is one), anything else as a path."""
        from scratch.query.paths import parse_field
        return parse_field(text, [*self.columns, self.rest_key])

    def _row(self, rec: list[str]) -> Row:
        row: Row = {}
        for key, convert, v in zip(self.columns, self._convert, rec, strict=False):
            row[key] = None if v == "" else convert(v) if convert is not None else v
        if len(rec) > len(self.columns):
            row[self.rest_key] = rec[len(self.columns):]
        return row

    def iter_rows(self, offset: int, end: int) -> Iterator[Row]:
        """Rows ``offset..end-1``, reading their stored lines a chunk of rows at a time."""
        return rows_in_chunks(self._read, offset, end, self.total, CHUNK_ROWS)

    def read(self, offset: int, end: int) -> list[Row]:
        return list(self.iter_rows(offset, end))

    def _read(self, offset: int, end: int) -> list[Row]:
        first = self.line(offset)
        last = self.line(end) - 1 if end < self.total else self.last_line
        data = self.index.read_bytes(first, last).decode("utf-8", "replace")
        # split at \n only, as the index did (a lone \r inside a line is the csv reader's call)
        parts = data.split("\n")
        lines = [p + "\n" for p in parts[:-1]]
        if parts[-1]:
            lines.append(parts[-1])
        reader = csv.reader(lines, delimiter=self.delimiter)
        out: list[Row] = []
        want = end - offset
        try:
            for rec in reader:
                if rec:  # blank lines between records are not rows (the index skips them too)
                    out.append(self._row(rec))
                    if len(out) == want:
                        break
        except csv.Error as exc:
            line = first + max(0, reader.line_num - 1)
            raise FormatError(f"csv does not parse at line {line}: {exc}", line=line,
                              suggestions=[call("slice", ref=self.target.ref, start=line,
                                                end=line)]) from None
        if len(out) < want:  # the stored lines changed under the index: never silently short
            raise FormatError(f"rows {offset}..{end - 1} of the csv index are not in the "
                              f"stored lines {first}..{last}", line=first)
        return out

    # -- suggestions -------------------------------------------------------------------------

    def some_columns(self, n: int = 3) -> str:
        return ",".join(self.columns[:n]) or "COLUMN"

    def iterate_command(self, fields: str | None = None) -> Call:
        return call("iterate-over", ref=self.target.ref, path=".",
                    fields=(fields or self.some_columns()).split(","), limit=20)


def rows_of(target: Target, path: str) -> CsvRows:
    """The rows of a CSV/TSV entry, for item-schema and iterate-over at ``path`` (the root)."""
    from scratch.query.paths import parse_path
    table = CsvRows(target)
    if not parse_path(path).is_root:
        raise UsageError(f"{target.format} entry: its rows are at . (or $); {path!r} names "
                         "nothing else", code="invalid_path", path=path,
                         suggestions=[table.iterate_command(),
                                      call("item-schema", ref=target.ref, path=".")])
    return table


# -- get-in ---------------------------------------------------------------------------------


def get_in(target: Target, path: str, asked: Call, *, offset: int = 0,
           limit: int | None = None, fit: bool = False, owner: bool = True) -> Candidate:
    """get-in on a CSV/TSV entry: ``N`` is row N (an object), ``N.column`` one cell."""
    from scratch.answers.kernel.candidate import Alternative, Some
    from scratch.answers.values.lines import TextLines, ValueLines
    from scratch.answers.values.rendered import render_value
    from scratch.jsonvalues import json_type
    from scratch.pathnames import format_path
    from scratch.query.paths import parse_path
    try:
        table = CsvRows(target)
        ref = target.ref
        parsed = parse_path(path)
        segments = list(parsed.names or ())
        if not parsed.singular or not segments:
            raise UsageError(f"get-in on a {target.format} entry takes a row (N) or a cell "
                             "(N.column); read many rows with iterate-over",
                             code="invalid_path", path=path, rows=table.total,
                             suggestions=[table.iterate_command(),
                                          call("item-schema", ref=ref, path="."),
                                          call("get-in", ref=ref, path="0")])
        k = _row_number(table, segments[0], path)
        row = table.read(k, k + 1)[0]
        value = _cell(table, row, k, segments[1:], path)
    except BaseException:
        if owner:
            target.index.close()
        raise
    cells = [Alternative(call=call("get-in", ref=ref, path=format_path([k, key])))
             for key in list(row)[:3]] if isinstance(value, dict) else []

    def make_data(paging: dict[str, Item], body: str, windowed: bool, with_fit: bool,
                  cut: bool) -> dict[str, Item]:
        data: dict[str, Item] = {"name": target.name, "version": target.version, "path": path,
                                "type": json_type(value), "row": k, "line": table.line(k),
                                **paging}
        if windowed or cut or isinstance(value, str):
            data["text"] = body
        else:
            data["value"] = value
        return data

    return ValueLines(asked, TextLines(render_value(value)), offset=offset, limit=limit,
                      fit=fit, make_data=make_data, warnings=table.warnings,
                      alternatives=lambda: [Some(cells, most=3)] if cells else [],
                      on_close=target.index.close if owner else None)


def _row_number(table: CsvRows, seg: str | int, path: str) -> int:
    from scratch.pathnames import format_path
    from scratch.query.items import close_keys
    ref = table.target.ref
    if isinstance(seg, int):
        k = seg + table.total if seg < 0 else seg
        if 0 <= k < table.total:
            return k
        last = [call("get-in", ref=ref, path=str(table.total - 1))] if table.total else []
        raise KeyPathNotFound(f"row {seg} out of range: the entry has {table.total} rows",
                              path=path, valid_prefix=".", failed_segment=seg,
                              array_length=table.total,
                              suggestions=[*last, call("schema", ref=ref)])
    # a column name where a row number goes: offer that column of row 0 and of every row
    want = str(seg)
    cols = [want] if want in table.columns else close_keys(want, table.columns)
    suggestions = [call("get-in", ref=ref, path=format_path([0, c])) for c in cols]
    suggestions += [table.iterate_command(c) for c in cols[:1]] or [table.iterate_command()]
    raise KeyPathNotFound(f"{want!r} is not a row number: a {table.target.format} entry is an "
                          f"array of {table.total} rows (get-in N or N.column)", path=path,
                          valid_prefix=".", failed_segment=seg, array_length=table.total,
                          suggestions=suggestions)


def _cell(table: CsvRows, row: Row, k: int, rest: list[str | int], path: str) -> Item:
    """The value at ``rest`` inside row ``k``; a missing column names the close ones."""
    from scratch.pathnames import format_path
    from scratch.query.items import close_keys
    from scratch.query.paths import locate
    ref = table.target.ref
    if not rest:
        return row
    key = rest[0] if isinstance(rest[0], str) else str(rest[0])
    if key not in row:
        keys = list(row)
        from scratch.pathnames import MAX_AVAILABLE_KEYS
        suggestions = [call("get-in", ref=ref, path=format_path([k, c]))
                       for c in close_keys(key, keys)]
        raise KeyPathNotFound(f"no column {key!r} in row {k} ({len(keys)} columns)", path=path,
                              valid_prefix=str(k), failed_segment=rest[0],
                              available_keys=keys[:MAX_AVAILABLE_KEYS], key_count=len(keys),
                              suggestions=[*suggestions, call("schema", ref=ref)])
    try:
        return locate(row[key], rest[1:]).value
    except KeyPathNotFound as exc:  # the cell's own locations, told from the row's number
        inner = str(exc.details.get("valid_prefix") or ".")
        prefix = format_path([k, key, *([] if inner == "." else _segments(inner))])
        exc.message = exc.message.replace(f" at {inner} ", f" at {prefix} ", 1)
        exc.template = exc.template.replace(f" at {inner} ", f" at {prefix} ", 1)
        exc.details["valid_prefix"] = prefix
        exc.details["path"] = path
        index = exc.details.get("segment_index")
        if isinstance(index, int):
            exc.details["segment_index"] = index + 2
        exc.details["suggestions"] = [call("get-in", ref=ref, path=prefix)]
        raise


def _segments(text: str) -> list[str | int]:
    from scratch.query.paths import parse_path
    return list(parse_path(text).names or ())


@register_table
def _csv_table(target: Target, path: str) -> CsvRows | None:
    """A CSV/TSV entry's rows (the first kind of table :func:`~.base.table_of` asks)."""
    return rows_of(target, path) if is_table(target) else None
