"""Analyses of line-oriented formats: logs/text, CSV/TSV and markdown.

Each reads the stored file once, streaming, and returns ``(info, sections, warnings)``:
``info`` goes to ``info.json``, ``sections`` are named u32 arrays of line numbers.

- log/text ``info``: ``timestamp_format`` (a name from :mod:`scratch.formats.logs` or None),
  ``time_range`` ([first, last] timestamp text or None), ``levels`` ({LEVEL: count}, canonical
  names, only levels seen), ``first_lines`` / ``last_lines`` (text, long lines cut).
  Sections ``level:<LEVEL>``: the lines whose level is LEVEL, ascending.
- csv/tsv ``info``: ``delimiter``, ``header`` (field names), ``columns``, ``rows`` (data
  records, header excluded), ``header_line``, ``column_info`` ([{name, type, empty}], type one
  of integer/number/boolean/date/string/empty; a column is integer or number only when every
  value reads back as written, see :func:`_field_type`), ``ragged_rows`` and
  ``ragged_examples`` (first lines whose field count differs). Section ``rows``: start line
  of every record including the header (records may span lines when a quoted field holds
  newlines).
- markdown ``info``: ``headings``: a tree of {level, title, line, end_line, children};
  ``end_line`` is the line before the next heading of the same or a higher level.
"""

from __future__ import annotations

import csv
import re
from array import array
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict, cast

from scratch.formats.logs import (
    LEVELS,
    detect_timestamp_format,
    find_timestamp,
    iter_levels,
    timestamp_pattern,
)
from scratch.jsonvalues import JSON

FIRST_LINES = 5
LAST_LINES = 10
LINE_PREVIEW = 300
_BLOCK = 4 << 20


def _byte_blocks(path: Path, keep: int | None = None) -> Iterator[bytes]:
    """Blocks of whole lines (the last may lack its newline). With ``keep``, a line longer
    than a block is cut to its first ``keep`` bytes (the newline stays), so a 100 MB line
    costs ``keep`` bytes of memory, not 100 MB."""
    with open(path, "rb") as f:
        pending: list[bytes] = []
        size = 0
        long_line = False  # inside a line already cut to `keep` bytes
        while True:
            block = f.read(_BLOCK)
            if not block:
                break
            cut = block.rfind(b"\n") + 1
            if cut == 0:
                if long_line:
                    continue
                pending.append(block)
                size += len(block)
                if keep is not None and size > _BLOCK:
                    head = b"".join(pending)[:keep]
                    pending, size, long_line = [head], len(head), True
                continue
            if long_line:
                nl = block.find(b"\n")
                pending.append(block[nl:cut])  # the rest of the long line is dropped
                long_line = False
            else:
                pending.append(block[:cut])
            yield b"".join(pending)
            pending = [block[cut:]] if cut < len(block) else []
            size = len(block) - cut
        if pending:
            yield b"".join(pending)


def iter_text_lines(path: Path) -> Iterator[str]:
    """Lines of the file as text without their terminator (``\\n`` and a ``\\r`` before it)."""
    last = ""
    for data in _byte_blocks(path):
        text = data.decode("utf-8", "replace")
        parts = text.split("\n")
        last = parts.pop()
        for ln in parts:
            yield ln[:-1] if ln.endswith("\r") else ln
    if last:
        yield last[:-1] if last.endswith("\r") else last


def _cut(line: str) -> str:
    return line if len(line) <= LINE_PREVIEW else line[:LINE_PREVIEW] + "…"


Result = tuple["dict[str, JSON]", dict[str, "array[int]"], list[str]]  # info, sections, warnings


def _iter_blocks(path: Path) -> Iterator[str]:
    """Decoded blocks of whole lines; over-long lines cut (logs need only their start)."""
    for data in _byte_blocks(path, keep=64 * 1024):
        yield data.decode("utf-8", "replace")


def _strip_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def analyze_log(path: Path, *, levels: bool = True) -> Result:
    """Levels are found by one regex scan per block (:func:`scratch.formats.logs.iter_levels`),
    not line by line; first/last lines and the timestamp sample come from the first block and
    a rolling tail."""
    first: list[str] = []
    sample: list[str] = []
    last: deque[str] = deque(maxlen=200)
    level_lines: dict[str, array[int]] = {}
    n = 0
    for text in _iter_blocks(path):
        if len(first) < FIRST_LINES or len(sample) < 200:
            head = text.split("\n", 2000)
            if len(head) <= 2000 and head[-1] == "":
                head.pop()  # after the block's last newline: not a line
            for line in head[:2000]:
                line = _strip_cr(line)
                if len(first) < FIRST_LINES:
                    first.append(line)
                if len(sample) < 200 and line.strip() and not line[0].isspace():
                    sample.append(line)
        if levels:
            for idx, lv in iter_levels(text):
                arr = level_lines.get(lv)
                if arr is None:
                    arr = level_lines[lv] = array("I")
                arr.append(n + idx + 1)
        tail = text.rsplit("\n", 201)
        if tail and tail[-1] == "":
            tail.pop()
        last.extend(_strip_cr(x) for x in tail[-200:])
        n += text.count("\n") + (0 if text.endswith("\n") else 1)
    first = first[:FIRST_LINES] if n >= FIRST_LINES else first[:n]
    fmt, matched = detect_timestamp_format(sample)
    if matched < max(1, len(sample) // 10):
        fmt = None
    time_range = None
    if fmt is not None:
        pat = timestamp_pattern(fmt)
        t0 = next((ts for ts in (find_timestamp(ln, pat) for ln in sample) if ts), None)
        t1 = next((ts for ts in (find_timestamp(ln, pat) for ln in reversed(last)) if ts), None)
        if t0 and t1:
            time_range = [t0, t1]
    tail_lines = list(last)[-LAST_LINES:]
    info: dict[str, JSON] = {
        "timestamp_format": fmt,
        "time_range": time_range,
        "levels": {lv: len(level_lines[lv]) for lv in LEVELS if lv in level_lines},
        "first_lines": [_cut(x) for x in first],
        "last_lines": [_cut(x) for x in tail_lines],
        "last_lines_start": max(1, n - len(tail_lines) + 1),
    }
    sections = {f"level:{lv}": level_lines[lv] for lv in LEVELS if lv in level_lines}
    return info, sections, []


# ----------------------------------------------------------------------------------------------
# CSV

_INT = re.compile(r"[+-]?\d+\Z")
_NUM = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_BOOL = {"true", "false", "yes", "no", "TRUE", "FALSE", "True", "False"}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}"
                   r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\Z")
_ORDER = ("integer", "number", "boolean", "date", "string")


_INT64 = (-(1 << 63), (1 << 63) - 1)


def _field_type(v: str) -> str:
    """The type of one CSV cell. A cell is a number only when it reads back as written: the
    integer or float it parses to prints as the same text, and an integer fits 64 bits
    (``00501``, ``+1``, ``1.50``, ``1e5``, ``.5`` and ``-0`` are text, so a column of ZIP codes
    or zero-padded ids keeps its zeros everywhere the column's type is used: sql, the rows of
    iterate-over, count-by, schema)."""
    if _INT.match(v):
        n = int(v)
        return "integer" if str(n) == v and _INT64[0] <= n <= _INT64[1] else "string"
    if _NUM.match(v):
        return "number" if repr(float(v)) == v else "string"
    if v in _BOOL:
        return "boolean"
    if _DATE.match(v):
        return "date"
    return "string"


def _merge(a: str | None, b: str) -> str:
    if a is None or a == b:
        return b
    if {a, b} == {"integer", "number"}:
        return "number"
    return "string"


class _LineCounter:
    """Feeds lines to csv.reader and remembers where each record started."""

    def __init__(self, path: Path) -> None:
        self.it = iter_text_lines(path)
        self.line = 0

    def __iter__(self) -> _LineCounter:
        return self

    def __next__(self) -> str:
        s = next(self.it)
        self.line += 1
        return s


def analyze_csv(path: Path, delimiter: str | None = None) -> Result:
    src = _LineCounter(path)
    if delimiter is None:
        delimiter = _guess_delimiter(path)
    reader = csv.reader(src, delimiter=delimiter)
    starts = array("I")
    header: list[str] | None = None
    types: list[str | None] = []
    empty: list[int] = []
    ragged = 0
    ragged_examples: list[int] = []
    rows = 0
    warnings: list[str] = []
    prev_end = 0
    try:
        for rec in reader:
            start = prev_end + 1
            prev_end = src.line
            if not rec:
                continue  # blank line
            starts.append(start)
            if header is None:
                header = rec
                types = [None] * len(rec)
                empty = [0] * len(rec)
                continue
            rows += 1
            if len(rec) != len(header):
                ragged += 1
                if len(ragged_examples) < 5:
                    ragged_examples.append(start)
            for i, v in enumerate(rec[:len(header)]):
                if not v:
                    empty[i] += 1
                    continue
                t = types[i]
                if t == "string":
                    continue
                types[i] = _merge(t, _field_type(v))
    except csv.Error as exc:
        warnings.append(f"CSV parse error at line {src.line}: {exc}")
    if ragged:
        warnings.append(f"{ragged} rows have a field count different from the header's "
                        f"{len(header or [])} (first at line {ragged_examples[0]})")
    header = header or []
    info: dict[str, JSON] = {
        "delimiter": delimiter,
        "header": header,
        "columns": len(header),
        "rows": rows,
        "header_line": starts[0] if starts else None,
        "column_info": [{"name": h, "type": types[i] or "empty", "empty": empty[i]}
                        for i, h in enumerate(header)],
        "ragged_rows": ragged,
        "ragged_examples": ragged_examples,
    }
    return info, {"rows": starts}, warnings


def _guess_delimiter(path: Path) -> str:
    with open(path, "rb") as f:
        head = f.read(65536).decode("utf-8", "replace")
    first = head.split("\n", 1)[0]
    counts = {d: first.count(d) for d in (",", "\t", ";", "|")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


# ----------------------------------------------------------------------------------------------
# Markdown

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\Z")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*\Z")


class _Heading(TypedDict, total=False):
    """A markdown heading in ``info["headings"]`` (a JSON object)."""

    level: int
    title: str
    line: int
    end_line: int
    children: list[_Heading]


def analyze_markdown(path: Path) -> Result:
    flat: list[_Heading] = []
    fence: str | None = None
    prev = ""
    prev_is_para = False
    n = 0
    front = False
    for n, line in enumerate(iter_text_lines(path), 1):
        if n == 1 and line.strip() == "---":
            front = True
            prev, prev_is_para = line, False
            continue
        if front:
            if line.strip() in ("---", "..."):
                front = False
            prev, prev_is_para = line, False
            continue
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            prev, prev_is_para = line, False
            continue
        if m:
            fence = m.group(1)
            prev, prev_is_para = line, False
            continue
        h = _ATX.match(line)
        if h:
            flat.append({"level": len(h.group(1)), "title": (h.group(2) or "").strip(), "line": n})
            prev, prev_is_para = line, False
            continue
        s = _SETEXT.match(line)
        if s and prev_is_para and prev.strip():
            flat.append({"level": 1 if s.group(1)[0] == "=" else 2, "title": prev.strip(),
                         "line": n - 1})
            prev, prev_is_para = line, False
            continue
        prev_is_para = bool(line.strip()) and not line.startswith((" " * 4, "\t", ">", "|"))
        prev = line
    # end lines: up to the next heading of the same or a higher level
    for i, hd in enumerate(flat):
        end = n
        for later in flat[i + 1:]:
            if later["level"] <= hd["level"]:
                end = later["line"] - 1
                break
        hd["end_line"] = end
    roots: list[_Heading] = []
    stack: list[_Heading] = []
    for hd in flat:
        hd["children"] = []
        while stack and stack[-1]["level"] >= hd["level"]:
            stack.pop()
        (stack[-1]["children"] if stack else roots).append(hd)
        stack.append(hd)
    return {"headings": cast("list[JSON]", roots), "heading_count": len(flat)}, {}, []
