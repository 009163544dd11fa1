"""iterate-over: one row per item of an array, with the chosen fields, as a candidate answer;
and its counting forms (``--count``, ``--count-by``, :mod:`scratch.answers.rows.counting`).

Invariants:
- Rows carry ``_index`` (the item's position in the array); missing fields are null; long
  strings are cut, with the exact get-in call that shows them whole. In the table a string
  holding a tab or a line break is shown as a JSON string, so each row stays one line.
- CSV/TSV entries and parsed logs: the rows are the items (PATH ``.``), read from their stored
  lines; rows also carry ``_line``.
- Without fields a row is its item whole, compactly: a JSON item as one line of JSON (column
  ``item``), a CSV row or log record as its stored line (column ``line``, the first line of a
  row spanning more); cut like any long cell, with the get-in or slice that shows it whole.
- The rows an answer pages are the selection: every item, or with ``--where`` every item that
  matches (the whole array is scanned), ordered by ``--sort`` when given (stable; numbers as
  numbers; null, then missing, last). ``--offset``/``--limit`` are positions in the selection,
  a negative offset counting from its end (``--offset -20``: the last 20); the answer says
  ``N of M items match``.
- Without --where and --sort only the rows an answer can show are read (a row costs at least
  one token, so a window of more rows than the cap is refused before it is read, its cost
  estimated from a sample of its first rows).
- An NDJSON line that is not JSON is a row of nulls (left out of a selection) and the answer
  warns with its line. A requested field that no item shown has is not an error (rows show
  null) but the answer warns, naming close keys; so does a compared --where key no item of
  the first :data:`WHERE_SAMPLE` has when a close key exists (rows, --count and --count-by
  alike); and a --where comparing two fields says how many matches had both sides null or
  missing (RFC 9535's null == null is true).
- A --where is compiled before the entry is opened: one that reads no field of the item, or
  reads ``$`` (the whole document), or writes ``=`` for ``==``, is refused (``invalid_path``)
  saying so, with the corrected call as a suggestion when there is one guess.
- --fit keeps the rows that fit and gives ``next``, which resumes at the first row not shown:
  following it visits every row of the selection once.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import FIT as FIT_ARG
from scratch.answers.commands._args import KEY_FIELD, PATH, REF, ROWS_PATH_HELP
from scratch.answers.kernel.candidate import FIT, SHRINK, Alternative, Candidate
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result, Table
from scratch.answers.kernel.target import Target, open_target
from scratch.answers.rows.items import Item, Items, JsonItems, Row, good, items_of
from scratch.answers.rows.lists import cell_text
from scratch.calls import Call, call
from scratch.declare import Arg, Command, Tool
from scratch.errors import UsageError, argument
from scratch.words import plural

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step
    from scratch.answers.kernel.result import Speller
    from scratch.query.items import Absent, Where
    from scratch.query.paths import ParsedPath
    from scratch.valuecounts import CountBy

SAMPLE_ROWS = 20  # rows rendered to estimate a refused window's cost
WHERE_SAMPLE = 200  # items a --where key is looked for in, to warn about a misspelling

_cell = cell_text


def render_rows(fields: list[str], rows: list[Row], ref: str, spell: Speller,
                extra: Sequence[str] = ()) -> tuple[str, Table]:
    """Tab-separated rows under a header line; ``extra``: the columns the source adds after
    ``_index`` (``_line`` of CSV rows, ``_key`` of a map's records, ``_parent`` of flattened
    rows)."""
    columns = ["_index", *extra, *fields]
    table_rows = []
    for row in rows:
        cells = [str(row["_index"]), *(_cell(row.get(e)) for e in extra)]
        for f in fields:
            cell = _cell(row.get(f))
            trunc = (row.get("_truncated") or {}).get(f)
            if trunc:
                shows = (call("slice", ref=ref, start=trunc["line"], end=trunc["line"])
                         if "line" in trunc else call("get-in", ref=ref, path=trunc["path"]))
                whole = spell(shows)
                cell += f" [{trunc['length']} chars: {whole}]"
            cells.append(cell)
        table_rows.append(cells)
    text = "\n".join("\t".join(c) for c in [columns, *table_rows]) + "\n"
    return text, Table(columns, table_rows)


def split_fields(fields: str | Iterable[object] | None) -> list[str]:
    """``--fields`` as a list: a comma-separated text or a list of paths. More than
    ``MAX_FIELDS`` is refused at once, before any item is read (each field costs work per
    item)."""
    from scratch.query.items import check_field_count
    parts = fields.split(",") if isinstance(fields, str) else list(fields or [])
    names = [f.strip() for f in parts if isinstance(f, str) and f.strip()]
    check_field_count(len(names))
    return names


class Selection:
    """The items a --where/--sort answer pages: their indexes in order, and how many items
    were looked at (the scan is shared by the smaller answers sized from it)."""

    def __init__(self, source: Items, flt: Where | None, sort: str | None, desc: bool) -> None:
        from scratch.query.aggregate import field_getter, order_pairs
        seen = 0

        def passing() -> Iterator[tuple[int, Item]]:
            nonlocal seen
            for k, item in good(source.scan(), source.bad):
                seen += 1
                if flt is None or flt(item):
                    yield k, item

        picked = (order_pairs(passing(), field_getter(source.field_path(sort)), desc=desc)
                  if sort else [k for k, _ in passing()])
        self.indexes = picked
        self.seen = seen
        self.null_warning = flt.null_warning(len(picked)) if flt is not None else None


class RowsAnswer(Candidate):
    """Rows ``start..stop-1`` of the selection of an array; units are rows shown."""

    command = "iterate-over"
    code = "iterate_over_too_large"
    what = "one row alone"

    def __init__(self, target: Target, source: Items, path: str, fields: list[str], *,
                 offset: int, limit: int | None, where: str | None, sort: str | None,
                 desc: bool, fit: bool, preview_chars: int, asked: Call, owner: bool = True,
                 selection: Selection | None = None,
                 cache: dict[int, Item] | None = None) -> None:
        from scratch.query.aggregate import resolve_window
        from scratch.query.items import compile_where
        super().__init__(asked, fit=fit)
        self.target = target
        self.source = source
        self.path = path
        self.fields = fields
        self.offset = offset
        self.limit = limit
        self.where = where
        self.sort = sort
        self.desc = desc
        self.preview_chars = preview_chars
        self._owner = owner
        self.flt = compile_where(where) if where else None
        # no fields: each item whole, compactly (a parsed log record or CSV row: its line)
        self.whole = not fields
        self.columns = fields or ["line" if source.lines else "item"]
        self.parsed = [source.field_path(f) for f in fields]
        self.extra = [e for e in source.added if e not in fields]  # shown after _index
        self.total = source.total
        if selection is None and (where or sort):
            selection = Selection(source, self.flt, sort, desc)
        self.selection = selection
        self.count = len(selection.indexes) if selection is not None else self.total
        self.start, self.stop = resolve_window(offset, limit, self.count)
        self.units = self.stop - self.start
        self.shrink_units = self.units
        self._items: dict[int, Item] = cache if cache is not None else {}

    # -- reading -------------------------------------------------------------------------------

    def _shown_words(self, k: int) -> str:
        """The k rows shown, named as their rows are labelled: by the ``_index`` range (in
        sorted order, by their ranks among the matches)."""
        if self.sort:
            return (f"{plural(k, 'row')} shown (matches {self.start + 1:,}..{self.start + k:,} "
                    "in that order)")
        first, last = self._index(self.start), self._index(self.start + k - 1)
        return (f"{plural(k, 'row')} shown: _index {first}" + (f"..{last}" if k > 1 else ""))

    def _index(self, p: int) -> int:
        """The array index of position ``p`` of the selection."""
        return self.selection.indexes[p] if self.selection is not None else p

    def _shown(self, k: int) -> tuple[list[Row], list[Item]]:
        """The first k rows, and the items they were read from (for the warnings)."""
        from scratch.query.items import iterate_rows
        indexes = [self._index(p) for p in range(self.start, self.start + k)]
        missing = [i for i in indexes if i not in self._items]
        if missing:
            self._items.update(self.source.fetch(missing))
        items = [self._items[i] for i in indexes]
        rows: list[Row] = []
        if self.whole and self.source.lines:
            return [self._line_row(i) for i in indexes], items
        for i, item in zip(indexes, items, strict=True):
            shown = item
            if self.whole and self.extra and isinstance(item, dict):
                # the item as stored: the key (or parent) it carries is its own column
                shown = {k: v for k, v in item.items() if k not in self.extra}
            row = iterate_rows([shown], self.fields or ["."], offset=i,
                               preview_chars=self.preview_chars,
                               array_location=self.source.segments, total=self.total,
                               pre_windowed=True,
                               paths=self.parsed or [source_path_whole()]).rows[0]
            cut = row.get("_truncated")
            if isinstance(cut, dict) and cut and isinstance(self.source, JsonItems) and \
                    self.source.at.kind != "array":
                row["_truncated"] = cut = _relocated(self.source, i, cut)
            if self.whole:
                row = {"_index": i, "item": row.get("."),
                       **({"_truncated": {"item": cut["."]}}
                          if isinstance(cut, dict) and "." in cut else {})}
            if self.source.lines:
                row = {"_index": i, "_line": self.source.line(i), **row}
            elif self.extra:
                row = {"_index": i, **{e: item.get(e) if isinstance(item, dict) else None
                                       for e in self.extra}, **row}
            rows.append(row)
        return rows, items

    def _line_row(self, i: int) -> Row:
        """Row ``i`` of a table as its stored line (the first, for a CSV row spanning more),
        cut like any long cell, with the slice that shows it whole."""
        line = int(self.source.line(i) or 0)
        raw = self.target.index.read_lines(line, line)
        text = raw[0].decode("utf-8", "replace") if raw else ""
        row: Row = {"_index": i, "_line": line, "line": text}
        if len(text) > self.preview_chars:
            row["line"] = text[:self.preview_chars] + "…"
            row["_truncated"] = {"line": {"line": line, "length": len(text)}}
        return row

    # -- the answer ----------------------------------------------------------------------------

    def page(self, k: int) -> Result[dict[str, object]]:
        rows, items = self._shown(k)
        ref = self.target.ref
        extra = self.extra
        fields = self.columns
        window = {"offset": self.start, "limit": self.limit, "total": self.count}
        data: dict[str, object] = {"name": self.target.name, "version": self.target.version,
                                   "path": self.path, "length": self.total, "fields": fields,
                                "rows": rows, "window": window}
        noun = self.source.noun
        notices: tuple[str, ...] = ()
        if self.selection is not None:
            data["matches"] = self.count
            data["items"] = self.selection.seen
            if self.where:
                data["where"] = self.where
            if self.sort:
                data["sort"] = self.sort
                data["desc"] = self.desc
            shown = (self._shown_words(k) if k
                     else "no rows shown" if self.count else "none to show")
            what = (f"{self.count:,} of {plural(self.selection.seen, noun, grouped=True)} "
                    "match the filter" if self.where else plural(self.count, noun, grouped=True))
            # ascending said too: the order an agent did not ask for is the one it misreads
            order = (f", by {self.sort} {'descending' if self.desc else 'ascending'}"
                     if self.sort else "")
            notices = (f"{what}{order}; {shown}",)
        nulls = (self.selection.null_warning,) if self.selection is not None else ()
        warnings = (*self.source.warnings, *self._absent(items), *(w for w in nulls if w))
        return Result("iterate-over", data=data,
                      text=lambda spell: render_rows(fields, rows, ref, spell, extra)[0],
                      table=lambda spell: render_rows(fields, rows, ref, spell, extra)[1],
                      notices=notices, warnings=warnings)

    def _absent(self, items: list[Item]) -> tuple[str, ...]:
        shown = [self._index(p) for p in range(self.start, self.start + len(items))]
        noun = "item" if self.source.noun == "item" else "row"
        columns = self.source.table is not None
        bad = self.source.bad.keys()
        out: list[str] = []
        if items and shown == list(range(shown[0], shown[0] + len(shown))):
            out += absent_warnings(items, self.fields, self.parsed, None, shown[0], bad,
                                   noun=noun, columns=columns)
        elif items:  # rows picked from across the array: judge the fields on them alone
            out += absent_warnings(items, self.fields, self.parsed, None, 0, (),
                                   noun=noun, columns=columns, spread=True)
        if (self.flt is not None or not items) and self.total:
            # nothing shown, or a --where: judge the names on the first items of the array
            sample = self._sample(min(self.total, WHERE_SAMPLE))
            fields, parsed = ([], []) if items else (self.fields, self.parsed)
            out += absent_warnings(sample, fields, parsed, self.flt, 0, bad, noun=noun,
                                   columns=columns)
        return tuple(out)

    def _sample(self, n: int) -> list[Item]:
        missing = [i for i in range(n) if i not in self._items]
        if missing:
            self._items.update(self.source.fetch(missing))
        return [self._items[i] for i in range(n)]

    def estimate(self, k: int) -> int | None:
        return k  # a row costs at least a token

    def about(self, k: int) -> int | None:
        """A refused window's cost, from a sample of its first rows."""
        from scratch.tokens import count_text
        sample = self._shown(min(k, SAMPLE_ROWS))[0]
        if not sample:
            return None
        text = render_rows(self.columns, sample, self.target.ref, _plain, self.extra)[0]
        return int(count_text(text, self.target.spec) / len(sample) * k)

    def resume(self, k: int) -> Call | None:
        if k >= self.units:
            return None
        at = self.start + k
        left = None if self.limit is None else self.stop - at
        return self.asked.with_args(offset=at, limit=left, fit=True)

    def fit_call(self) -> Call | None:
        return self.asked.with_args(fit=True)

    def _again(self, asked: Call, *, fields: list[str] | None = None, limit: int | None,
               offset: int | None = None) -> RowsAnswer:
        return RowsAnswer(self.target, self.source, self.path, fields or self.fields,
                          offset=self.offset if offset is None else offset, limit=limit,
                          where=self.where, sort=self.sort, desc=self.desc, fit=False,
                          preview_chars=self.preview_chars, asked=asked, owner=False,
                          selection=self.selection, cache=self._items)

    def shrunk(self, k: int) -> Candidate | None:
        """The first k rows of this answer."""
        return self._again(self.asked.with_args(limit=k, fit=None), limit=k)

    def plan(self) -> list[Step]:
        steps: list[Step] = [SHRINK, FIT]
        if len(self.fields) > 1:  # the first field alone, over a window that fits
            first = self.asked.with_args(fields=self.fields[:1], fit=None)
            steps.append(Alternative(candidate=lambda cap: self._again(
                first, fields=self.fields[:1], limit=self.limit), shrink=True))
        return steps

    def details(self) -> dict[str, object]:
        out: dict[str, object] = {"rows": self.units, "items": self.total}
        if self.selection is not None:
            out["matches"] = self.count
        return out

    def close(self) -> None:
        if self._owner:
            self.target.index.close()


def source_path_whole() -> ParsedPath:
    """The item itself, as a field path (``.``)."""
    from scratch.query.paths import parse_path
    return parse_path(".")


def _relocated(source: JsonItems, k: int, cut: dict[str, Item]) -> dict[str, Item]:
    """A cut cell's get-in path, written at the array index ``k``, said where row ``k`` of a
    map of records or of flattened arrays really is (a field the rows add has none)."""
    from scratch.pathnames import format_path
    from scratch.query.paths import parse_path
    out: dict[str, Item] = {}
    for name, trunc in cut.items():
        names = parse_path(trunc["path"]).names or ()
        at = source.at.field_location(k, names[len(source.segments) + 1:])
        if at is not None:
            out[name] = {**trunc, "path": format_path(list(at))}
    return out


def _plain(c: Call) -> str:
    return f"{c.command} {c.args.get('ref', '')} {c.args.get('path', '')}"


PREVIEW_CHARS = 200  # a string cell longer than this is cut, with the get-in that shows it

FIELDS = Arg("Comma-separated paths in each item (a.b,c; len(a): its size).", flags=("--fields",),
             metavar="A,B.C")
WHERE = Arg("RFC 9535 filter on each item, e.g. @.status >= 500; also number(), lower(), "
            "upper().",
            flags=("--where",),
            metavar="EXPR", max_length=1 << 16)  # the filter's own checks say what is wrong
SORT = Arg("Order rows by this field (nulls last).", flags=("--sort",), metavar="FIELD",
           max_length=1024)
DESC = Arg("With sort: largest first.", flags=("--desc",))
COUNT = Arg("Just the number of (matching) items.", flags=("--count",))
COUNT_BY = Arg("Exact counts of the values of these comma-separated fields, biggest "
               "first (limit: 10).",
               flags=("--count-by",), metavar="FIELD[,FIELD]")
OFFSET = Arg("Skip this many rows (count_by: values); negative: from the end.",
             flags=("--offset",), metavar="N")
LIMIT = Arg("At most this many rows (count_by: values).", flags=("--limit",),
            metavar="N", minimum=1)


def iterate_over(ctx: Context, ref: Annotated[str, REF], path: Annotated[str, PATH],
                 fields: Annotated[list[str] | None, FIELDS] = None,
                 where: Annotated[str | None, WHERE] = None,
                 sort: Annotated[str | None, SORT] = None, desc: Annotated[bool, DESC] = False,
                 count: Annotated[bool, COUNT] = False,
                 count_by: Annotated[list[str] | None, COUNT_BY] = None,
                 offset: Annotated[int, OFFSET] = 0, limit: Annotated[int | None, LIMIT] = None,
                 fit: Annotated[bool, FIT_ARG] = False,
                 key_field: Annotated[str | None, KEY_FIELD] = None, *, asked: Call
                 ) -> Candidate:
    from scratch.answers.rows.counting import split_names
    names = split_fields(fields)
    by = split_names(count_by)
    if count and by:
        raise UsageError(f"{argument('count')} and {argument('count_by')} are two answers: "
                         "give one", code="invalid_argument", argument="count_by")
    if limit is not None and limit < 1:
        raise UsageError(f"{argument('limit')} must be >= 1, not {limit}",
                         code="invalid_argument", argument="limit")
    if desc and not sort:
        raise UsageError(f"{argument('desc')} orders by {argument('sort')}: give the field",
                         code="invalid_argument", argument="desc")
    if (count or by) and sort:
        raise UsageError(f"{argument('sort')} orders rows; counts have their own order "
                         "(biggest first)", code="invalid_argument", argument="sort")
    asked = asked.with_args(fields=names or None, count_by=by or None)  # split at commas
    if where:
        check_where(where, asked)
    target = open_target(ctx, ref)
    try:
        source = _items(target, path, key_field, asked)
        if count:
            return _count(target, source, path, where, asked)
        if by:
            return _count_by(target, source, path, by, where, asked, offset=offset,
                             limit=limit, fit=fit)
        return RowsAnswer(target, source, path, names, offset=offset, limit=limit,
                          where=where, sort=sort, desc=desc, fit=fit,
                          preview_chars=PREVIEW_CHARS, asked=asked)
    except BaseException:
        target.index.close()
        raise


def _items(target: Target, path: str, key_field: str | None, asked: Call) -> Items:
    from scratch.answers.rows.arrays import suggest_key_field
    try:
        return items_of(target, path, key_field)
    except UsageError as exc:
        suggest_key_field(exc, asked)
        raise


def check_where(where: str, asked: Call) -> None:
    """Compile ``where`` before any item is read; a refusal with a likely fix suggests the
    same call with it."""
    from scratch.query.items import WhereError, compile_where
    try:
        compile_where(where)
    except WhereError as exc:
        if exc.fix is not None:
            exc.details["suggestions"] = [asked.with_args(where=exc.fix)]
        raise


def where_warnings(source: Items, flt: Where | None, matches: int) -> tuple[str, ...]:
    """A counting answer's warnings about its --where: compared keys that no item of the first
    :data:`WHERE_SAMPLE` has (when a close key exists), and matches made by null == null."""
    if flt is None:
        return ()
    out: list[str] = []
    n = min(source.total or 0, WHERE_SAMPLE)
    if n:
        fetched = source.fetch(list(range(n)))
        noun = "item" if source.noun == "item" else "row"
        out += absent_warnings([fetched[i] for i in range(n)], [], [], flt, 0,
                               source.bad.keys(), noun=noun,
                               columns=source.table is not None)
    nulls = flt.null_warning(matches)
    if nulls:
        out.append(nulls)
    return tuple(out)


def _base(target: Target, path: str, where: str | None) -> dict[str, object]:
    data: dict[str, object] = {"name": target.name, "version": target.version, "path": path}
    if where:
        data["where"] = where
    return data


def _count(target: Target, source: Items, path: str, where: str | None, asked: Call
           ) -> Candidate:
    from dataclasses import replace

    from scratch.answers.rows.counting import count_items, count_result
    from scratch.query.items import compile_where
    flt = compile_where(where) if where else None
    n, seen, seconds = count_items(source, flt)
    noun = source.noun
    what = (f"{n:,} of {plural(seen, noun, grouped=True)} match the filter" if where
            else plural(n, noun, grouped=True))
    data = {**_base(target, path, where), "items": seen, "seconds": round(seconds, 3)}
    result = count_result("iterate-over", asked, data, n, f"{what} ({seconds:.2f} s)",
                          "iterate_over_too_large", on_close=target.index.close)
    result.result = replace(result.result,
                            warnings=(*source.warnings, *where_warnings(source, flt, n)))
    return result


def _count_by(target: Target, source: Items, path: str, by: list[str], where: str | None,
              asked: Call, *, offset: int, limit: int | None, fit: bool) -> Candidate:
    from scratch.answers.rows.counting import count_by_answer, count_by_items
    from scratch.query.items import compile_where
    flt = compile_where(where) if where else None
    counted, engine, seconds = count_by_items(source, by, flt)
    check_counted_fields(source, by, counted, asked)
    return count_by_answer(asked, counted, command="iterate-over",
                           code="iterate_over_too_large", base=_base(target, path, where),
                           noun=source.noun, items=source.total,
                           engine=engine, seconds=seconds, offset=offset, limit=limit,
                           fit=fit, warnings=(*source.warnings, *where_warnings(
                               source, flt, counted.total)),
                           on_close=target.index.close)


def check_counted_fields(source: Items, by: list[str], counted: CountBy, asked: Call) -> None:
    """Refuse a ``--count-by`` field that no item has: every item counted lacks it, and so
    does every item of the first :data:`WHERE_SAMPLE` (not only those the filter kept).
    Answering ``(missing) 60`` would read as a count; the error names the keys the items
    have, and with one close key suggests the call with it."""
    from scratch.errors import KeyPathNotFound
    from scratch.query.items import absent_field, absent_warning
    if not counted.total or not counted.buckets:
        return
    for i, name in enumerate(by):
        if any(b.types[i] != "missing" for b in counted.buckets) or counted.other:
            continue
        n = min(source.total or 0, WHERE_SAMPLE)
        fetched = source.fetch(list(range(n))) if n else {}
        sample = [fetched[k] for k in range(n) if k in fetched]
        bad = source.bad.keys()
        a = absent_field(sample, name, source.field_path(name), skip=bad)
        if a is None:
            continue  # the first items have it: the filter kept only items without it
        noun = "item" if source.noun == "item" else "row"
        said = absent_warning(a, 0, max(0, n - 1), noun=noun, columns=source.table is not None)
        if n < (source.total or 0):
            said += f"; none of the {counted.total:,} {noun}s counted has it either"
        suggestions = []
        if a.rest is not None and len(a.near) == 1:
            near = list(by)
            near[i] = _near_field(a, source.table is not None)
            suggestions.append(asked.with_args(count_by=near))
        raise KeyPathNotFound(f"{argument('count_by')}: {said}", argument="count_by",
                              field=name, suggestions=suggestions or None)


def _near_field(a: Absent, columns: bool) -> str:
    """The field ``a`` names with its one close key in place of the missing one."""
    from scratch.pathnames import format_path
    segments = [*a.at, a.near[0], *(a.rest or ())]
    if columns and len(segments) == 1:
        return str(segments[0])
    return format_path(segments)


def absent_warnings(items: list[Item], fields: list[str], parsed: list[ParsedPath],
                    flt: Where | None,
                    offset: int, skip: Collection[int], *, noun: str = "item",
                    columns: bool = False, spread: bool = False) -> tuple[str, ...]:
    """Warnings for the fields no item of the window has (a misspelling reads as a column of
    nulls otherwise), and for --where keys that are compared (not just tested for) and that no
    item has, when a key close to them exists: a key absent from a window is normal, and
    ``!@.metadata.deletionTimestamp`` is about absence. ``spread``: the items are rows picked
    from across the array (a selection), not a window."""
    from scratch.query.items import (
        absent_field,
        absent_warning,
        comparison_warnings,
        where_paths,
    )
    if not items:
        return ()
    last = offset + len(items) - 1
    out = []
    for f, p in zip(fields, parsed, strict=True):
        a = absent_field(items, f, p, skip=skip, offset=offset)
        if a is not None:
            text = absent_warning(a, offset, last, noun=noun, columns=columns)
            if spread:
                text = _spread(text, noun, len(items))
            out.append(text)
    for text, p in where_paths(flt) if flt is not None else ():
        a = absent_field(items, text, p, skip=skip, offset=offset)
        if a is not None and a.near:
            out.append(absent_warning(a, offset, last, noun=noun, where=True, columns=columns))
    if flt is not None:  # a comparison that meets only values of another type is never true
        out += comparison_warnings(flt, (item for i, item in enumerate(items, offset)
                                         if i not in skip))
    return tuple(out)


def _spread(text: str, noun: str, n: int) -> str:
    """A warning about a window (``items 0..4``) said of the rows shown instead."""
    import re
    shown = f"the {plural_noun(n, noun)} shown"
    text = re.sub(rf"\bnone of {noun}s \d+\.\.\d+", f"none of {shown}", text)
    return re.sub(rf"\bnot in {noun} \d+", f"not in {shown}", text)


def plural_noun(n: int, noun: str) -> str:
    return noun if n == 1 else f"{n} {noun}s"


COMMAND = Command(
    "iterate-over", "One row per item of the array at PATH with the chosen --fields (or each "
    "item whole, on one line); --count and --count-by count them instead.\n\n"
    "Missing fields are null; long strings are cut, with the get-in command that shows "
    "them. Without --fields a JSON item is one line of JSON and a log record or CSV row its "
    "stored line.\n\n"
    "--where takes an RFC 9535 filter such as \"@.status.phase == 'Failed'\" and scans "
    "every item: --offset/--limit page the matching rows (a negative --offset counts "
    "from the end), and the answer says how many of all the items match. --sort orders "
    "the rows by a field, smallest first (numbers as numbers, nulls last); --desc, largest "
    "first.\n\n"
    "--count gives just the number of items (matching --where); --count-by FIELD[,FIELD] "
    "gives value counts, biggest first: --limit of them (10 unless given), the rest as "
    "'other', and the number of distinct values; values tied for the most are said.\n\n"
    "A map of records (an object whose values are objects, such as an OpenAPI "
    "definitions) is rows too, each with its key in _key (--key-field picks the name). "
    "[*] flattens nested arrays across items: items[*].status.containerStatuses gives "
    "one row per container status, each with _parent (its item's index; _parent_key in a "
    "map).\n\n"
    "On a CSV/TSV entry PATH . is its rows, keyed by column and typed as schema types the "
    "columns; on a parsed log, its records (one per line, fields named by the format); "
    "each with the _line it starts on.\n\n"
    "Example: scratch iterate-over 1a2b items --fields metadata.name,status.phase --limit "
    "20\n\n"
    "Example: scratch iterate-over access . --where '@.status == 404' --count-by path",
    iterate_over,
    tools=(Tool("iterate_over", "One row of fields per item of the array at path (CSV, logs: '.'), "
                "filtered, sorted, paged, or counted.",
                names={"ref": "file"},
                helps={"path": ROWS_PATH_HELP},
                args=("ref", "path", "fields", "offset", "limit", "where", "sort", "desc",
                      "count", "count_by", "fit"), toolset="explore"),),
    aliases=("iterate_over",))
