"""Logs are records: schema, iterate-over (rows, --where, counts), item-schema, sql and the
pointer of a parsed log, against a reference regex per format over the original file."""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers import cli

# an independent reading of the combined format (not the one scratch uses)
REF_COMBINED = re.compile(r'^(\S+) \S+ (\S+) \[([^\]]+)\] "(\S+) (\S+) (\S+)" (\d{3}) (\d+|-) '
                          r'"[^"]*" "[^"]*"$')
REF_LOGHUB = re.compile(r"^\d{6} \d{6} \d+ (INFO|WARN|ERROR|DEBUG|FATAL) ([^:\s]+): ")

ACCESS = [f'10.0.0.{i % 7} - - [01/Jan/2024:00:00:{i % 60:02d} +0000] "GET /p{i % 5} HTTP/1.1" '
          f'{[200, 404, 500, 200, 301][i % 5]} {i * 3} "-" "agent {i % 2}"' for i in range(300)]
ACCESS[17] = "garbage line that is no request"
ACCESS[18] = ""


def ingest(name: str, data: bytes, *extra: str) -> dict:
    r = cli("ingest", name, "--store-always", "--json", *extra, input=data)
    assert r.code == 0, r.out
    return r.json["data"]


@pytest.fixture
def access(scratch_home: Path) -> str:
    ingest("access.log", ("\n".join(ACCESS) + "\n").encode())
    return "access.log"


def ref_rows(lines: list[str]) -> list[dict | None]:
    out: list[dict | None] = []
    for line in lines:
        m = REF_COMBINED.match(line)
        out.append(None if m is None else {"path": m.group(5), "status": int(m.group(7)),
                                           "method": m.group(4)})
    return out


def test_schema_lists_the_record_fields(access: str) -> None:
    r = cli("schema", access)
    assert r.code == 0
    text = r.text
    assert "records: combined (combined access log (Apache, nginx)), 300 lines: 298 parsed, " \
           "1 unparsed (line 18), 1 blank" in text
    assert "  status: integer 298/300, 4 values\n" in text
    assert "  path: string 298/300\n" in text
    assert "  _raw: string 2/300\n" in text
    data = cli("schema", access, "--json").json["data"]["schema"]["records"]
    assert data["format"] == "combined" and data["unparsed"] == 1


def test_rows_fields_where_and_counts_match_the_reference(access: str) -> None:
    ref = ref_rows(ACCESS)
    want = [i for i, r in enumerate(ref) if r and r["status"] == 404]
    r = cli("iterate-over", access, ".", "--fields", "status,path", "--where",
            "@.status == 404", "--limit", "5", "--json")
    assert r.code == 0
    got = r.json["data"]["rows"]
    assert [row["_index"] for row in got] == want[:5]
    assert got[0] == {"_index": want[0], "_line": want[0] + 1, "status": 404,
                      "path": ref[want[0]]["path"]}
    assert r.json["data"]["matches"] == len(want)
    by = cli("iterate-over", access, ".", "--fields", "status,path", "--where",
             "@.status == 404", "--count-by", "path", "--json").json["data"]
    assert {b["value"]: b["count"] for b in by["values"]} == dict(
        Counter(ref[i]["path"] for i in want))
    status = cli("iterate-over", access, ".", "--count-by", "status", "--json").json["data"]
    assert status["engine"] in ("index", "cache")
    want_status = Counter(r["status"] for r in ref if r)
    got_status = {b["value"]: b["count"] for b in status["values"] if b["type"] != "missing"}
    assert got_status == dict(want_status)
    missing = [b for b in status["values"] if b["type"] == "missing"]
    assert missing and missing[0]["count"] == 2  # the garbage line and the blank one
    assert cli("iterate-over", access, ".", "--count", "--where", "@.status >= 400").text == (
        f"{sum(1 for r in ref if r and r['status'] >= 400)}\n")


def test_unparsed_lines_are_rows_with_line_and_raw_only(access: str) -> None:
    r = cli("iterate-over", access, ".", "--fields", "_raw,status", "--offset", "16",
            "--limit", "3", "--json")
    rows = r.json["data"]["rows"]
    assert rows[1] == {"_index": 17, "_line": 18, "_raw": "garbage line that is no request",
                       "status": None}
    assert rows[2]["_raw"] == "" and rows[0]["_raw"] is None
    raw = cli("iterate-over", access, ".", "--count", "--where", "@._raw").text
    assert raw == "2\n"
    one = cli("get-in", access, "17", "--json")
    assert one.code != 0  # a log has no JSON paths: rows are read with iterate-over


def test_item_schema_and_sql_read_the_records(access: str) -> None:
    r = cli("item-schema", access, ".")
    assert r.code == 0
    assert "status: integer 298/300" in r.text and "_raw: string 2/300" in r.text
    d = cli("sql", access, "SELECT status, count(*) AS n FROM entry WHERE status IS NOT NULL "
                           "GROUP BY status ORDER BY status", "--json").json["data"]
    assert [tuple(x) for x in d["rows"]] == sorted(
        Counter(r["status"] for r in ref_rows(ACCESS) if r).items())
    d = cli("sql", access, "SELECT _line, _raw FROM entry WHERE _raw IS NOT NULL",
            "--json").json["data"]
    assert d["rows"] == [[18, "garbage line that is no request"], [19, ""]]


def test_the_pointer_shows_status_codes_and_counting_next_calls(scratch_home: Path) -> None:
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "3000"}
    lines = ACCESS * 40  # big enough for a pointer
    r = cli("ingest", "big.log", "--store-always", input=("\n".join(lines) + "\n").encode(),
            env=env)
    assert r.code == 0
    ref = [x for x in ref_rows(lines) if x]
    codes = Counter(x["status"] for x in ref)
    assert len(codes) <= 6  # few codes: shown exactly, commonest first (else their classes)
    want = "  status: " + ", ".join(f"{k} {n:,}" for k, n in sorted(codes.items(),
                                                                   key=lambda kn: (-kn[1], kn[0])))
    assert want in r.text.splitlines()
    assert "error|fail" not in r.text
    nxt = [ln.strip() for ln in r.text.split("next:\n", 1)[1].splitlines()]
    assert "scratch iterate-over big.log . --count-by status" in nxt
    assert any(c.startswith("scratch sql big.log 'SELECT path, count(*)") for c in nxt)
    assert any("--where '@.status >= 500'" in c for c in nxt)
    for c in nxt:
        cli("budget", "reset")
        run = cli(*shlex.split(c)[1:], env=env)
        assert run.code == 0, (c, run.err)


@pytest.mark.corpus
def test_apache_access_log_from_the_corpus(corpus_dir: Path, scratch_home: Path) -> None:
    path = corpus_dir / "logs/app/apache_access_10k.log"
    ingest("access", path.read_bytes())
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    ref = ref_rows(lines)
    want = Counter(r["path"] for r in ref if r and r["status"] == 404)
    r = cli("iterate-over", "access", ".", "--fields", "status,path", "--where",
            "@.status == 404", "--count-by", "path", "--limit", "1000", "--json")
    assert r.code == 0
    assert {b["value"]: b["count"] for b in r.json["data"]["values"]} == dict(want)
    top = cli("iterate-over", "access", ".", "--count-by", "path", "--limit", "3",
              "--json").json["data"]
    ref_paths = Counter(r["path"] for r in ref if r)
    assert [b["count"] for b in top["values"]] == [n for _, n in ref_paths.most_common(3)]
    assert top["distinct"] >= len(ref_paths)
    sql = cli("sql", "access", "SELECT count(*) FROM entry WHERE status = 404",
              "--json").json["data"]
    assert sql["rows"] == [[sum(want.values())]]


@pytest.mark.corpus
def test_loghub_hdfs_levels_and_components(corpus_dir: Path, scratch_home: Path) -> None:
    path = corpus_dir / "logs/loghub/HDFS_2k.log"
    data = ingest("hdfs", path.read_bytes())
    lines = path.read_text(encoding="utf-8").splitlines()
    matches = [m for m in map(REF_LOGHUB.match, lines) if m]
    assert len(matches) == len(lines)
    for field, group in (("level", 1), ("component", 2)):
        r = cli("iterate-over", "hdfs", ".", "--count-by", field, "--limit", "100", "--json")
        assert {b["value"]: b["count"] for b in r.json["data"]["values"]} == dict(
            Counter(m.group(group) for m in matches)), field
    warn = [i for i, m in enumerate(matches) if m.group(1) == "WARN"]
    r = cli("iterate-over", "hdfs", ".", "--fields", "level", "--where", "@.level == 'WARN'",
            "--offset", "-2", "--json")
    assert [row["_index"] for row in r.json["data"]["rows"]] == warn[-2:]
    assert data["text"]["levels"] == dict(Counter(m.group(1) for m in matches))
    assert data["records"]["breakdown"][0][0] == "component"  # levels: counted once, above


@pytest.mark.corpus
def test_journald_ndjson_counts_match_python(corpus_dir: Path, scratch_home: Path) -> None:
    path = corpus_dir / "ndjson/journald_ip-10-0-9-16.ndjson"
    ingest("journal", path.read_bytes())
    items = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    for field in ("PRIORITY", "SYSLOG_IDENTIFIER", "_SYSTEMD_UNIT"):
        r = cli("iterate-over", "journal", ".", "--count-by", field, "--limit", "1000",
                "--json")
        got = {(b["type"], b["value"]): b["count"] for b in r.json["data"]["values"]}
        want = Counter(("string", x[field]) if field in x else ("missing", None) for x in items)
        assert got == dict(want), field
    n = sum(1 for x in items if x.get("PRIORITY") is not None and int(x["PRIORITY"]) <= 4)
    r = cli("iterate-over", "journal", ".", "--count", "--where",
            "@.PRIORITY == '4' || @.PRIORITY == '3'")
    assert r.text == f"{n}\n"


@pytest.mark.corpus
def test_kubectl_list_and_yaml_multi_doc(corpus_dir: Path, scratch_home: Path) -> None:
    import yaml
    pods = corpus_dir / "k8s/honeycomb/pods.json"
    ingest("pods", pods.read_bytes())
    doc = json.loads(pods.read_text())
    items = doc["items"]
    want = [i for i, p in enumerate(items) if p["status"]["phase"] == "Running"]
    r = cli("iterate-over", "pods", "items", "--fields", "metadata.name", "--where",
            "@.status.phase == 'Running'", "--limit", "3", "--json")
    assert [row["_index"] for row in r.json["data"]["rows"]] == want[:3]
    assert r.json["data"]["matches"] == len(want)
    argo = corpus_dir / "yaml/argo-cd-install.yaml"
    ingest("argo", argo.read_bytes())
    docs = [d for d in yaml.safe_load_all(argo.read_text()) if d is not None]
    r = cli("iterate-over", "argo", ".", "--count-by", "kind", "--limit", "100", "--json")
    assert r.code == 0, r.out
    assert {b["value"]: b["count"] for b in r.json["data"]["values"]} == dict(
        Counter(d["kind"] for d in docs))
