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


# -- filters that failed silently (issue 30, item 5) ----------------------------------------

def test_count_by_a_field_no_item_has_names_the_fields_that_exist(store: Path) -> None:
    r = cli("iterate-over", "journal.ndjson", ".", "--count-by", "nosuchfield", "--json")
    assert r.code == 4, r.text
    error = r.json["error"]
    assert error["code"] == "key_path_not_found" and error["argument"] == "count_by"
    assert error["message"] == ("--count-by: field nosuchfield is in none of items 0..59 (keys "
                                "of the items: PRIORITY, _SYSTEMD_UNIT, MESSAGE, _PID)")
    assert "suggestions" not in error
    r = cli("iterate-over", "journal.ndjson", ".", "--count-by", "PRIORTY", "--json")
    assert r.code == 4
    assert "did you mean PRIORITY?" in r.json["error"]["message"]
    (fix,) = r.json["error"]["suggestions"]
    assert fix["args"]["count_by"] == ["PRIORITY"]
    # a field the filter's matches lack but other items have is counted, not refused
    r = cli("iterate-over", "journal.ndjson", ".", "--count-by", "_PID", "--where",
            "@.MESSAGE == 'm0'", "--json")
    assert r.code == 0 and r.json["data"]["values"] == [
        {"value": None, "type": "missing", "count": 1}]
    # over MCP, the same refusal in its own spelling
    session = ServerState().session_for("conn", "default", None, "test")
    out = run_tool("iterate_over", {"file": "journal.ndjson", "path": ".",
                                    "count_by": "nosuchfield"}, session)
    assert not out.ok
    assert json.loads(out.text)["message"].startswith("'count_by': field nosuchfield is in none")


def test_a_bad_regex_is_refused_with_its_position(store: Path) -> None:
    r = cli("iterate-over", "journal.ndjson", ".", "--count", "--where",
            "search(@._SYSTEMD_UNIT, '[a-')", "--json")
    assert r.code == 2, r.text
    error = r.json["error"]
    assert error["code"] == "invalid_pattern"
    assert error["position"] == 25 and error["pattern"] == "[a-"
    assert error["message"] == ("--where \"search(@._SYSTEMD_UNIT, '[a-')\": the pattern '[a-' "
                                "of search() at position 25 is not a valid regular expression: "
                                "unterminated character set (at position 3 of the pattern)")
    # what the regex engine takes but I-Regexp (RFC 9485) does not: match() would be false
    r = cli("iterate-over", "journal.ndjson", ".", "--count", "--where",
            r"match(@._PID, '1\\d+')", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_pattern"
    assert "I-Regexp (RFC 9485)" in r.json["error"]["message"]
    assert _count("search(@._SYSTEMD_UNIT, '^[a-z]+[.]service$')")["data"]["count"] == 30


def test_a_comparison_that_met_only_strings_says_so_and_suggests_number(store: Path) -> None:
    got = _count("@.PRIORITY <= 3")
    assert got["data"]["count"] == 0
    assert got["meta"]["warnings"] == [
        "@.PRIORITY <= 3 met only strings in @.PRIORITY (e.g. '0', '1', '2'), and a string "
        "never compares with a number; number(@.PRIORITY) <= 3 reads them as numbers"]
    r = cli("iterate-over", "journal.ndjson", ".", "--fields", "MESSAGE", "--where",
            "3 >= @.PRIORITY", "--json")
    assert r.json["meta"]["warnings"] == [
        "3 >= @.PRIORITY met only strings in @.PRIORITY (e.g. '0', '1', '2'), and a string "
        "never compares with a number; 3 >= number(@.PRIORITY) reads them as numbers"]
    assert not _count("number(@.PRIORITY) <= 3")["meta"].get("warnings")
    # strings that are no numbers: said, without number()
    got = _count("@.MESSAGE > 3")
    assert got["meta"]["warnings"] == [
        "@.MESSAGE > 3 met only strings in @.MESSAGE (e.g. 'm0', 'm1', 'm2'), and a string "
        "never compares with a number"]
    # and the other way round: a quoted number against numbers
    got = _count("@.home_score == '1'", ref="matches")
    assert got["data"]["count"] == 0
    assert got["meta"]["warnings"] == [
        "@.home_score == '1' met only numbers in @.home_score (e.g. 1, 2, 0), and a number "
        "never equals a string; @.home_score == 1 compares numbers"]


def test_a_bare_field_name_suggests_the_item_path(store: Path) -> None:
    error = _error("journal.ndjson", ".", "--count", "--where", "PRIORITY")
    assert error["code"] == "invalid_path" and error["position"] == 0
    assert error["message"] == ("--where 'PRIORITY' names PRIORITY at position 0 without @: a "
                                "field of the item is @.PRIORITY")
    assert error["suggestions"][0]["args"]["where"] == "@.PRIORITY"
    error = _error("journal.ndjson", ".", "--count", "--where", "MESSAGE == 'm1' && !_PID")
    assert error["message"] == ("--where \"MESSAGE == 'm1' && !_PID\" names MESSAGE at position 0 "
                                "without @: a field of the item is @.MESSAGE, as in "
                                "@.MESSAGE == 'm1' && !@._PID")
    r = cli("iterate-over", "journal.ndjson", ".", "--count", "--where",
            error["suggestions"][0]["args"]["where"], "--json")
    assert r.code == 0 and r.json["data"]["count"] == 0
