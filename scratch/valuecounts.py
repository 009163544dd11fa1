"""Value counts of JSON values: grouping keys, their order, and ranked counts.

Foundation module (standard library only): the index counts values it has stored (a count
cache, log records), the query engines count items (:mod:`scratch.query.aggregate`, DuckDB),
and all of them key, order and rank values with these functions, so a count is the same
answer whichever of them computed it.

Keys (:func:`value_key`) keep JSON's kinds apart: the number 1, the string ``"1"``, ``true``,
``null`` and a missing field (:data:`MISSING`) are five different keys, and each bucket says
which it is (``type``: integer, number, string, boolean, null, object, array or ``missing``).
Numbers compare as numbers (1 and 1.0 are one key, shown as the first seen). Objects and arrays
are keyed by their JSON text with object keys sorted.

Order (:func:`key_order`): numbers ascending, then strings (by code point), booleans (false
first), objects and arrays (by JSON text), null, missing. :func:`rank` orders buckets biggest
first and ties in that order, so a ranking does not depend on the order values came in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from scratch.errors import UsageError, argument
from scratch.jsonvalues import json_type


class _Missing:
    """A field an item does not have (distinct from a field holding null)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
# the type of MISSING, for a value that may be missing (``isinstance(v, Missing)`` is
# ``v is MISSING``)
Missing: TypeAlias = _Missing

Key = tuple[str, object]  # (kind, value): kind number/string/boolean/null/object/array/missing
_RANK = {"number": 0, "string": 1, "boolean": 2, "object": 3, "array": 3, "null": 4,
         "missing": 5}


def _json_text(value: object) -> str:
    import json

    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)


def value_key(value: object) -> Key:
    """The grouping key of one value (see the module docstring)."""
    if value is MISSING:
        return ("missing", None)
    if value is None:
        return ("null", None)
    t = type(value)
    if t is str:
        return ("string", value)
    if t is bool:
        return ("boolean", value)
    if t is int or t is float:
        return ("number", value)
    if isinstance(value, dict):
        return ("object", _json_text(value))
    if isinstance(value, (list, tuple)):
        return ("array", _json_text(value))
    if isinstance(value, (int, float)):  # int/float subclasses; Decimal is not JSON
        return ("number", value)
    return ("string", str(value))  # a YAML date: its text


def key_order(key: Key) -> tuple[object, ...]:
    """Sort key of a :func:`value_key` (numbers, strings, booleans, objects/arrays, null,
    missing)."""
    kind, value = key
    return (_RANK[kind], value) if value is not None else (_RANK[kind],)


def key_type(key: Key, value: object) -> str:
    """The type a bucket reports: a JSON type name, or ``missing``."""
    return "missing" if key[0] == "missing" else json_type(value)


# ---------------------------------------------------------------------------------- ranking


@dataclass(frozen=True)
class Bucket:
    """One group: its values (one per field; :data:`MISSING` for a missing field), their
    types, and how many items have them."""

    values: tuple[object, ...]
    types: tuple[str, ...]
    count: int

    def to_dict(self, fields: Sequence[str]) -> dict[str, object]:
        vals = [None if v is MISSING else v for v in self.values]
        if len(fields) == 1:
            return {"value": vals[0], "type": self.types[0], "count": self.count}
        return {"values": vals, "types": list(self.types), "count": self.count}


@dataclass(frozen=True)
class CountBy:
    """The answer of :func:`count_by`: ``buckets`` (the top ``limit``), ``other`` items in
    ``other_distinct`` further keys, ``distinct`` keys in all, over ``total`` items."""

    fields: tuple[str, ...]
    total: int
    distinct: int
    buckets: tuple[Bucket, ...]
    other: int
    other_distinct: int
    where: str | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"fields": list(self.fields), "total": self.total,
                               "distinct": self.distinct,
                               "values": [b.to_dict(self.fields) for b in self.buckets],
                               "other": {"count": self.other, "distinct": self.other_distinct}}
        if self.where is not None:
            out["where"] = self.where
        return out


def rank(counts: dict[tuple[Key, ...], tuple[tuple[object, ...], int]], fields: Sequence[str],
         *, limit: int | None = 10, where: str | None = None) -> CountBy:
    """Rank counted keys: ``counts`` maps a tuple of :func:`value_key` (one per field) to
    (the values shown for it, count). Biggest first; ties in :func:`key_order`."""
    if limit is not None and limit < 0:
        raise UsageError(f"{argument('limit')} must not be negative", argument="limit",
                         limit=limit)
    ordered = sorted(counts.items(),
                     key=lambda kv: (-kv[1][1], tuple(key_order(k) for k in kv[0])))
    top = ordered if limit is None else ordered[:limit]
    rest = [] if limit is None else ordered[limit:]
    buckets = tuple(
        Bucket(vals, tuple(key_type(k, v) for k, v in zip(keys, vals, strict=True)), n)
        for keys, (vals, n) in top)
    total = sum(n for _, (_, n) in ordered)
    return CountBy(tuple(fields), total, len(ordered), buckets,
                   sum(n for _, (_, n) in rest), len(rest), where)


def tally(rows: Iterable[tuple[object, ...]]
          ) -> dict[tuple[Key, ...], tuple[tuple[object, ...], int]]:
    """Count tuples of values (what :func:`rank` takes)."""
    first: dict[tuple[Key, ...], tuple[object, ...]] = {}  # the values shown for a key
    counts: dict[tuple[Key, ...], int] = {}
    for vals in rows:
        k = tuple(value_key(v) for v in vals)
        n = counts.get(k)
        if n is None:
            first[k] = vals
            counts[k] = 1
        else:
            counts[k] = n + 1
    return {k: (first[k], n) for k, n in counts.items()}
