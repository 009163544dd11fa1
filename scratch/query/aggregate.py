"""Counting, grouping and sorting items: exact answers over a whole iterator of items.

* :func:`count` -- how many items pass a ``--where`` filter (RFC 9535, as ``iterate-over``).
* :func:`count_by` -- value counts of one or more fields: biggest first, the top ``limit``
  plus an ``other`` bucket (its count and how many distinct keys it holds) and the number of
  distinct keys.
* :func:`sort_indexes` -- item indexes ordered by one field.
* :func:`resolve_index` / :func:`resolve_window` -- negative indexes (``-1`` is the last item;
  an offset of ``-20`` is the last 20 items).

Keys, their order, :data:`MISSING` and the ranking (:func:`~scratch.valuecounts.rank`,
:class:`~scratch.valuecounts.CountBy`) are :mod:`scratch.valuecounts`, below every layer, so
the index's counts and these are one answer: JSON's kinds kept apart (1, ``"1"``, ``true``,
``null`` and a missing field are five keys), buckets biggest first, ties in key order.
:func:`sort_indexes` is stable (equal keys keep item order); ``desc`` reverses the order of
the values, and null then missing stay last either way.

Pure: works on plain Python values; ``scratch.query.items`` supplies the filter.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from scratch.errors import OutOfRange, UsageError, argument
from scratch.jsonvalues import JSON
from scratch.query.paths import ParsedPath, iter_matches, parse_field
from scratch.valuecounts import MISSING, CountBy, Missing, key_order, rank, tally, value_key

if TYPE_CHECKING:
    from scratch.query.items import Where

T = TypeVar("T")
# what a field getter gives: the value (a list of them for a path with wildcards), or MISSING
Got: TypeAlias = "JSON | Missing"

# ------------------------------------------------------------------------------ field access


def field_getter(path: str | ParsedPath) -> Callable[[JSON], Got]:
    """A function giving the value of ``path`` (relative to an item) or :data:`MISSING`.

    Plain dot paths are walked directly (integers index arrays, negative from the end, and are
    keys on objects); paths with wildcards or filters give the list of matches (MISSING when
    nothing matches)."""
    parsed = parse_field(path) if isinstance(path, str) else path
    if parsed.function is not None:  # len(PATH): the size of what the path names
        from scratch.query.paths import apply_function
        inner = field_getter(parsed._replace(function=None))

        def sized(item: JSON) -> Got:
            value = inner(item)
            return MISSING if isinstance(value, Missing) else apply_function(parsed, value)

        return sized
    segments = parsed.segments
    if segments is not None and parsed.singular and all(
            isinstance(s, (str, int)) for s in segments):
        segs = tuple(segments)

        def get(item: JSON) -> Got:
            cur: Got = item
            for seg in segs:
                if isinstance(cur, dict):
                    cur = cur.get(seg if isinstance(seg, str) else str(seg), MISSING)
                    if cur is MISSING:
                        return MISSING
                elif isinstance(cur, list) and isinstance(seg, int):
                    if not -len(cur) <= seg < len(cur):
                        return MISSING
                    cur = cur[seg]
                else:
                    return MISSING
            return cur

        return get

    def get_many(item: JSON) -> Got:
        from scratch.errors import KeyPathNotFound

        try:
            values = [m.value for m in iter_matches(item, parsed, explain_missing=False)]
        except KeyPathNotFound:
            return MISSING
        if parsed.singular:
            return values[0] if values else MISSING
        return values or MISSING

    return get_many


def compile_filter(where: str | Where | None) -> Where | None:
    """A compiled ``Where`` (from text or as given), or None."""
    if where is None or not isinstance(where, str):
        return where
    from scratch.query.items import compile_where

    return compile_where(where)


def _where_text(where: str | Where | None) -> str | None:
    return where if isinstance(where, str) or where is None else str(where.text)


def _filtered(items: Iterable[JSON], where: str | Where | None, skip: Collection[int]
              ) -> Iterable[tuple[int, JSON]]:
    flt = compile_filter(where)
    for i, item in enumerate(items):
        if i in skip:
            continue
        if flt is None or flt(item):
            yield i, item


# ------------------------------------------------------------------------------------ count


@dataclass(frozen=True)
class Count:
    """``count`` items matched out of ``items`` looked at (items in ``skip`` not counted)."""

    count: int
    items: int
    where: str | None = None


def count(items: Iterable[JSON], where: str | Where | None = None, *,
          skip: Collection[int] = ()) -> Count:
    """How many items pass ``where`` (an RFC 9535 filter text or a compiled ``Where``)."""
    flt = compile_filter(where)
    seen = matched = 0
    for i, item in enumerate(items):
        if i in skip:
            continue
        seen += 1
        if flt is None or flt(item):
            matched += 1
    return Count(matched, seen, _where_text(where))


# --------------------------------------------------------------------------------- count_by


def count_by(items: Iterable[JSON], fields: Sequence[str | ParsedPath], *,
             where: str | Where | None = None,
             limit: int | None = 10, skip: Collection[int] = (),
             names: Sequence[str] | None = None) -> CountBy:
    """Value counts of ``fields`` (paths relative to an item) over the items that pass
    ``where``; items whose index is in ``skip`` (not JSON) are left out."""
    if not fields:
        raise UsageError(f"{argument('count_by')} needs at least one field", argument="count_by")
    getters = [field_getter(f) for f in fields]
    shown = list(names) if names is not None else [
        f if isinstance(f, str) else f.text for f in fields]
    if len(getters) == 1:
        g = getters[0]
        rows: Iterable[tuple[object, ...]] = ((g(item),) for _, item in _filtered(items, where,
                                                                                 skip))
    else:
        rows = (tuple(g(item) for g in getters) for _, item in _filtered(items, where, skip))
    return rank(tally(rows), shown, limit=limit, where=_where_text(where))


# ------------------------------------------------------------------------------------- sort


def sort_key(value: object) -> tuple[object, ...]:
    """Sort key of a value for :func:`sort_indexes` (null and missing last)."""
    return key_order(value_key(value))


def sort_indexes(items: Iterable[JSON], field: str | ParsedPath, *, desc: bool = False,
                 skip: Collection[int] = (), where: str | Where | None = None) -> list[int]:
    """Indexes of the items (passing ``where``; not in ``skip``) ordered by ``field``: stable,
    numbers as numbers, null then missing last in both directions."""
    return order_pairs(_filtered(items, where, skip), field_getter(field), desc=desc)


def order_pairs(pairs: Iterable[tuple[int, T]], get: Callable[[T], object], *,
                desc: bool = False) -> list[int]:
    """The indexes of ``(index, item)`` pairs ordered by ``get(item)`` as :func:`sort_indexes`
    orders them."""
    keyed: list[tuple[tuple[object, ...], int]] = []
    tail_null: list[int] = []
    tail_missing: list[int] = []
    for i, item in pairs:
        v = get(item)
        if v is MISSING:
            tail_missing.append(i)
        elif v is None:
            tail_null.append(i)
        else:
            keyed.append((sort_key(v), i))
    # sort on the key alone: Python's sort is stable, also with reverse=True
    keyed.sort(key=lambda p: p[0], reverse=desc)
    return [i for _, i in keyed] + tail_null + tail_missing


# ---------------------------------------------------------------------------- negative index


def resolve_index(index: int, length: int, *, what: str = "index") -> int:
    """``index`` as a position in a sequence of ``length`` (``-1`` is the last).

    Out of range: :class:`OutOfRange` (``offset_out_of_range``) naming the valid range."""
    i = index + length if index < 0 else index
    if not 0 <= i < length:
        valid = f"0..{length - 1} or -{length}..-1" if length else "none (it is empty)"
        raise OutOfRange(f"{what} {index} is out of range: {length} items (valid: {valid})",
                         index=index, length=length)
    return i


def resolve_window(offset: int, limit: int | None, total: int) -> tuple[int, int]:
    """``(start, stop)`` of a window of ``total`` items: a negative ``offset`` counts from
    the end (``-20``: the last 20; further back than the start means the start); an offset
    past the end gives an empty window at the end. ``limit`` None: to the end."""
    if limit is not None and limit < 0:
        raise UsageError(f"{argument('limit')} must not be negative", limit=limit,
                         argument="limit")
    start = max(0, total + offset) if offset < 0 else min(offset, total)
    stop = total if limit is None else min(total, start + limit)
    return start, stop
