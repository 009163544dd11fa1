"""iterate-over's selection and counts: --where scans every item, offset/limit page the
matches (negative from the end), --sort, --count and --count-by, each checked against plain
Python over the items that were ingested."""

from __future__ import annotations

import json
import shlex
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers import cli, shell_of

# items whose kinds differ on purpose: numbers and their text, null and missing, bools
ITEMS = [{"id": i, "status": [200, 404, 500, 301][i % 4] if i % 11 else None,
          "code": str(i % 3) if i % 5 else i % 3, "path": f"/p{i % 7}",
          **({"flag": i % 2 == 0} if i % 3 else {})}
         for i in range(500)]


def ingest(name: str, data: bytes, *extra: str) -> None:
    r = cli("ingest", name, "--store-always", "--json", *extra, input=data)
    assert r.code == 0, r.out


@pytest.fixture
def nd(scratch_home: Path) -> str:
    ingest("nd", "".join(json.dumps(x) + "\n" for x in ITEMS).encode())
    return "nd"


@pytest.fixture
def doc(scratch_home: Path) -> str:
    ingest("doc", json.dumps({"kind": "List", "items": ITEMS}).encode())
    return "doc"


def rows(ref: str, path: str, *args: str, env: dict[str, str] | None = None) -> dict:
    r = cli("iterate-over", ref, path, *args, "--json", env=env)
    assert r.code == 0, r.out
    return r.json["data"]


def ids(data: dict) -> list[int]:
    return [row["_index"] for row in data["rows"]]


def test_where_with_limit_finds_the_first_matches_across_the_whole_array(nd: str) -> None:
    want = [i for i, x in enumerate(ITEMS) if x["status"] == 500]
    assert len(want) > 100
    data = rows(nd, ".", "--fields", "id", "--where", "@.status == 500", "--limit", "10")
    assert ids(data) == want[:10]
    assert (data["matches"], data["items"]) == (len(want), len(ITEMS))
    assert data["window"] == {"offset": 0, "limit": 10, "total": len(want)}
    # the second page of matches, and the last ones through a negative offset
    assert ids(rows(nd, ".", "--fields", "id", "--where", "@.status == 500", "--offset", "10",
                    "--limit", "5")) == want[10:15]
    assert ids(rows(nd, ".", "--fields", "id", "--where", "@.status == 500", "--offset",
                    "-20")) == want[-20:]
    human = cli("iterate-over", nd, ".", "--fields", "id", "--where", "@.status == 500",
                "--limit", "3")
    assert human.text == "_index\tid\n" + "".join(f"{i}\t{i}\n" for i in want[:3])
    assert f"{len(want)} of {len(ITEMS)} items match the filter; 3 rows shown: _index {want[0]}..{want[2]}" in human.err


def test_a_where_that_matches_late_items_only(doc: str) -> None:
    data = rows(doc, "items", "--fields", "id", "--where", "@.id >= 497", "--limit", "2")
    assert ids(data) == [497, 498] and data["matches"] == 3


def test_negative_offset_without_where_is_the_end_of_the_array(nd: str, doc: str) -> None:
    assert ids(rows(nd, ".", "--fields", "id", "--offset", "-3")) == [497, 498, 499]
    assert ids(rows(doc, "items", "--fields", "id", "--offset", "-5", "--limit", "2")) == [
        495, 496]
    assert ids(rows(doc, "items", "--fields", "id", "--offset", "-900", "--limit", "2")) == [
        0, 1]


def test_fit_and_next_page_the_matches_and_visit_each_once(nd: str) -> None:
    want = [i for i, x in enumerate(ITEMS) if x["path"] in ("/p1", "/p2")]
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "300"}
    r = cli("iterate-over", nd, ".", "--fields", "id,path", "--where",
            "@.path == '/p1' || @.path == '/p2'", "--fit", "--json", env=env)
    seen: list[int] = []
    pages = 0
    while True:
        assert r.code == 0, r.out
        seen += ids(r.json["data"])
        pages += 1
        nxt = r.json["data"].get("next")
        if nxt is None:
            break
        assert nxt["args"]["where"] == "@.path == '/p1' || @.path == '/p2'"
        args = shlex.split(shell_of(nxt))
        r = cli(*args[1:], "--json", env=env)
    assert seen == want and pages > 2


def test_sort_is_stable_numbers_as_numbers_nulls_last(scratch_home: Path) -> None:
    items = [{"n": 10, "k": "a"}, {"n": 9, "k": "b"}, {"n": None, "k": "c"}, {"k": "d"},
             {"n": 9, "k": "e"}, {"n": 100, "k": "f"}, {"n": 2.5, "k": "g"}]
    ingest("s", json.dumps(items).encode())
    asc = rows("s", ".", "--fields", "k", "--sort", "n")
    assert [r["k"] for r in asc["rows"]] == ["g", "b", "e", "a", "f", "c", "d"]
    desc = rows("s", ".", "--fields", "k", "--sort", "n", "--desc")
    assert [r["k"] for r in desc["rows"]] == ["f", "a", "b", "e", "g", "c", "d"]
    top = rows("s", ".", "--fields", "k,n", "--sort", "n", "--desc", "--limit", "2")
    assert top["rows"] == [{"_index": 5, "k": "f", "n": 100}, {"_index": 0, "k": "a", "n": 10}]
    both = rows("s", ".", "--fields", "k", "--where", "@.n > 5", "--sort", "n")
    assert [r["k"] for r in both["rows"]] == ["b", "e", "a", "f"] and both["matches"] == 4


def test_count_is_exact_over_the_whole_array(nd: str, doc: str) -> None:
    want = sum(1 for x in ITEMS if x["status"] == 404)
    r = cli("iterate-over", nd, ".", "--count", "--where", "@.status == 404", "--json")
    assert r.code == 0
    assert (r.json["data"]["count"], r.json["data"]["items"]) == (want, len(ITEMS))
    human = cli("iterate-over", doc, "items", "--count", "--where", "@.status == 404")
    assert human.text == f"{want}\n"
    assert f"{want} of {len(ITEMS)} items match the filter (" in human.err
    assert cli("iterate-over", doc, "items", "--count").text == f"{len(ITEMS)}\n"


def kinds(value: object, present: bool = True) -> tuple[str, object]:
    """The bucket key plain Python gives a value (kinds kept apart)."""
    if not present:
        return ("missing", None)
    if value is None:
        return ("null", None)
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    return ("string", value)


def buckets(data: dict) -> dict[tuple[str, object], int]:
    out = {}
    for b in data["values"]:
        kind = {"integer": "number", "number": "number"}.get(b["type"], b["type"])
        out[(kind, b["value"])] = b["count"]
    return out


@pytest.mark.parametrize("field", ["status", "code", "flag", "path"])
def test_count_by_keeps_kinds_apart_and_matches_python(nd: str, doc: str, field: str) -> None:
    want = Counter(kinds(x.get(field), field in x) for x in ITEMS)
    for ref, path in ((nd, "."), (doc, "items")):
        data = rows(ref, path, "--count-by", field, "--limit", "100")
        assert buckets(data) == dict(want), (ref, field)
        assert data["distinct"] == len(want) and data["total"] == len(ITEMS)
        counts = [b["count"] for b in data["values"]]
        assert counts == sorted(counts, reverse=True)


def test_count_by_top_n_other_and_distinct(nd: str) -> None:
    want = Counter(x["path"] for x in ITEMS).most_common()
    data = rows(nd, ".", "--count-by", "path", "--limit", "3")
    assert [(b["value"], b["count"]) for b in data["values"]] == want[:3]
    rest = want[3:]
    assert data["other"] == {"count": sum(n for _, n in rest), "distinct": len(rest)}
    assert data["distinct"] == len(want)
    human = cli("iterate-over", nd, ".", "--count-by", "path", "--limit", "3")
    lines = human.text.splitlines()
    assert lines[0] == "path\tcount"
    assert lines[1:4] == [f"{v}\t{n}" for v, n in want[:3]]
    assert lines[4] == f"(other: {len(rest)} values)\t{sum(n for _, n in rest)}"
    assert f"{len(want)} distinct values of path over {len(ITEMS)} items" in human.err


def test_count_by_cells_tell_numbers_from_their_text(nd: str) -> None:
    human = cli("iterate-over", nd, ".", "--count-by", "code", "--limit", "20")
    cells = {line.split("\t")[0] for line in human.text.splitlines()[1:]}
    assert cells == {"0", "1", "2", '"0"', '"1"', '"2"'}
    human = cli("iterate-over", nd, ".", "--count-by", "flag", "--limit", "20")
    assert {line.split("\t")[0] for line in human.text.splitlines()[1:]} == {
        "true", "false", "(missing)"}


def test_count_by_several_fields_with_where(nd: str) -> None:
    sel = [x for x in ITEMS if x["status"] is not None and x["status"] >= 400]
    want = Counter((x["status"], x["path"]) for x in sel)
    data = rows(nd, ".", "--count-by", "status,path", "--where", "@.status >= 400",
                "--limit", "1000")
    got = {tuple(b["values"]): b["count"] for b in data["values"]}
    assert got == dict(want)
    assert data["total"] == len(sel) and data["engine"] == "python"


def scan_or(other: str) -> str:
    """The engine of a one-key NDJSON count-by: ``scan`` where the C scanner is built."""
    import importlib.util
    return "scan" if importlib.util.find_spec("scratch._fieldcount") else other


def test_count_by_is_cached_for_the_version(nd: str) -> None:
    first = rows(nd, ".", "--count-by", "status")
    again = rows(nd, ".", "--count-by", "status", "--limit", "2")
    assert first["engine"] == scan_or("python") and again["engine"] == "cache"
    assert again["values"] == first["values"][:2]


def test_count_by_pages_with_fit_and_offset(nd: str) -> None:
    want = Counter(x["path"] for x in ITEMS).most_common()
    assert [(b["value"], b["count"]) for b in rows(nd, ".", "--count-by", "path", "--offset",
                                                   "2", "--limit", "3")["values"]] == want[2:5]
    # a cap that holds a few buckets (one row alone, with the envelope and the tie figures
    # of issue 30 item 11, is ~200 tokens)
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "215"}
    r = cli("iterate-over", nd, ".", "--count-by", "path", "--limit", "7", "--fit", "--json",
            env=env)
    seen = []
    pages = 0
    while True:
        assert r.code == 0, r.out
        pages += 1
        seen += [(b["value"], b["count"]) for b in r.json["data"]["values"]]
        nxt = r.json["data"].get("next")
        if nxt is None:
            break
        r = cli(*shlex.split(shell_of(nxt))[1:], "--json", env=env)
    assert seen == want and pages >= 2


def test_count_by_over_a_big_ndjson_file_runs_on_duckdb(scratch_home: Path) -> None:
    lines = [json.dumps({"i": i, "k": ["x", "y", 1, None][i % 4], "pad": "p" * 100})
             for i in range(40_000)]
    ingest("big", ("\n".join(lines) + "\n").encode())
    data = rows("big", ".", "--count-by", "k")
    assert data["engine"] == scan_or("duckdb")  # one top-level key: the C scanner when built
    assert buckets(data) == {("string", "x"): 10_000, ("string", "y"): 10_000,
                             ("number", 1): 10_000, ("null", None): 10_000}
    assert rows("big", ".", "--count-by", "k")["engine"] == "cache"
    two = rows("big", ".", "--count-by", "k,pad")  # two fields: DuckDB's scan
    assert two["engine"] == "duckdb" and len(two["values"]) == 4


def test_csv_rows_count_and_count_by(scratch_home: Path) -> None:
    text = "name,team,score\n" + "".join(f"n{i},{'ab'[i % 2]},{i % 3 or ''}\n"
                                          for i in range(30))
    ingest("t.csv", text.encode())
    data = rows("t.csv", ".", "--count-by", "team,score", "--limit", "20")
    want = Counter(("ab"[i % 2], i % 3 or None) for i in range(30))
    assert {tuple(b["values"]): b["count"] for b in data["values"]} == dict(want)
    r = cli("iterate-over", "t.csv", ".", "--count", "--where", "@.score == 2")
    assert r.text == f"{sum(1 for i in range(30) if i % 3 == 2)}\n"
    sorted_rows = rows("t.csv", ".", "--fields", "name", "--sort", "score", "--desc",
                       "--limit", "3")
    assert [r["name"] for r in sorted_rows["rows"]] == ["n2", "n5", "n8"]
    assert [r["_line"] for r in sorted_rows["rows"]] == [4, 7, 10]


def test_bad_ndjson_lines_are_left_out_of_selections_and_counts(scratch_home: Path) -> None:
    lines = [json.dumps({"v": i % 3}) for i in range(20)]
    lines[7] = "{not json"
    ingest("bad", ("\n".join(lines) + "\n").encode(), "--format", "ndjson")
    good = [json.loads(x) for i, x in enumerate(lines) if i != 7]
    data = rows("bad", ".", "--count-by", "v")
    assert buckets(data) == {("number", v): n for v, n in Counter(x["v"] for x in good).items()}
    r = cli("iterate-over", "bad", ".", "--count", "--where", "@.v == 1", "--json")
    assert r.json["data"]["count"] == sum(1 for x in good if x["v"] == 1)
    assert "line 8" in r.json["meta"]["warnings"][0]
    assert 7 not in ids(rows("bad", ".", "--fields", "v", "--sort", "v"))


def test_bad_arguments_are_clear_errors(nd: str) -> None:
    for args, needle in ((["--count", "--count-by", "id"], "two answers"),
                         (["--desc", "--fields", "id"], "--desc orders by --sort"),
                         (["--count-by", "id", "--sort", "id"], "--sort orders rows")):
        r = cli("iterate-over", nd, ".", *args, "--json")
        assert r.code == 2 and needle in r.json["error"]["message"], (args, r.out)


def test_item_schema_takes_a_negative_offset(nd: str) -> None:
    r = cli("item-schema", nd, ".", "--offset", "-2")
    assert r.code == 0 and r.text.startswith("window: items 498..499 of 500\n")


@pytest.mark.parametrize("expr", [
    "@.status == 404", "@.status >= 400 && @.path != '/p3'", "!@.flag", "@.flag == true",
    "@.code == '1' || @.code == 1", "length(@.path) > 2", "match(@.path, '/p[12]')",
    "search(@.path, '4')", "@.status == null", "@.missing < 3", "@.id > @.status",
    "$[0].id == 0", "count(@.*) > 4", "@ == 'x'",
])
def test_the_direct_where_test_answers_as_the_library(expr: str) -> None:
    from scratch.query.items import compile_where
    where = compile_where(expr)
    assert where._test is not None
    items = [*ITEMS[:60], "x", None, [1, 2], 3]
    assert [where(x) for x in items] == [bool(where._query.find([x])) for x in items]
