"""The items of one array, read through the index (shared by item-schema and iterate-over).

Invariants:
- PATH must name one array (dot path, pointer or plain JSONPath chain). With a window
  (offset/limit) only the windowed items' lines are parsed; without one the array is parsed
  once.
- CSV/TSV entries: the rows are the items (PATH ``.``), read from their stored lines through
  the index's row positions (see :mod:`scratch.answers.rows.csv_rows`); so are the records of a
  parsed log, one per line (see :mod:`scratch.answers.rows.log_records`).
- An NDJSON line that is not JSON does not sink the answer: its item is ``None`` in the window
  (so the others keep their index) and is reported with its line.
- Rows are not only the items of an array (:func:`rows_at`):

  * a **map of records** (an object whose values are all objects, e.g. an OpenAPI
    ``definitions``) is rows too: one per member, in the object's order, each carrying its
    key first under the name the caller picks, else :data:`KEY_FIELD` (``_key``; ``__key``
    when a record has a ``_key``, and so on);
  * a path with ``[*]`` (``items[*].status.containerStatuses``) **flattens**: the items of
    the array (or map of records) at the part after ``[*]`` in every item (member) of the
    array (map of records) before it, in order, each carrying :data:`PARENT_FIELD` (the parent
    item's index) and, when the parents are members of a map of records,
    :data:`PARENT_KEY_FIELD` (its key); items of a nested map of records carry their own key
    as a map's rows do. A nested item that is not an object is the row
    ``{"_parent": i, "value": item}``. A parent without that array (missing, null, another
    type) gives no rows and is counted in a warning. ``items[*]`` alone is ``items``. More
    ``[*]`` flatten again (``a[*].b[*].c``): ``_parent`` is then the index of the row of
    ``a[*].b`` the item was nested in, so the two tables join on it. The JSONPath spelling
    (``$.items[*].spec``) reads the same.
  * A record that already has the key name the caller picked is refused
    (``invalid_argument``, with the call under an unused name); so is one that has
    ``_parent`` or ``_parent_key``.
- A path that names none of these is ``not_an_array``, with the calls that do work there: the
  value itself (get-in), its schema, and an object's keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple

from scratch.answers.kernel.target import Target
from scratch.answers.values.rendered import suggest_slice
from scratch.calls import Call, call
from scratch.errors import (
    FormatError,
    InvalidPattern,
    KeyPathNotFound,
    LineNotJson,
    UsageError,
    argument,
)
from scratch.pathnames import WILDCARD, Segment

if TYPE_CHECKING:
    from scratch.answers.rows.base import Item, Row, Segments

KEY_FIELD = "_key"  # the field a map of records' row carries its key in, unless one is picked
PARENT_FIELD = "_parent"  # a flattened row: the index of the item it was nested in
PARENT_KEY_FIELD = "_parent_key"  # ... and the key of that item, in a map of records
KEYS_SHOWN = 100  # keys of an object a not_an_array suggests listing without fit


def is_record_map(value: Item) -> bool:
    """Whether ``value`` is a map of records: an object whose values are all objects."""
    return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())


def not_an_array(target: Target, path: str, segments: Segments, value: Item) -> UsageError:
    """The refusal of a path whose value holds no rows, with the calls that work there."""
    from scratch.jsonvalues import json_type
    from scratch.pathnames import format_path
    where = format_path(list(segments))
    kind = json_type(value)
    why = ""
    if isinstance(value, dict):
        others = sum(1 for v in value.values() if not isinstance(v, dict))
        why = (f" nor a map of records ({others:,} of its {len(value):,} values are not "
               "objects)")
    # a container may be over the cap: fit takes what fits (with next), so each call runs
    big = isinstance(value, (dict, list))
    suggestions: list[Call] = [call("get-in", ref=target.ref, path=where, fit=big or None)]
    if isinstance(value, dict):
        suggestions.append(call("get-in", ref=target.ref, path=where, keys=True,
                                fit=len(value) > KEYS_SHOWN or None))
    if isinstance(value, (dict, list)):
        suggestions.append(call("schema", ref=target.ref, path=where))
    return UsageError(f"{where} is {kind}, not an array{why}", code="not_an_array",
                      path=path, value_type=kind, suggestions=suggestions)


@dataclass
class RowsAt:
    """The rows at a path of a JSON, YAML or NDJSON entry (see the module docstring).

    ``kind``: ``array`` (the items of the array at ``segments``: read through the index a
    window at a time), ``map`` (the members of the map of records at ``segments``) or
    ``nested`` (nested arrays flattened: ``segments`` is the part before the first ``[*]``,
    ``inner`` the whole path, canonical). ``map`` and ``nested`` rows are built from the
    value, read once; ``locations[k]`` is where row ``k``'s value is in the document."""

    kind: Literal["array", "map", "nested"]
    segments: Segments
    total: int
    key_field: str = KEY_FIELD
    inner: str = ""  # nested: the whole path, canonical (a[*].b)
    rows: list[Row] = field(default_factory=list)
    locations: list[Segments] = field(default_factory=list)
    wrapped: set[int] = field(default_factory=set)  # nested rows {"_parent", "value": item}
    added: tuple[str, ...] = ()  # the fields the rows add (their keys, their parents)
    warnings: tuple[str, ...] = ()

    def field_location(self, k: int, at: Sequence[str | int]) -> Segments | None:
        """Where the value at ``at`` inside row ``k`` is in the document (None: a field the
        rows add)."""
        if self.kind == "array":
            return (*self.segments, k, *at)
        if at and at[0] in self.added:
            return None
        if k in self.wrapped:
            if not at or at[0] != "value":
                return None
            at = at[1:]
        return (*self.locations[k], *at)


def rows_at(target: Target, path: str, key_field: str | None = None) -> RowsAt:
    """The rows at ``path`` (an array, a map of records, or a path with ``[*]``)."""
    from scratch.query.paths import parse_path
    key = check_key_field(key_field) if key_field is not None else None
    parsed = parse_path(path)
    segs = parsed.segments
    if segs is None and path.startswith("$") and "*" in path:
        # $.items[*].status.containerStatuses: the JSONPath spelling of the same flattening
        try:
            segs = parse_path(path[1:], syntax="dot").segments
        except InvalidPattern:
            segs = None
    if parsed.singular:
        return _plain_rows(target, path, tuple(parsed.names or ()), key)
    if segs is None:
        raise UsageError(f"{path!r} must name one array or map of records, or flatten nested "
                         "arrays with [*] (items[*].status.containerStatuses); no filters "
                         f"here: use {argument('where')} to filter rows",
                         code="invalid_path", path=path)
    if segs[-1] == WILDCARD and segs.count(WILDCARD) == 1:  # items[*] is items
        return _plain_rows(target, path, _plain(segs[:-1]), key)
    if segs[-1] == WILDCARD:  # a[*].b[*]: the items of a[*].b
        segs = segs[:-1]
    return _nested_rows(target, path, segs, key)


def check_key_field(key_field: str) -> str:
    if not key_field.strip() or key_field != key_field.strip():
        raise UsageError(f"{argument('key_field')} names the field that carries each record's "
                         f"key: a name without surrounding spaces, not {key_field!r}",
                         code="invalid_argument", argument="key_field")
    return key_field


def _value(target: Target, segments: Segments) -> Item:
    try:  # a missing path raises key_path_not_found, saying what exists
        return target.index.value_at(list(segments))
    except FormatError as exc:
        suggest_slice(exc, target)
        raise


def key_name(target: Target, path: str, records: Sequence[Item], picked: str | None) -> str:
    """The field the rows of ``records`` carry their key in: ``picked`` (refused when a record
    has it), else :data:`KEY_FIELD`, or ``__key`` ... when a record has that."""
    if picked is not None:
        check_added(target, path, records, picked, picked=picked)
        return picked
    key = KEY_FIELD
    while any(isinstance(r, dict) and key in r for r in records):
        key = "_" + key
    return key


def _plain_rows(target: Target, path: str, segments: Segments, picked: str | None
                ) -> RowsAt:
    try:
        node = target.index.node(list(segments))
    except FormatError as exc:
        suggest_slice(exc, target)
        raise
    if node is not None and node.complete and node.type == "array" and node.length is not None:
        return RowsAt("array", segments, int(node.length))
    value = _value(target, segments)
    if isinstance(value, list):
        return RowsAt("array", segments, len(value))
    if not is_record_map(value):
        raise not_an_array(target, path, segments, value)
    key = key_name(target, path, list(value.values()), picked)
    rows = [{key: k, **v} for k, v in value.items()]
    return RowsAt("map", segments, len(rows), key, rows=rows,
                  locations=[(*segments, k) for k in value], added=(key,))


def check_added(target: Target, path: str, records: Sequence[Item], name: str, *,
                 picked: str | None) -> None:
    """Refuse rows whose records already have the field ``name`` the rows would add
    (``picked``: the key field; the refusal names an unused one, which
    :func:`suggest_key_field` makes the caller's call with it)."""
    if not any(isinstance(r, dict) and name in r for r in records):
        return
    details: dict[str, str] = {}
    if picked is not None:
        free = "_" + name
        while any(isinstance(r, dict) and free in r for r in records):
            free = "_" + free
        details["unused_name"] = free
    what = "its key" if picked is not None else "where it was nested"
    raise UsageError(f"the records at {path} already have a field {name!r}, the one a row "
                     f"would carry {what} in" + (f"; pick another name with "
                                                f"{argument('key_field')}" if picked else ""),
                     code="invalid_argument", argument="key_field" if picked else "path",
                     **details)


def suggest_key_field(exc: UsageError, asked: Call) -> None:
    """A refused key name comes with ``asked`` again under a name no record has."""
    free = exc.details.get("unused_name")
    if isinstance(free, str) and not exc.details.get("suggestions"):
        exc.details["suggestions"] = [asked.with_args(key_field=free)]


class _Parent(NamedTuple):
    """One item of a level of a flattening: its index at its level, its key (a member of a
    map of records), its value, where that is, and the item it was nested in."""

    position: int
    key: str | None
    value: Item
    location: Segments
    parent: _Parent | None = None


def _nested_rows(target: Target, path: str, segs: Sequence[Segment], picked: str | None
                 ) -> RowsAt:
    """The rows of a path with ``[*]``: each ``[*]`` flattens the items at the part after it
    in every item of the level before (the first level: the array or map of records before
    the first ``[*]``). A row carries the index (and key) of the item it was nested in, at
    the level before the last."""
    from scratch.jsonvalues import json_type
    from scratch.pathnames import format_path
    stars = [i for i, s in enumerate(segs) if not isinstance(s, (str, int))]
    outer = _plain(segs[:stars[0]])
    top = _value(target, outer)
    level: list[_Parent]
    if isinstance(top, list):
        level = [_Parent(i, None, v, (*outer, i)) for i, v in enumerate(top)]
    elif is_record_map(top):
        level = [_Parent(i, k, v, (*outer, k)) for i, (k, v) in enumerate(top.items())]
    else:
        raise not_an_array(target, path, outer, top)
    warnings: list[str] = []
    keyed = isinstance(top, dict)  # the items of this level are members of maps
    parents_keyed = keyed
    for n, star in enumerate(stars):
        inner = _plain(segs[star + 1:stars[n + 1] if n + 1 < len(stars) else len(segs)])
        children: list[_Parent] = []
        without: dict[str, int] = {}
        level_keyed = False
        for parent in level:
            try:
                value = _down(parent.value, inner)
            except KeyPathNotFound:
                without["missing"] = without.get("missing", 0) + 1
                continue
            members: list[tuple[str | int, Item]]
            if isinstance(value, list):
                members = list(enumerate(value))
            elif is_record_map(value) and value:
                level_keyed = True
                members = list(value.items())
            else:
                t = json_type(value)
                without[t] = without.get(t, 0) + 1
                continue
            at = (*parent.location, *inner)
            children += [_Parent(len(children) + j, m if isinstance(m, str) else None, item,
                                 (*at, m), parent) for j, (m, item) in enumerate(members)]
        if without:
            k = sum(without.values())
            kinds = ", ".join(f"{c:,} {t}" for t, c in sorted(without.items(),
                                                              key=lambda tc: -tc[1]))
            noun = "records" if keyed else "items"
            warnings.append(f"{k:,} of {len(level):,} {noun} at "
                            f"{format_path(list(segs[:star]))} have no array or map of records "
                            f"at {format_path(list(inner))} ({kinds}): they give no rows")
        level, parents_keyed, keyed = children, keyed, level_keyed
    rows: list[Row] = []
    wrapped: set[int] = set()
    key = key_name(target, path, [c.value for c in level], picked) if keyed else KEY_FIELD
    for child in level:
        up = child.parent
        assert up is not None
        head: Row = {PARENT_FIELD: up.position,
                     **({PARENT_KEY_FIELD: up.key} if parents_keyed else {}),
                     **({key: child.key} if keyed else {})}
        if isinstance(child.value, dict):
            for name in head:
                if name in child.value and name != key:
                    check_added(target, path, [child.value], name, picked=None)
            row = {**head, **child.value}
        else:
            wrapped.add(len(rows))
            row = {**head, "value": child.value}
        rows.append(row)
    added = (PARENT_FIELD, *((PARENT_KEY_FIELD,) if parents_keyed else ()),
             *((key,) if keyed else ()))
    return RowsAt("nested", outer, len(rows), key, inner=format_path(list(segs)), rows=rows,
                  locations=[c.location for c in level], wrapped=wrapped, added=added,
                  warnings=tuple(warnings))


def _down(value: Item, inner: Segments) -> Item:
    """The value at ``inner`` in ``value`` (keys and non-negative indexes looked up directly;
    anything else as :func:`scratch.query.paths.resolve` reads it)."""
    node = value
    for s in inner:
        if isinstance(s, str) and isinstance(node, dict) and s in node:
            node = node[s]
            continue
        if isinstance(s, int) and isinstance(node, list) and 0 <= s < len(node):
            node = node[s]
        else:
            from scratch.query.paths import resolve
            return resolve(value, list(inner))
    return node


def _plain(segs: Sequence[Segment]) -> Segments:
    return tuple(s for s in segs if isinstance(s, (str, int)))


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


