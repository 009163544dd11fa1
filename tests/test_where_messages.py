"""--where says what went wrong (issue 22, point 4, and the filter half of point 5).

Exact messages through the CLI (``--json`` error codes and warnings) and each once through the
real MCP dispatch; counts with ``number()``/``lower()`` checked against plain Python over a
small journald-shaped file (``PRIORITY`` is a string, as journald writes it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from tests.helpers import cli

UNITS = ["sshd.service", "CRON.service", "nginx.service", "Sshd.service"]
JOURNAL = [{"PRIORITY": str(i % 8), "_SYSTEMD_UNIT": UNITS[i % 4], "MESSAGE": f"m{i}",
            **({"_PID": str(100 + i)} if i % 3 else {})} for i in range(60)]
MATCHES = [{"home_score": None if i % 10 == 0 else i % 3,
            "away_score": None if i % 10 == 0 else (i + i // 4) % 3, "genre": "Comedy"}
           for i in range(40)]


@pytest.fixture
def store(scratch_home: Path) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in JOURNAL)
    assert cli("write", "journal.ndjson", input=text).code == 0
    assert cli("write", "matches", input=json.dumps(MATCHES) + "\n").code == 0
    return scratch_home


def _error(*words: str) -> dict[str, Any]:
    r = cli("iterate-over", *words, "--json")
    assert r.code == 2, r.text
    error: dict[str, Any] = r.json["error"]
    return error


def _count(where: str, ref: str = "journal.ndjson") -> Any:
    r = cli("iterate-over", ref, ".", "--count", "--where", where, "--json")
    assert r.code == 0, r.text
    return r.json


def test_a_filter_without_an_item_path_is_refused_with_an_example(store: Path) -> None:
    error = _error("matches", ".", "--fields", "genre", "--where", '"genre" == "Comedy"')
    assert error["code"] == "invalid_path"
    assert error["argument"] == "where"
    assert error["message"] == ("--where '\"genre\" == \"Comedy\"' reads no field of the item "
                                "(@): a filter compares fields of the item: @.genre == 'Comedy'")
    assert error["suggestions"][0]["args"]["where"] == "@.genre == 'Comedy'"
    error = _error("matches", ".", "--count", "--where", "1 == 1")
    assert error["message"] == ("--where '1 == 1' reads no field of the item (@): a filter "
                                "compares fields of the item: @.status.phase == 'Failed'")
    assert "suggestions" not in error


def test_equals_for_double_equals_says_use_double_equals(store: Path) -> None:
    error = _error("matches", ".", "--fields", "genre", "--where", "@.genre = 'Comedy'")
    assert error["code"] == "invalid_path"
    assert error["message"] == ("--where \"@.genre = 'Comedy'\" has = at position 8: use == "
                                "to compare")
    assert error["position"] == 8
    assert error["suggestions"][0]["args"]["where"] == "@.genre == 'Comedy'"
    # an = inside a string is not the mistake
    error = _error("matches", ".", "--fields", "genre", "--where", "@.genre == 'a=b' &&")
    assert "use ==" not in error["message"]


def test_root_in_a_filter_says_use_at_for_the_item(store: Path) -> None:
    error = _error("matches", ".", "--count", "--where", "$.status.phase == 'Running'")
    assert error["code"] == "invalid_path"
    assert error["message"] == ("--where \"$.status.phase == 'Running'\" reads $: use @ for "
                                "the item (@.status.phase), $ is the whole document")
    assert error["suggestions"][0]["args"] == {"ref": "matches", "path": ".",
                                               "where": "@.status.phase == 'Running'",
                                               "count": True}


def test_a_misspelt_where_key_gets_did_you_mean_on_rows_and_counts(store: Path) -> None:
    want = ("where key @.PRIORTY is in none of items 0..59; did you mean @.PRIORITY? (keys of "
            "the items: PRIORITY, _SYSTEMD_UNIT, MESSAGE, _PID)")
    r = cli("iterate-over", "journal.ndjson", ".", "--fields", "MESSAGE", "--where",
            "number(@.PRIORTY) <= 3", "--json")
    assert want in r.json["meta"]["warnings"]
    assert want in _count("number(@.PRIORTY) <= 3")["meta"]["warnings"]
    r = cli("iterate-over", "journal.ndjson", ".", "--count-by", "_SYSTEMD_UNIT", "--where",
            "@.PRIORTY == '3'", "--json")
    assert want in r.json["meta"]["warnings"]
    assert not _count("number(@.PRIORITY) <= 3")["meta"].get("warnings")


def test_number_lower_upper_count_as_plain_python(store: Path) -> None:
    assert _count("number(@.PRIORITY) <= 3")["data"]["count"] == sum(
        1 for r in JOURNAL if int(r["PRIORITY"]) <= 3)
    assert _count("@.PRIORITY <= 3")["data"]["count"] == 0  # strings are not numbers
    assert _count("number(@._PID) > 130")["data"]["count"] == sum(
        1 for r in JOURNAL if "_PID" in r and int(r["_PID"]) > 130)
    assert _count("lower(@._SYSTEMD_UNIT) == 'sshd.service'")["data"]["count"] == sum(
        1 for r in JOURNAL if r["_SYSTEMD_UNIT"].lower() == "sshd.service")
    assert _count("upper(@._SYSTEMD_UNIT) == 'CRON.SERVICE'")["data"]["count"] == sum(
        1 for r in JOURNAL if r["_SYSTEMD_UNIT"].upper() == "CRON.SERVICE")
    assert _count("number(@.MESSAGE) == 1")["data"]["count"] == 0
    r = cli("iterate-over", "journal.ndjson", ".", "--count-by", "PRIORITY", "--where",
            "number(@.PRIORITY) < 2", "--json")
    assert r.code == 0, r.text


def test_number_reads_number_like_strings_only() -> None:
    from scratch.query.items import compile_where
    assert compile_where("number(@.x) == 2500")({"x": " 2.5e3 "})
    assert compile_where("number(@.x) == -3")({"x": "-3"})
    assert compile_where("number(@.x) == 3")({"x": 3})
    for value in ("3a", "", "0x10", "1_000", "nan", True, None, "9" * 101):
        assert not compile_where("number(@.x) >= 0")({"x": value}), value
    assert compile_where("lower(@.x) == 'ab'")({"x": "aB"})
    assert not compile_where("lower(@.x) == 'ab'")({"x": 1})


def test_comparing_two_fields_warns_of_null_matches(store: Path) -> None:
    r = cli("iterate-over", "matches", ".", "--count", "--where",
            "@.home_score == @.away_score", "--json")
    both = sum(1 for m in MATCHES if m["home_score"] is None and m["away_score"] is None)
    equal = sum(1 for m in MATCHES if m["home_score"] == m["away_score"])
    assert r.json["data"]["count"] == equal
    assert r.json["meta"]["warnings"] == [
        f"{both} of the {equal} matches have both @.home_score and @.away_score null or "
        "missing, which RFC 9535 counts as equal; add && @.home_score != null to leave them "
        "out"]
    r = cli("iterate-over", "matches", ".", "--fields", "genre", "--where",
            "@.home_score == @.away_score && @.home_score != null", "--json")
    assert not r.json["meta"].get("warnings")
    assert r.json["data"]["matches"] == equal - both


def test_each_message_over_mcp(store: Path) -> None:
    session = ServerState().session_for("conn", "default", None, "test")

    def error(where: str) -> dict[str, Any]:
        out = run_tool("iterate_over", {"file": "matches", "path": ".", "count": True,
                                        "where": where}, session)
        assert not out.ok
        e: dict[str, Any] = json.loads(out.text)
        assert e["code"] == "invalid_path"
        return e

    e = error('"genre" == "Comedy"')
    assert e["message"] == ("'where' '\"genre\" == \"Comedy\"' reads no field of the item (@): "
                            "a filter compares fields of the item: @.genre == 'Comedy'")
    assert e["suggestions"] == [{"name": "iterate_over", "arguments": {
        "file": "matches", "path": ".", "where": "@.genre == 'Comedy'", "count": True}}]
    assert error("@.genre = 'Comedy'")["message"] == (
        "'where' \"@.genre = 'Comedy'\" has = at position 8: use == to compare")
    assert error("$.status.phase == 'Running'")["message"] == (
        "'where' \"$.status.phase == 'Running'\" reads $: use @ for the item (@.status.phase), "
        "$ is the whole document")
    out = run_tool("iterate_over", {"file": "journal.ndjson", "path": ".", "count": True,
                                    "where": "number(@.PRIORTY) <= 3"}, session)
    assert out.ok
    assert "did you mean @.PRIORITY?" in json.dumps(out.structured) + " ".join(out.texts)
    out = run_tool("iterate_over", {"file": "journal.ndjson", "path": ".", "count": True,
                                    "where": "number(@.PRIORITY) <= 3"}, session)
    assert out.ok and str(sum(1 for r in JOURNAL if int(r["PRIORITY"]) <= 3)) in out.text
    out = run_tool("iterate_over", {"file": "matches", "path": ".", "count": True,
                                    "where": "@.home_score == @.away_score"}, session)
    assert out.ok
    assert "null or missing" in json.dumps(out.structured) + " ".join(out.texts)
