"""Arrays of records: the union schema of their items, and rows of chosen fields.

* :func:`item_schema` -- every key seen across the items (nested object keys dotted, written by
  ``format_path`` so they can be passed to ``get-in`` and ``--fields``), each with the JSON types
  seen (with counts) and its presence ``k/n``. Keys of objects inside arrays are listed under
  ``<array>[*].<key>`` with presence counted over those array elements (``k/m``, m = elements
  seen). Order is deterministic: a tree walk in which the children of a key appear in the order
  they were first seen, an array's element keys right after the array's own entry. Items known
  not to be JSON (NDJSON lines left out, passed as ``not_json``) keep their place in the window
  but count nowhere else: not in the types, not in ``n``.
* :func:`iterate_rows` -- one row per item with ``_index`` and the requested fields (missing ->
  ``None``), long values previewed with the full path to fetch them whole, optionally filtered
  by an RFC 9535 filter expression (``@.status.phase == 'Failed' && @.spec.nodeName``).

Windows: ``offset``/``limit`` select array items (``_index`` is always the position in the
whole array). Callers holding only the window's items pass ``pre_windowed=True`` and the
array's ``total``. A partial window is reported as ``{"offset", "limit", "total"}``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from scratch.errors import InvalidPattern, KeyPathNotFound, UsageError
from scratch.query.paths import (
    WILDCARD,
    ParsedPath,
    compile_jsonpath,
    format_path,
    iter_matches,
    json_type,
    parse_path,
)

ELLIPSIS = "…"


def _window(items: Iterable[Any], offset: int, limit: int | None, pre_windowed: bool
            ) -> Iterator[tuple[int, Any]]:
    """(array index, item) pairs of the window."""
    if offset < 0 or (limit is not None and limit < 0):
        raise UsageError("offset and limit must not be negative", offset=offset, limit=limit)
    if pre_windowed:
        source: Iterable[Any] = items if limit is None else itertools.islice(items, limit)
    elif isinstance(items, Sequence) and not isinstance(items, (str, bytes)):
        source = items[offset:] if limit is None else items[offset : offset + limit]
    else:
        stop = None if limit is None else offset + limit
        source = itertools.islice(items, offset, stop)
    return zip(itertools.count(offset), source)


def _known_total(items: Iterable[Any], total: int | None, offset: int, limit: int | None,
                 seen: int, pre_windowed: bool, stopped: bool = False) -> int | None:
    """The array length when it is known (given, a sequence, or we ran off its end)."""
    if total is not None:
        return total
    if pre_windowed:
        return None
    if isinstance(items, Sequence) and not isinstance(items, (str, bytes)):
        return len(items)
    if not stopped and (limit is None or seen < limit):
        return offset + seen
    return None


def _window_info(offset: int, limit: int | None, seen: int, total: int | None
                 ) -> dict[str, Any] | None:
    """The window, when it is not the whole array."""
    if offset == 0 and total is not None and seen >= total:
        return None
    return {"offset": offset, "limit": limit, "total": total}


# --------------------------------------------------------------------------------- item schema


@dataclass
class _Node:
    types: dict[str, int] = field(default_factory=dict)
    present: int = 0
    children: dict[str, _Node] = field(default_factory=dict)
    element_types: dict[str, int] = field(default_factory=dict)
    elements: _Node | None = None  # keys of the object elements, when this is an array


def _count(types: dict[str, int], t: str) -> None:
    types[t] = types.get(t, 0) + 1


def _add(node: _Node, value: dict[str, Any], depth_left: int | None) -> None:
    """Record the keys of one object ``value`` under ``node``."""
    deeper = depth_left is None or depth_left > 1
    below = None if depth_left is None else depth_left - 1
    for key, child_value in value.items():
        child = node.children.get(key)
        if child is None:
            child = node.children[key] = _Node()
        child.present += 1
        t = json_type(child_value)
        _count(child.types, t)
        if t == "object" and deeper:
            _add(child, child_value, below)
        elif t == "array":
            for element in child_value:
                et = json_type(element)
                _count(child.element_types, et)
                if et == "object" and deeper:
                    if child.elements is None:
                        child.elements = _Node()
                    _add(child.elements, element, below)


def _flatten(node: _Node, prefix: list[Any], n: int, out: list[dict[str, Any]]) -> None:
    for key, child in node.children.items():
        path = [*prefix, key]
        entry: dict[str, Any] = {
            "path": format_path(path),
            "types": dict(child.types),
            "present": child.present,
            "presence": f"{child.present}/{n}",
        }
        if child.element_types:
            entry["element_types"] = dict(child.element_types)
        out.append(entry)
        _flatten(child, path, n, out)
        if child.elements is not None:
            # Keys inside array elements: presence counts elements, not items.
            _flatten(child.elements, [*path, WILDCARD], sum(child.element_types.values()), out)


def item_schema(items: Iterable[Any], *, offset: int = 0, limit: int | None = None,
                total: int | None = None, depth: int | None = None,
                pre_windowed: bool = False, not_json: Collection[int] = ()) -> dict[str, Any]:
    """Union of the keys of the items in the window.

    Returns ``{"items": n, "item_types": {type: count}, "not_json": m, "fields": [...],
    "window": ...}`` where each field is ``{"path", "types": {type: count}, "present": k,
    "presence": "k/n"}`` plus ``element_types`` for arrays. ``depth`` limits how many key levels
    are listed (None: all).

    ``not_json``: array indexes of items whose stored text is not JSON (their value here is a
    stand-in). They count in ``items`` (the window's size) and in ``m``, and nowhere else: the
    presence denominator is the number of items that are JSON, so ``k/n`` reads like the
    index-time schema of an NDJSON entry (which counts only the lines that parse), and a key
    present in every readable item shows as ``n/n``.
    """
    root = _Node()
    item_types: dict[str, int] = {}
    seen = 0
    bad = 0
    for index, item in _window(items, offset, limit, pre_windowed):
        seen += 1
        if index in not_json:
            bad += 1
            continue
        t = json_type(item)
        item_types[t] = item_types.get(t, 0) + 1
        if t == "object":
            _add(root, item, depth)
    total = _known_total(items, total, offset, limit, seen, pre_windowed)
    fields: list[dict[str, Any]] = []
    _flatten(root, [], seen - bad, fields)
    return {
        "items": seen,
        "item_types": item_types,
        "not_json": bad,
        "fields": fields,
        "window": _window_info(offset, limit, seen, total),
    }


# ------------------------------------------------------------------------------------- where


@dataclass(frozen=True)
class Where:
    """A compiled ``--where`` filter: an RFC 9535 filter expression applied to each item."""

    text: str
    _query: Any

    def __call__(self, item: Any) -> bool:
        # The filter selector runs over the children of its input, so wrap the item.
        return bool(self._query.find([item]))


def compile_where(text: str) -> Where:
    """Compile ``@.a == 1 && @.b`` (also accepted: ``?@.a == 1``, ``[?@.a == 1]``).

    Errors: ``invalid_path`` with the 0-based position in ``text``.
    """
    body = text.strip()
    lead = len(text) - len(text.lstrip())
    if body.startswith("[?") and body.endswith("]"):
        body, lead = body[2:-1], lead + 2
    elif body.startswith("?"):
        body, lead = body[1:], lead + 1
    if not body.strip():
        raise InvalidPattern("empty --where expression", code="invalid_path", path=text,
                             position=0)
    query = compile_jsonpath(f"$[?{body}]", offset=3 - lead, shown=text)
    return Where(text, query)


# -------------------------------------------------------------------------------------- rows


@dataclass
class Rows:
    """The answer of :func:`iterate_rows`.

    ``rows``: ``{"_index": i, <field>: value, ...}``; a previewed value has an entry in
    ``row["_truncated"][field] = {"path": full dot path, "length": full length}``.
    ``next_offset`` is the array index to continue from, None when the array is exhausted.
    """

    fields: list[str]
    rows: list[dict[str, Any]]
    scanned: int
    window: dict[str, Any] | None
    next_offset: int | None
    where: str | None = None


def _field_value(item: Any, parsed: ParsedPath) -> tuple[Any, tuple[str | int, ...] | None]:
    """(value, concrete location) of one field in one item; (None, None) when missing."""
    try:
        matches = list(iter_matches(item, parsed, explain_missing=False))
    except KeyPathNotFound:
        return None, None  # a missing field is just null in a row
    if parsed.singular:
        return (matches[0].value, matches[0].location) if matches else (None, None)
    return [m.value for m in matches] or None, None


def _preview(value: Any, limit: int) -> tuple[Any, int | None]:
    """(shown value, full length if cut)."""
    if isinstance(value, str):
        return (value, None) if len(value) <= limit else (value[:limit] + ELLIPSIS, len(value))
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return (value, None) if len(text) <= limit else (text[:limit] + ELLIPSIS, len(text))
    return value, None


def iterate_rows(items: Iterable[Any], fields: Sequence[str], *, offset: int = 0,
                 limit: int | None = None, where: str | Where | None = None,
                 preview_chars: int = 200, array_location: Sequence[str | int] = (),
                 max_rows: int | None = None, total: int | None = None,
                 pre_windowed: bool = False) -> Rows:
    """One row per item of the window (that passes ``where``), with the chosen fields.

    ``fields`` are paths relative to an item (dot path, pointer or JSONPath; ``.`` is the item
    itself; a path with ``*`` gives a list). ``array_location`` is the array's concrete location
    in the document, used to write the full path of previewed values. ``max_rows`` stops early
    (then ``next_offset`` is the index after the last item looked at).
    """
    parsed = [parse_path(f) for f in fields]
    flt = compile_where(where) if isinstance(where, str) else where
    rows: list[dict[str, Any]] = []
    scanned = 0
    stopped = False
    for index, item in _window(items, offset, limit, pre_windowed):
        if max_rows is not None and len(rows) >= max_rows:
            stopped = True
            break
        scanned += 1
        if flt is not None and not flt(item):
            continue
        row: dict[str, Any] = {"_index": index}
        cut: dict[str, Any] = {}
        for name, p in zip(fields, parsed, strict=True):
            value, location = _field_value(item, p)
            shown, full = _preview(value, preview_chars)
            row[name] = shown
            if full is not None:
                loc = location if location is not None else tuple(p.segments or ())
                where_path = (format_path([*array_location, index, *loc]) if p.singular
                              else format_path([*array_location, index]))
                cut[name] = {"path": where_path, "length": full}
        if cut:
            row["_truncated"] = cut
        rows.append(row)
    total = _known_total(items, total, offset, limit, scanned, pre_windowed, stopped)
    end = offset + scanned
    next_offset: int | None = end
    if total is not None and end >= total:
        next_offset = None
    elif not stopped and limit is None and total is None:
        next_offset = None  # pre-windowed items without a total: we saw all we were given
    window = _window_info(offset, limit, scanned, total)
    if stopped and window is None:
        window = {"offset": offset, "limit": limit, "total": total}
    return Rows(list(fields), rows, scanned, window, next_offset,
                None if flt is None else flt.text)
