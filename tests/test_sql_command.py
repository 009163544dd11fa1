"""scratch sql: the entry as the table ``entry`` in every format, more tables, --describe, the
sandbox seen from the command line, pricing, caps and --fit; results against plain Python."""

from __future__ import annotations

import csv
import io
import json
import shlex
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.helpers import cli, error_of, shell_of

PODS = {"kind": "List", "metadata": {"x": 1},
        "items": [{"name": f"p{i}", "phase": ["Running", "Failed"][i % 5 == 0], "n": i,
                   "big": 2 ** 70 if i == 3 else i} for i in range(40)]}


def ingest(name: str, data: bytes, *extra: str) -> None:
    r = cli("ingest", name, "--store-always", "--json", *extra, input=data)
    assert r.code == 0, r.out


def sql(*args: str, env: dict[str, str] | None = None) -> dict:
    r = cli("sql", *args, "--json", env=env)
    assert r.code == 0, r.out
    return r.json["data"]


@pytest.fixture
def pods(scratch_home: Path) -> str:
    ingest("pods", json.dumps(PODS).encode())
    return "pods"


def test_json_items_are_the_entry_table(pods: str) -> None:
    d = sql(pods, "SELECT phase, count(*) AS n FROM entry GROUP BY phase ORDER BY n DESC")
    want = Counter(x["phase"] for x in PODS["items"]).most_common()
    assert d["columns"] == ["phase", "n"] and d["types"] == ["VARCHAR", "BIGINT"]
    assert [tuple(r) for r in d["rows"]] == want
    assert d["tables"] == {"entry": "pods: the 40 items of items"}
    human = cli("sql", pods, "SELECT name, n FROM entry WHERE n < 3 ORDER BY n")
    assert human.text == "name\tn\np0\t0\np1\t1\np2\t2\n"
    assert "3 rows (" in human.err


def test_numbers_stay_exact(pods: str) -> None:
    d = sql(pods, "SELECT big FROM entry WHERE name = 'p3'")
    assert d["rows"] == [[2 ** 70]]


def test_every_format_is_a_table(scratch_home: Path) -> None:
    nd = [{"k": i % 4, "s": f"v{i}"} for i in range(50)]
    ingest("nd", "".join(json.dumps(x) + "\n" for x in nd).encode())
    d = sql("nd", "SELECT k, count(*) FROM entry GROUP BY k ORDER BY k")
    assert [tuple(r) for r in d["rows"]] == sorted(Counter(x["k"] for x in nd).items())
    ingest("t.csv", b"name,score,code\na,1,007\nb,2.5,010\nc,,x\n")
    d = sql("t.csv", "SELECT name, score, code FROM entry ORDER BY name")
    assert d["rows"] == [["a", 1.0, "007"], ["b", 2.5, "010"], ["c", None, "x"]]
    docs = [{"kind": "Service", "n": 1}, {"kind": "Pod", "n": 2}, {"kind": "Pod", "n": 3}]
    ingest("k.yaml", yaml.safe_dump_all(docs).encode())
    d = sql("k.yaml", "SELECT kind, sum(n) FROM entry GROUP BY kind ORDER BY kind")
    assert [tuple(r) for r in d["rows"]] == [("Pod", 5), ("Service", 1)]
    ingest("notes.txt", b"first line\n\nthird line\n", "--format", "text")
    d = sql("notes.txt", "SELECT line, text FROM entry WHERE text LIKE '%line'")
    assert d["rows"] == [[1, "first line"], [3, "third line"]]
    assert d["tables"]["entry"] == "notes.txt: the 3 lines as (line, text)"


def test_more_tables_join(pods: str) -> None:
    ingest("owners.csv", b"name,owner\np0,ann\np5,bob\np7,cid\n")
    d = sql(pods, "SELECT e.name, o.owner FROM entry e JOIN o USING (name) ORDER BY name",
            "--table", "o=owners.csv")
    assert d["rows"] == [["p0", "ann"], ["p5", "bob"], ["p7", "cid"]]
    r = cli("sql", pods, "SELECT 1", "--table", "bad", "--json")
    assert r.code == 2 and "NAME=REF" in r.json["error"]["message"]


def test_describe_lists_columns_and_types(pods: str) -> None:
    d = sql(pods, "--describe")
    assert d["columns"]["entry"] == [{"column": "name", "type": "VARCHAR"},
                                     {"column": "phase", "type": "VARCHAR"},
                                     {"column": "n", "type": "BIGINT"},
                                     {"column": "big", "type": d["columns"]["entry"][3]["type"]}]
    human = cli("sql", pods, "--describe")
    assert human.text.splitlines()[:2] == ["table\tcolumn\ttype", "entry\tname\tVARCHAR"]
    assert "entry = pods: the 40 items of items" in human.err
    r = cli("sql", pods, "--describe", "--path", "metadata", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "not_an_array"
    d = sql(pods, "SELECT count(*) FROM entry", "--path", "items")
    assert d["rows"] == [[40]]


@pytest.mark.parametrize("query,code", [
    ("SELECT * FROM read_csv('/etc/passwd')", "sql_access_denied"),
    ("SELECT * FROM read_text('/etc/hostname')", "sql_access_denied"),
    ("ATTACH 'other.db' AS o", "sql_not_read_only"),
    ("COPY (SELECT 1) TO 'out.csv'", "sql_not_read_only"),
    ("INSTALL httpfs", "sql_not_read_only"),
    ("SET enable_external_access = true", "sql_not_read_only"),
    ("SELECT 1; SELECT 2", "sql_not_read_only"),
    ("SELEC 1", "sql_error"),
])
def test_queries_that_reach_outside_are_refused(pods: str, query: str, code: str) -> None:
    r = cli("sql", pods, query, "--json")
    assert r.code == 2, r.out
    assert r.json["error"]["code"] == code
    human = cli("sql", pods, query)
    assert human.code == 2 and f"error [{code}]" in human.err


def test_an_sql_error_suggests_describe(pods: str) -> None:
    r = cli("sql", pods, "SELECT nope FROM entry", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "sql_error"
    assert [shell_of(s) for s in r.json["error"]["suggestions"]] == [
        "scratch sql pods --describe"]


def test_answers_are_priced_capped_and_paged(scratch_home: Path) -> None:
    rows = [{"id": i, "text": f"row number {i} " + "word " * 10} for i in range(400)]
    ingest("r", json.dumps(rows).encode())
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "600"}
    r = cli("sql", "r", "SELECT id, text FROM entry ORDER BY id", env=env)
    assert r.code == 3
    err = error_of(r, json_mode=False)
    assert err["code"] == "sql_too_large"
    assert any("--limit" in s for s in err["suggestions"])
    assert any(s.endswith("--fit") for s in err["suggestions"])
    for s in err["suggestions"]:
        assert cli(*shlex.split(s)[1:], env=env).code == 0, s
    r = cli("sql", "r", "SELECT id FROM entry ORDER BY id", "--fit", "--json", env=env)
    seen: list[int] = []
    while True:
        assert r.code == 0, r.out
        seen += [row[0] for row in r.json["data"]["rows"]]
        nxt = r.json["data"].get("next")
        if nxt is None:
            break
        r = cli(*shlex.split(shell_of(nxt))[1:], "--json", env=env)
    assert seen == list(range(400))
    reported = cli("sql", "r", "SELECT id FROM entry WHERE id < 5", "--json")
    assert reported.json["meta"]["tokens"]["count"] > 0


def test_the_row_limit_says_it_cut(pods: str) -> None:
    d = sql(pods, "SELECT * FROM range(20000)", "--limit", "2")
    assert d["truncated"] is True and d["row_count"] == 10_000 and len(d["rows"]) == 2


def test_the_time_limit_stops_a_query(pods: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import scratch.answers.commands.sql as s
    monkeypatch.setattr(s, "TIME_LIMIT", 0.3)
    r = cli("sql", pods, "SELECT count(*) FROM range(100000000) a, range(100000) b", "--json")
    assert r.code == 3 and r.json["error"]["code"] == "sql_timeout"


@pytest.mark.corpus
def test_world_cities_group_by_matches_the_csv_module(corpus_dir: Path,
                                                      scratch_home: Path) -> None:
    path = corpus_dir / "csv/world-cities.csv"
    ingest("cities", path.read_bytes())
    with open(path, newline="", encoding="utf-8") as fh:
        want = Counter(row["country"] for row in csv.DictReader(fh)).most_common(5)
    d = sql("cities", "SELECT country, count(*) AS n FROM entry GROUP BY country "
                      "ORDER BY n DESC, country LIMIT 5")
    assert [tuple(r) for r in d["rows"]] == want
    by = cli("iterate-over", "cities", ".", "--count-by", "country", "--limit", "5", "--json")
    assert [(b["value"], b["count"]) for b in by.json["data"]["values"]] == want
    text = io.StringIO(path.read_text(encoding="utf-8"))
    assert len(list(csv.reader(text))) - 1 == sql("cities", "SELECT count(*) FROM entry")[
        "rows"][0][0]


def test_a_ragged_csv_is_queried_as_scratch_reads_its_rows(scratch_home: Path) -> None:
    ingest("r.csv", b'a,b\n1,2\n3,4,5\n6\n"x\ny",7\n', "--format", "csv")
    rows = cli("iterate-over", "r.csv", ".", "--fields", "a,b,_rest", "--json").json["data"]
    want = [[r["a"], r["b"], r["_rest"]] for r in rows["rows"]]
    d = sql("r.csv", "SELECT a, b, _rest FROM entry")
    assert d["rows"] == want
    assert want[1] == ["3", 4, ["5"]]  # a column holding "x\ny" is a string column


def test_an_engine_error_is_a_clear_sql_error() -> None:
    from scratch.answers.commands.sql import _engine_error
    from scratch.query.duck import duckdb_module
    err = _engine_error(duckdb_module().InvalidInputException("Error when sniffing file x\nmore"))
    assert err is not None and err.code == "sql_error"
    assert err.message == "DuckDB could not read a table: Error when sniffing file x"
    assert _engine_error(ValueError("not DuckDB's")) is None


# -- --describe of nested records (issue 30, item 6) -----------------------------------------

V3 = Path("json") / "openapi" / "kubernetes-openapi-v3-api-v1.json"


@pytest.fixture
def openapi(corpus_dir: Path, scratch_home: Path) -> str:
    ingest("v3", (corpus_dir / V3).read_bytes())
    return "v3"


def test_describe_gives_nested_columns_a_short_type(openapi: str) -> None:
    r = cli("sql", openapi, "--describe", "--path", "paths", "--json")
    assert r.code == 0, r.out
    data = r.json["data"]
    assert [(c["column"], c["type"]) for c in data["columns"]["entry"]] == [
        ("_key", "VARCHAR"), ("get", "STRUCT(5 fields)"), ("parameters", "STRUCT(5 fields)[]"),
        ("post", "STRUCT(6 fields)"), ("delete", "STRUCT(6 fields)"),
        ("put", "STRUCT(6 fields)"), ("patch", "STRUCT(6 fields)"),
        ("options", "STRUCT(4 fields)"), ("head", "STRUCT(4 fields)")]
    assert data["outlined"] == ["get", "parameters", "post", "delete", "put", "patch",
                                "options", "head"]
    assert shell_of(data["expand"]) == "scratch sql v3 --path paths --describe --column get"
    assert r.json["meta"]["tokens"]["count"] < 400  # the whole types: 1,344
    # a short type stays whole; a long one inside a map is outlined
    types = {c["column"]: c["type"] for c in sql(openapi, "--describe", "--path",
                                                  "components.schemas")["columns"]["entry"]}
    assert types["x-kubernetes-group-version-kind"] == (
        'STRUCT("group" VARCHAR, kind VARCHAR, "version" VARCHAR)[]')
    assert types["properties"] == "MAP(VARCHAR, STRUCT(12 fields))"
    text = cli("sql", openapi, "--describe", "--path", "paths")
    assert "8 types in short (STRUCT(n fields)); a column's fields: scratch sql v3 --path " \
           "paths --describe --column get" in text.err.splitlines()


def test_describe_column_opens_one_level(openapi: str) -> None:
    data = sql(openapi, "--describe", "--path", "components.schemas", "--column", "properties")
    assert [(c["column"], c["type"]) for c in data["columns"]["entry"]] == [
        ("properties.description", "VARCHAR"), ("properties.type", "VARCHAR"),
        ("properties.default", "JSON"), ("properties.$ref", "VARCHAR"),
        ("properties.items", "STRUCT(4 fields)"), ("properties.format", "VARCHAR"),
        ("properties.additionalProperties", "STRUCT(4 fields)"),
        ("properties.x-kubernetes-map-type", "VARCHAR"),
        ("properties.x-kubernetes-patch-merge-key", "VARCHAR"),
        ("properties.x-kubernetes-patch-strategy", "VARCHAR"),
        ("properties.x-kubernetes-list-map-keys", "VARCHAR[]"),
        ("properties.x-kubernetes-list-type", "VARCHAR")]
    r = cli("sql", openapi, "--describe", "--path", "components.schemas", "--column",
            "properties")
    assert "entry.properties is MAP(VARCHAR, STRUCT(12 fields)): the fields of its values" \
        in r.err.splitlines()
    deeper = sql(openapi, "--describe", "--path", "paths", "--column", "get.responses")
    assert [(c["column"], c["type"]) for c in deeper["columns"]["entry"]] == [
        ('get.responses."200"', "STRUCT(2 fields)")]
    r = cli("sql", openapi, "--describe", "--path", "paths", "--column", "get.respnses",
            "--json")
    assert r.code == 4 and r.json["error"]["code"] == "key_path_not_found"
    assert r.json["error"]["message"] == (
        "get has no field 'respnses'; did you mean responses? (its fields: tags, description, "
        "operationId, responses, parameters)")
    r = cli("sql", openapi, "--column", "get", "--path", "paths", "--json")
    assert r.code == 2 and r.json["error"]["argument"] == "column"
    assert shell_of(r.json["error"]["suggestions"][0]) == (
        "scratch sql v3 --path paths --describe --column get")


def test_short_types_of_every_nested_kind() -> None:
    from scratch.query.duck import duckdb_module
    from scratch.query.sql import expand_type, short_type
    con = duckdb_module().connect()
    wide = "{" + ", ".join(f"'field_number_{i}': {i}" for i in range(9)) + "}"
    con.execute(f"CREATE TABLE t AS SELECT {wide} AS s, [{wide}] AS l, "
                f"map(['k'], [{wide}]) AS m, [[{wide}]]::STRUCT(field_number_0 INT, "
                "field_number_1 INT, field_number_2 INT, field_number_3 INT, field_number_4 "
                "INT, field_number_5 INT, field_number_6 INT, field_number_7 INT, "
                "field_number_8 INT)[1][] AS a, {'x': 1} AS small")
    kinds = dict((d[0], d[1]) for d in con.execute("SELECT * FROM t LIMIT 0").description)
    assert {k: short_type(v) for k, v in kinds.items()} == {
        "s": "STRUCT(9 fields)", "l": "STRUCT(9 fields)[]", "m": "MAP(VARCHAR, STRUCT(9 fields))",
        "a": "STRUCT(9 fields)[1][]", "small": 'STRUCT(x INTEGER)'}
    opened = expand_type(kinds["a"], [])
    assert opened.steps == ["element", "element"] and len(opened.fields) == 9
    with pytest.raises(KeyError):
        expand_type(kinds["s"], ["nosuch"])
