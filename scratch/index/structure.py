"""Path resolution over an index: records first, then the text of one unrecorded region.

Segments follow the dot-path grammar of :mod:`scratch.query.paths`: an ``int`` is an index on
arrays (negative counts from the end) and the key ``str(i)`` on objects; a ``str`` is always
an object key (it never selects an array item).

Materialising a region (turning its text into a value) keeps JSON numbers as written
(:func:`scratch.jsonvalues.parse_exact`); per layout it reads:

- ``canonical`` JSON: the member's lines, minus the key prefix and a trailing comma;
- ``raw`` JSON: the value's exact byte span (items of big arrays: from their start byte);
- ``ndjson``: the item's line. A line that is not JSON is an error for a path into that item
  (:class:`~scratch.errors.LineNotJson`); the whole array holds ``None`` in its place, so item
  indexes stay aligned with lines, and :func:`lines_left_out` says which lines those were;
- ``yaml``: the value's text from its start column, continuation lines dedented; if that
  does not parse (anchors defined elsewhere, odd scalars), the nearest ancestor that does,
  up to the whole document.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence, Sized
from typing import TYPE_CHECKING, NamedTuple, NotRequired, TypedDict, cast

from scratch.errors import FormatError, KeyPathNotFound, LineNotJson
from scratch.index.jsonskel import Limits, canonical_skeleton, raw_skeleton
from scratch.index.reader import IndexReader, NodeInfo
from scratch.index.skeleton import (
    F_AUX,
    F_AUX2,
    F_EBYTE,
    F_END,
    F_FLAGS,
    F_KEY_LEN,
    F_LENGTH,
    F_PARENT,
    F_SBYTE,
    F_START,
    F_TYPE,
    F_VCOL,
    F_VLINE,
    ITEMS,
    LAZY,
    NONE,
    T_ARR,
    T_OBJ,
    TYPES,
    Builder,
    Skeleton,
    type_code,
)
from scratch.jsonvalues import JSON

if TYPE_CHECKING:
    from scratch.index.yamlskel import YamlNode  # imports PyYAML: only where YAML is read

Segment = str | int
MAX_KEYS = 1000
_WIDE = Limits(depth=1 << 20, big_array=1 << 62, expand_bytes=1 << 62, max_records=1 << 62)


def _norm(seg: Segment, type_: int, length: int) -> Segment | None:
    """The concrete child key for ``seg`` on a container, or None if it cannot exist."""
    if type_ == T_ARR:
        if isinstance(seg, bool) or not isinstance(seg, int):
            return None
        i = seg + length if seg < 0 else seg
        return i if 0 <= i < length else None
    if type_ == T_OBJ:
        return seg if isinstance(seg, str) else str(seg)
    return None


def _child(value: JSON, key: Segment) -> JSON:
    """``value[key]`` for a key :func:`_norm` gave for it (an object's key is a str, an
    array's index an int), so ``value`` is the container that holds it."""
    if isinstance(key, str):
        return cast("Mapping[str, JSON]", value)[key]
    return cast("Sequence[JSON]", value)[key]


# ----------------------------------------------------------------------------------------------
# Records


def _rec_keys(sk: Skeleton, i: int, r: tuple[int, ...]) -> tuple[str, ...] | None:
    if r[F_TYPE] != T_OBJ:
        return None
    if r[F_FLAGS] & LAZY:
        return None
    out = []
    for j in sk.children(i):
        k = sk.key_of(sk.rec(j))
        out.append(str(k))
        if len(out) >= MAX_KEYS:
            break
    return tuple(out)


def _info_from_rec(sk: Skeleton, i: int, path: list[Segment], ix: IndexReader,
                   complete: bool = True, missing: Segment | None = None) -> NodeInfo:
    r = sk.rec(i)
    keys = _rec_keys(sk, i, r)
    if keys is None and r[F_TYPE] == T_OBJ and r[F_LENGTH]:
        try:
            keys = tuple(list(cast("Mapping[str, JSON]", _materialize_rec(ix, sk, i)))[:MAX_KEYS])
        except FormatError:
            keys = None
    t = r[F_TYPE]
    return NodeInfo(tuple(path), TYPES[t], r[F_START], r[F_END],
                    r[F_LENGTH] if t in (4, 5, 6) else None, keys, complete, missing, True,
                    r[F_VLINE], r[F_VCOL] if ix.layout in ("yaml", "raw") else None)


def _info_from_value(value: JSON, path: list[Segment], start: int, end: int,
                     complete: bool = True, missing: Segment | None = None) -> NodeInfo:
    t = type_code(value)
    length = len(cast(Sized, value)) if t in (4, 5, 6) else None  # string, object, array
    keys = tuple(str(k) for k in list(cast("Mapping[str, JSON]", value))[:MAX_KEYS]) \
        if t == T_OBJ else None
    return NodeInfo(tuple(path), TYPES[t], start, end, length, keys, complete, missing, False)


# ----------------------------------------------------------------------------------------------
# Materialising text


Origin = Callable[[], tuple[int, int]]


def _parse_json(data: bytes, origin: Origin | None = None) -> JSON:
    """Parse one stored region. ``origin`` gives (entry line, characters before it on that
    line) of the region's first byte: the parser only knows positions inside the region, and
    an error must name the entry's own line and column (what ``slice`` shows)."""
    from scratch.errors import JsonError
    from scratch.jsonvalues import parse_exact

    try:
        value: JSON = parse_exact(data)
        return value
    except JsonError as exc:
        if exc.line is None or exc.column is None or origin is None:
            raise FormatError(f"stored JSON does not parse here: {exc.reason}",
                              reason=exc.reason) from None
        first, col0 = origin()
        line = first + exc.line - 1
        column = exc.column + (col0 if exc.line == 1 else 0)
        raise FormatError(f"stored JSON does not parse at line {line}, column {column}: "
                          f"{exc.reason}", reason=exc.reason, line=line, column=column) from None


def _origin_in(first_line: int, data: bytes, off: int) -> tuple[int, int]:
    """(entry line, column offset) of byte ``off`` of ``data``, which starts a line."""
    head = data[:off]
    nl = head.rfind(b"\n")
    return first_line + head.count(b"\n"), len(head[nl + 1:].decode("utf-8", "replace"))


def _byte_origin(ix: IndexReader, byte: int) -> tuple[int, int]:
    """(entry line, column offset) of byte offset ``byte`` of the content."""
    line = ix.line_at_offset(byte)
    head = _read_span(ix, ix.line_offset(line), byte)
    return line, len(head.decode("utf-8", "replace"))


def _member_text(data: bytes, has_key: bool) -> tuple[bytes, int]:
    """Canonical lines of a member -> (the value's JSON text, its byte offset in ``data``)."""
    text = data.strip()
    off = len(data) - len(data.lstrip())
    if has_key:
        s = text.decode("utf-8", "surrogateescape")
        _, end = json.decoder.scanstring(s, 1)  # type: ignore[attr-defined]
        rest = s[end:].lstrip()
        if rest.startswith(":"):
            rest = rest[1:]
        raw = rest.encode("utf-8", "surrogateescape")  # a suffix of ``text``
        off += len(text) - len(raw.lstrip())
        text = raw.strip()
    if text.endswith(b","):
        text = text[:-1].rstrip()
    return text, off


def _parse_member(data: bytes, has_key: bool, first_line: int) -> JSON:
    """The value of canonical lines ``data`` (starting at entry line ``first_line``)."""
    text, off = _member_text(data, has_key)
    return _parse_json(text, lambda: _origin_in(first_line, data, off))


def _item_span(ix: IndexReader, sk: Skeleton, i: int, r: tuple[int, ...], k: int
               ) -> tuple[int, int]:
    """(start_line, end_line) of item ``k`` of big array record ``i`` (line-based layouts)."""
    if r[F_AUX] == NONE:  # dense NDJSON: item k is line k + 1
        return k + 1, k + 1
    starts = sk.section32(r[F_AUX])
    start = starts[k]
    if ix.layout == "ndjson":
        return start, start
    if k + 1 < len(starts):
        end = starts[k + 1] - 1
    else:
        end = r[F_END] - 1 if ix.layout == "canonical" else r[F_END]
    return start, max(start, end)


def _raw_item(ix: IndexReader, sk: Skeleton, r: tuple[int, ...], k: int) -> tuple[int, int, bytes]:
    """(start byte, end byte, text) of item ``k`` of a big array in raw JSON."""
    bstarts = sk.section64(r[F_AUX2])
    lo = bstarts[k]
    hi = bstarts[k + 1] if k + 1 < len(bstarts) else r[F_EBYTE] - 1
    data = _read_span(ix, lo, hi).rstrip()
    if k + 1 < len(bstarts) and data.endswith(b","):
        data = data[:-1].rstrip()
    return lo, lo + len(data), data


def _ndjson_line(data: bytes, line: int, k: int) -> JSON:
    """The value of NDJSON line ``line`` (item ``k``); :class:`LineNotJson` if it is not JSON."""
    from scratch.errors import JsonError
    from scratch.jsonvalues import parse_exact

    text = data.strip()
    try:
        value: JSON = parse_exact(text)
        return value
    except JsonError as exc:
        column = None
        if exc.column is not None and exc.line == 1:
            column = exc.column + len(data) - len(data.lstrip())  # the line's own column
        at = f" at column {column}" if column is not None else ""
        raise LineNotJson(f"item {k} (line {line}) is not JSON: {exc.reason}{at}", line=line,
                          column=column, item=k, reason=exc.reason) from None


Item = tuple[int, int, JSON, "tuple[int, int] | None"]  # start, end line, value, raw byte span


def _item(ix: IndexReader, sk: Skeleton, i: int, r: tuple[int, ...], k: int) -> Item:
    """(start_line, end_line, value, raw byte span) of item ``k`` of big array record ``i``."""
    if ix.layout == "raw" and r[F_AUX2] != NONE:
        lo, hi, data = _raw_item(ix, sk, r, k)
        value = _parse_json(data, lambda: _byte_origin(ix, lo))
        return ix.line_at_offset(lo), ix.line_at_offset(max(lo, hi - 1)), value, (lo, hi)
    start, end = _item_span(ix, sk, i, r, k)
    if ix.layout == "yaml":
        import yaml

        from scratch.index.yamlskel import AliasError
        try:
            return start, end, _yaml_item(ix, start, end), None
        except AliasError as exc:
            raise _yaml_error(exc) from None
        except (yaml.YAMLError, ValueError, RecursionError):
            # the item's text alone does not load (an alias of an anchor elsewhere): the
            # array's, through its ancestors as far as needed
            return start, end, _child(_yaml_rec(ix, sk, i), k), None
    data = ix.read_bytes(start, end)
    if ix.layout == "ndjson":
        return start, end, _ndjson_line(data, start, k), None
    return start, end, _parse_member(data, False, start), None


def _read_span(ix: IndexReader, lo: int, hi: int) -> bytes:
    import os

    if ix._fd is None:
        ix._fd = os.open(ix.content_path, os.O_RDONLY)
    return os.pread(ix._fd, hi - lo, lo)


def _materialize_rec(ix: IndexReader, sk: Skeleton, i: int) -> JSON:
    key = ("value", i)
    if key in ix._cache:
        return cast(JSON, ix._cache[key])
    r = sk.rec(i)
    if ix.layout == "raw":
        value = _parse_json(_read_span(ix, r[F_SBYTE], r[F_EBYTE]),
                            lambda: _byte_origin(ix, r[F_SBYTE]))
    elif ix.layout == "yaml":
        value = _yaml_rec(ix, sk, i)
    elif ix.layout == "ndjson":
        value = _ndjson_all(ix, sk, r)
    else:
        data = ix.read_bytes(r[F_START], r[F_END])
        has_key = r[F_PARENT] != NONE and r[F_KEY_LEN] != NONE
        value = _parse_member(data, has_key, r[F_START])
    _cache_put(ix, key, value)
    return value


_LEFT_OUT = "lines_left_out"  # cache key: {line: item index} of NDJSON lines that are not JSON


def _cache_put(ix: IndexReader, key: tuple[str | int, ...], value: object) -> None:
    """Cache a parsed region, dropping the others when there are many (but never the record
    of lines left out: the answer being built still has to report them)."""
    if len(ix._cache) > 64:
        left = ix._cache.get(_LEFT_OUT)
        ix._cache.clear()
        if left is not None:
            ix._cache[_LEFT_OUT] = left
    ix._cache[key] = value


def leave_out(ix: IndexReader, exc: LineNotJson) -> None:
    """Record that an answer over many items put ``None`` in place of the line of ``exc``."""
    left = cast("dict[int, int]", ix._cache.setdefault(_LEFT_OUT, {}))
    line, item = exc.details["line"], exc.details["item"]
    assert isinstance(line, int) and isinstance(item, int)  # LineNotJson's own details
    left[line] = item


def lines_left_out(ix: IndexReader) -> dict[int, int]:
    """{line: item index} of the NDJSON lines that answers read through ``ix`` left out, in
    line order."""
    return dict(sorted(cast("dict[int, int]", ix._cache.get(_LEFT_OUT, {})).items()))


def _ndjson_all(ix: IndexReader, sk: Skeleton, r: tuple[int, ...]) -> list[JSON]:
    """Every item; a line that is not JSON becomes ``None`` (indexes stay aligned with lines)
    and is recorded for :func:`lines_left_out`."""
    out: list[JSON] = []
    for k in range(r[F_LENGTH]):
        try:
            out.append(_item(ix, sk, 0, r, k)[2])
        except LineNotJson as exc:
            leave_out(ix, exc)
            out.append(None)
    return out


# -- YAML ------------------------------------------------------------------------------------


def _yaml_slice(ix: IndexReader, vline: int, vcol: int, end: int) -> str:
    lines = [b.decode("utf-8", "replace") for b in ix.read_lines(vline, max(vline, end))]
    first = lines[0][vcol:]
    rest = lines[1:]
    indents = [len(ln) - len(ln.lstrip(" ")) for ln in rest if ln.strip()]
    d = min([vcol] + indents)
    return "\n".join([first] + [ln[d:] for ln in rest]) + "\n"


def _yaml_load(text: str) -> JSON:
    import yaml

    from scratch.index.yamlskel import Loader

    value: JSON = yaml.load(text, Loader=Loader)  # noqa: S506  # Loader is a safe loader
    return value


def _yaml_rec(ix: IndexReader, sk: Skeleton, i: int) -> JSON:
    """Value of record ``i``: its own text if that parses, else an ancestor's, walked down."""
    import yaml

    chain: list[int] = []
    j = i
    while True:
        r = sk.rec(j)
        if r[F_PARENT] == NONE:
            break
        try:
            value = _yaml_load(_yaml_slice(ix, r[F_VLINE], r[F_VCOL], r[F_END]))
        except (yaml.YAMLError, ValueError, RecursionError):
            pass
        else:
            if type_code(value) == r[F_TYPE] or r[F_TYPE] == 4:
                return _walk_down(sk, value, chain)
        chain.append(j)
        j = r[F_PARENT]
    # whole file
    from scratch.index.yamlskel import load_all

    try:
        docs = load_all(ix.content_path.read_bytes())
    except yaml.YAMLError as exc:  # an alias bomb, say, in an entry indexed before the bound
        raise _yaml_error(exc) from None
    root = sk.rec(0)
    whole: JSON = docs if root[F_TYPE] == T_ARR and _is_docs_root(ix) else \
        (docs[0] if docs else None)
    return _walk_down(sk, whole, chain)


def _is_docs_root(ix: IndexReader) -> bool:
    return int(ix.info.get("documents", 1)) != 1


def _walk_down(sk: Skeleton, value: JSON, chain: list[int]) -> JSON:
    for j in reversed(chain):
        key = sk.key_of(sk.rec(j))  # a recorded member's key: never the root's None
        value = _child(value, cast(Segment, key))
    return value


def _yaml_item(ix: IndexReader, start: int, end: int) -> JSON:
    line = ix.read_lines(start, start)[0].decode("utf-8", "replace")
    i = len(line) - len(line.lstrip(" "))
    vcol = i
    if line[i:i + 1] == "-":
        vcol = i + 1
        while vcol < len(line) and line[vcol] == " ":
            vcol += 1
    return _yaml_load(_yaml_slice(ix, start, vcol, end))


def _yaml_error(exc: Exception) -> FormatError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    return FormatError(f"stored YAML cannot be read here{where}: {problem}", reason=str(problem))


# ----------------------------------------------------------------------------------------------
# Lazy positions inside a materialised value


def _sub_builder(ix: IndexReader, value: JSON, start_line: int, depth: int,
                 span: tuple[int, int] | None = None) -> Builder | None:
    """Records (relative to the document) for a materialised value, ``depth`` levels deep."""
    lim = Limits(depth=depth + 1, big_array=1 << 62, expand_bytes=1 << 62, max_records=1 << 62)
    if ix.layout == "canonical":
        return canonical_skeleton(value, ix.engine, lim, first_line=start_line)
    if ix.layout == "raw" and span is not None:
        data = _read_span(ix, span[0], span[1])
        b = raw_skeleton(data, lim)
        offset = ix.line_at_offset(span[0]) - 1
        for r in b.recs:
            r[7] += offset
            r[8] += offset
            r[11] += offset
        return b
    return None


def _walk_builder(b: Builder, segs: Sequence[Segment]) -> tuple[int, int, Segment | None]:
    """(record, segments consumed, missing segment) in a Python-side builder."""
    recs = b.recs
    keys = bytes(b.keys)
    i = 0
    for n, seg in enumerate(segs):
        r = recs[i]
        k = _norm(seg, r[2], r[6])
        if k is None:
            return i, n, seg
        j = i + 1
        found = None
        idx = 0
        while j < r[1]:
            c = recs[j]
            ck = c[4] if c[5] == NONE else keys[c[4]:c[4] + c[5]].decode("utf-8", "surrogatepass")
            if (r[2] == T_ARR and idx == k) or (r[2] == T_OBJ and ck == k):
                found = j
                break
            j = c[1]
            idx += 1
        if found is None:
            return i, n, seg
        i = found
    return i, len(segs), None


def _lazy_info(ix: IndexReader, value: JSON, path: list[Segment], rest: list[Segment],
               start: int, end: int, span: tuple[int, int] | None = None,
               vcol: int | None = None, want_items: bool = False, vline: int | None = None
               ) -> tuple[NodeInfo, list[int] | None]:
    """NodeInfo for ``path + rest`` inside a materialised ``value`` at lines start..end, and
    (with ``want_items``, for an array) the start line of each of its items. YAML: the value's
    text starts at (``vline``, ``vcol``)."""
    v = value
    consumed: list[Segment] = []
    missing: Segment | None = None
    for seg in rest:
        k = _norm(seg, type_code(v), len(v) if isinstance(v, (list, dict, str)) else 0)
        if k is None or (isinstance(v, dict) and k not in v):
            missing = seg
            break
        v = _child(v, k)
        consumed.append(k)
    complete = missing is None
    want_items = want_items and complete and isinstance(v, list)
    full = path + consumed
    if ix.layout == "ndjson":
        info = _info_from_value(v, full, start, end, complete, missing)
        return info, ([start] * len(cast("list[JSON]", v)) if want_items else None)
    if ix.layout == "yaml":
        s, e, starts = _yaml_lines(ix, consumed, vline or start, end, vcol or 0, want_items)
        if not consumed:
            s = start
        return _info_from_value(v, full, s, e, complete, missing), starts
    if not consumed and not want_items:
        return _info_from_value(value, path, start, end, complete, missing), None
    if ix.layout == "canonical":
        s, e, starts = _canonical_lines(value, consumed, start, ix.engine, want_items)
        return _info_from_value(v, full, s, e, complete, missing), starts
    b = _sub_builder(ix, value, start, len(consumed) + (1 if want_items else 0), span)
    if b is None:
        return _info_from_value(v, full, start, end, complete, missing), None
    i, _, _ = _walk_builder(b, consumed)
    r = b.recs[i]
    starts = None
    if want_items:
        starts = []
        j = i + 1
        while j < r[1]:
            starts.append(b.recs[j][7])
            j = b.recs[j][1]
    return _info_from_value(v, full, r[7], r[8], complete, missing), starts


def _canonical_lines(value: JSON, segs: list[Segment], start: int, engine: str,
                     want_items: bool) -> tuple[int, int, list[int] | None]:
    """Line arithmetic in the canonical layout: a child starts after its earlier siblings."""
    from scratch.formats.jsontext import render_line_count

    line = start
    v = value
    for seg in segs:
        line += 1
        for k, c in (v.items() if isinstance(v, dict)
                     else enumerate(cast("Sequence[JSON]", v))):
            if k == seg:
                break
            line += render_line_count(c, engine)
        v = _child(v, seg)
    end = line + render_line_count(v, engine) - 1
    starts = None
    if want_items:
        starts = []
        cur = line + 1
        for item in cast("Sequence[JSON]", v):  # want_items: an array
            starts.append(cur)
            cur += render_line_count(item, engine)
    return line, end, starts


def _yaml_lines(ix: IndexReader, segs: list[Segment], start: int, end: int, vcol: int,
                want_items: bool = False) -> tuple[int, int, list[int] | None]:
    import yaml

    from scratch.index.yamlskel import Loader

    try:
        node = yaml.compose(_yaml_slice(ix, start, vcol, end), Loader=Loader)
    except yaml.YAMLError:
        return start, end, None
    member_line = None
    for seg in segs:
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for kn, vn in node.value:
                if isinstance(kn, yaml.ScalarNode) and kn.value == seg:
                    member_line = kn.start_mark.line
                    nxt = vn
                    break
            if nxt is None:
                return start, end, None
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(seg, int):
            node = node.value[seg]
            member_line = node.start_mark.line
        else:
            return start, end, None
    first = node.start_mark.line if member_line is None else member_line
    last = _node_last_line(node)
    starts = None
    if want_items and isinstance(node, yaml.SequenceNode):
        starts = [start + n.start_mark.line for n in node.value]
    return start + first, start + max(first, last), starts


def _node_last_line(node: YamlNode) -> int:
    import yaml

    if isinstance(node, yaml.ScalarNode) or node.flow_style:
        m = node.end_mark
        return m.line - 1 if m.column == 0 and m.line > 0 else m.line
    last = node.start_mark.line
    for item in cast("list[YamlNode | tuple[YamlNode, YamlNode]]", node.value):
        for n in (item if isinstance(item, tuple) else (item,)):
            last = max(last, _node_last_line(n))
    return last


# ----------------------------------------------------------------------------------------------
# Public entry points


class _Step(NamedTuple):
    """Where following records ended (:func:`_descend`)."""

    kind: str  # "rec": records run out or the path ends; "missing": a recorded container
    #            lacks the child; "item": the next step is an item of a big array
    i: int  # the last record reached
    path: list[Segment]  # its path
    rest: list[Segment]  # rec/item: the segments still to follow; missing: [the one missing]
    k: Segment = 0  # item: the item's index


def _descend(ix: IndexReader, segments: list[Segment]) -> _Step:
    """Follow records as far as they go (see :class:`_Step`)."""
    sk = ix.skeleton
    assert sk is not None
    i = 0
    path: list[Segment] = []
    for n, seg in enumerate(segments):
        r = sk.rec(i)
        k = _norm(seg, r[F_TYPE], r[F_LENGTH])
        if k is None:
            return _Step("missing", i, path, [seg])
        if r[F_FLAGS] & ITEMS:
            return _Step("item", i, path, segments[n + 1:], k)
        if r[F_FLAGS] & LAZY:
            return _Step("rec", i, path, segments[n:])
        c = sk.child(i, k)
        if c is None:
            return _Step("missing", i, path, [seg])
        i = c
        path.append(k)
    return _Step("rec", i, path, [])


def _locate(ix: IndexReader, segments: list[Segment], want_items: bool = False
            ) -> tuple[NodeInfo, list[int] | None]:
    sk = ix.skeleton
    assert sk is not None
    step = _descend(ix, segments)
    kind, i, path, rest = step.kind, step.i, step.path, step.rest
    if kind == "missing":
        return _info_from_rec(sk, i, path, ix, complete=False, missing=rest[0]), None
    if kind == "rec":
        r = sk.rec(i)
        if not rest and not (want_items and r[F_FLAGS] & LAZY and not r[F_FLAGS] & ITEMS):
            return _info_from_rec(sk, i, path, ix), None
        value = _materialize_rec(ix, sk, i)
        span = (r[F_SBYTE], r[F_EBYTE]) if ix.layout == "raw" else None
        return _lazy_info(ix, value, path, rest, r[F_START], r[F_END], span,
                          r[F_VCOL] if ix.layout == "yaml" else None, want_items, r[F_VLINE])
    k = cast(int, step.k)
    r = sk.rec(i)
    start, end, value, span = _item_cached(ix, sk, i, r, k)
    vcol = None
    if ix.layout == "yaml":
        line = ix.read_lines(start, start)[0].decode("utf-8", "replace")
        j = len(line) - len(line.lstrip(" "))
        vcol = j + 1 if line[j:j + 1] == "-" else j
        while vcol < len(line) and line[vcol] == " ":
            vcol += 1
    return _lazy_info(ix, value, path + [k], rest, start, end, span, vcol, want_items)


def _item_cached(ix: IndexReader, sk: Skeleton, i: int, r: tuple[int, ...], k: int) -> Item:
    key = ("item", i, k)
    hit = cast("Item | None", ix._cache.get(key))
    if hit is None:
        hit = _item(ix, sk, i, r, k)
        _cache_put(ix, key, hit)
    return hit


def resolve(ix: IndexReader, segments: list[Segment]) -> NodeInfo | None:
    if ix.skeleton is None:
        return None
    return _locate(ix, segments)[0]


def value_at(ix: IndexReader, segments: list[Segment]) -> JSON:
    from scratch.jsonvalues import json_type
    from scratch.pathnames import MAX_AVAILABLE_KEYS

    sk = ix.skeleton
    if sk is None:
        raise FormatError(f"{ix.format} content has no structure to address",
                          format=ix.format)
    step = _descend(ix, segments)
    i, path, rest = step.i, step.path, step.rest
    details: Missing
    if step.kind == "missing":
        r = sk.rec(i)
        t = r[F_TYPE]
        if t == T_OBJ:
            keys = _rec_keys(sk, i, r) or ()
            details = {"available_keys": list(keys)[:MAX_AVAILABLE_KEYS],
                       "key_count": r[F_LENGTH]}
        elif t == T_ARR:
            details = {"array_length": r[F_LENGTH]}
        else:
            details = {"value_type": TYPES[t]}
        raise _not_found(path, rest[0], details)
    if step.kind == "rec":
        value = _materialize_rec(ix, sk, i)
    else:
        value = _item_cached(ix, sk, i, sk.rec(i), cast(int, step.k))[2]
        path = path + [step.k]
    v = value
    for seg in rest:
        k = _norm(seg, type_code(v), len(v) if isinstance(v, (list, dict, str)) else 0)
        if k is None or (isinstance(v, dict) and k not in v):
            if isinstance(v, dict):
                details = {"available_keys": [str(x) for x in list(v)[:MAX_AVAILABLE_KEYS]],
                           "key_count": len(v)}
            elif isinstance(v, list):
                details = {"array_length": len(v)}
            else:
                details = {"value_type": json_type(v)}
            raise _not_found(path, seg, details)
        v = _child(v, k)
        path = path + [k]
    return v


class Missing(TypedDict):
    """What a key_path_not_found error says is there instead (one of the three kinds)."""

    available_keys: NotRequired[list[str]]  # an object: its first keys
    key_count: NotRequired[int]  # ... and how many it has
    array_length: NotRequired[int]  # an array
    value_type: NotRequired[str]  # a scalar: its JSON type


def _not_found(path: list[Segment], seg: Segment, details: Missing) -> KeyPathNotFound:
    from scratch.pathnames import format_path

    prefix = format_path(path)
    return KeyPathNotFound(f"no {seg!r} under {prefix}: {missing_what(seg, details)}",
                           valid_prefix=prefix, failed_segment=seg, **details)


def missing_what(seg: Segment, details: Missing) -> str:
    """What is there instead of ``seg``: an array's length and index range, the keys of an
    object closest to it ("did you mean"), or the type of a scalar."""
    import difflib

    from scratch.words import plural
    if "array_length" in details:
        n = details["array_length"]
        return f"it has {plural(n, 'item')} ({'0..' + str(n - 1) if n > 1 else '0'})" if n \
            else "it is an empty array"
    if "available_keys" in details:
        keys = [str(k) for k in details["available_keys"]]
        close = difflib.get_close_matches(str(seg), keys, n=3, cutoff=0.6)
        if close:
            return "did you mean " + " or ".join(repr(k) for k in close) + "?"
        n = details.get("key_count", len(keys))
        shown = ", ".join(repr(k) for k in keys[:5]) + (", ..." if n > 5 else "")
        return f"it has {plural(n, 'key')}" + (f": {shown}" if keys else "")
    return f"it is a {details.get('value_type', 'scalar')}"


def item_starts(ix: IndexReader, segments: list[Segment]) -> Sequence[int]:
    sk = ix.skeleton
    if sk is None:
        raise FormatError(f"{ix.format} content has no arrays", format=ix.format)
    step = _descend(ix, segments)
    if step.kind == "rec" and not step.rest:
        i = step.i
        r = sk.rec(i)
        if r[F_TYPE] != T_ARR:
            raise FormatError("not an array", value_type=TYPES[r[F_TYPE]])
        if r[F_FLAGS] & ITEMS:
            if r[F_AUX] == NONE:
                return range(1, r[F_LENGTH] + 1)
            return sk.section32(r[F_AUX])
        if not r[F_FLAGS] & LAZY:
            return [sk.rec(j)[F_VLINE] for j in sk.children(i)]
    info, starts = _locate(ix, segments, want_items=True)
    if not info.complete:
        value_at(ix, segments)  # raises the precise not-found error
    if info.type != "array":
        raise FormatError("not an array", value_type=info.type)
    if starts is None:
        raise FormatError("item positions unavailable here", path=list(info.path))
    return starts
