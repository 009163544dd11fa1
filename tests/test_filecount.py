"""Count-by through DuckDB over stored files (scratch.query.filecount): the same answer as
scratch.query.aggregate.count_by over the parsed items."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from scratch.query.aggregate import count_by
from scratch.query.filecount import count_by_file

KINDS = ['{"a": 1, "b": {"c": "x"}}', '{"a": 1.0}', '{"a": "1"}', '{"a": null}', '{}',
         '{"a": true}', '{"a": 123456789012345678901234567890}', '{"a": {"y": 1, "x": 2}}',
         '{"a": {"x": 2, "y": 1}}', '{"a": [1, 2]}', '{"a": 1.5, "b": {"c": "x"}}',
         '{"a/b": 3, "t~": 4}', '[1, 2]', '"scalar"']


def _items(lines: list[str]) -> list[object]:
    return [json.loads(x) for x in lines]


def test_same_answer_as_the_python_engine_on_every_kind(tmp_path: Path) -> None:
    nd = tmp_path / "e.ndjson"
    nd.write_text("\n".join(KINDS) + "\n\n")  # a blank line is no item
    arr = tmp_path / "e.json"
    arr.write_text(json.dumps(_items(KINDS), indent=2))
    nested = tmp_path / "n.json"
    nested.write_text(json.dumps({"kind": "List", "data": {"items": _items(KINDS)}}, indent=2))
    items = _items(KINDS)
    for fields in (["a"], ["b.c"], ["a", "b.c"], ["a/b"], ["t~"], ["0"]):
        want = count_by(items, fields, limit=4).to_dict()
        assert count_by_file(nd, "ndjson", fields, limit=4).to_dict() == want, fields  # type: ignore[union-attr]
        assert count_by_file(arr, "json", fields, limit=4).to_dict() == want, fields  # type: ignore[union-attr]
        got = count_by_file(nested, "json", fields, limit=4, location=["data", "items"])
        assert got is not None and got.to_dict() == want, fields
    r = count_by_file(nd, "ndjson", ["a"], limit=None)
    assert r is not None
    values = r.to_dict()["values"]
    assert values[0] == {"value": None, "type": "missing", "count": 4}
    assert values[1] == {"value": 1, "type": "integer", "count": 2}  # 1 and 1.0: one key


def test_what_it_cannot_answer_is_none(tmp_path: Path) -> None:
    nd = tmp_path / "e.ndjson"
    nd.write_text('{"a": 1}\nnot json\n{"a": 2}\n')
    assert count_by_file(nd, "ndjson", ["a"]) is None  # the caller counts parsed items
    nd.write_text('{"a": [1, 2]}\n')
    assert count_by_file(nd, "ndjson", ["a.-1"]) is None
    assert count_by_file(nd, "ndjson", ["a[*]"]) is None
    assert count_by_file(nd, "csv", ["a"]) is None
    assert count_by_file(nd, "ndjson", ["a.0"]) is not None


def test_importing_it_does_not_import_duckdb() -> None:
    code = "import sys, scratch.query.filecount; assert 'duckdb' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "fields"), [
    ("ndjson/journald_ip-10-0-9-206.ndjson", ["SYSLOG_IDENTIFIER"]),
    ("ndjson/journald_ip-10-0-9-16.ndjson", ["_SYSTEMD_UNIT", "PRIORITY"]),
    ("ndjson/go-slog-app-log.head10000.ndjson", ["level"]),
    ("ndjson/amazon_cellphones.ndjson", ["0"]),
])
def test_corpus_ndjson(corpus_dir: Path, name: str, fields: list[str]) -> None:
    path = corpus_dir / name
    items = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    got = count_by_file(path, "ndjson", fields, limit=10)
    assert got is not None and got.to_dict() == count_by(items, fields, limit=10).to_dict()


@pytest.mark.corpus
def test_corpus_pod_list(corpus_dir: Path) -> None:
    path = corpus_dir / "k8s/honeycomb/pods.json"
    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    fields = ["metadata.namespace", "status.phase", "spec.nodeName"]
    got = count_by_file(path, "json", fields, location=["items"])
    assert got is not None and got.to_dict() == count_by(items, fields).to_dict()


def test_counts_cached_beside_the_index(tmp_path: Path) -> None:
    from scratch.index import countcache

    nd = tmp_path / "e.ndjson"
    nd.write_text("\n".join(KINDS) + "\n")
    index_dir = tmp_path / "index"
    index_dir.mkdir()
    calls = []

    def compute() -> object:
        calls.append(1)
        return count_by_file(nd, "ndjson", ["a"], limit=None)

    key = ("ndjson", [], ["a"])
    items = _items(KINDS)
    for limit in (3, None, 1, 3):
        got = countcache.cached_count_by(index_dir, key, compute, limit=limit)
        assert got.to_dict() == count_by(items, ["a"], limit=limit).to_dict()
    assert len(calls) == 1
    (cached,) = (index_dir / "counts").iterdir()
    assert b"123456789012345678901234567890" in cached.read_bytes()  # exact, not a float
    cached.write_text("{not json")
    assert countcache.cached_count_by(index_dir, key, compute, limit=2).to_dict() == count_by(
        items, ["a"], limit=2).to_dict()
    assert len(calls) == 2
    # another question is another file
    countcache.cached_count_by(index_dir, ("ndjson", [], ["b.c"]),
                               lambda: count_by_file(nd, "ndjson", ["b.c"], limit=None))
    assert len(list((index_dir / "counts").iterdir())) == 2
    assert countcache.cached_count_by(index_dir, ("x",), lambda: None) is None


# -- the C scanner (scratch._fieldcount): one top-level key over NDJSON lines ----------------

needs_scanner = pytest.mark.skipif(
    importlib.util.find_spec("scratch._fieldcount") is None,
    reason="the optional C scanner is not built (tests/test_compiled.py says where it must be)")

TRICKY = ['{"a":1,"a":2}',  # a repeated name: the last one, as json.loads keeps
          '{"b":{"a":9},"a":3}',  # a nested "a" is not the member
          '{"s":"\\"a\\": 5","a":4}',  # "a" inside a string value
          '{ "a" : 7 , "z" : [ {"a": 1} ] }',
          '{"a":"\u00e9t\u00e9","b":"x"}', '{"a":"\\u00e9t\\u00e9"}',  # one value, two spellings
          '{"a": 1.0}', '{"a":-0.5e3}', '{"a":123456789012345678901234567890}',
          '{"a":{"y":1,"x":[2,"}"]}}', '{"a":{"x":[2,"}"],"y":1}}', '{}', '{"A":1}',
          '{"a":null}', '{"a":false}', '{"a":[]}', '[1, 2]', '5']


@needs_scanner
@pytest.mark.parametrize("ending", ["\n", "\r\n", ""])
def test_the_scanner_gives_the_python_answer(tmp_path: Path, ending: str) -> None:
    from scratch.query.filecount import count_by_scan
    nd = tmp_path / "e.ndjson"
    lines = KINDS[:-2] + TRICKY
    nd.write_bytes((ending or "\n").join(lines).encode() + ending.encode())
    items = _items(lines)
    for field in ("a", "a/b", "t~", "b", "A", "s"):
        got = count_by_scan(nd, field, limit=None)
        assert got is not None, field
        assert got.to_dict() == count_by(items, [field], limit=None).to_dict(), field
    # DuckDB's json_extract takes the first of repeated names: compare without that line
    once = tmp_path / "once.ndjson"
    once.write_text("\n".join(x for x in lines if x != TRICKY[0]) + "\n")
    for field in ("a", "b", "s"):
        assert count_by_scan(once, field).to_dict() == \
            count_by_file(once, "ndjson", [field]).to_dict()  # type: ignore[union-attr]
    values = count_by_scan(nd, "a", limit=3).to_dict()["values"]  # type: ignore[union-attr]
    assert values == [{"value": None, "type": "missing", "count": 6},
                      {"value": 1, "type": "integer", "count": 3},
                      {"value": 123456789012345678901234567890, "type": "integer", "count": 2}]


@needs_scanner
@pytest.mark.parametrize(("lines", "field"), [
    (['{"a":1}', "", '{"a":2}'], "a"),  # a blank line: not an item here, the caller decides
    (['{"a":1}', "   ", '{"a":2}'], "a"),
    (['{"\\u0061":1}', '{"a":2}'], "a"),  # a name spelled with an escape
    (['{"a":1}', '"a"'], "a"),  # a line that is not an object yet holds "a"
    (['{"a":{"b":1}}'], "a.b"),  # not one top-level key
    (['{"a":[1]}'], "a[0]"),
    (['{"0":1}'], "0"),  # a number segment: an index into arrays too
])
def test_what_the_scanner_cannot_answer_is_none(tmp_path: Path, lines: list[str],
                                                field: str) -> None:
    from scratch.query.filecount import count_by_scan
    nd = tmp_path / "e.ndjson"
    nd.write_text("\n".join(lines) + "\n")
    assert count_by_scan(nd, field) is None
    empty = tmp_path / "empty.ndjson"
    empty.write_bytes(b"")
    assert count_by_scan(empty, "a") is None


@needs_scanner
@pytest.mark.corpus
@pytest.mark.parametrize(("name", "field"), [
    ("ndjson/journald_ip-10-0-9-206.ndjson", "SYSLOG_IDENTIFIER"),
    ("ndjson/journald_ip-10-0-9-16.ndjson", "MESSAGE"),
    ("ndjson/go-slog-app-log.head10000.ndjson", "level"),
    ("ndjson/go-slog-app-log.head10000.ndjson", "mysql"),
    ("ndjson/nginxplus_json_logs.ndjson", "status"),
])
def test_the_scanner_on_the_corpus(corpus_dir: Path, name: str, field: str) -> None:
    from scratch.query.filecount import count_by_scan
    path = corpus_dir / name
    items = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    got = count_by_scan(path, field, limit=None)
    assert got is not None and got.to_dict() == count_by(items, [field], limit=None).to_dict()


@needs_scanner
def test_count_by_answers_with_the_scanner(tmp_path: Path) -> None:
    from scratch.mcp.dispatch import run_tool
    from scratch.mcp.serve.session import ServerState
    from tests.helpers import cli
    lines = KINDS[:-2] + TRICKY
    assert cli("ingest", "e", "--store-always", input="\n".join(lines) + "\n").code == 0
    r = cli("iterate-over", "e", ".", "--count-by", "a", "--limit", "2", "--json")
    assert r.code == 0, r.out
    d = r.json["data"]
    assert d["engine"] == "scan" and d["total"] == len(lines)
    assert d["values"] == [{"value": None, "type": "missing", "count": 6},
                           {"value": 1, "type": "integer", "count": 3}]
    again = cli("iterate-over", "e", ".", "--count-by", "a", "--limit", "2", "--json")
    assert again.json["data"]["engine"] == "cache" and again.json["data"]["values"] == \
        d["values"]
    session = ServerState().session_for("conn", "default", None, "test")
    out = run_tool("iterate_over", {"file": "e", "path": ".", "count_by": "b", "limit": 2},
                   session)
    assert out.ok, out.text
    assert out.text == 'b\tcount\n(missing)\t26\n{"c":"x"}\t2\n(other: 2 values)\t2\n'
