"""What every row source shares: the shapes of items and rows, and the table readers' registry.

The kinds of table an entry may be read as (CSV/TSV rows, a parsed log's records) are
implementations that register a reader here when they are imported (the package imports them
all, see :mod:`scratch.answers.rows`); :func:`table_of` asks them in the order they
registered. So the abstraction (:mod:`.items`) and the JSON arrays (:mod:`.arrays`) never
import an implementation, and an implementation imports only this module.

Invariants:
- A reader answers None for an entry it does not read, and raises (as ``iterate-over`` would)
  for one it reads at a path that names no rows; the first reader that answers a table wins.
- Every table has the :class:`Table` interface, so an answer never asks which kind it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

if TYPE_CHECKING:
    from scratch.answers.kernel.target import Target
    from scratch.query.paths import ParsedPath

# One item as the entry's JSON parses (a CSV row or log record: a dict of its cells). The JSON
# edge of the answers layer: stored JSON values (an item, a get-in value, a log entry's value,
# the index's info.json) are read by their shape (isinstance, .get), so they are Any here, once;
# everything about where they sit (segments, bad lines, fast paths) is typed.
Item: TypeAlias = Any  # type: ignore[explicit-any]  # JSON edge: stored JSON values enter
Row: TypeAlias = "dict[str, Item]"  # a CSV row, a log record: column -> cell
# The index's info (info.json: the schema summary, a log's records, CSV columns, headings) and
# what answers build of it for --json (a pointer, a schema outline): stored JSON read by shape,
# as an item is
Info: TypeAlias = "dict[str, Item]"
Segments: TypeAlias = "tuple[str | int, ...]"  # where the array is (the root: ())
# ``info["records"]`` of a parsed log's index (JSON the index stored: format, records,
# fields, facets)
RecordsInfo: TypeAlias = "dict[str, Item]"
# what an engine outside Python may count without reading the items here
Fast: TypeAlias = ('tuple[Literal["ndjson", "json"], Segments]'
                   ' | tuple[Literal["log"], RecordsInfo]')


class Table(Protocol):
    """The rows of a table entry, whatever its kind (see the module docstring)."""

    @property
    def total(self) -> int: ...

    @property
    def warnings(self) -> Sequence[str]: ...

    def line(self, k: int) -> int: ...

    def field_path(self, text: str) -> ParsedPath: ...

    def read(self, offset: int, end: int) -> list[Row]: ...

    def iter_rows(self, offset: int, end: int) -> Iterator[Row]: ...


def rows_in_chunks(read: Callable[[int, int], list[Row]], offset: int, end: int, total: int,
                   chunk: int) -> Iterator[Row]:
    """Rows ``offset..end-1`` of a table of ``total`` rows, got from ``read(k, stop)``
    ``chunk`` rows at a time (a table's :meth:`Table.iter_rows`: a window is streamed, not
    held)."""
    k = max(0, offset)
    end = min(end, total)
    while k < end:
        stop = min(end, k + chunk)
        yield from read(k, stop)
        k = stop


# a kind of table: the table at a path of an entry, or None for an entry of another kind
TableReader: TypeAlias = "Callable[[Target, str], Table | None]"
_READERS: list[TableReader] = []


def register_table(reader: TableReader) -> TableReader:
    """Add ``reader`` to the kinds of table :func:`table_of` asks (once; in order)."""
    if reader not in _READERS:
        _READERS.append(reader)
    return reader


def table_of(target: Target, path: str) -> Table | None:
    """The rows of a table entry (PATH must be the root), None for other formats."""
    for reader in _READERS:
        table = reader(target, path)
        if table is not None:
            return table
    return None
