"""Skeletons of JSON documents: from the parsed value (canonical layout) or by scanning raw text.

Canonical layout (see :mod:`scratch.formats.jsontext`): line numbers follow from the value
alone. A scalar or empty container takes one line; a non-empty container takes its opening
line, its children's lines and its closing line. Line counts of unexpanded subtrees come from
rendering them again with orjson (C speed) rather than walking them in Python.

Raw layout (``--raw`` bytes that are not canonical): a scanner walks the text down to the depth
limit, using the C scanner of the standard ``json`` module to step over deeper values, and
records exact byte spans; lines come from counting newlines between positions.

Expansion rules (both layouts), so a reader never parses much more than it shows:

- every container at depth < ``depth`` is expanded (its children become records);
- arrays with more than ``big_array`` items are not expanded: their item start lines (and, for
  raw text, item start bytes) go into a section instead (flag ITEMS);
- a container at depth >= ``depth`` whose text exceeds ``expand_bytes`` is expanded too
  (down to :data:`MAX_DEPTH`), so a LAZY node is small unless it is a big array's item;
- at most ``max_records`` records; past that, containers stay LAZY.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Mapping, Sequence, Sized
from typing import cast

from scratch.formats.jsontext import render_line_count
from scratch.index.skeleton import (
    NONE,
    T_ARR,
    T_OBJ,
    T_STR,
    Builder,
    type_code,
)
from scratch.index.textitems import TextItems
from scratch.jsonvalues import JSON

DEPTH = 4
BIG_ARRAY = 64
EXPAND_BYTES = 256 * 1024
MAX_RECORDS = 1_000_000
MAX_DEPTH = 64


class Limits:
    def __init__(self, depth: int = DEPTH, big_array: int = BIG_ARRAY,
                 expand_bytes: int = EXPAND_BYTES, max_records: int = MAX_RECORDS) -> None:
        self.depth = depth
        self.big_array = big_array
        self.expand_bytes = expand_bytes
        self.max_records = max_records


def _length(value: JSON, code: int) -> int:
    if code in (T_OBJ, T_ARR, T_STR):
        return _sized_len(value)
    return 0


# len() of a value whose type code says it is a string, object or array: typed for JSON
# without a cast call per value (this runs for every leaf a skeleton records)
_sized_len: Callable[[JSON], int] = len  # type: ignore[assignment]


def canonical_skeleton(value: JSON, engine: str = "orjson", limits: Limits | None = None,
                       builder: Builder | None = None, parent: int = NONE,
                       key: str | int | None = None, first_line: int = 1,
                       base_depth: int = 0) -> Builder:
    """Records for ``value`` rendered canonically starting at ``first_line``."""
    lim = limits or Limits()
    b = builder or Builder()
    dumps = None
    if engine == "orjson":
        import orjson

        opt = orjson.OPT_INDENT_2

        def dumps(v: JSON) -> bytes | None:
            try:
                return orjson.dumps(v, option=opt)
            except (TypeError, orjson.JSONEncodeError):
                return None

    def lines_of(v: JSON) -> int:
        return render_line_count(v, engine)

    def walk(v: JSON, par: int, k: str | int | None, depth: int, line: int) -> int:
        if isinstance(v, TextItems) and v.starts is not None and depth < lim.depth \
                and len(v) > lim.big_array:
            # a big array kept as text: its item lines were counted as it was parsed
            idx = b.open(par, k, T_ARR, line)
            b.set_items(idx, array("I", [line + 1 + s for s in v.starts]))
            b.close(idx, line + 1 + v.lines, len(v))
            return line + 1 + v.lines
        code = type_code(v)
        idx = b.open(par, k, code, line)
        if code not in (T_OBJ, T_ARR) or not v:
            b.close(idx, line, _length(v, code))
            return line
        n = len(cast(Sized, v))  # an object or array, by its code
        expand = depth < lim.depth
        if not expand and depth < MAX_DEPTH:
            blob = dumps(v) if dumps is not None else None
            if blob is None:
                nlines = lines_of(v)
                expand = nlines * 16 > lim.expand_bytes  # no bytes at hand: guess from lines
            else:
                nlines = blob.count(b"\n") + 1
                expand = len(blob) > lim.expand_bytes
            if not expand:
                b.close(idx, line + nlines - 1, n, flags=1)
                return line + nlines - 1
        if len(b) >= lim.max_records or depth >= MAX_DEPTH:
            end = line + lines_of(v) - 1
            b.close(idx, end, n, flags=1)
            return end
        cur = line + 1
        if code == T_ARR and n > lim.big_array:
            starts = array("I")
            for item in cast("Sequence[JSON]", v):
                starts.append(cur)
                t = type(item)
                cur += lines_of(item) if (t is dict or t is list) and item else 1
            b.set_items(idx, starts)
            b.close(idx, cur, n)
            return cur
        items = cast("Mapping[str, JSON]", v).items() if code == T_OBJ \
            else enumerate(cast("Sequence[JSON]", v))
        for ck, cv in items:
            cur = walk(cv, idx, ck, depth + 1, cur) + 1
        b.close(idx, cur, n)
        return cur

    walk(value, parent, key, base_depth, first_line)
    return b


# ----------------------------------------------------------------------------------------------
# Raw text

_WS = re.compile(r"[ \t\n\r]*")


class _Text:
    """Latin-1 view of the bytes: one character per byte, so positions are byte offsets."""

    def __init__(self, data: bytes) -> None:
        self.s = data.decode("latin-1")
        self.line_pos = 0
        self.line = 1

    def line_at(self, pos: int) -> int:
        if pos >= self.line_pos:
            self.line += self.s.count("\n", self.line_pos, pos)
        else:
            self.line -= self.s.count("\n", pos, self.line_pos)
        self.line_pos = pos
        return self.line

    def col_at(self, pos: int) -> int:
        return pos - (self.s.rfind("\n", 0, pos) + 1)


def raw_skeleton(data: bytes, limits: Limits | None = None, start: int = 0,
                 builder: Builder | None = None, parent: int = NONE,
                 key: str | int | None = None, base_depth: int = 0) -> Builder:
    """Records for the JSON value at byte ``start`` of ``data`` (positions exact)."""
    lim = limits or Limits()
    b = builder or Builder()
    t = _Text(data)
    s = t.s
    from scratch.jsonvalues import exact_int

    # integers of any length (int() refuses more than 4,300 digits); the values are only
    # stepped over here
    dec = json.JSONDecoder(parse_int=exact_int)
    scan = json.scanner.make_scanner(dec)  # type: ignore[attr-defined]
    scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
    ws = _WS.match

    def skip(pos: int) -> int:
        return ws(s, pos).end()  # type: ignore[union-attr]  # [ \t\n\r]* always matches

    def key_at(pos: int) -> tuple[str, int]:
        raw_key, end = scanstring(s, pos + 1)
        if not raw_key.isascii() or "\\" in s[pos:end]:
            raw_key = json.loads(s[pos:end].encode("latin-1"))
        return raw_key, end

    def scalar_or_skip(pos: int) -> tuple[JSON, int]:
        try:
            found: tuple[JSON, int] = scan(s, pos)  # the stdlib's scanner (untyped)
            return found
        except StopIteration:
            raise json.JSONDecodeError("Expecting value", s, pos) from None

    def walk(pos: int, par: int, k: str | int | None, depth: int) -> int:
        ch = s[pos]
        line = t.line_at(pos)
        if ch not in "{[":
            v, end = scalar_or_skip(pos)
            code = type_code(v)
            length = 0
            if code == T_STR:
                length = len(json.loads(s[pos:end].encode("latin-1")))
            idx = b.open(par, k, code, line, line, t.col_at(pos), pos)
            b.close(idx, t.line_at(max(end - 1, pos)), length, end_byte=end)
            return end
        code = T_OBJ if ch == "{" else T_ARR
        idx = b.open(par, k, code, line, line, t.col_at(pos), pos)
        expand = depth < lim.depth and len(b) < lim.max_records
        if not expand:
            v, end = scalar_or_skip(pos)
            if (end - pos > lim.expand_bytes and depth < MAX_DEPTH
                    and len(b) < lim.max_records and v):
                expand = True
            else:
                b.close(idx, t.line_at(end - 1), len(cast(Sized, v)), flags=1 if v else 0,
                        end_byte=end)  # v: the container at ``pos``
                return end
        close = "}" if code == T_OBJ else "]"
        p = skip(pos + 1)
        n = 0
        starts: array[int] | None = None
        bstarts: array[int] | None = None
        if s[p] == close:
            b.close(idx, t.line_at(p), 0, end_byte=p + 1)
            return p + 1
        while True:
            if code == T_OBJ:
                ck, p = key_at(p)
                p = skip(p)
                if s[p] != ":":
                    raise json.JSONDecodeError("Expecting ':' delimiter", s, p)
                p = skip(p + 1)
                p = walk(p, idx, ck, depth + 1)
            elif starts is not None:
                starts.append(t.line_at(p))
                assert bstarts is not None
                bstarts.append(p)
                _, p = scalar_or_skip(p)
            else:
                p = walk(p, idx, n, depth + 1)
            n += 1
            if code == T_ARR and starts is None and n > lim.big_array:
                # Too many items to record one by one: keep their start positions instead.
                starts = array("I")
                bstarts = array("Q")
                for j in b.children_of(idx):
                    starts.append(b.recs[j][7])
                    bstarts.append(b.recs[j][13])
                b.truncate_children(idx)
            p = skip(p)
            if s[p] == ",":
                p = skip(p + 1)
                continue
            if s[p] == close:
                break
            raise json.JSONDecodeError(f"Expecting ',' or '{close}'", s, p)
        if starts is not None:
            assert bstarts is not None
            b.set_items(idx, starts, bstarts)
        b.close(idx, t.line_at(p), n, end_byte=p + 1)
        return p + 1

    walk(skip(start), parent, key, base_depth)
    return b
