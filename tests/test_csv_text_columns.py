"""A CSV column whose values do not read back as numbers (zero-padded codes, ``+1``, ``1.50``,
``1e5``) is text: in schema, sql, the rows of iterate-over and count-by. On a real sample
(tests/data/country-codes-head.csv: zero-padded ISO 4217 numeric codes) and on each spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from tests.helpers import cli

SAMPLE = Path(__file__).parent / "data" / "country-codes-head.csv"
CODE = "ISO4217-currency_numeric_code"


@pytest.fixture
def codes(scratch_home: Path) -> str:
    r = cli("ingest", "codes.csv", "--store-always", "--json", input=SAMPLE.read_bytes())
    assert r.code == 0, r.out
    return "codes.csv"


def column_types(ref: str) -> dict[str, str]:
    r = cli("schema", ref, "--json")
    assert r.code == 0, r.out
    return {c["name"]: c["type"] for c in r.json["data"]["schema"]["column_info"]}


def test_schema_says_zero_padded_codes_are_text(codes: str) -> None:
    types = column_types(codes)
    assert types[CODE] == "string"
    assert types["M49"] == types["ISO3166-1-numeric"] == "integer"  # 4, 248, 8: no padding
    assert types["GAUL"] == "integer" and types["Dial"] == "string"  # 1-684
    r = cli("schema", codes)
    assert f"  {CODE}: string, 1 empty\n" in r.text and "  M49: integer\n" in r.text


def test_sql_keeps_the_zeros(codes: str) -> None:
    r = cli("sql", codes, f'SELECT FIFA, "{CODE}" AS code, M49 FROM entry '
                          "WHERE code LIKE '0%' ORDER BY FIFA LIMIT 4", "--json")
    assert r.code == 0, r.out
    d = r.json["data"]
    assert d["types"] == ["VARCHAR", "VARCHAR", "BIGINT"]
    assert d["rows"] == [["ALB", "008", 8], ["ALG", "012", 12], ["ARG", "032", 32],
                         ["ARM", "051", 51]]
    described = cli("sql", codes, "--describe", "--json").json["data"]["columns"]["entry"]
    assert {c["column"]: c["type"] for c in described}[CODE] == "VARCHAR"


def test_iterate_over_rows_keep_the_zeros(codes: str) -> None:
    r = cli("iterate-over", codes, ".", "--fields", f"FIFA,{CODE},M49", "--limit", "4",
            "--json")
    assert r.code == 0, r.out
    assert [(x["FIFA"], x[CODE], x["M49"]) for x in r.json["data"]["rows"]] == [
        ("AFG", "971", 4), ("ALD", "978", 248), ("ALB", "008", 8), ("ALG", "012", 12)]
    human = cli("iterate-over", codes, ".", "--fields", f"FIFA,{CODE}", "--where",
                f"@['{CODE}'] == '008'")
    assert human.code == 0, human.err
    assert human.text == f"_index\t_line\tFIFA\t{CODE}\n2\t4\tALB\t008\n"


def test_count_by_counts_the_codes_as_text(codes: str) -> None:
    r = cli("iterate-over", codes, ".", "--count-by", CODE, "--limit", "3", "--json")
    assert r.code == 0, r.out
    d = r.json["data"]
    assert d["values"] == [{"value": "978", "type": "string", "count": 4},
                           {"value": "840", "type": "string", "count": 2},
                           {"value": "951", "type": "string", "count": 2}]
    padded = cli("iterate-over", codes, ".", "--count-by", CODE, "--limit", "100", "--json")
    values = {v["value"] for v in padded.json["data"]["values"]}
    assert {"008", "012", "032", "051", "036", "044", "048"} <= values
    assert all(isinstance(v, str) for v in values if v is not None)


SPELLINGS = ("zip,sci,plus,price,neg0,half,huge,int,num,neg\n"
             "00501,1e5,+1,1.50,-0,.5,12345678901234567890,1,1.5,-3\n"
             "10001,2e5,+2,2.00,0,0.5,1,2,2.25,-4.5\n")


@pytest.mark.parametrize(("column", "kind", "duck", "first"), [
    ("zip", "string", "VARCHAR", "00501"),
    ("sci", "string", "VARCHAR", "1e5"),
    ("plus", "string", "VARCHAR", "+1"),
    ("price", "string", "VARCHAR", "1.50"),
    ("neg0", "string", "VARCHAR", "-0"),
    ("half", "string", "VARCHAR", ".5"),
    ("huge", "string", "VARCHAR", "12345678901234567890"),  # past 64 bits: text, exact
    ("int", "integer", "BIGINT", 1),
    ("num", "number", "DOUBLE", 1.5),
    ("neg", "number", "DOUBLE", -3.0),
])
def test_each_spelling(scratch_home: Path, column: str, kind: str, duck: str,
                       first: object) -> None:
    assert cli("ingest", "s.csv", "--store-always", input=SPELLINGS).code == 0
    assert column_types("s.csv")[column] == kind
    r = cli("sql", "s.csv", f'SELECT "{column}" FROM entry', "--json")
    assert r.code == 0, r.out
    assert r.json["data"]["types"] == [duck] and r.json["data"]["rows"][0] == [first]
    rows = cli("iterate-over", "s.csv", ".", "--fields", column, "--json").json["data"]["rows"]
    want = -3 if column == "neg" else first  # rows keep an integer spelling as an integer
    assert rows[0][column] == want


def test_over_mcp(codes: str) -> None:
    session = ServerState().session_for("conn", "default", None, "test")
    out = run_tool("sql", {"file": codes, "query": f'SELECT "{CODE}" FROM entry '
                                                   "WHERE FIFA = 'ALB'"}, session)
    assert out.ok, out.text
    assert out.text == f"{CODE}\n008\n"
    rows = run_tool("iterate_over", {"file": codes, "path": ".", "fields": f"FIFA,{CODE}",
                                     "where": "@.FIFA == 'ARG'"}, session)
    assert rows.ok, rows.text
    assert rows.text == f"_index\t_line\tFIFA\t{CODE}\n10\t12\tARG\t032\n"
