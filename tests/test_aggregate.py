"""Counting, grouping, sorting and negative indexes (scratch.query.aggregate)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from scratch.errors import InvalidPattern, OutOfRange, UsageError
from scratch.query.aggregate import (
    count,
    count_by,
    field_getter,
    resolve_index,
    resolve_window,
    sort_indexes,
)
from scratch.valuecounts import MISSING

ITEMS = [{"s": 1}, {"s": "1"}, {"s": None}, {}, {"s": 1.0}, {"s": True}, {"s": 1},
         {"s": {"b": 1, "a": 2}}, {"s": {"a": 2, "b": 1}}, {"s": [1]}, {"s": "x"}]


def test_kinds_are_kept_apart_and_say_which_they_are() -> None:
    r = count_by(ITEMS, ["s"], limit=None)
    assert r.to_dict() == {
        "fields": ["s"], "total": 11, "distinct": 8,
        "values": [{"value": 1, "type": "integer", "count": 3},
                   {"value": {"b": 1, "a": 2}, "type": "object", "count": 2},
                   {"value": "1", "type": "string", "count": 1},
                   {"value": "x", "type": "string", "count": 1},
                   {"value": True, "type": "boolean", "count": 1},
                   {"value": [1], "type": "array", "count": 1},
                   {"value": None, "type": "null", "count": 1},
                   {"value": None, "type": "missing", "count": 1}],
        "other": {"count": 0, "distinct": 0}}


def test_top_n_and_other_bucket_with_ties_in_value_order() -> None:
    items = [{"k": k} for k in "cbbaaadd"]
    r = count_by(items, ["k"], limit=2)
    assert [(b.values, b.count) for b in r.buckets] == [(("a",), 3), (("b",), 2)]
    assert (r.other, r.other_distinct, r.distinct, r.total) == (3, 2, 4, 8)
    # ties are ordered by value, whatever order the items came in
    assert count_by(list(reversed(items)), ["k"], limit=2).buckets == r.buckets
    with pytest.raises(UsageError):
        count_by(items, ["k"], limit=-1)
    with pytest.raises(UsageError):
        count_by(items, [])


def test_several_fields_nested_paths_and_where() -> None:
    items = [{"m": {"st": s}, "p": p} for s, p in
             [(200, "/a"), (404, "/a"), (404, "/b"), (404, "/a"), (500, "/a")]]
    r = count_by(items, ["m.st", "p"], where="@.m.st >= 400", limit=None)
    assert r.to_dict()["values"] == [
        {"values": [404, "/a"], "types": ["integer", "string"], "count": 2},
        {"values": [404, "/b"], "types": ["integer", "string"], "count": 1},
        {"values": [500, "/a"], "types": ["integer", "string"], "count": 1}]
    assert r.total == 4 and r.to_dict()["where"] == "@.m.st >= 400"
    assert count(items, "@.m.st == 404").count == 3
    assert count(items).count == 5
    c = count(items + ["not json"], "@.p == '/a'", skip={5})
    assert (c.count, c.items, c.where) == (4, 5, "@.p == '/a'")
    with pytest.raises(InvalidPattern):
        count(items, "@.p ==")


def test_field_getter_missing_null_negative_index_and_wildcards() -> None:
    item = {"a": [{"b": 1}, {"b": None}], "0": "zero", "c": None}
    assert field_getter("a.-1.b")(item) is None
    assert field_getter("a.5.b")(item) is MISSING
    assert field_getter("a.0.b")(item) == 1
    assert field_getter("0")(item) == "zero"
    assert field_getter("c")(item) is None
    assert field_getter("c.d")(item) is MISSING
    assert field_getter("a[*].b")(item) == [1, None]
    assert field_getter("x[*]")(item) is MISSING


def test_sort_is_stable_numbers_as_numbers_nulls_and_missing_last() -> None:
    items = [{"v": 10}, {"v": 9.5}, {}, {"v": None}, {"v": "10"}, {"v": 2}, {"v": 10},
             {"v": "9"}]
    assert sort_indexes(items, "v") == [5, 1, 0, 6, 4, 7, 3, 2]
    # descending: values reversed, equal values keep item order, null then missing still last
    assert sort_indexes(items, "v", desc=True) == [7, 4, 0, 6, 1, 5, 3, 2]
    assert sort_indexes(items, "v", where="@.v > 5") == [1, 0, 6]
    assert sort_indexes(items, "v", skip={0, 6}) == [5, 1, 4, 7, 3, 2]


def test_negative_indexes_and_windows() -> None:
    assert resolve_index(-1, 5) == 4
    assert resolve_index(0, 5) == 0
    assert resolve_index(-5, 5) == 0
    with pytest.raises(OutOfRange) as exc:
        resolve_index(-6, 5)
    assert exc.value.code == "offset_out_of_range"
    assert "valid: 0..4 or -5..-1" in exc.value.message
    with pytest.raises(OutOfRange):
        resolve_index(0, 0)
    assert resolve_window(-20, None, 100) == (80, 100)
    assert resolve_window(-20, 5, 100) == (80, 85)
    assert resolve_window(-200, 5, 100) == (0, 5)
    assert resolve_window(10, 5, 100) == (10, 15)
    assert resolve_window(150, 5, 100) == (100, 100)
    assert resolve_window(0, None, 0) == (0, 0)
    with pytest.raises(UsageError):
        resolve_window(0, -1, 10)


def _ndjson(path: Path) -> list[object]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


@pytest.mark.corpus
def test_journald_counts_match_plain_python(corpus_dir: Path) -> None:
    items = _ndjson(corpus_dir / "ndjson/journald_ip-10-0-9-206.ndjson")
    want = Counter(it.get("SYSLOG_IDENTIFIER", "<missing>") for it in items)  # type: ignore[union-attr]
    r = count_by(items, ["SYSLOG_IDENTIFIER"], limit=5)
    got = {("<missing>" if b.types[0] == "missing" else b.values[0]): b.count
           for b in r.buckets}
    top = sorted(want.items(), key=lambda kv: -kv[1])[:5]
    assert got == dict(top)
    assert r.distinct == len(want)
    assert r.other == sum(want.values()) - sum(n for _, n in top)
    prio = Counter(it.get("PRIORITY") for it in items if int(it.get("PRIORITY", 9)) <= 3)  # type: ignore[union-attr]
    assert count(items, "@.PRIORITY <= '3'").count == sum(prio.values())


@pytest.mark.corpus
def test_world_cities_by_country(corpus_dir: Path) -> None:
    import csv

    with open(corpus_dir / "csv/world-cities.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    want = Counter(r["country"] for r in rows)
    r = count_by(rows, ["country"], limit=3)
    assert [(b.values[0], b.count) for b in r.buckets] == sorted(
        want.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    assert r.distinct == len(want) and r.total == len(rows)
    order = sort_indexes(rows, "name", desc=True)
    assert [rows[i]["name"] for i in order[:3]] == sorted(
        (r["name"] for r in rows), reverse=True)[:3]


def test_summary_top_values_and_the_rest() -> None:
    from scratch.query.summary import summarize_values

    items = [{"c": f"k{i % 30}", "u": i} for i in range(300)] + [{"c": "k0"}]
    out = summarize_values(items, max_distinct=1000, top=3)
    c = next(f for f in out["fields"] if f["path"] == "c")
    assert c["values"] == [["k0", 11], ["k1", 10], ["k2", 10]]
    assert c["other"] == {"count": 301 - 31, "distinct": 27}
    u = next(f for f in out["fields"] if f["path"] == "u")
    assert "values" not in u  # every value unique: an identifier, not a category
    # without top: unchanged, no counts past max_distinct
    c10 = next(f for f in summarize_values(items)["fields"] if f["path"] == "c")
    assert "values" not in c10 and "other" not in c10


@pytest.mark.corpus
def test_summary_of_journald_names_the_identifiers(corpus_dir: Path) -> None:
    from scratch.query.summary import summarize_values

    items = _ndjson(corpus_dir / "ndjson/journald_ip-10-0-9-206.ndjson")
    out = summarize_values(items, max_distinct=1000, top=10)
    f = next(x for x in out["fields"] if x["path"] == "SYSLOG_IDENTIFIER")
    want = Counter(it["SYSLOG_IDENTIFIER"] for it in items if "SYSLOG_IDENTIFIER" in it)  # type: ignore[index, operator]
    assert f["values"][0] == list(want.most_common(1)[0])
    assert sum(c for _, c in f["values"]) + f.get("other", {}).get("count", 0) == sum(
        want.values())
