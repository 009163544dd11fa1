"""Issue 22's small traps (points 3 and 6), each through the CLI and once through MCP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from tests.helpers import cli, shell_of

PODS = {"kind": "List",
        "items": [{"metadata": {"name": f"pod-{i}"},
                   "status": {"phase": "Running" if i % 3 else "Failed", "restarts": i}}
                  for i in range(7)],
        "meta": {"a": {"b": 1}, "count": 116}}


@pytest.fixture
def store(scratch_home: Path) -> Path:
    assert cli("write", "pods", input=json.dumps(PODS, indent=2) + "\n").code == 0
    return scratch_home


def _session():  # type: ignore[no-untyped-def]
    return ServerState().session_for("conn", "default", None, "test")


# point 3: schema REF PATH outlines one sub-tree

def test_schema_path_outlines_the_stored_sub_tree(store: Path) -> None:
    r = cli("schema", "pods", "meta")
    assert r.code == 0, r.err
    assert r.text == ("meta: object{2} L68-73\n"
                      "  meta.a: object{1} L69-71\n"
                      "    meta.a.b: integer L70\n"
                      "  meta.count: integer L72\n")
    assert cli("schema", "pods", "meta", "--json").json["data"]["path"] == "meta"


def test_schema_path_inside_an_array_reads_that_value(store: Path) -> None:
    r = cli("schema", "pods", "items.1", "--depth", "1")
    assert r.code == 0, r.err
    assert r.text == ("items.1: object{2} L13-21\n"
                      "  items.1.metadata: object{1} L14-16\n"
                      "  items.1.status: object{2} L17-20\n")
    assert cli("schema", "pods", "/items/1", "--depth", "1").text == r.text


def test_schema_path_missing_says_what_exists(store: Path) -> None:
    r = cli("schema", "pods", "meta.cont", "--json")
    assert r.code == 4
    err = r.json["error"]
    assert err["code"] == "key_path_not_found"
    assert [shell_of(s) for s in err["suggestions"]] == ["scratch schema pods meta.count",
                                                        "scratch schema pods"]


def test_schema_path_is_one_value_not_a_query(store: Path) -> None:
    r = cli("schema", "pods", "$.items[*]", "--json")
    assert r.code == 2
    assert r.json["error"]["message"] == (
        "PATH must name one value (a dot path, JSON Pointer or plain JSONPath chain), not a "
        "query: '$.items[*]'")


def test_schema_path_over_mcp(store: Path) -> None:
    out = run_tool("schema", {"file": "pods", "path": "meta.a"}, _session())
    assert out.ok, out.text
    assert out.text == "meta.a: object{1} L69-71\n  meta.a.b: integer L70\n"


# point 6a: every answer ends with a newline, so the footer on stderr starts its own line

def test_an_answer_without_a_final_newline_gets_one_on_the_cli(store: Path) -> None:
    r = cli("get-in", "pods", "meta.count")
    assert r.out == b"116\n" and r.err.startswith("-- ")
    r = cli("get-in", "pods", "kind", "--limit", "1")
    assert r.out == b"List\n"


def test_content_read_byte_for_byte_keeps_its_bytes_and_stderr_breaks_the_line(
        store: Path) -> None:
    assert cli("write", "bare", input="116").code == 0
    r = cli("read", "bare")
    assert r.code == 0 and r.out == b"116"  # content, exactly as written (a pipe to a file)
    assert r.err.startswith("\n-- 1 token")  # merged with stdout: the footer on its own line


def test_over_mcp_the_scalar_ends_a_line_and_the_footer_is_its_own_block(store: Path) -> None:
    assert cli("write", "bare", input="116").code == 0
    out = run_tool("get_in", {"file": "pods", "path": "meta.count"}, _session())
    assert out.texts[0] == "116\n" and out.texts[1].startswith("-- ")
    out = run_tool("read_file", {"path": "bare"}, _session())
    assert out.texts[0] == "116"  # a file's content, exactly as written


# point 6b: a missing index says the length; a missing key says the close keys

def test_a_missing_index_says_the_length_and_a_missing_key_the_close_ones(store: Path) -> None:
    def message(path: str) -> str:
        r = cli("get-in", "pods", path, "--json")
        assert r.code == 4 and r.json["error"]["code"] == "key_path_not_found"
        return str(r.json["error"]["message"])
    assert message("items.99") == "no 99 under items: it has 7 items (0..6)"
    assert message("$.items[99]") == "no 99 under items: it has 7 items (0..6)"
    assert message("meta.cont") == "no 'cont' under meta: did you mean 'count'?"
    assert message("items.0.status.phasee") == (
        "no 'phasee' under items.0.status: did you mean 'phase'?")
    assert message("meta.zzz") == "no 'zzz' under meta: it has 2 keys: 'a', 'count'"
    assert message("kind.x") == "no 'x' under kind: it is a string"
    r = cli("get-in", "pods", "meta.cont")
    assert r.err.startswith("error [key_path_not_found]: no 'cont' under meta: did you mean "
                            "'count'?\n  scratch get-in pods meta.count\n")


def test_a_missing_index_over_mcp(store: Path) -> None:
    out = run_tool("get_in", {"file": "pods", "path": "items.99"}, _session())
    assert not out.ok
    assert json.loads(out.text)["message"] == "no 99 under items: it has 7 items (0..6)"


# point 6c: an unknown entry name suggests the close names of the agent's entries

def test_an_unknown_entry_name_suggests_the_close_ones(store: Path) -> None:
    r = cli("get-in", "podz", "items.0", "--json")
    assert r.code == 4
    err = r.json["error"]
    assert err["message"] == (f"no entry named 'podz' for agent 'default' in store {store} "
                              "(from $SCRATCH_HOME); did you mean 'pods'?")
    assert err["close_names"] == ["pods"]
    assert [shell_of(s) for s in err["suggestions"]] == ["scratch get-in pods items.0",
                                                        "scratch ls"]
    r = cli("schema", "Pods@1")  # a case-only difference; the version asked is kept
    assert r.err.splitlines()[1:] == ["  scratch schema pods@1", "  scratch ls"]
    r = cli("head", "nothing-like-it", "--json")
    assert [shell_of(s) for s in r.json["error"]["suggestions"]] == ["scratch ls"]


def test_an_unknown_entry_name_over_mcp(store: Path) -> None:
    out = run_tool("schema", {"file": "podz", "max_depth": 2}, _session())
    error = json.loads(out.text)
    assert error["message"].endswith("; did you mean 'pods'?")
    assert error["suggestions"] == [{"name": "schema", "arguments": {"file": "pods",
                                                                     "max_depth": 2}},
                                    {"name": "list_files", "arguments": {}}]


# point 6d: --limit/--offset on an array count items, and a refusal's limit is in items

def test_limit_and_offset_on_an_array_count_items(store: Path) -> None:
    r = cli("get-in", "pods", "items", "--limit", "1", "--offset", "6")
    assert r.text == ('[\n  {\n    "metadata": {\n      "name": "pod-6"\n    },\n'
                      '    "status": {\n      "phase": "Failed",\n      "restarts": 6\n'
                      '    }\n  }\n]\n')
    d = cli("get-in", "pods", "items", "--limit", "2", "--json").json["data"]
    assert (d["offset"], d["items"], d["total_items"]) == (0, 2, 7)
    assert [x["metadata"]["name"] for x in json.loads(d["text"])] == ["pod-0", "pod-1"]
    r = cli("get-in", "pods", "items", "--fields", "metadata.name", "--offset", "-2")
    assert r.text == '[\n  {"metadata.name":"pod-5"},\n  {"metadata.name":"pod-6"}\n]\n'
    r = cli("get-in", "pods", "items", "--offset", "7", "--json")
    assert r.json["error"]["message"] == "--offset 7 is past the end (7 items)"


def test_a_refused_array_suggests_a_limit_of_items(store: Path) -> None:
    cap = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "120"}
    r = cli("get-in", "pods", "items", env=cap)
    assert r.code == 3
    assert r.err.splitlines()[1:4] == [
        "  scratch get-in pods items.0", "  scratch get-in pods items --limit 2",
        "  scratch get-in pods items --fit"]


def test_limit_counts_items_over_mcp(store: Path) -> None:
    out = run_tool("get_in", {"file": "pods", "path": "items", "limit": 2, "offset": 5},
                   _session())
    assert out.ok, out.text
    assert [x["metadata"]["name"] for x in json.loads(out.texts[0])] == ["pod-5", "pod-6"]


# point 6e: count-by and row windows say what they mean

@pytest.fixture
def groups(store: Path) -> str:
    doc = {"items": [{"c": f"v{i % 9}", "n": i} for i in range(30)]}
    assert cli("write", "groups", input=json.dumps(doc, indent=2) + "\n").code == 0
    return "groups"


def test_count_by_says_top_k_of_the_distinct_values(groups: str) -> None:
    def notice(*words: str) -> str:
        r = cli("iterate-over", groups, "items", "--count-by", "c", *words)
        assert r.code == 0, r.err
        return r.err.splitlines()[0].rsplit(" (", 1)[0]
    # v0, v1 and v2 have 4 items each, the rest 3: the ties are said (issue 30 item 11)
    assert notice("--limit", "6") == ("top 6 of 9 distinct values of c over 30 items; 3 values "
                                      "tie for the most (4); the last shown ties with 3 values "
                                      "not shown (3)")
    assert notice() == ("9 distinct values of c over 30 items, all shown; 3 values tie for the "
                        "most (4)")
    assert notice("--offset", "6", "--limit", "3") == (
        "9 distinct values of c over 30 items; values ranked 7..9 by count shown")


def test_a_row_window_is_labelled_by_its_index_range(groups: str) -> None:
    r = cli("iterate-over", groups, "items", "--fields", "n", "--where", "@.n > 2",
            "--limit", "5")
    assert r.text == "_index\tn\n" + "".join(f"{i}\t{i}\n" for i in range(3, 8))
    assert r.err.splitlines()[0] == "27 of 30 items match the filter; 5 rows shown: _index 3..7"
    r = cli("iterate-over", groups, "items", "--fields", "n", "--where", "@.n > 2",
            "--sort", "n", "--desc", "--limit", "2")
    assert r.err.splitlines()[0] == ("27 of 30 items match the filter, by n descending; 2 rows "
                                     "shown (matches 1..2 in that order)")


def test_count_by_wording_over_mcp(groups: str) -> None:
    out = run_tool("iterate_over", {"file": groups, "path": "items", "count_by": "c",
                                    "limit": 6}, _session())
    assert out.ok, out.text
    assert any(t.startswith("top 6 of 9 distinct values of c over 30 items") for t in out.texts)


# point 6f: iterate-over without --fields shows each item whole, compactly

SYSLOG = "".join(f"Mar 27 13:06:{i:02d} web-1 sshd[{1290 + i % 2}]: session {i} opened\n"
                 for i in range(40))


def test_rows_without_fields_are_the_items_as_compact_json(store: Path) -> None:
    r = cli("iterate-over", "pods", "items", "--offset", "5")
    assert r.code == 0, r.err
    assert r.text == ("_index\titem\n"
                      '5\t{"metadata":{"name":"pod-5"},"status":{"phase":"Running","restarts":5}}\n'
                      '6\t{"metadata":{"name":"pod-6"},"status":{"phase":"Failed","restarts":6}}\n')
    r = cli("iterate-over", "pods", "items", "--where", "@.status.phase == 'Failed'",
            "--json")
    assert [row["_index"] for row in r.json["data"]["rows"]] == [0, 3, 6]
    assert r.json["data"]["fields"] == ["item"]


def test_a_long_item_is_cut_with_the_get_in_that_shows_it(store: Path) -> None:
    doc = [{"id": i, "text": "x" * 300} for i in range(3)]
    assert cli("write", "long", input=json.dumps(doc, indent=2) + "\n").code == 0
    r = cli("iterate-over", "long", ".", "--limit", "1")
    cell = r.text.splitlines()[1].split("\t")[1]
    assert cell.startswith('{"id":0,"text":"xxx') and cell.endswith(
        "… [318 chars: scratch get-in long 0]")


def test_rows_without_fields_of_a_log_are_its_lines(store: Path) -> None:
    assert cli("write", "auth", input=SYSLOG).code == 0
    r = cli("iterate-over", "auth", ".", "--where", "@.pid == 1291", "--limit", "2")
    assert r.code == 0, r.err
    assert r.text == ("_index\t_line\tline\n"
                      "1\t2\tMar 27 13:06:01 web-1 sshd[1291]: session 1 opened\n"
                      "3\t4\tMar 27 13:06:03 web-1 sshd[1291]: session 3 opened\n")
    long_line = "Mar 27 13:07:00 web-1 sshd[1290]: " + "y" * 300 + "\n"
    assert cli("write", "auth", input=SYSLOG + long_line).code == 0
    r = cli("iterate-over", "auth", ".", "--offset", "-1")
    assert r.text.splitlines()[1].endswith("… [334 chars: scratch slice auth 41 41]")
    assert cli("slice", "auth", "41", "41", "--no-numbers").text == long_line


def test_rows_without_fields_over_mcp(store: Path) -> None:
    assert cli("write", "auth", input=SYSLOG).code == 0
    out = run_tool("iterate_over", {"file": "auth", "path": ".", "limit": 1}, _session())
    assert out.ok, out.text
    assert out.texts[0] == ("_index\t_line\tline\n"
                            "0\t1\tMar 27 13:06:00 web-1 sshd[1290]: session 0 opened\n")


# issue 30 item 11: sizes as fields, ties said, --desc beside --sort, binary shown escaped

GROUPS = {"groups": {f"g{i}": {"name": f"group {i}", "members": [f"u{j}" for j in range(i % 4)],
                               "roles": {f"r{k}": k for k in range(i % 3)}} for i in range(9)}}


def test_the_size_of_a_map_or_array_is_a_field(scratch_home: Path) -> None:
    assert cli("write", "groups", input=json.dumps(GROUPS)).code == 0
    r = cli("iterate-over", "groups", "groups", "--fields", "_key,len(members),length(roles)",
            "--sort", "len(members)", "--desc", "--limit", "3", "--json")
    assert r.code == 0, r.out
    assert r.json["data"]["rows"] == [
        {"_index": 3, "_key": "g3", "len(members)": 3, "length(roles)": 0},
        {"_index": 7, "_key": "g7", "len(members)": 3, "length(roles)": 1},
        {"_index": 2, "_key": "g2", "len(members)": 2, "length(roles)": 2}]
    counted = cli("iterate-over", "groups", "groups", "--count-by", "len(members)", "--json")
    assert [(v["value"], v["count"]) for v in counted.json["data"]["values"]] == [
        (0, 3), (1, 2), (2, 2), (3, 2)]
    got = cli("get-in", "groups", "groups", "--fields", "len(members),name", "--limit", "2",
              "--json").json["data"]
    assert json.loads(got["text"]) == [{"_key": "g0", "len(members)": 0, "name": "group 0"},
                                       {"_key": "g1", "len(members)": 1, "name": "group 1"}]
    # a name that is no field is null, with the warning a misspelt field gets
    r = cli("iterate-over", "groups", "groups", "--fields", "len(nope)", "--limit", "1")
    assert r.text.splitlines()[1] == "0\tg0\tnull"
    assert "warning: field len(nope) is not in row 0 (keys of the rows: _key, name, members, " \
           "roles)\n" in r.err


def test_ties_at_the_top_of_a_count_by_are_said(scratch_home: Path) -> None:
    rows = [{"node": n} for n in ["a"] * 4 + ["b"] * 4 + ["c"] * 2 + ["d"] * 2 + ["e"]]
    assert cli("write", "nodes", input=json.dumps(rows)).code == 0
    r = cli("iterate-over", "nodes", ".", "--count-by", "node", "--limit", "1")
    assert r.text == "node\tcount\na\t4\n(other: 4 values)\t9\n"
    assert "top 1 of 5 distinct values of node over 13 items; 2 values tie for the most " \
           "(4), 1 of them not shown (" in r.err
    data = cli("iterate-over", "nodes", ".", "--count-by", "node", "--limit", "3",
               "--json").json["data"]
    assert (data["top_tie"], data["tie_not_shown"]) == (2, 1)
    r = cli("iterate-over", "nodes", ".", "--count-by", "node", "--limit", "3")
    assert "; 2 values tie for the most (4); the last shown ties with 1 value not shown (2) (" \
        in r.err
    r = cli("iterate-over", "nodes", ".", "--count-by", "node", "--limit", "4", "--json")
    assert "tie_not_shown" not in r.json["data"]


def test_desc_is_shown_where_sort_is(scratch_home: Path) -> None:
    assert "--sort F [--desc]" in cli("guide").text
    assert "--sort orders the rows by a field, smallest first (numbers as numbers, nulls " \
           "last); --desc, largest first." in " ".join(cli("iterate-over", "--help").text.split())
    assert cli("write", "nodes", input=json.dumps([{"n": 2}, {"n": 1}])).code == 0
    assert "2 items, by n ascending; 2 rows shown" in cli(
        "iterate-over", "nodes", ".", "--sort", "n").err


def _elf() -> bytes:
    """The first 40 KB of a real executable (this interpreter; an ELF file on Linux)."""
    import sys
    data = Path(sys.executable).resolve().read_bytes()[:40_000]
    if not data.startswith(b"\x7fELF"):
        pytest.skip("the interpreter is not an ELF file here")
    return data


def _clean(out: bytes) -> bool:
    """No NUL and no control byte but newline and tab."""
    return not any(b < 0x20 and b not in (0x09, 0x0A) or b == 0x7F for b in out)


def test_a_binary_entry_is_shown_escaped_and_its_pointer_never_dumps_it(
        scratch_home: Path) -> None:
    """Before, its pointer suggested a slice, which printed 7,365 tokens of raw ELF bytes
    with NUL on stdout."""
    elf = _elf()
    r = cli("ingest", "elf", "--store-always", input=elf)
    assert r.code == 0 and _clean(r.out)
    assert "\nbinary: ELF executable or library; first bytes: \\x7fELF\\x02" in r.text
    calls = [ln.strip() for ln in r.text.split("\nnext:\n")[1].splitlines()]
    assert calls == ["scratch grep elf '([ -~]{8,})' --count-by 1 --limit 20"]
    import shlex
    ran = cli(*shlex.split(calls[0])[1:])
    assert ran.code == 0 and _clean(ran.out) and "group 1\tcount\n" in ran.text
    for args in (("slice", "elf", "1", "3"), ("head", "elf", "-n", "2"),
                 ("tail", "elf", "-n", "2"), ("grep", "elf", "ELF", "-m", "1"),
                 ("read", "elf")):
        shown = cli(*args)
        assert shown.code == 0 and _clean(shown.out), args
    first = cli("slice", "elf", "1", "1").text
    assert first.startswith("1:\\x7fELF\\x02\\x01\\x01") and " more bytes)\n" in first
    assert len(first) < 256 * 4 + 40  # bounded: 256 bytes of the line, 4 characters each
    assert cli("read", "elf").text.startswith(f"elf@1: binary content ({len(elf):,} bytes) "
                                              "not shown as text;")
    assert cli("read", "elf", "--raw").out == elf
    assert cli("export", "elf").out == elf
    out = run_tool("head", {"file": "elf", "lines": 1}, _session())
    assert out.ok and out.text.startswith("1:\\x7fELF") and "\x00" not in out.text
