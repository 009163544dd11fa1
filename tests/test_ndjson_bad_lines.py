"""NDJSON entries with lines that are not JSON: answers over the array go on without them (null
items, indexes aligned with lines, a warning naming the lines); a path into a bad item is a
format_error naming its line; a broken region of a JSON entry names the entry's line."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.helpers import cli, shell_of, shells

REASON = "Expecting property name enclosed in double quotes"
ONE_BAD = "1 line of nd is not JSON (line 1502); left out"


def ndjson(n: int, bad_after: dict[int, str]) -> bytes:
    """``n`` items ``{"id": i, ...}``; after item ``i`` in ``bad_after``, that line of junk."""
    out = []
    for i in range(n):
        out.append(json.dumps({"id": i, "name": f"item-{i}", "tags": ["a", "b"],
                               "nested": {"x": i * 2}}))
        if i in bad_after:
            out.append(bad_after[i])
    return ("\n".join(out) + "\n").encode()


def ingest(name: str, data: bytes) -> None:
    r = cli("ingest", name, "--store-always", input=data)
    assert r.code == 0, r.err


@pytest.fixture
def nd(scratch_home: Path) -> str:
    """The reported case: 3000 items, line 1502 (item 1501) is not JSON."""
    r = cli("ingest", "nd", input=ndjson(3000, {1500: "{broken json line"}))
    assert r.code == 0, r.err
    assert ("warning: 1 of 3001 lines are not JSON (first: line 1502: unexpected character, "
            "expected a string key)") in r.err
    return "nd"


def run(cmd: str):
    args = shlex.split(shell_of(cmd))
    assert args[0] == "scratch"
    return cli(*args[1:], "--json")


# ------------------------------------------------------------------------------ the bad item


@pytest.mark.parametrize("path", ["1501", "1501.id", "$[1501].name", "/1501/tags/0"])
def test_path_into_the_bad_item_names_its_line(nd: str, path: str) -> None:
    r = cli("get-in", nd, path, "--json")
    assert r.code == 1
    err = dict(r.json["error"], suggestions=shells(r.json["error"]["suggestions"]))
    assert err == {
        "code": "format_error",
        "message": f"item 1501 (line 1502) is not JSON: {REASON} at column 2",
        "line": 1502, "column": 2, "item": 1501, "reason": REASON,
        "suggestions": ["scratch slice nd 1502 1502"]}
    shown = run(r.json["error"]["suggestions"][0])
    assert shown.code == 0 and shown.json["data"]["lines"] == ["{broken json line"]


def test_path_into_the_bad_item_in_human_mode(nd: str) -> None:
    r = cli("get-in", nd, "1501")
    assert r.code == 1 and r.out == b""
    assert (f"error [format_error]: item 1501 (line 1502) is not JSON: {REASON} at column 2"
            in r.err)
    assert "  scratch slice nd 1502 1502" in r.err.splitlines()


def test_arrays_inside_the_bad_item_are_not_guessed(nd: str) -> None:
    for cmd in (("iterate-over", nd, "1501.tags", "--fields", "."),
                ("item-schema", nd, "1501.tags")):
        r = cli(*cmd, "--json")
        assert r.code == 1, cmd
        err = r.json["error"]
        assert (err["code"], err["line"], shells(err["suggestions"])) == (
            "format_error", 1502, ["scratch slice nd 1502 1502"])


def test_the_items_around_the_bad_line_are_fine(nd: str) -> None:
    for path, want in (("1500.id", 1500), ("1502.id", 1501), ("$[-1].id", 2999)):
        r = cli("get-in", nd, path, "--json")
        assert r.code == 0 and r.json["data"]["value"] == want
        assert "warnings" not in r.json["meta"]


# ---------------------------------------------------------------------- answers over the array


def test_item_schema_leaves_the_bad_line_out(nd: str) -> None:
    r = cli("item-schema", nd, ".", "--json")
    assert r.code == 0
    d = r.json["data"]
    assert (d["length"], d["items"], d["item_types"], d["not_json"]) == (
        3001, 3001, {"object": 3000}, 1)
    # presence counts the items that are JSON: every one of them has every key
    assert [(f["path"], f["present"], f["presence"]) for f in d["fields"]] == [
        ("id", 3000, "3000/3000"), ("name", 3000, "3000/3000"), ("tags", 3000, "3000/3000"),
        ("nested", 3000, "3000/3000"), ("nested.x", 3000, "3000/3000")]
    assert r.json["meta"]["warnings"] == [ONE_BAD]
    human = cli("item-schema", nd, ".")
    assert human.code == 0
    assert human.text == ("item types: object 3000, not JSON 1\n"
                          "id: integer 3000/3000\n"
                          "name: string 3000/3000\n"
                          "tags: array of string 3000/3000\n"
                          "nested: object 3000/3000\n"
                          "nested.x: integer 3000/3000\n")
    assert f"warning: {ONE_BAD}\n" in human.err


def test_item_schema_window_over_the_bad_line(nd: str) -> None:
    r = cli("item-schema", nd, ".", "--offset", "1500", "--limit", "3")
    assert r.code == 0
    assert r.text.splitlines()[:3] == ["window: items 1500..1502 of 3001",
                                       "item types: object 2, not JSON 1",
                                       "id: integer 2/2"]
    assert f"warning: {ONE_BAD}\n" in r.err
    only_bad = cli("item-schema", nd, ".", "--offset", "1501", "--limit", "1", "--json")
    d = only_bad.json["data"]
    assert (only_bad.code, d["items"], d["item_types"], d["not_json"], d["fields"]) == (
        0, 1, {}, 1, [])
    clear = cli("item-schema", nd, ".", "--offset", "1502", "--limit", "3", "--json")
    assert clear.code == 0 and clear.json["data"]["not_json"] == 0
    assert "warnings" not in clear.json["meta"]


def test_iterate_over_keeps_the_row_of_the_bad_item(nd: str) -> None:
    r = cli("iterate-over", nd, ".", "--fields", "id,name", "--offset", "1499", "--limit", "4",
            "--json")
    assert r.code == 0
    assert r.json["data"]["rows"] == [
        {"_index": 1499, "id": 1499, "name": "item-1499"},
        {"_index": 1500, "id": 1500, "name": "item-1500"},
        {"_index": 1501, "id": None, "name": None},
        {"_index": 1502, "id": 1501, "name": "item-1501"}]
    assert r.json["meta"]["warnings"] == [ONE_BAD]
    human = cli("iterate-over", nd, ".", "--fields", "id", "--offset", "1499", "--limit", "4")
    assert human.code == 0
    assert human.text == "_index\tid\n1499\t1499\n1500\t1500\n1501\tnull\n1502\t1501\n"
    assert f"warning: {ONE_BAD}\n" in human.err
    before = cli("iterate-over", nd, ".", "--fields", "id", "--offset", "1490", "--limit", "11",
                 "--json")
    assert before.code == 0 and "warnings" not in before.json["meta"]


def test_iterate_over_the_whole_array_with_where(nd: str) -> None:
    r = cli("iterate-over", nd, ".", "--fields", "id", "--where", "@.id >= 1500 && @.id <= 1501",
            "--json")
    assert r.code == 0
    assert r.json["data"]["rows"] == [{"_index": 1500, "id": 1500}, {"_index": 1502, "id": 1501}]
    assert r.json["meta"]["warnings"] == [ONE_BAD]


def test_jsonpath_filter_finds_items_after_the_bad_line(nd: str) -> None:
    r = cli("get-in", nd, "$[?@.id==1600].name", "--json")
    assert r.code == 0
    assert r.json["data"]["matches"] == [{"path": "1601.name", "value": "item-1600"}]
    assert r.json["meta"]["warnings"] == [ONE_BAD]
    human = cli("get-in", nd, "$[?@.id==1600].name")
    assert human.code == 0 and human.text == "1601.name: item-1600\n"
    assert f"warning: {ONE_BAD}\n" in human.err
    window = cli("get-in", nd, "$[1500:1503].id", "--json")
    assert window.code == 0
    assert window.json["data"]["matches"] == [{"path": "1500.id", "value": 1500},
                                              {"path": "1502.id", "value": 1501}]


def test_several_bad_lines_are_listed(scratch_home: Path) -> None:
    junk = {i: f"not json {i}" for i in (9, 40, 70, 100, 130, 160, 190)}
    ingest("multi", ndjson(300, junk))
    # item i is on line i + 1 + (bad lines before it): the bad line after item i is on i + 2 + k
    lines = [i + 2 + k for k, i in enumerate(sorted(junk))]
    assert lines == [11, 43, 74, 105, 136, 167, 198]
    r = cli("item-schema", "multi", ".", "--json")
    assert r.code == 0
    assert r.json["data"]["not_json"] == 7
    assert r.json["data"]["fields"][0]["presence"] == "300/300"
    assert r.json["meta"]["warnings"] == [
        "7 lines of multi are not JSON (lines 11, 43, 74, 105, 136 and 2 more); left out"]
    r = cli("iterate-over", "multi", ".", "--fields", "id", "--offset", "5", "--limit", "40",
            "--json")
    assert r.code == 0
    rows = {row["_index"]: row["id"] for row in r.json["data"]["rows"]}
    assert len(rows) == 40 and rows[10] is None and rows[42] is None and rows[43] == 41
    assert r.json["meta"]["warnings"] == ["2 lines of multi are not JSON (lines 11, 43); left out"]
    r = cli("get-in", "multi", "42", "--json")
    assert r.code == 1 and r.json["error"]["line"] == 43
    assert r.json["error"]["message"].startswith("item 42 (line 43) is not JSON: Expecting value")


def test_blank_lines_shift_items_off_lines(scratch_home: Path) -> None:
    lines = ['{"id":0}', "", *[json.dumps({"id": i}) for i in range(1, 6)], "{bad",
             *[json.dumps({"id": i}) for i in range(6, 30)]]
    ingest("sparse", ("\n".join(lines) + "\n").encode())
    r = cli("get-in", "sparse", "6", "--json")
    assert r.code == 1
    assert r.json["error"]["message"] == f"item 6 (line 8) is not JSON: {REASON} at column 2"
    assert shells(r.json["error"]["suggestions"]) == ["scratch slice sparse 8 8"]
    r = cli("iterate-over", "sparse", ".", "--fields", "id", "--offset", "5", "--limit", "3",
            "--json")
    assert r.json["data"]["rows"] == [{"_index": 5, "id": 5}, {"_index": 6, "id": None},
                                      {"_index": 7, "id": 6}]
    assert r.json["meta"]["warnings"] == ["1 line of sparse is not JSON (line 8); left out"]


def test_a_clean_ndjson_entry_has_no_such_warning(scratch_home: Path) -> None:
    ingest("clean", ndjson(300, {}))
    for cmd in (("item-schema", "clean", "."),
                ("item-schema", "clean", ".", "--offset", "10", "--limit", "5"),
                ("iterate-over", "clean", ".", "--fields", "id", "--limit", "5"),
                ("get-in", "clean", "$[?@.id==200].name")):
        r = cli(*cmd, "--json")
        assert r.code == 0, cmd
        assert "warnings" not in r.json["meta"], cmd
        assert "not JSON" not in cli(*cmd).err, cmd
    assert cli("item-schema", "clean", ".", "--json").json["data"]["not_json"] == 0


# ------------------------------------------------------------------ broken regions of JSON files


def test_broken_json_region_names_the_entry_line(scratch_home: Path) -> None:
    """Stored JSON that no longer parses (damaged in place, outside the fingerprinted head and
    tail) fails as before, but at the entry's own line and column, with the slice to read it."""
    doc = {"head": list(range(3000)),
           "items": [{"id": i, "name": f"n{i}", "meta": {"a": [1, {"b": i}]}} for i in range(3000)]}
    r = cli("ingest", "doc", input=json.dumps(doc).encode())
    assert r.code == 0
    stored = scratch_home / "agents/default/files/doc"
    data = stored.read_bytes()
    pos = data.index(b'"n1500"')
    line = data[:pos].count(b"\n") + 1
    column = pos - data.rfind(b"\n", 0, pos)
    assert line > 1 and column > 2
    stored.write_bytes(data[:pos] + b"'n1500'" + data[pos + 7:])
    want = {"code": "format_error",
            "message": f"stored JSON does not parse at line {line}, column {column}: "
                       "Expecting value",
            "reason": "Expecting value", "line": line, "column": column,
            "suggestions": [f"scratch slice doc {line} {line}"]}
    for cmd in (("get-in", "doc", "items.1500.name"), ("get-in", "doc", "items.1500"),
                ("item-schema", "doc", "items")):
        r = cli(*cmd, "--json")
        err = r.json["error"]
        err["suggestions"] = shells(err["suggestions"])
        assert (r.code, err) == (1, want), cmd
    assert cli("get-in", "doc", "items.1499.name").text == "n1499\n"


@pytest.mark.parametrize("indent", [2, None])
def test_region_errors_count_from_the_entry_not_the_region(tmp_path: Path,
                                                           indent: int | None) -> None:
    """Index level, both JSON layouts (canonical: 2-space lines; raw: anything else): the error
    of a region deep in the file gives the file's line and column, including on the region's
    first line, after a key."""
    from scratch.errors import FormatError
    from scratch.index.build import build_index
    from scratch.index.entry import EntryIndex

    deep: dict = {"x": 1}
    for i in range(12):
        deep = {f"k{i}": deep, "pad": "p"}
    doc = {"head": list(range(3000)), "top": deep, "tail": list(range(3000))}
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc, indent=indent) + "\n")
    ix = build_index(path, tmp_path / "index", "json")
    assert ix.layout == ("canonical" if indent == 2 else "raw")
    ix.close()
    data = path.read_bytes()
    pos = data.index(b'"k3": {') + 6  # the brace on the member's first line
    line = data[:pos].count(b"\n") + 1
    column = pos - data.rfind(b"\n", 0, pos)
    path.write_bytes(data[:pos] + b"(" + data[pos + 1:])
    with EntryIndex.open(path, tmp_path / "index") as ix:
        for depth in range(1, 13):
            segments = ["top", *[f"k{i}" for i in range(11, 11 - depth, -1)]]
            with pytest.raises(FormatError) as err:
                ix.value_at(segments)
            assert (err.value.details["line"], err.value.details["column"]) == (line, column)
            assert err.value.message == (f"stored JSON does not parse at line {line}, "
                                         f"column {column}: Expecting value")


def test_summary_notes_the_lines_left_out_even_from_its_cache(nd: str) -> None:
    for cached in (False, True):  # computed, then read back from the summary cache
        r = cli("summarize", nd, "--json")
        assert r.code == 0, r.out
        assert r.json["data"]["cached"] is cached
        summary = r.json["data"]["summary"]
        assert f"note: {ONE_BAD}\n" in summary
        assert "values in . (3001 items):\n  id: 0 .. 2999 (3000 distinct)" in summary
    clean = ndjson(3000, {})
    ingest("clean", clean)
    assert "not JSON" not in cli("summarize", "clean", "--json").json["data"]["summary"]
