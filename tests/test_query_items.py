"""item_schema, iterate_rows (+ --where), schema_of_value and summarize_values.

Expected values are computed in the tests with plain Python over json.load'ed corpus files.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import pairwise
from typing import Any

import pytest

from scratch.errors import InvalidPattern, UsageError
from scratch.jsonvalues import json_type
from scratch.pathnames import format_path
from scratch.query.items import compile_where, item_schema, iterate_rows
from scratch.query.paths import evaluate, parse_path
from scratch.query.schema import schema_of_value
from scratch.query.summary import find_record_arrays, summarize_values
from tests.conftest import CORPUS  # ../shared/corpus, or $SCRATCH_CORPUS


def _load(rel: str) -> Any:
    path = CORPUS / rel
    if not path.is_file():
        pytest.skip(f"corpus file {rel} not available")
    return json.loads(path.read_text(encoding="utf-8"))


def _leaf_paths(obj: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every key path in an object, objects recursed, in document order."""
    out = []
    for k, v in obj.items():
        out.append((*prefix, k))
        if isinstance(v, dict):
            out.extend(_leaf_paths(v, (*prefix, k)))
    return out


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for k in path:
        obj = obj[k]
    return obj


# --------------------------------------------------------------------------------- item_schema

SMALL = [
    {"a": 1, "b": {"c": "x", "d.e": None}, "l": [1, "two"]},
    {"a": 2.5, "b": {"c": "y"}, "z": True},
    {"a": None, "l": [{"k": 1}, {"k": 2, "m": "n"}, 3]},
    "not an object",
]


def test_item_schema_exact() -> None:
    s = item_schema(SMALL)
    assert s["items"] == 4
    assert s["item_types"] == {"object": 3, "string": 1}
    assert s["window"] is None
    assert s["fields"] == [
        {"path": "a", "types": {"integer": 1, "number": 1, "null": 1}, "present": 3, "presence": "3/4"},
        {"path": "b", "types": {"object": 2}, "present": 2, "presence": "2/4"},
        {"path": "b.c", "types": {"string": 2}, "present": 2, "presence": "2/4"},
        {"path": 'b."d.e"', "types": {"null": 1}, "present": 1, "presence": "1/4"},
        {"path": "l", "types": {"array": 2}, "present": 2, "presence": "2/4",
         "element_types": {"integer": 2, "string": 1, "object": 2}},
        {"path": "l[*].k", "types": {"integer": 2}, "present": 2, "presence": "2/5"},
        {"path": "l[*].m", "types": {"string": 1}, "present": 1, "presence": "1/5"},
        {"path": "z", "types": {"boolean": 1}, "present": 1, "presence": "1/4"},
    ]
    assert [f["path"] for f in item_schema(SMALL, depth=1)["fields"]] == ["a", "b", "l", "z"]


def test_item_schema_windows() -> None:
    s = item_schema(SMALL, offset=1, limit=2)
    assert s["items"] == 2 and s["window"] == {"offset": 1, "limit": 2, "total": 4}
    assert s["fields"][0] == {"path": "a", "types": {"number": 1, "null": 1}, "present": 2,
                              "presence": "2/2"}
    assert item_schema(SMALL, limit=10)["window"] is None  # the window covers everything
    # An iterator of unknown length: the total is learnt only when we run off its end.
    assert item_schema(iter(SMALL), limit=2)["window"] == {"offset": 0, "limit": 2, "total": None}
    assert item_schema(iter(SMALL), offset=3)["window"] == {"offset": 3, "limit": None, "total": 4}
    # Items already windowed by the caller.
    pre = item_schema(SMALL[1:3], offset=1, pre_windowed=True, total=4)
    assert pre["window"] == {"offset": 1, "limit": None, "total": 4} and pre["items"] == 2
    with pytest.raises(UsageError):
        item_schema(SMALL, offset=-1)


@pytest.mark.corpus
def test_item_schema_k8s_pods_matches_plain_python() -> None:
    doc = _load("k8s/honeycomb/pods.json")
    items = doc["items"]
    s = item_schema(items)
    got = {f["path"]: f for f in s["fields"] if "[*]" not in f["path"]}
    expect_presence: Counter[tuple[str, ...]] = Counter()
    expect_types: dict[tuple[str, ...], Counter[str]] = {}
    for it in items:
        for p in _leaf_paths(it):
            expect_presence[p] += 1
            expect_types.setdefault(p, Counter())[json_type(_get(it, p))] += 1
    assert set(got) == {format_path(p) for p in expect_presence}
    for p, k in expect_presence.items():
        f = got[format_path(p)]
        assert f["presence"] == f"{k}/{len(items)}"
        assert f["types"] == dict(expect_types[p])
        assert parse_path(f["path"]).segments == p  # paths paste back
    # Element keys of spec.containers, presence over all containers.
    containers = [c for it in items for c in it["spec"]["containers"]]
    image = next(f for f in s["fields"] if f["path"] == "spec.containers[*].image")
    assert image["presence"] == f"{sum('image' in c for c in containers)}/{len(containers)}"
    assert s["fields"] == item_schema(items)["fields"]  # deterministic


# ---------------------------------------------------------------------------------- iterate


def test_iterate_rows_basics() -> None:
    r = iterate_rows(SMALL, ["a", "b.c", "l[*].k", ".", "missing.x"], preview_chars=20)
    assert r.fields == ["a", "b.c", "l[*].k", ".", "missing.x"]
    assert [row["_index"] for row in r.rows] == [0, 1, 2, 3]
    assert r.rows[0]["a"] == 1 and r.rows[0]["b.c"] == "x" and r.rows[0]["missing.x"] is None
    assert r.rows[0]["l[*].k"] is None and r.rows[2]["l[*].k"] == [1, 2]
    assert r.rows[3]["."] == "not an object" and r.rows[3]["a"] is None
    # The whole first item is longer than 20 characters of JSON: previewed, with its path.
    assert r.rows[0]["."].endswith("…") and len(r.rows[0]["."]) == 21
    assert r.rows[0]["_truncated"]["."]["path"] == "0"
    assert (r.scanned, r.next_offset, r.window) == (4, None, None)


def test_iterate_rows_previews_long_strings_with_full_path() -> None:
    items = [{"name": "short", "blob": "x" * 500}, {"name": "y" * 30}]
    r = iterate_rows(items, ["name", "blob"], preview_chars=10, array_location=["data", "list"])
    assert r.rows[0]["blob"] == "x" * 10 + "…"
    assert r.rows[0]["_truncated"] == {"blob": {"path": "data.list.0.blob", "length": 500}}
    assert r.rows[1]["_truncated"] == {"name": {"path": "data.list.1.name", "length": 30}}
    assert "_truncated" not in iterate_rows(items, ["name"], preview_chars=100).rows[0]
    doc = {"data": {"list": items}}
    full = evaluate(doc, r.rows[0]["_truncated"]["blob"]["path"])[0].value
    assert full == "x" * 500  # the path fetches the whole value


def test_iterate_rows_windows_and_paging() -> None:
    items = [{"i": i, "odd": bool(i % 2)} for i in range(10)]
    r = iterate_rows(items, ["i"], offset=2, limit=3)
    assert [row["i"] for row in r.rows] == [2, 3, 4]
    assert r.window == {"offset": 2, "limit": 3, "total": 10} and r.next_offset == 5
    # Following next_offset covers every row once.
    seen, offset = [], 0
    while offset is not None:
        page = iterate_rows(items, ["i"], offset=offset, max_rows=4, where="@.odd == true")
        seen += [row["_index"] for row in page.rows]
        offset = page.next_offset
    assert seen == [1, 3, 5, 7, 9]
    last = iterate_rows(items, ["i"], offset=8, limit=5)
    assert last.next_offset is None and last.window == {"offset": 8, "limit": 5, "total": 10}
    gen = iterate_rows(iter(items), ["i"], limit=4)
    assert gen.next_offset == 4 and gen.window == {"offset": 0, "limit": 4, "total": None}


def test_where_syntax_and_errors() -> None:
    items = [{"s": {"p": "Failed"}, "n": "a"}, {"s": {"p": "Running"}, "n": "b"},
             {"s": {"p": "Failed"}}]
    for expr in ["@.s.p == 'Failed' && @.n", "?@.s.p == 'Failed' && @.n",
                 "[?@.s.p == 'Failed' && @.n]", "  @.s.p=='Failed' && @.n "]:
        assert [row["_index"] for row in iterate_rows(items, ["n"], where=expr).rows] == [0], expr
    assert compile_where("!@.n")(items[2]) is True
    assert compile_where("length(@.n) == 1")(items[1]) is True
    assert compile_where("search(@.s.p, 'ail')")(items[0]) is True
    for expr, position in [("@.s.p == ", 8), ("@.s.p === 'x'", 8), ("[?@.a ==== 1]", 8),
                           ("foo(@)", 0), ("", 0)]:
        with pytest.raises(InvalidPattern) as info:
            compile_where(expr)
        assert info.value.code == "invalid_path"
        assert info.value.details["position"] == position, expr
        assert info.value.details["path"] == expr


@pytest.mark.corpus
def test_iterate_k8s_pods_where_vs_python() -> None:
    doc = _load("k8s/honeycomb/pods.json")
    items = doc["items"]
    r = iterate_rows(items, ["metadata.name", "spec.nodeName", "status.phase"],
                     where="@.metadata.namespace == 'kube-system' || @.spec.hostNetwork == true",
                     array_location=["items"])
    expect = [
        {"_index": i, "metadata.name": it["metadata"]["name"], "spec.nodeName": it["spec"]["nodeName"],
         "status.phase": it["status"]["phase"]}
        for i, it in enumerate(items)
        if it["metadata"]["namespace"] == "kube-system" or it["spec"].get("hostNetwork") is True
    ]
    assert r.rows == expect and expect


@pytest.mark.corpus
def test_iterate_aws_and_github() -> None:
    ec2 = _load("aws/custodian/ec2.DescribeInstances.json")
    instances = [i for r in ec2["data"]["Reservations"] for i in r["Instances"]]
    r = iterate_rows(instances, ["InstanceId", "State.Name", "Tags[*].Key"], preview_chars=1000)
    assert [row["InstanceId"] for row in r.rows] == [i["InstanceId"] for i in instances]
    assert [row["State.Name"] for row in r.rows] == [i["State"]["Name"] for i in instances]
    assert [row["Tags[*].Key"] for row in r.rows] == [
        [t["Key"] for t in i.get("Tags", [])] or None for i in instances]
    events = _load("github/github_events.json")
    r = iterate_rows(events, ["type", "actor.login", "payload.action"], where="@.payload.action")
    assert [(row["type"], row["payload.action"]) for row in r.rows] == [
        (e["type"], e["payload"]["action"]) for e in events if e["payload"].get("action")]


# ------------------------------------------------------------------------------ value schema


def test_schema_of_value_exact() -> None:
    value = {"kind": "List", "items": [{"n": "ab", "t": [1, 2]}, {"n": "abcd", "x": None}],
             "mixed": [1, "s", None], "empty": {}, "deep": {"a": {"b": {"c": 1}}}}
    assert schema_of_value(value, depth=2) == [
        {"path": ".", "type": "object", "keys": 5},
        {"path": "kind", "type": "string", "length": 4},
        {"path": "items", "type": "array", "length": 2},
        {"path": "items[*]", "type": "object", "count": 2, "keys": 3, "truncated": True},
        {"path": "mixed", "type": "array", "length": 3},
        {"path": "mixed[*]", "type": "mixed", "types": {"integer": 1, "string": 1, "null": 1},
         "count": 3},
        {"path": "empty", "type": "object", "keys": 0},
        {"path": "deep", "type": "object", "keys": 1},
        {"path": "deep.a", "type": "object", "keys": 1, "truncated": True},
    ]
    nodes = {n["path"]: n for n in schema_of_value(value, depth=10)}
    assert nodes["items[*].n"] == {"path": "items[*].n", "type": "string", "count": 2, "length": [2, 4]}
    assert nodes["items[*].t[*]"] == {"path": "items[*].t[*]", "type": "integer", "count": 2}
    assert nodes["deep.a.b.c"] == {"path": "deep.a.b.c", "type": "integer"}
    assert schema_of_value("text") == [{"path": ".", "type": "string", "length": 4}]


@pytest.mark.corpus
def test_schema_of_value_paths_are_accepted_by_get_in() -> None:
    doc = _load("k8s/honeycomb/pods.json")
    nodes = schema_of_value(doc, depth=6)
    assert nodes == schema_of_value(doc, depth=6)
    for node in nodes:
        matches = evaluate(doc, node["path"])
        if "count" in node:
            assert len(matches) == node["count"], node["path"]
        else:
            assert len(matches) == 1
            assert json_type(matches[0].value) == node["type"]
    items_node = next(n for n in nodes if n["path"] == "items")
    assert items_node["length"] == len(doc["items"])


# --------------------------------------------------------------------------------- summaries


def test_summarize_values_exact() -> None:
    items = [{"phase": "Running", "n": 3, "ok": True, "id": "a", "t": "2020-01-02T00:00:00Z",
              "sub": {"zone": "x"}},
             {"phase": "Pending", "n": 1, "ok": True, "id": "b", "t": "2020-01-01T00:00:00Z"},
             {"phase": "Running", "n": 1.5, "ok": 1, "id": "c", "t": "2020-01-03T00:00:00Z",
              "sub": {"zone": "x"}}]
    s = summarize_values(items)
    assert s["items"] == 3
    assert s["fields"] == [
        {"path": "phase", "present": 3, "distinct": 2, "values": [["Running", 2], ["Pending", 1]]},
        {"path": "n", "present": 3, "distinct": 3, "min": 1, "max": 3},
        {"path": "ok", "present": 3, "distinct": 2, "values": [[True, 2], [1, 1]]},
        {"path": "id", "present": 3, "distinct": 3},
        {"path": "t", "present": 3, "distinct": 3, "min": "2020-01-01T00:00:00Z",
         "max": "2020-01-03T00:00:00Z"},
        {"path": "sub.zone", "present": 2, "distinct": 1, "values": [["x", 2]]},
    ]


@pytest.mark.corpus
def test_summarize_k8s_pods_vs_counter() -> None:
    doc = _load("k8s/honeycomb/pods.json")
    items = doc["items"]
    s = {f["path"]: f for f in summarize_values(items)["fields"]}
    phases = Counter(it["status"]["phase"] for it in items)
    assert s["status.phase"]["values"] == [[v, c] for v, c in phases.most_common()]
    qos = Counter(it["status"]["qosClass"] for it in items)
    assert sorted(map(tuple, s["status.qosClass"]["values"])) == sorted(qos.items())
    prios = [it["spec"]["priority"] for it in items]
    assert (s["spec.priority"]["min"], s["spec.priority"]["max"]) == (min(prios), max(prios))
    assert s["metadata.name"] == {"path": "metadata.name", "present": len(items),
                                  "distinct": len({it["metadata"]["name"] for it in items})}
    arrays = find_record_arrays(doc)
    assert arrays[0] == {"path": "items", "location": ["items"], "length": len(items)}
    assert all(a["length"] >= b["length"] for a, b in pairwise(arrays))
