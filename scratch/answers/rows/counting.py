"""Counting answers: how many items match (``--count``), and value counts (``--count-by``).

Both are exact over the whole array, whatever the window: ``--count`` is one number (with the
items looked at and the time it took), ``--count-by`` a ranking of value counts, biggest first
(:mod:`scratch.query.aggregate`: numbers, strings, booleans, null and a missing field kept
apart), shown as a :class:`~scratch.answers.rows.lists.RowList`: ``--limit`` buckets (10
unless given) from ``--offset``, then an ``other`` line with what the rest hold, and the number
of distinct values.

Engines for a count-by, the first that answers (named in the answer's ``engine``):
- ``cache``: the count of the same fields over the same array of this version, kept beside its
  index (:mod:`scratch.index.countcache`) by an earlier count-by without ``--where``;
- ``scan``: one top-level key over the lines of an NDJSON file with no bad line, read by the
  C scanner (:func:`scratch.query.filecount.count_by_scan`: nothing to start, about 1 GB/s;
  only where the optional extension is built);
- ``duckdb``: one scan of the stored JSON/NDJSON file (:mod:`scratch.query.filecount`), for
  a file of :data:`DUCKDB_BYTES` or more (below that, parsing it here is quicker than
  starting DuckDB);
- ``index``: a parsed log's facet counts, made when the index was built;
- ``python``: the items scanned here (always with ``--where``, which is RFC 9535).
A count-by without ``--where`` is saved to the cache whichever engine made it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from scratch.answers.kernel.candidate import Fixed
from scratch.answers.kernel.result import Result
from scratch.answers.rows.items import Item, Items, good
from scratch.answers.rows.lists import RowList
from scratch.calls import Call
from scratch.words import plural

if TYPE_CHECKING:
    from scratch.query.items import Where
    from scratch.valuecounts import Bucket, CountBy

DEFAULT_TOP = 10  # buckets a count-by shows without --limit
# below this size parsing the items here is faster than starting DuckDB (~0.3 s to import)
DUCKDB_BYTES = 4 << 20
_LITERALS = ("null", "true", "false", "(missing)")


def value_cell(value: object, kind: str, *, strings: bool = False) -> str:
    """A bucket's value as a cell: strings as they are unless they would read as another kind
    (a number, true/false/null, the missing marker: then JSON-quoted), ``(missing)`` for a
    field an item lacks, anything else as JSON."""
    from scratch.answers.rows.lists import cell_text
    if kind == "missing":
        return "(missing)"
    if isinstance(value, str) and not strings:
        import json
        looks = value in _LITERALS or not value or value != value.strip()
        if not looks and value[0] in "-0123456789[{\"":
            try:
                json.loads(value)
                looks = True
            except ValueError:
                looks = False
        return json.dumps(value, ensure_ascii=False) if looks else cell_text(value)
    return cell_text(value)


def split_names(value: str | Iterable[object] | None) -> list[str]:
    """A comma-separated text or a list, as a list of names (at most ``MAX_FIELDS``)."""
    from scratch.query.items import check_field_count
    parts = value.split(",") if isinstance(value, str) else list(value or [])
    names = [p.strip() for p in parts if isinstance(p, str) and p.strip()]
    check_field_count(len(names))
    return names


# -- count ----------------------------------------------------------------------------------


def count_result(command: str, asked: Call, data: Mapping[str, object], count: int, notice: str,
                 code: str, on_close: Callable[[], None] | None = None) -> Fixed:
    """The answer of a ``--count``: the number alone on stdout, what it counts on stderr."""
    result = Result(command, data={**data, "count": count}, text=f"{count}\n",
                    notices=(notice,))
    return Fixed(asked, result, code=code, on_close=on_close)


def count_items(source: Items, where: Where | None) -> tuple[int, int, float]:
    """(items matching ``where``, items looked at, seconds): every item of the array."""
    started = time.monotonic()
    if where is None:
        if source.fast is None or source.fast[0] != "ndjson" or not _any_bad(source):
            return source.total, source.total, time.monotonic() - started
        # an NDJSON root with lines that are not JSON: those are not items to count
        n = sum(1 for _ in good(source.scan(), source.bad))
        return n, n, time.monotonic() - started
    matched = seen = 0
    for _, item in good(source.scan(), source.bad):
        seen += 1
        if where(item):
            matched += 1
    return matched, seen, time.monotonic() - started


def _any_bad(source: Items) -> bool:
    """Whether the index found NDJSON lines that are not JSON (it says so in a warning)."""
    return any("lines are not JSON" in w for w in source.target.index.warnings)


# -- count-by -------------------------------------------------------------------------------


def count_by_items(source: Items, fields: Sequence[str], where: Where | None
                   ) -> tuple[CountBy, str, float]:
    """(the full :class:`~scratch.query.aggregate.CountBy`, engine, seconds) of ``fields``
    over the items that pass ``where`` (see the module docstring for the engines)."""
    from scratch.query.aggregate import count_by
    started = time.monotonic()
    parsed = [source.field_path(f) for f in fields]

    def python() -> CountBy:
        items: Iterator[Item] = (item for _, item in good(source.scan(), source.bad))
        return count_by(items, parsed, where=where, limit=None, names=list(fields))

    if where is not None or any(p.function for p in parsed):
        # a filter is RFC 9535 and len(PATH) a size: only the items scanned here know them
        return python(), "python", time.monotonic() - started
    from scratch.index.countcache import cached_count_by
    target = source.target
    engine: list[str] = []

    def compute() -> CountBy:
        fast = source.fast
        if fast is not None and fast[0] == "ndjson" and len(fields) == 1 and \
                not _any_bad(source):
            from scratch.query.filecount import count_by_scan
            r = count_by_scan(target.path, fields[0], limit=None)
            if r is not None:
                engine.append("scan")
                return r
        if fast is not None and fast[0] in ("ndjson", "json") and \
                target.index.bytes >= DUCKDB_BYTES:
            from scratch.query.filecount import count_by_file
            r = count_by_file(target.path, fast[0], list(fields), limit=None,
                              location=fast[1])
            if r is not None:
                engine.append("duckdb")
                return r
        if fast is not None and fast[0] == "log" and len(fields) == 1:
            from scratch.index.logrecords import facet_count_by
            faceted: CountBy | None = facet_count_by(fast[1], fields[0], limit=None)
            if faceted is not None:
                engine.append("index")
                return faceted
        engine.append("python")
        return python()

    key = ("count-by", source.cache_key, list(fields))
    full = cached_count_by(target.index.index_dir, key, compute, limit=None)
    return full, engine[0] if engine else "cache", time.monotonic() - started


def count_by_answer(asked: Call, counted: CountBy, *, command: str, code: str,
                    base: Mapping[str, object], noun: str, items: int | None, engine: str,
                    seconds: float, offset: int, limit: int | None, fit: bool,
                    warnings: tuple[str, ...] = (), on_close: Callable[[], None] | None = None,
                    what: str | None = None, strings: bool = False) -> RowList[Bucket]:
    """The ranking ``counted`` (a CountBy with every bucket) as a list of buckets: rows
    ``offset..`` (``limit``: 10 unless given), then the ``other`` line."""
    fields = list(counted.fields)
    buckets = list(counted.buckets)
    distinct = counted.distinct
    subject = what or ", ".join(fields)

    def cells(b: Bucket) -> list[str]:
        return [*(value_cell(v, t, strings=strings)
                  for v, t in zip(b.values, b.types, strict=True)),
                str(b.count)]

    def rest(end: int) -> tuple[int, int]:
        after = buckets[end:]
        return sum(b.count for b in after), len(after)

    def tail(end: int) -> list[list[str]]:
        n, k = rest(end)
        if not k:
            return []
        return [[f"(other: {plural(k, 'value')})", *([""] * (len(fields) - 1)), str(n)]]

    def top_tie() -> int:
        """How many values share the biggest count, when more than one does."""
        if len(buckets) < 2 or buckets[0].count != buckets[1].count:
            return 0
        return sum(1 for b in buckets if b.count == buckets[0].count)

    def cut_tie(end: int) -> int:
        """How many values not shown after ``end`` have the last shown one's count (more than
        one: a long tail of values seen once is no tie worth a word)."""
        if end <= 0 or end >= len(buckets):
            return 0
        last = buckets[end - 1].count
        if last <= 1 and buckets[0].count > 1:
            return 0
        return sum(1 for b in buckets[end:] if b.count == last)

    def ties(start: int, k: int) -> str:
        """What ranking by count hides: a tie for the most, or a tie the window cuts."""
        said = []
        tied = top_tie()
        if tied and start == 0 and k:
            said.append(f"{tied:,} values tie for the most ({buckets[0].count:,})")
        cut = cut_tie(start + k) if k else 0
        if cut and not (tied and buckets[start + k - 1].count == buckets[0].count
                        and start == 0):
            said.append(f"the last shown ties with {plural(cut, 'value')} not shown "
                        f"({buckets[start + k - 1].count:,})")
        elif cut:
            said[-1] += f", {cut:,} of them not shown"
        return "; " + "; ".join(said) if said else ""

    def make_data(shown: list[Bucket], start: int, k: int) -> dict[str, object]:
        n, left = rest(start + k)
        data = {**base, "fields": fields, "total": counted.total, "distinct": distinct,
                "offset": start, "values": [b.to_dict(fields) for b in shown],
                "other": {"count": n, "distinct": left}, "engine": engine,
                "seconds": round(seconds, 3)}
        if top_tie():  # an agent taking the first value as "the most" would be wrong
            data["top_tie"] = top_tie()
        if k and cut_tie(start + k):
            data["tie_not_shown"] = cut_tie(start + k)
        if items is not None:
            data["items"] = items
        return data

    def notices(start: int, k: int) -> tuple[str, ...]:
        over = plural(counted.total, noun, grouped=True)
        if items is not None and counted.where is not None:
            over += f" matching the filter (of {items:,})"
        elif counted.where is not None:
            over += " matching the filter"
        values = plural(distinct, "distinct value", grouped=True)
        took = f"({seconds:.2f} s, {engine})"
        tie = ties(start, k)
        if k and start == 0 and k < distinct:  # the most common ones: say how many of how many
            return (f"top {k:,} of {values} of {subject} over {over}{tie} {took}",)
        if k and start == 0:
            return (f"{values} of {subject} over {over}, all shown{tie} {took}",)
        ranks = (f"values ranked {start + 1:,}..{start + k:,} by count shown" if k
                 else "none shown")
        return (f"{values} of {subject} over {over}; {ranks}{tie} {took}",)

    return RowList(asked, command=command, code=code, columns=[*fields, "count"],
                   rows=buckets, offset=offset, limit=DEFAULT_TOP if limit is None else limit,
                   fit=fit, cells=cells, make_data=make_data, tail=tail, notices=notices,
                   warnings=warnings, on_close=on_close)
