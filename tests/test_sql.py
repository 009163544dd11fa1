"""SQL engine (scratch.query.sql): tables from every kind of source, the sandbox (each escape
refused), row and time limits, exact numbers; counts checked against plain Python."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from scratch.errors import ExitCode, ScratchError
from scratch.query.sql import (
    Source,
    SqlResult,
    _Session,
    describe,
    iter_dict_rows,
    json_rows,
    run_sql,
)


def _nd(tmp_path: Path, rows: list[dict]) -> Path:
    p = tmp_path / "e.ndjson"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


ROWS = [{"id": i, "status": [200, 404, 500][i % 3] if i % 7 else 404, "path": f"/p{i % 4}",
         "ok": i % 2 == 0} for i in range(300)]


def test_importing_the_module_does_not_import_duckdb() -> None:
    code = ("import sys, scratch.query.sql as s; assert 'duckdb' not in sys.modules; "
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "ok"


def test_group_by_over_ndjson_matches_python(tmp_path: Path) -> None:
    src = Source.ndjson(_nd(tmp_path, ROWS))
    r = run_sql({"entry": src}, "SELECT status, count(*) AS n FROM entry GROUP BY status "
                                "ORDER BY n DESC, status")
    want = Counter(x["status"] for x in ROWS)
    assert r.columns == ["status", "n"] and r.types == ["BIGINT", "BIGINT"]
    assert r.rows == sorted(want.items(), key=lambda kv: (-kv[1], kv[0]))
    assert not r.truncated
    assert list(iter_dict_rows(r))[0] == {"status": r.rows[0][0], "n": r.rows[0][1]}


def test_more_tables_json_arrays_csv_records_and_lines(tmp_path: Path) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({"kind": "List", "items": ROWS[:10]}, indent=2))
    root = tmp_path / "root.json"
    root.write_text(json.dumps(ROWS[:5], indent=2))
    table = tmp_path / "t.csv"
    table.write_text("name,score,code\na,1,007\nb,2.5,010\nc,,x\n")
    text = tmp_path / "t.log"
    text.write_bytes(b"first\r\n\nthird line\n")
    tables = {
        "entry": Source.json_array(doc, ["items"]),
        "r": Source.json_array(root),
        "c": Source.csv(table, ",", [("name", "string"), ("score", "number"),
                                     ("code", "string")]),
        "logs": Source.records(lambda: [{"_line": 1, "status": 200},
                                        {"_line": 2, "_raw": "junk"}]),
        "lines": Source.lines(text),
    }
    q = ("SELECT (SELECT count(*) FROM entry WHERE status = 404), (SELECT sum(id) FROM r), "
         "(SELECT string_agg(code, ',' ORDER BY name) FROM c), (SELECT sum(score) FROM c), "
         "(SELECT count(_raw) FROM logs), (SELECT string_agg(line || ':' || text, '|') "
         "FROM lines)")
    spool = tmp_path / "spool"
    spool.mkdir()
    r = run_sql(tables, q, tmp_dir=spool)
    assert not list(spool.iterdir())  # the rows spooled for DuckDB are gone
    assert r.rows == [(sum(1 for x in ROWS[:10] if x["status"] == 404), 10, "007,010,x", 3.5,
                       1, "1:first|2:|3:third line")]
    d = describe(tables)
    assert d["lines"] == [("line", "BIGINT"), ("text", "VARCHAR")]
    assert ("score", "DOUBLE") in d["c"] and ("code", "VARCHAR") in d["c"]
    assert [c for c, _ in d["entry"]] == ["id", "status", "path", "ok"]
    assert dict(d["entry"])["ok"] == "BOOLEAN"


def test_a_type_change_after_the_sample_still_reads(tmp_path: Path) -> None:
    rows = [{"v": i} for i in range(30000)] + [{"v": "text"}]
    r = run_sql({"entry": Source.ndjson(_nd(tmp_path, rows))},
                "SELECT count(*), count(*) FILTER (CAST(v AS VARCHAR) LIKE '%text%') FROM entry")
    assert r.rows == [(30001, 1)]


ESCAPES = [
    ("SELECT * FROM read_csv('/etc/passwd')", "sql_access_denied"),
    ("SELECT * FROM read_text('/etc/hostname')", "sql_access_denied"),
    ("SELECT * FROM read_blob('/etc/passwd')", "sql_access_denied"),
    ("SELECT * FROM '/etc/passwd'", "sql_error"),  # file names are not tables here
    ("SELECT * FROM glob('/*')", "sql_access_denied"),
    ("SELECT * FROM read_csv('https://example.com/x.csv')", "sql_access_denied"),
    ("COPY entry TO '/tmp/scratch-escape.csv'", "sql_not_read_only"),
    ("COPY (SELECT 1) TO '/tmp/scratch-escape.csv'", "sql_not_read_only"),
    ("ATTACH '/tmp/scratch-escape.db' AS x", "sql_not_read_only"),
    ("INSTALL httpfs", "sql_not_read_only"),
    ("LOAD httpfs", "sql_not_read_only"),
    ("SET enable_external_access = true", "sql_not_read_only"),
    ("RESET enable_external_access", "sql_not_read_only"),
    ("PRAGMA enable_external_access", "sql_not_read_only"),
    ("EXPORT DATABASE '/tmp/scratch-escape'", "sql_not_read_only"),
    ("CREATE TABLE t AS SELECT 1", "sql_not_read_only"),
    ("SELECT 1; COPY entry TO '/tmp/scratch-escape.csv'", "sql_not_read_only"),
    ("SELEC 1", "sql_error"),
]


@pytest.mark.parametrize(("query", "code"), ESCAPES)
def test_escapes_are_refused_with_a_clear_code(tmp_path: Path, query: str, code: str) -> None:
    with pytest.raises(ScratchError) as exc:
        run_sql({"entry": Source.ndjson(_nd(tmp_path, ROWS[:3]))}, query)
    assert exc.value.code == code
    assert exc.value.exit_code == ExitCode.USAGE
    assert not list(Path("/tmp").glob("scratch-escape*"))


# What DuckDB itself refuses once the session is set up, without the SELECT-only check: the
# settings are the sandbox, the check is a second wall.
DUCKDB_REFUSES = [
    "SET enable_external_access = true",
    "SET allowed_paths = ['/etc/passwd']",
    "SET autoload_known_extensions = true",
    "SET lock_configuration = false",
    "COPY entry TO '/tmp/scratch-escape.csv'",
    "ATTACH '/tmp/scratch-escape.db' AS x",
    "INSTALL httpfs",
    "LOAD httpfs",
    "EXPORT DATABASE '/tmp/scratch-escape'",
    "SELECT * FROM read_csv('/etc/passwd')",
]


@pytest.mark.parametrize("statement", DUCKDB_REFUSES)
def test_the_duckdb_settings_refuse_on_their_own(tmp_path: Path, statement: str) -> None:
    import duckdb

    with _Session({"entry": Source.ndjson(_nd(tmp_path, ROWS[:3]))}) as s:
        with pytest.raises(duckdb.Error) as exc:
            s.con.execute(statement).fetchall()
        assert ("disabled" in str(exc.value) or "locked" in str(exc.value)
                or "Permission" in str(exc.value)), str(exc.value)
        assert s.con.execute("SELECT current_setting('enable_external_access')").fetchall() == [
            (False,)]
    assert not list(Path("/tmp").glob("scratch-escape*"))


def test_row_limit_and_time_limit(tmp_path: Path) -> None:
    src = {"entry": Source.ndjson(_nd(tmp_path, ROWS))}
    r = run_sql(src, "SELECT id FROM entry ORDER BY id", row_limit=5)
    assert r.rows == [(i,) for i in range(5)] and r.truncated and r.row_limit == 5
    assert not run_sql(src, "SELECT id FROM entry WHERE id < 5", row_limit=5).truncated
    slow = ("SELECT count(*) FROM range(200000) a, range(200000) b "
            "WHERE (a.range * 31 + b.range) % 1000003 = 7")
    with pytest.raises(ScratchError) as exc:  # minutes of work: only the limit ends it
        run_sql(src, slow, time_limit=0.5)
    assert exc.value.code == "sql_timeout" and exc.value.exit_code == ExitCode.LIMIT


def test_exact_numbers_in_json(tmp_path: Path) -> None:
    p = tmp_path / "n.ndjson"
    p.write_text('{"big": 123456789012345678901234567890, "d": 0.1}\n')
    r = run_sql({"entry": Source.ndjson(p)},
                "SELECT 12345678901234567890123::HUGEINT AS h, 1.10::DECIMAL(10,2) AS d, "
                "DATE '2020-01-02' AS day, [1, 2] AS l, NULL AS n")
    assert isinstance(r, SqlResult)
    assert json.loads(json_rows(r)) == {
        "columns": ["h", "d", "day", "l", "n"],
        "types": ["HUGEINT", "DECIMAL(10,2)", "DATE", "INTEGER[]", '"NULL"'],
        "rows": [[12345678901234567890123, 1.10, "2020-01-02", [1, 2], None]],
        "truncated": False, "row_limit": 1000}
    assert b"1.10" in json_rows(r)


def test_bad_table_names_and_limits(tmp_path: Path) -> None:
    src = Source.ndjson(_nd(tmp_path, ROWS[:1]))
    with pytest.raises(ScratchError) as exc:
        run_sql({"a b": src}, "SELECT 1")
    assert exc.value.code == "invalid_argument"
    with pytest.raises(ScratchError):
        run_sql({"entry": src}, "SELECT 1", row_limit=-1)
    with pytest.raises(ScratchError):
        run_sql({}, "SELECT 1")


@pytest.mark.corpus
def test_world_cities_and_journald(corpus_dir: Path) -> None:
    path = corpus_dir / "csv/world-cities.csv"
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    want = Counter(r["country"] for r in rows).most_common(3)
    r = run_sql({"entry": Source.csv(path)},
                "SELECT country, count(*) n FROM entry GROUP BY 1 ORDER BY n DESC, 1 LIMIT 3")
    assert r.rows == want
    nd = corpus_dir / "ndjson/journald_ip-10-0-9-206.ndjson"
    items = [json.loads(x) for x in nd.read_text(encoding="utf-8").splitlines() if x.strip()]
    r = run_sql({"entry": Source.ndjson(nd)},
                "SELECT count(*) FROM entry WHERE CAST(PRIORITY AS INTEGER) <= 3")
    assert r.rows == [(sum(1 for it in items if int(it.get("PRIORITY", 9)) <= 3),)]


@pytest.mark.corpus
def test_sql_over_parsed_access_log_records(corpus_dir: Path) -> None:
    from scratch.index.logrecords import iter_records

    path = corpus_dir / "logs/app/apache_access_10k.log"
    src = Source.records(lambda: iter_records(path, "combined"))
    r = run_sql({"entry": src}, "SELECT path, count(*) n FROM entry WHERE status = 404 "
                                "GROUP BY path ORDER BY n DESC, path LIMIT 1")
    hits: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split('"')
        if len(parts) > 2 and parts[2].split()[0] == "404":
            hits[parts[1].split(" ")[1]] += 1
    top = sorted(hits.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    assert r.rows == [top]
