"""The records of a parsed log as an array of rows, read through the line index.

A log whose lines are in a known format (:mod:`scratch.formats.logformats`, analysed when the
index was built: :mod:`scratch.index.logrecords`) is an array of records, like the rows of a
CSV entry: ``iterate-over REF .``, ``item-schema REF .``, ``sql REF`` and the counting answers
read them (``.`` or ``$`` names the records; no other path does).

Invariants:
- Record ``k`` is line ``k + 1``: ``{"_line": n, **fields}`` in the format's field order, or
  ``{"_line": n, "_raw": text}`` for a line the format does not parse (blank lines too). A
  window reads only its lines; a scan reads the entry a chunk of lines at a time.
- Field values are what the format's parser gives (numbers are numbers); nothing here
  re-types them.
- A log in no known format (or indexed before records were analysed) has no records:
  :func:`parsed_log` is None and the callers answer as for text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from scratch.answers.kernel.target import Target
from scratch.answers.rows.base import Item, RecordsInfo, Row, register_table, rows_in_chunks
from scratch.calls import Call, call
from scratch.errors import IndexInvalid, UsageError

if TYPE_CHECKING:
    from scratch.formats.logbase import LogFormat
    from scratch.index.logtemplates import Template
    from scratch.query.paths import ParsedPath


CHUNK_LINES = 8192  # lines read per stored-lines read when records are streamed
TEMPLATES = "templates"  # the format of a log read by its mined line templates


def parsed_log(target: Target) -> RecordsInfo | None:
    """``info["records"]`` of a log entry whose lines parsed in a known format, else None."""
    if target.format != "log":
        return None
    from scratch.index.logrecords import records_info
    rec = records_info(target.index)
    if rec is None or not rec.get("format"):
        return None
    return rec


class LogRows:
    """The records of one parsed log (see the module docstring); the interface of
    :class:`scratch.answers.rows.csv_rows.CsvRows`."""

    noun = "record"

    def __init__(self, target: Target, rec: RecordsInfo) -> None:
        from scratch.formats.logformats import get_format
        self.target = target
        self.index = target.index
        self.rec = rec
        name = str(rec["format"])
        # a log in no known format: its lines by their mined templates (logtemplates)
        self.templates: dict[int, Template] | None = None
        self.parts: list[tuple[int, LogFormat]] = []
        if name == TEMPLATES:
            from scratch.index.logtemplates import kept_templates
            self.templates = kept_templates(rec)
        else:
            layout = rec.get("layout")
            self.format = get_format(name, layout if isinstance(layout, dict) else None)
            # (first line, format) of each part of a header format's file, by line
            self.parts = [(1, self.format)]
            for seg in rec.get("segments") or []:
                if isinstance(seg, list) and len(seg) == 2 and isinstance(seg[1], dict):
                    self.parts.append((int(seg[0]), get_format(name, seg[1])))
        self.total = min(int(rec.get("records") or 0), self.index.line_count)
        self.columns = [str(f["name"]) for f in rec.get("fields") or []]
        self.rest_key = "_raw"
        self.warnings: tuple[str, ...] = ()

    def line(self, k: int) -> int:
        return k + 1

    def field_path(self, text: str) -> ParsedPath:
        """A field name as it is (``a.b`` is the field ``a.b`` when there is one), anything
        else as a path."""
        from scratch.query.paths import parse_field
        return parse_field(text, self.columns)

    def _read(self, offset: int, end: int) -> list[Row]:
        from scratch.formats.logformats import records
        if end <= offset:
            return []
        raw = self.index.read_lines(offset + 1, end)
        lines = [b.decode("utf-8", "replace") for b in raw]
        if self.templates is not None:
            from scratch.index.logtemplates import SECTION
            from scratch.index.logtemplates import records as mined
            ids = self.index.section(SECTION)
            if ids is None or len(ids) < end:
                raise IndexInvalid("the index has no template of each line",
                                   reason="no_templates")
            ts = self.rec.get("timestamp_format")
            return list(mined(lines, ids[offset:end], self.templates,
                              ts if isinstance(ts, str) else None, first_line=offset + 1))
        if len(self.parts) == 1:
            return list(records(lines, self.format, first_line=offset + 1))
        out: list[Row] = []
        for i, (start, fmt) in enumerate(self.parts):
            stop = self.parts[i + 1][0] - 1 if i + 1 < len(self.parts) else end
            lo, hi = max(offset + 1, start), min(end, stop)
            if lo <= hi:
                out += records(lines[lo - offset - 1:hi - offset], fmt, first_line=lo)
        return out

    def iter_rows(self, offset: int, end: int) -> Iterator[Row]:
        return rows_in_chunks(self._read, offset, end, self.total, CHUNK_LINES)

    def read(self, offset: int, end: int) -> list[Row]:
        return list(self.iter_rows(offset, end))

    @property
    def header_lines(self) -> int:
        """The directive lines of a header format (Zeek's ``#fields`` ..., W3C's
        ``#Fields:`` ...): lines of the file, but no records."""
        return int(self.rec.get("directives") or 0)

    def iter_records(self) -> Iterator[Row]:
        """Every row but the header lines: the records, as a table holds them (``sql``),
        :attr:`records` of them."""
        comment = self.format.comment if self.templates is None else None
        rows = self.iter_rows(0, self.total)
        if not comment or not self.header_lines:
            return rows
        return (r for r in rows if not (len(r) == 2 and "_raw" in r
                                        and str(r["_raw"]).startswith(comment)))

    @property
    def records(self) -> int:
        return max(0, self.total - self.header_lines)

    def about(self) -> str:
        """What the rows of :meth:`iter_records` are, and what of the text became null."""
        from scratch.words import plural
        out = f"the {plural(self.records, 'record', grouped=True)} of a {self.rec['format']} log"
        if self.header_lines:
            out += (f"; its {plural(self.header_lines, 'header line', grouped=True)} are "
                    "not rows" if self.header_lines > 1 else "; its header line is no row")
        if self.templates is None and self.format.nulls:
            out += f"; {self.format.nulls}"
        return out

    def some_columns(self, n: int = 3) -> str:
        names = [c for c in self.columns if not c.startswith("_")]
        return ",".join(names[:n]) or "_raw"

    def iterate_command(self, fields: str | None = None) -> Call:
        return call("iterate-over", ref=self.target.ref, path=".",
                    fields=(fields or self.some_columns()).split(","), limit=20)


def log_rows_of(target: Target, path: str, rec: RecordsInfo) -> LogRows:
    """The records of a parsed log, for the answers over items at ``path`` (the root)."""
    from scratch.query.paths import parse_path
    rows = LogRows(target, rec)
    if not parse_path(path).is_root:
        raise UsageError(f"parsed log ({rec['format']}): its records are at . (or $); "
                         f"{path!r} names nothing else", code="invalid_path", path=path,
                         suggestions=[rows.iterate_command(),
                                      call("schema", ref=target.ref)])
    return rows


def nulls_of(rec: RecordsInfo) -> str:
    """What a parsed log's format reads as null (empty: nothing to say)."""
    from scratch.formats.logformats import get_format
    layout = rec.get("layout")
    try:
        return get_format(str(rec["format"]), layout if isinstance(layout, dict) else None).nulls
    except (KeyError, ValueError, TypeError):
        return ""


def field_rows(rec: RecordsInfo) -> list[Row]:
    """The fields of a parsed log as the schema lists them: name, type, present, types and,
    for a facet, its number of distinct values."""
    facets = rec.get("facets") or {}
    out = []
    for f in rec.get("fields") or []:
        row = {"name": f["name"], "type": f["type"], "present": f["present"],
               "types": f.get("types") or {}}
        facet = facets.get(f["name"])
        if isinstance(facet, dict):
            row["distinct"] = facet.get("distinct")
        out.append(row)
    return out


def facet_values(rec: RecordsInfo, name: str) -> Sequence[tuple[Item, int]]:
    """``[(value, count), ...]`` of a facet, biggest first (empty when it is not one)."""
    facet = (rec.get("facets") or {}).get(name)
    if not isinstance(facet, dict) or facet.get("values") is None:
        return []
    return [(v, int(n)) for v, n in facet["values"]]


@register_table
def _log_table(target: Target, path: str) -> LogRows | None:
    """A parsed log's records (a log whose lines parsed in no known format has none)."""
    rec = parsed_log(target)
    return log_rows_of(target, path, rec) if rec is not None else None
