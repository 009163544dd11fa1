"""The items of one array, read through the index (shared by item-schema and iterate-over).

Invariants:
- PATH must name one array (dot path, pointer or plain JSONPath chain). With a window
  (offset/limit) only the windowed items' lines are parsed; without one the array is parsed
  once.
- CSV/TSV entries: the rows are the items (PATH ``.``), read from their stored lines through
  the index's row positions (see :mod:`scratch.answers.sources.csv_rows`); so are the records of a
  parsed log, one per line (see :mod:`scratch.answers.sources.log_records`).
- An NDJSON line that is not JSON does not sink the answer: its item is ``None`` in the window
  (so the others keep their index) and is reported with its line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.target import Target
from scratch.answers.rendered import suggest_slice
from scratch.calls import call
from scratch.errors import FormatError, LineNotJson, UsageError

if TYPE_CHECKING:
    from scratch.answers.sources.csv_rows import CsvRows
    from scratch.answers.sources.items import Item, Segments
    from scratch.answers.sources.log_records import LogRows


def array_at(target: Target, path: str) -> tuple[Segments, int]:
    from scratch.jsonvalues import json_type
    from scratch.pathnames import format_path
    from scratch.query.paths import parse_path
    parsed = parse_path(path)
    if not parsed.singular:
        raise UsageError(f"{path!r} must name one array (no wildcards or filters here; use "
                         "--where to filter items)", code="invalid_path", path=path)
    segments = parsed.names or ()
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
                         suggestions=[call("schema", ref=target.ref)])
    return segments, len(value)


def window_items(target: Target, segments: Segments, total: int, offset: int,
           limit: int | None) -> tuple[list[Item], dict[int, int]]:
    """The window's items, and {array index: line} of those that are NDJSON lines that are not
    JSON (``None`` in the list, so the others keep their index)."""
    from scratch.index.structure import lines_left_out
    end = window_end(total, offset, limit)
    try:
        items = read_window(target, segments, total, offset, end)
    except FormatError as exc:  # stored JSON that does not parse (not a line left out)
        suggest_slice(exc, target)
        raise
    # only the root of an NDJSON entry has lines for items
    bad = {} if segments else {k: line for line, k in lines_left_out(target.index).items()
                               if offset <= k < end}
    return items, bad


def window_end(total: int, offset: int, limit: int | None) -> int:
    if offset < 0 or (limit is not None and limit < 1):
        raise UsageError("--offset must be >= 0 and --limit >= 1", code="invalid_argument")
    return total if limit is None else min(total, offset + limit)


def table_of(target: Target, path: str) -> CsvRows | LogRows | None:
    """The rows of a CSV/TSV entry or the records of a parsed log (PATH must be the root),
    None for other formats."""
    from scratch.answers.sources.csv_rows import is_table, rows_of
    if is_table(target):
        return rows_of(target, path)
    from scratch.answers.sources.log_records import log_rows_of, parsed_log
    rec = parsed_log(target)
    return log_rows_of(target, path, rec) if rec is not None else None


def read_window(target: Target, segments: Segments, total: int, offset: int,
                 end: int) -> list[Item]:
    from scratch.index.structure import leave_out
    if offset == 0 and end == total:
        return list(target.index.value_at(list(segments)))
    items: list[Item] = []
    for i in range(offset, end):
        try:
            items.append(target.index.value_at([*segments, i]))
        except LineNotJson as exc:
            if segments:  # the array lies inside a bad item: nothing to leave out
                raise
            leave_out(target.index, exc)
            items.append(None)
    return items


