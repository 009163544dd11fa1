"""Exact value counts of a stored version, kept beside its index once computed.

A count-by without a filter over a stored version has one answer forever (the content never
changes under a version's index), so the first one is saved and later ones -- with any
``--limit`` -- read it instead of scanning the entry again: a 100 MB NDJSON count-by costs a
DuckDB scan once (~0.5 s cold), then a small file read.

Layout: ``<index_dir>/counts/<sha256 of the key>.json`` where the key is what identifies the
question (the caller's kind, items location and fields, e.g. ``("ndjson", [], ["status"])``).
The file holds ``{"scratch_counts": 1, "key": ..., "fields": [...], "buckets": [[values,
types, count], ...]}`` with every bucket (no limit), written atomically; big integers stay
exact (:func:`scratch.index.files.dump_info`). A missing, unreadable or foreign file is a miss:
the caller computes and the file is written again. The directory goes when the index is
rebuilt, so a cache never outlives the index it belongs to.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, overload

from scratch.index import files as F

if TYPE_CHECKING:
    from scratch.valuecounts import CountBy, Key

VERSION = 1
DIR = "counts"


def _path(index_dir: Path, key: Sequence[object]) -> tuple[Path, str]:
    text = json.dumps(list(key), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return Path(index_dir) / DIR / f"{digest}.json", text


def load(index_dir: Path, key: Sequence[object]) -> CountBy | None:
    """The cached :class:`scratch.query.aggregate.CountBy` (every bucket), or None."""
    from scratch.valuecounts import MISSING, rank, value_key

    path, text = _path(index_dir, key)
    try:
        doc = F.load_info(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("scratch_counts") != VERSION or \
            doc.get("key") != text:
        return None
    counts: dict[tuple[Key, ...], tuple[tuple[object, ...], int]] = {}
    try:
        for values, types, n in doc["buckets"]:
            vals = tuple(MISSING if t == "missing" else v
                         for v, t in zip(values, types, strict=True))
            counts[tuple(value_key(v) for v in vals)] = (vals, int(n))
        return rank(counts, list(doc["fields"]), limit=None)
    except (KeyError, TypeError, ValueError):
        return None


def save(index_dir: Path, key: Sequence[object], result: CountBy) -> None:
    """Keep ``result`` (a CountBy computed with no limit). Errors writing are ignored: the
    cache only saves time."""
    path, text = _path(index_dir, key)
    if result.other:
        raise ValueError("only a count-by without a limit can be cached")
    doc = {"scratch_counts": VERSION, "key": text, "fields": list(result.fields),
           "buckets": [[[None if t == "missing" else v for v, t in zip(b.values, b.types,
                                                                        strict=True)],
                        list(b.types), b.count] for b in result.buckets]}
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        F.write_atomic(path, F.dump_info(doc))
    except OSError:
        pass


def cached_total(index_dir: Path, key: Sequence[object], compute: Callable[[], int]) -> int:
    """A number that only the content decides (e.g. how many lines of a version a grep
    pattern selects): from the cache, else ``compute()`` and saved beside the index."""
    path, text = _path(index_dir, key)
    try:
        doc = F.load_info(path.read_bytes())
    except (OSError, ValueError):
        doc = None
    if isinstance(doc, dict) and doc.get("scratch_counts") == VERSION and \
            doc.get("key") == text and type(doc.get("total")) is int:
        return int(doc["total"])
    total = compute()
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        F.write_atomic(path, F.dump_info({"scratch_counts": VERSION, "key": text,
                                           "total": total}))
    except OSError:
        pass
    return total


@overload
def cached_count_by(index_dir: Path, key: Sequence[object], compute: Callable[[], CountBy], *,
                    limit: int | None = 10) -> CountBy: ...


@overload
def cached_count_by(index_dir: Path, key: Sequence[object],
                    compute: Callable[[], CountBy | None], *,
                    limit: int | None = 10) -> CountBy | None: ...


def cached_count_by(index_dir: Path, key: Sequence[object],
                    compute: Callable[[], CountBy | None], *,
                    limit: int | None = 10) -> CountBy | None:
    """The count-by for ``key`` limited to ``limit``: from the cache, else ``compute()`` (which
    must count with no limit, or return None when it cannot answer: then None) and save it."""
    from scratch.valuecounts import rank, value_key

    full = load(index_dir, key)
    if full is None:
        full = compute()
        if full is None:
            return None
        save(index_dir, key, full)
    if limit is None:
        return full
    counts = {tuple(value_key(v) for v in b.values): (b.values, b.count) for b in full.buckets}
    return rank(counts, list(full.fields), limit=limit)
