"""The parts every log line format is made of (:mod:`scratch.formats.logformats` holds the
registry): a :class:`Field` (name, JSON type, meaning), a :class:`LogFormat` and the helpers
that build fixed-field formats from a row parser.

Invariants:
- A format's ``parse(line)`` returns a new dict of fields or None (the line is not in the
  format); a fixed-field format's ``row(line)`` returns the values alone, in ``fields`` order.
- A format whose fields a header declares (Zeek TSV, W3C extended) is *bound*: built from the
  header lines by its family's ``bind``, it carries the header's reading in ``layout`` (JSON
  values only), and the family's ``from_layout(layout)`` rebuilds the same format from it (the
  index keeps the layout; a window of records is parsed without reading the header again).
- ``comment`` is the prefix of the lines that are directives of the format (``#`` for Zeek and
  W3C headers): they are no records to parse, counted apart from the unparsed lines.

Pure ``re`` on ``str``; nothing here reads files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeAlias

from scratch.jsonvalues import JSON

Record: TypeAlias = "dict[str, JSON]"  # one parsed line: field name -> value
Row: TypeAlias = "tuple[JSON, ...]"  # one parsed line of a fixed-field format: the values
# a header-declared format's header (fields, types, separators...), kept in the index's info
Layout: TypeAlias = "dict[str, JSON]"
Parser = Callable[[str], "Record | None"]
RowParser = Callable[[str], "Row | None"]

DETECT_SAMPLE = 1000  # non-blank lines looked at by detect()
DETECT_MIN_SHARE = 0.5  # share of the sample the chosen format must parse


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # a JSON type name: string, integer, number, boolean, array
    doc: str
    facet: bool = False  # worth value counts at index time (status, level, program...)
    # the HTTP status of a request: what tells a failed one (5xx) from a refused one (4xx)
    # and from a success, in a log whose lines have no level (summarize counts errors by it)
    status: bool = False


@dataclass(frozen=True)
class LogFormat:
    name: str
    title: str
    doc: str  # where the layout and its field names are defined
    fields: tuple[Field, ...]
    parse: Parser = field(compare=False, repr=False)
    example: str = ""
    # fields vary by line (logfmt, CEF extensions, auditd): ``fields`` lists only the ones
    # every line has (none for logfmt)
    dynamic: bool = False
    # fixed-field formats: the values alone, in ``fields`` order (what parse() zips with the
    # names); index-time scans use it to skip building a dict per line
    row: RowParser | None = field(default=None, compare=False, repr=False)
    comment: str = ""  # directive lines start with it (header formats)
    layout: Layout | None = field(default=None, compare=False, repr=False)
    # what the format reads as null (or empty), said where a user reads types (sql --describe,
    # schema): a '-' that turns into NULL surprises whoever expected the text
    nulls: str = ""

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


def zipped(names: tuple[str, ...], row: RowParser) -> Parser:
    def parse(line: str) -> Record | None:
        values = row(line)
        return None if values is None else dict(zip(names, values, strict=True))

    return parse


def fixed(name: str, title: str, doc: str, fields: tuple[Field, ...], row: RowParser,
          example: str, *, comment: str = "", layout: Layout | None = None,
          nulls: str = "") -> LogFormat:
    names = tuple(f.name for f in fields)
    return LogFormat(name, title, doc, fields, zipped(names, row), example, row=row,
                     comment=comment, layout=layout, nulls=nulls)


def regex_row(pattern: re.Pattern[str], ints: Iterable[int] = ()) -> RowParser:
    """Values of one full-line regex's groups, in order; groups at ``ints`` as integers."""
    int_at = tuple(ints)

    def row(line: str) -> Row | None:
        m = pattern.match(line)
        if m is None:
            return None
        if not int_at:
            return m.groups()
        groups = m.groups()
        values: list[JSON] = list(groups)
        for i in int_at:
            v = groups[i]
            if v is not None:
                values[i] = int(v)
        return tuple(values)

    return row


_INT = re.compile(r"-?\d+\Z")
_NUM = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")


def as_int(text: str) -> int:
    """``text`` as an integer; ValueError when it is not one (``+1``, ``1.0`` and ``0x1``
    are not: only what the format writes for an integer)."""
    if _INT.match(text) is None:
        raise ValueError(text)
    return int(text)


def as_number(text: str) -> int | float:
    """``text`` as a number: an ``int`` when written without a fraction or exponent (IIS's
    time-taken is milliseconds, CloudFront's seconds), else a ``float``; ValueError if none."""
    if _INT.match(text) is not None:
        return int(text)
    if _NUM.match(text) is None:
        raise ValueError(text)
    return float(text)
