"""The items of one array as a source: random access to a window, or a scan of all of them.

Three kinds of array hold the items the row and counting answers work on:

- a JSON/YAML/NDJSON array at a path (:class:`JsonItems`), read through the index; or there
  a map of records or nested arrays flattened
  (:func:`~scratch.answers.rows.arrays.rows_at`), built from the value;
- the rows of a CSV/TSV entry and the records of a parsed log (:class:`TableItems`, over
  the :class:`~scratch.answers.rows.base.Table` its registered reader gives).

Invariants:
- Item ``k`` is the same value whichever way it is read (``read``, ``fetch`` or ``scan``).
- ``scan`` streams: the root array of an NDJSON entry and table rows are read a chunk of
  lines at a time, so memory does not grow with the entry; an array inside a document is the
  parsed array (the index caches it).
- An NDJSON line that is not JSON is ``None`` in its place (indexes stay aligned) and is
  recorded in ``bad`` ({item index: line}); answers leave it out and warn with its line.
- ``fast`` names what an engine outside Python may count without reading the items here
  (``("ndjson", ())``, ``("json", location)``, ``("log", records info)``), or is None.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from scratch.answers.kernel.target import Target
from scratch.answers.rows.base import Fast as Fast  # the shapes, where answers name them
from scratch.answers.rows.base import Info as Info
from scratch.answers.rows.base import Item as Item
from scratch.answers.rows.base import RecordsInfo, Table, table_of
from scratch.answers.rows.base import Row as Row
from scratch.answers.rows.base import Segments as Segments
from scratch.answers.values.rendered import not_json_warning

if TYPE_CHECKING:
    from scratch.query.paths import ParsedPath

SCAN_ITEMS = 4096  # NDJSON lines parsed per read when a scan streams them


class JsonItems:
    """The rows at ``path`` of a JSON, YAML or NDJSON entry: the items of an array, the records
    of a map of records or the items of nested arrays flattened (see
    :func:`~scratch.answers.rows.arrays.rows_at`)."""

    lines = False  # rows do not carry _line

    def __init__(self, target: Target, path: str, key_field: str | None = None) -> None:
        from scratch.answers.rows.arrays import rows_at
        self.target = target
        self.path = path
        self.at = rows_at(target, path, key_field)
        self.segments: Segments = self.at.segments
        self.total = self.at.total
        self.noun = "record" if self.at.kind == "map" else "item"
        self.bad: dict[int, int] = {}
        self.table: None = None
        index = target.index
        array = self.at.kind == "array"
        self._ndjson_root = array and not self.segments and \
            getattr(index, "layout", None) == "ndjson"
        self.fast: Fast | None = None
        if self._ndjson_root:
            self.fast = ("ndjson", ())
        elif array and target.format == "json" and all(
                isinstance(s, str) or (isinstance(s, int) and s >= 0) for s in self.segments):
            self.fast = ("json", tuple(self.segments))

    @property
    def warnings(self) -> tuple[str, ...]:
        return (*self.at.warnings, *not_json_warning(self.target, self.bad.values()))

    @property
    def added(self) -> tuple[str, ...]:
        """The fields the rows add to the records (their key, their parent), shown first."""
        return self.at.added

    @property
    def cache_key(self) -> list[object]:
        """What identifies these rows among the arrays of one version (for cached counts)."""
        segments: list[object] = [s if isinstance(s, (str, int)) else str(s)
                                  for s in self.segments]
        if self.at.kind == "array":
            return segments
        return [*segments, {"rows": self.at.kind, "path": self.at.inner,
                            "key": self.at.key_field}]

    def field_path(self, text: str) -> ParsedPath:
        from scratch.query.paths import parse_field
        return parse_field(text)

    def line(self, k: int) -> int | None:
        return None

    def read(self, offset: int, end: int) -> list[Item]:
        """Items ``offset..end-1``."""
        from scratch.answers.rows.arrays import window_items
        if end <= offset:
            return []
        if self.at.kind != "array":
            return self.at.rows[offset:end]
        items, bad = window_items(self.target, self.segments, self.total, offset, end - offset)
        self.bad.update(bad)
        return items

    def fetch(self, indexes: Sequence[int]) -> dict[int, Item]:
        """{k: item k} for the given indexes (runs of neighbours read together)."""
        out: dict[int, Item] = {}
        for lo, hi in _runs(indexes):
            for k, item in enumerate(self.read(lo, hi), lo):
                out[k] = item
        return out

    def scan(self) -> Iterator[tuple[int, Item]]:
        """(k, item) for every item, in order (``None`` for a bad NDJSON line)."""
        if self.at.kind != "array":
            yield from enumerate(self.at.rows)
            return
        if self._ndjson_root:
            yield from self._scan_ndjson()
            return
        from scratch.index.structure import lines_left_out
        items = self.target.index.value_at(list(self.segments))
        if not self.segments:
            self.bad.update({k: line for line, k in lines_left_out(self.target.index).items()})
        yield from enumerate(items)

    def _scan_ndjson(self) -> Iterator[tuple[int, Item]]:
        import orjson

        from scratch.errors import JsonError
        from scratch.formats.jsontext import has_big_int, parse_json
        index = self.target.index
        starts = index.item_starts([])
        n = self.total
        k = 0
        while k < n:
            stop = min(n, k + SCAN_ITEMS)
            first = int(starts[k])
            data = index.read_bytes(first, int(starts[stop - 1]))
            lines = data.split(b"\n")
            exact = not has_big_int(data)
            for j in range(k, stop):
                line = int(starts[j])
                text = lines[line - first].strip()
                try:
                    if not exact:
                        raise ValueError
                    value = orjson.loads(text)
                except ValueError:  # orjson's error is a ValueError; the stdlib words it
                    try:
                        value = parse_json(text)[0]
                    except JsonError:
                        self.bad[j] = line
                        value = None
                yield j, value
            k = stop


class TableItems:
    """The rows of a CSV/TSV entry or the records of a parsed log."""

    lines = True  # rows carry the _line they start on

    def __init__(self, target: Target, table: Table) -> None:
        self.target = target
        self.table = table
        self.total = table.total
        self.segments: Segments = ()
        self.bad: dict[int, int] = {}
        self.noun: str = getattr(table, "noun", "row")
        rec: RecordsInfo | None = getattr(table, "rec", None)
        self.fast: Fast | None = ("log", rec) if rec is not None else None

    @property
    def cache_key(self) -> list[object]:
        return []

    @property
    def added(self) -> tuple[str, ...]:
        return ("_line",)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self.table.warnings)

    def field_path(self, text: str) -> ParsedPath:
        return self.table.field_path(text)

    def line(self, k: int) -> int | None:
        return self.table.line(k)

    def read(self, offset: int, end: int) -> list[Row]:
        return self.table.read(offset, end) if end > offset else []

    def fetch(self, indexes: Sequence[int]) -> dict[int, Row]:
        out: dict[int, Row] = {}
        for lo, hi in _runs(indexes):
            for k, item in enumerate(self.table.read(lo, hi), lo):
                out[k] = item
        return out

    def scan(self) -> Iterator[tuple[int, Row]]:
        return enumerate(self.table.iter_rows(0, self.total))


Items = JsonItems | TableItems


def items_of(target: Target, path: str, key_field: str | None = None) -> Items:
    """The rows at ``path`` of ``target`` (raises as ``iterate-over`` would on a path that
    names no rows); ``key_field`` names the field a map of records' rows carry their key in."""
    table = table_of(target, path)
    if table is not None:
        return TableItems(target, table)
    if target.format == "log":
        from scratch.calls import call
        from scratch.errors import FormatError
        raise FormatError("this log's lines are in no known format, so it has no records; "
                          "search it with grep, or query its lines with sql (table entry: "
                          "line, text)", format="log",
                          suggestions=[call("schema", ref=target.ref),
                                       call("sql", ref=target.ref, describe=True)])
    return JsonItems(target, path, key_field)


def _runs(indexes: Iterable[int], gap: int = 8) -> list[tuple[int, int]]:
    """[lo, hi) runs covering the sorted unique indexes (neighbours up to ``gap`` apart
    share one read)."""
    out: list[list[int]] = []
    for k in sorted(set(indexes)):
        if out and k - out[-1][1] <= gap:
            out[-1][1] = k + 1
        else:
            out.append([k, k + 1])
    return [(lo, hi) for lo, hi in out]


def good(items: Iterable[tuple[int, Item]], bad: dict[int, int]) -> Iterator[tuple[int, Item]]:
    """``items`` without the NDJSON lines that are not JSON (looked up as the scan goes)."""
    for k, item in items:
        if item is None and k in bad:
            continue
        yield k, item
