"""Parsed records of a log entry: analysed once when the index is built, read back cheaply.

A log whose lines are in a known format (:mod:`scratch.formats.logformats`) is an array of
records: record ``i`` is line ``i + 1`` (``{"_line": n, **fields}``, or ``{"_line": n,
"_raw": text}`` when the line does not parse; blank lines are such raw records too), so a
window of records reads only its lines through the line index, like CSV rows.

What the index keeps (``info.json`` key ``records``, written by :func:`analyze_records`)::

    {"format": "combined", "title": "...", "doc": "https://...",
     "records": 10000, "parsed": 9999, "unparsed": 1, "blank": 0,
     "detected": [1000, 1000],            # lines parsed / looked at when detecting
     "directives": 8,                     # header formats (zeek, w3c): their # lines
     "layout": {"fields": [...], ...},    # header formats: what the header declared
     "header_changes": [120],             # lines of a later header naming other fields
     "segments": [[120, {...}], ...],     # and the layout each part from there is read with
     "fields": [{"name": "_line", "type": "integer", "present": 10000, "types": {...}},
                {"name": "status", "type": "integer", "present": 9999,
                 "types": {"integer": 9999}}, ...,
                {"name": "_raw", "type": "string", "present": 1, "types": {"string": 1}}],
     "facets": {"status": {"distinct": 8, "values": [[200, 9126], [404, 213], ...]},
                "path": ...},            # fields marked facet (all keys for logfmt)
     "unparsed_examples": [4521]}

``types`` counts JSON types over the records that have the field (``null`` included), and
``present`` is how many records have the key at all; for a fixed-field format every parsed
record has every field. ``facets`` hold the exact value counts of a field (biggest first,
ties by value) while it has at most :data:`FACET_MAX` distinct values; past that the entry is
``{"distinct": null, "over": FACET_MAX}`` (too many to keep). Values are JSON values (numbers
stay numbers). The section ``records:unparsed`` lists the non-blank lines that did not parse.

A log in no known format has ``records: {"format": null}``: it is lines, not records.
The records themselves are not stored: reading a stored copy back costs about what parsing
the line again does (measured on 100 MB of access log: 1.9 s to parse every line, 2.0 s to
load the same records from NDJSON), writing it would add about 4 s to the ingest, and it
would double the entry's size on disk. What is kept is what a parse cannot give cheaply:
the whole-entry counts.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, cast

from scratch.formats.logbase import Layout, Record
from scratch.formats.logformats import LogFormat, detect, get_format
from scratch.index.textinfo import iter_text_lines
from scratch.jsonvalues import JSON

if TYPE_CHECKING:
    from scratch.formats.headerlogs import Segments
    from scratch.index.analyze import Analysis
    from scratch.index.entry import EntryIndex
    from scratch.valuecounts import CountBy, Key

Info: TypeAlias = "dict[str, JSON]"  # info["records"], or a part of it being built
Counts: TypeAlias = "dict[JSON, int]"  # a facet's counts by value (values are scalars)

FACET_MAX = 1000  # distinct values a facet keeps counts for
DETECT_LINES = 5000  # lines read for detection (detect() takes the first 1000 record lines)
UNPARSED_EXAMPLES = 5
_BLOCK = 4 << 20
SECTION = "records:unparsed"


def _type(v: JSON) -> str:
    if v is None:
        return "null"
    t = type(v)
    if t is str:
        return "string"
    if t is bool:
        return "boolean"
    if t is int:
        return "integer"
    if t is list:
        return "array"
    return "number"


def _ranked(counts: Counts) -> list[list[JSON]]:
    from scratch.valuecounts import key_order, value_key

    return [[v, c] for v, c in sorted(counts.items(),
                                      key=lambda p: (-p[1], key_order(value_key(p[0]))))]


def analyze_records(path: Path) -> tuple[Info, dict[str, array[int]]]:
    """``(info["records"], sections)`` for the log at ``path`` (one pass after detection);
    a log in no known format is mined for line templates
    (:mod:`scratch.index.logtemplates`)."""
    sample = list(itertools.islice(iter_text_lines(path), DETECT_LINES))
    fmt, hits, looked = detect(sample)
    if fmt is None:
        return _mined(path, sample, [hits, looked])
    del sample
    if fmt.dynamic:
        info, unparsed = _scan_dynamic(path, fmt)
    else:
        info, unparsed = _scan_fixed(path, fmt)
        if info.get("header_changes"):  # parts with other fields: read each with its header
            from scratch.formats.headerlogs import Segments
            tracker = Segments(fmt)
            info, unparsed = _scan_dynamic(path, fmt, tracker)
            info["segments"] = [[line, layout] for line, layout in tracker.changes]
    out: Info = {"format": fmt.name, "title": fmt.title, "doc": fmt.doc, **info,
           "detected": [hits, looked],
           "unparsed_examples": list(unparsed[:UNPARSED_EXAMPLES])}
    if fmt.layout is not None:
        out["layout"] = fmt.layout  # what get_format() rebuilds a header format from
    return out, {SECTION: unparsed}


def _mined(path: Path, sample: list[str], detected: list[int]
           ) -> tuple[Info, dict[str, array[int]]]:
    """The records of a log in no known format: its lines by their mined templates, or
    ``{"format": None, ...}`` with the reason when it has no template structure."""
    from scratch.index import logtemplates as T

    ts = T.timestamp_format_of(sample)
    del sample
    found = T.mine(itertools.chain.from_iterable(_line_lists(path)), ts)
    if found.structure is not None:
        return {"format": None, "detected": detected,
                "templates": {"reason": found.structure, "miner": T.settings()}}, {}
    n, templates, unparsed = found.lines, found.templates, found.unparsed
    templated = n - found.blank - len(unparsed)
    slots = [T.Template.of(tid, text).slots for tid, text, _ in templates]
    fields: list[JSON] = [_field("_line", "integer", n, {"integer": n})]
    if found.with_timestamp:
        fields.append(_field("timestamp", "string", found.with_timestamp,
                             {"string": found.with_timestamp}))
    fields.append(_field("_template", "object", templated, {"object": templated}))
    for k in range(max((len(s) for s in slots), default=0)):
        present = sum(t[2] for t, s in zip(templates, slots, strict=True) if len(s) > k)
        fields.append(_field(f"p{k + 1}", "string", present, {"string": present}))
    if n - templated:
        fields.append(_field("_raw", "string", n - templated, {"string": n - templated}))
    facets: Info = {}
    if len(templates) <= FACET_MAX:  # the count by template, answered from the index
        facets["_template"] = {
            "distinct": len(templates),
            "values": [[T.template_value(tid, text), count] for tid, text, count in
                       sorted(templates, key=lambda t: (-t[2], t[0]))]}
    out: Info = {"format": T.FORMAT, "title": T.TITLE, "doc": T.DOC, "records": n,
           "parsed": templated, "unparsed": len(unparsed), "blank": found.blank,
           "fields": fields, "facets": facets, "detected": detected,
           "unparsed_examples": list(unparsed[:UNPARSED_EXAMPLES]),
           "timestamp_format": ts, "miner": T.settings(), "templates": [list(t) for t in templates]}
    return out, {SECTION: unparsed, T.SECTION: found.ids}


def _line_lists(path: Path) -> Iterator[list[str]]:
    """The file's lines (as :func:`iter_text_lines` gives them) a block at a time: one split
    per 4 MB block instead of one generator step per line, which the scans below feel."""
    with open(path, "rb") as f:
        rest = b""
        while True:
            block = f.read(_BLOCK)
            if not block:
                break
            cut = block.rfind(b"\n")
            if cut < 0:
                rest += block
                continue
            data, rest = rest + block[:cut], block[cut + 1:]
            yield _split(data)
        if rest:
            yield _split(rest)


def _split(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    return lines


def _scan_fixed(path: Path, fmt: LogFormat) -> tuple[Info, array[int]]:
    """(records info, the lines that did not parse): one pass, a block of lines at a time,
    with the per-line work in C where it can be (map, list filters, Counter over item
    getters): this runs on every ingest of a log."""
    from collections import Counter
    from operator import itemgetter

    names = fmt.field_names
    width = len(names)
    nulls = [0] * width
    facet_at = [i for i, f in enumerate(fmt.fields) if f.facet]
    # the facets' values together, one Counter key per line; split per facet at the end
    getter = itemgetter(*facet_at) if len(facet_at) > 1 else None
    joint: Counter[JSON] = Counter()  # a tuple of values with several facets
    unparsed = array("I")
    row = fmt.row
    assert row is not None
    n = parsed = blank = directives = 0
    comment = fmt.comment
    declared = list(cast("list[str]", fmt.layout["fields"])) \
        if fmt.layout and "fields" in fmt.layout else None
    changed: list[int] = []  # lines of a later header declaring other fields
    from scratch.formats.headerlogs import fields_directive
    from scratch.formats.jsontext import no_gc

    with no_gc():  # nothing here makes reference cycles; the collector would only slow it
        for lines in _line_lists(path):
            rows = list(map(row, lines))
            good = [r for r in rows if r is not None]
            if len(good) < len(rows):
                for k, r in enumerate(rows):
                    if r is None:
                        line = lines[k]
                        if not line or line.isspace():
                            blank += 1
                        elif comment and line.startswith(comment):
                            directives += 1
                            now = fields_directive(fmt, line) if declared else None
                            if now is not None and now != declared:
                                changed.append(n + k + 1)
                        else:
                            unparsed.append(n + k + 1)
            n += len(rows)
            parsed += len(good)
            for r in [r for r in good if None in r]:
                for i in range(width):
                    if r[i] is None:
                        nulls[i] += 1
            if getter is not None:
                joint.update(map(getter, good))
            elif facet_at:
                joint.update(r[facet_at[0]] for r in good)
    facets: dict[str, Counts | None] = {names[i]: {} for i in facet_at}
    for key, cnt in joint.items():
        parts = cast("tuple[JSON, ...]", key) if getter is not None else (key,)
        for i, v in zip(facet_at, parts, strict=True):
            c = facets[names[i]]
            if c is not None:
                c[v] = c.get(v, 0) + cnt
                if len(c) > FACET_MAX:
                    facets[names[i]] = None
    fields: list[JSON] = [_field("_line", "integer", n, {"integer": n})]
    for i, f in enumerate(fmt.fields):
        types = {f.type: parsed - nulls[i]} if parsed - nulls[i] else {}
        if nulls[i]:
            types["null"] = nulls[i]
        fields.append(_field(f.name, f.type, parsed, types))
    raw = n - parsed
    if raw:
        fields.append(_field("_raw", "string", raw, {"string": raw}))
    out: Info = {"records": n, "parsed": parsed, "unparsed": len(unparsed), "blank": blank,
                 "fields": fields, "facets": _facets(facets)}
    if comment:
        out["directives"] = directives
    if changed:
        out["header_changes"] = changed[:UNPARSED_EXAMPLES]
    return out, unparsed


def _scan_dynamic(path: Path, fmt: LogFormat, tracker: Segments | None = None
                  ) -> tuple[Info, array[int]]:
    """(records info, the lines that did not parse): fields as each record has them
    (logfmt, CEF, auditd; a header format whose header changes, read part by part through
    ``tracker``, a :class:`Segments`)."""
    present: dict[str, int] = {}
    types: dict[str, dict[str, int]] = {}
    facets: dict[str, dict[tuple[str, JSON], int] | None] = {}
    unparsed = array("I")
    parse = fmt.parse
    comment = fmt.comment
    n = parsed = blank = directives = 0
    for lines in _line_lists(path):
        for line in lines:
            n += 1
            if not line or line.isspace():
                blank += 1
                continue
            if comment and line.startswith(comment):
                directives += 1
                if tracker is not None:
                    tracker.directive(n, line)
                    parse = tracker.fmt.parse
                continue
            d = parse(line)
            if d is None:
                unparsed.append(n)
                continue
            parsed += 1
            for k, v in d.items():
                present[k] = present.get(k, 0) + 1
                tc = types.get(k)
                if tc is None:
                    tc = types[k] = {}
                    facets[k] = {}
                t = _type(v)
                tc[t] = tc.get(t, 0) + 1
                c = facets[k]
                if c is not None and t == "array":
                    facets[k] = None  # lists (Zeek sets) are no facet values
                elif c is not None:
                    # True and 1 are one dict key in Python: key by type too
                    kv = (t, v)
                    c[kv] = c.get(kv, 0) + 1
                    if len(c) > FACET_MAX:
                        facets[k] = None
    fields: list[JSON] = [_field("_line", "integer", n, {"integer": n})]
    for k, p in present.items():
        tc = types[k]
        main = max((t for t in tc if t != "null"), key=lambda t: tc[t], default="null")
        fields.append(_field(k, main, p, tc))
    raw = n - parsed
    if raw:
        fields.append(_field("_raw", "string", raw, {"string": raw}))
    plain: dict[str, Counts | None] = {
        k: (None if c is None else {v: cnt for (_, v), cnt in c.items()})
        for k, c in facets.items()}
    out: Info = {"records": n, "parsed": parsed, "unparsed": len(unparsed), "blank": blank,
                 "fields": fields, "facets": _facets(plain)}
    if comment:
        out["directives"] = directives
    if tracker is not None and tracker.changes:
        out["header_changes"] = [line for line, _ in tracker.changes][:UNPARSED_EXAMPLES]
    return out, unparsed


def _field(name: str, type_: str, present: int, types: dict[str, int]) -> Info:
    return {"name": name, "type": type_, "present": present, "types": types}


def _facets(facets: dict[str, Counts | None]) -> Info:
    out: Info = {}
    for k, c in facets.items():
        if c is None:
            out[k] = {"distinct": None, "over": FACET_MAX}
        else:
            out[k] = {"distinct": len(c), "values": _ranked(c)}
    return out


def iter_records(path: Path, fmt_name: str, *, start: int = 0, stop: int | None = None,
                 layout: Layout | None = None) -> Iterator[Record]:
    """Records ``start`` .. ``stop - 1`` of the log at ``path`` parsed as ``fmt_name`` (the
    ``format`` the index recorded, with its ``layout`` for a header-declared format), reading
    the file from its start. A caller holding the line
    index should read only the window's lines and use
    :func:`scratch.formats.logformats.records` with ``first_line=start + 1`` instead."""
    from scratch.formats.logformats import records

    lines = itertools.islice(iter_text_lines(path), start, stop)
    return records(lines, get_format(fmt_name, layout), first_line=start + 1)


def add_records(analysis: Analysis, path: Path) -> None:
    """Put the records analysis of the log at ``path`` into an index build's ``analysis``
    (``info["records"]`` and the ``records:unparsed`` section): the hook in
    :func:`scratch.index.build.build_index`."""
    info, sections = analyze_records(path)
    analysis.info["records"] = info
    analysis.sections.update(sections)


def records_info(index: EntryIndex) -> Info | None:
    """``info["records"]`` of an opened :class:`scratch.index.EntryIndex` of a log; None when
    the index was built before records were analysed (rebuild it to get them)."""
    info = index.info
    rec = info.get("records") if isinstance(info, dict) else None
    return rec if isinstance(rec, dict) else None


def facet_count_by(rec: Info, field: str, *, limit: int | None = 10) -> CountBy | None:
    """``count_by(records, [field])`` answered from the index alone (a
    :class:`scratch.query.aggregate.CountBy`), or None when ``field`` has no stored facet
    (not a facet, or too many values): then count over :func:`iter_records`. Records without
    the field (unparsed and blank lines, logfmt lines without the key) are the ``missing``
    bucket, as the record-by-record count has it."""
    from scratch.valuecounts import MISSING, rank, value_key

    # the shapes this module wrote (_facets, _field): read back, not checked again
    facets = cast("dict[str, Info]", rec.get("facets") or {})
    facet = facets.get(field)
    if not isinstance(facet, dict) or facet.get("values") is None:
        return None
    fields = cast("list[Info]", rec.get("fields", []))
    present = next((cast(int, f["present"]) for f in fields if f["name"] == field), 0)
    counts: dict[tuple[Key, ...], tuple[tuple[object, ...], int]] = {}
    for value, n in cast("list[list[JSON]]", facet["values"]):  # [value, count] pairs
        counts[(value_key(value),)] = ((value,), cast(int, n))
    missing = int(cast(int, rec.get("records", 0))) - present
    if missing:
        counts[(value_key(MISSING),)] = ((MISSING,), missing)
    return rank(counts, [field], limit=limit)
