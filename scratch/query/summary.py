"""Deterministic value summaries of record arrays, for ``scratch summarize``.

:func:`summarize_values` walks the scalar fields of the items (nested object keys dotted, the
same paths as ``item_schema``; arrays are left to their own pass) and reports, per field::

    {"path": "status.phase", "present": 11, "distinct": 2,
     "values": [["Running", 10], ["Pending", 1]]}            # low cardinality: value counts
    {"path": "spec.priority", "present": 11, "distinct": 3,
     "min": 0, "max": 2000001000, "values": [...]}             # numbers: range (+ counts if few)
    {"path": "metadata.creationTimestamp", "present": 11, "distinct": 11,
     "min": "2020-09-10T18:03:04Z", "max": "2020-09-15T23:29:37Z"}   # ISO timestamps: range
    {"path": "metadata.name", "present": 11, "distinct": 11}  # high cardinality: count only

With ``top`` (summarize passes ``max_distinct=1000, top=10``) only the ``top`` biggest counts are
listed and the rest is one ``"other": {"count": n, "distinct": k}`` entry, so a field with a
thousand categories (``kind``, ``SYSLOG_IDENTIFIER``, ``country``) costs eleven lines::

    {"path": "country", "present": 9000, "distinct": 240,
     "values": [["United States", 1820], ...], "other": {"count": 4100, "distinct": 230}}

Value counts are listed when a field has at most ``max_distinct`` distinct values and some value
repeats (a field whose every value is unique is an identifier, not a category) and the values are
not timestamps; they are sorted by count (descending), ties in first-seen order. Strings longer
than ``max_value_chars`` never count as categories. Booleans and null are values like any other.
Timestamp ranges compare the text (exact when all values share one UTC offset and format).
Fields come in tree order: a key's children follow it, each level in first-seen order.

:func:`find_record_arrays` finds the arrays of objects in a document (largest first), which is
what summarize runs on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NotRequired, TypedDict

from scratch.jsonvalues import JSON, JsonObject, json_type
from scratch.pathnames import format_path

_ISO_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?\Z")


class FieldSummary(TypedDict):
    """One field of :func:`summarize_values`."""

    path: str
    present: int
    distinct: int
    min: NotRequired[float | str]
    max: NotRequired[float | str]
    values: NotRequired[list[list[object]]]  # [value, count], biggest first
    other: NotRequired[dict[str, int]]  # count and distinct of the values not listed


class Summary(TypedDict):
    """What :func:`summarize_values` answers."""

    items: int
    fields: list[FieldSummary]


class RecordArray(TypedDict):
    """An array of records found by :func:`find_record_arrays`."""

    path: str
    location: list[str | int]
    length: int


class _Field:
    __slots__ = ("counts", "numbers", "present", "strings_only", "times")

    def __init__(self) -> None:
        self.present = 0
        # (JSON type, value): a value a field holds (objects and arrays are not counted)
        self.counts: dict[tuple[str, object], int] = {}
        self.numbers: list[float] = []
        self.strings_only = True
        self.times = True


def _key(value: object) -> tuple[str, object]:
    # True == 1 and 1 == 1.0 in Python: keep JSON's distinction in the counts.
    return (json_type(value), value)


def _walk(obj: JsonObject, prefix: list[str], fields: dict[tuple[str, ...], _Field],
          depth_left: int, order: dict[tuple[str, ...], int]) -> None:
    for key, value in obj.items():
        path = (*prefix, key)
        if path not in order:
            order[path] = len(order)
        if isinstance(value, dict):
            if depth_left > 1:
                _walk(value, list(path), fields, depth_left - 1, order)
            continue
        if isinstance(value, list):
            continue  # arrays are summarised by their own record-array pass
        f = fields.get(path)
        if f is None:
            f = fields[path] = _Field()
        f.present += 1
        k = _key(value)
        f.counts[k] = f.counts.get(k, 0) + 1
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            f.numbers.append(value)
        if not isinstance(value, str):
            f.strings_only = False
            f.times = False
        elif f.times and not _ISO_TIME.match(value):
            f.times = False


def summarize_values(items: Iterable[JSON], *, max_distinct: int = 10, depth: int = 4,
                     max_value_chars: int = 80, top: int | None = None) -> Summary:
    """Per-field value counts and ranges over the object items (see the module docstring)."""
    fields: dict[tuple[str, ...], _Field] = {}
    order: dict[tuple[str, ...], int] = {}
    n = 0
    for item in items:
        n += 1
        if isinstance(item, dict):
            _walk(item, [], fields, depth, order)
    out: list[FieldSummary] = []
    # Tree order: a key's children follow it, each level in first-seen order.
    tree = sorted(fields, key=lambda p: tuple(order[p[: i + 1]] for i in range(len(p))))
    for path in tree:
        f = fields[path]
        entry: FieldSummary = {"path": format_path(path), "present": f.present,
                                 "distinct": len(f.counts)}
        if f.numbers and len(f.numbers) == f.present:
            entry["min"] = min(f.numbers)
            entry["max"] = max(f.numbers)
        elif f.strings_only and f.times and f.counts:
            texts = [v for (_, v) in f.counts if isinstance(v, str)]  # strings only
            entry["min"] = min(texts)
            entry["max"] = max(texts)
        categorical = (
            not (f.strings_only and f.times)  # timestamps get a range, not counts
            and len(f.counts) <= max_distinct
            and len(f.counts) < f.present
            and all(not isinstance(v, str) or len(v) <= max_value_chars for (_, v) in f.counts)
        )
        if categorical:
            ranked = sorted(enumerate(f.counts.items()), key=lambda p: (-p[1][1], p[0]))
            shown = ranked if top is None else ranked[:top]
            entry["values"] = [[value, count] for _, ((_, value), count) in shown]
            if len(shown) < len(ranked):
                rest = ranked[len(shown):]
                entry["other"] = {"count": sum(c for _, (_, c) in rest), "distinct": len(rest)}
        out.append(entry)
    return {"items": n, "fields": out}


def find_record_arrays(value: JSON, *, min_items: int = 1, max_depth: int = 6
                       ) -> list[RecordArray]:
    """Arrays whose elements are mostly objects: ``{"path", "location", "length"}``.

    Sorted by length (largest first), then document order. The root counts (path ``.``).
    """
    found: list[tuple[int, int, RecordArray]] = []

    def visit(node: JSON, loc: list[str | int], depth: int) -> None:
        if isinstance(node, list):
            objects = sum(1 for e in node if isinstance(e, dict))
            if len(node) >= min_items and objects * 2 > len(node):
                found.append((-len(node), len(found),
                              {"path": format_path(loc), "location": list(loc),
                               "length": len(node)}))
            if depth < max_depth:
                for i, e in enumerate(node[:1]):  # one element is enough to find nested lists
                    visit(e, [*loc, i], depth + 1)
        elif isinstance(node, dict) and depth < max_depth:
            for k, v in node.items():
                visit(v, [*loc, k], depth + 1)

    visit(value, [], 0)
    found.sort(key=lambda t: (t[0], t[1]))
    return [f for _, _, f in found]
