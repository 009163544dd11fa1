"""The same stored bytes under other formats get their own index and summary.

A version's index and summary are cached per content; they used to be keyed by the blob id
alone, so whichever format ingested the bytes first answered for every later entry holding the
same bytes (a JSON entry answering as text or CSV, or the reverse). The document here is
written exactly as scratch stores JSON, so ``--format text``/``csv`` and plain JSON ingests
store identical bytes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.helpers import cli, shell_of

DOC = {"kind": "NodeList", "items": [
    {"metadata": {"name": f"node-{i}", "zone": "abc"[i % 3]},
     "status": {"ready": i % 4 != 0, "cpu": i % 5 + 1}} for i in range(40)]}
TEXT = json.dumps(DOC, indent=2) + "\n"  # what scratch stores for DOC: stored as is either way
HEAD = "6,242 bytes, 405 lines, 1,897 tokens (o200k_base)"

JSON_SCHEMA = """\
.: object{2} L1-405
  kind: string(8) L2
  items: array[40] L3-404
    items.*: object 40
      items.*.metadata: object 40/40 max 2
      items.*.metadata.name: string 40/40 max 7
      items.*.metadata.zone: string 40/40 max 1
      items.*.status: object 40/40 max 2
      items.*.status.ready: boolean 40/40
      items.*.status.cpu: integer 40/40
"""
ITEM_SCHEMA = """\
item types: object 40
metadata: object 40/40
metadata.name: string 40/40
metadata.zone: string 40/40
status: object 40/40
status.ready: boolean 40/40
status.cpu: integer 40/40
"""
CSV_SCHEMA_HEAD = ["csv: 405 lines", "csv: 404 rows, 1 column, delimiter ',', header on line 1"]
NOT_STRUCTURED = {"code": "format_error", "message": "text content has no structure to address",
                  "format": "text"}


def json_summary(name: str) -> str:
    return (f"{name}: json, {HEAD}\n"
            "outline:\n"
            "  .: object{2} L1-405\n"
            "    kind: string(8) L2\n"
            "    items: array[40] L3-404\n"
            "      items.*: object 40\n"
            "        items.*.metadata: object 40/40 max 2\n"
            "        items.*.status: object 40/40 max 2\n"
            "values in items (40 items):\n"
            "  metadata.zone: a 14, b 13, c 13\n"
            "  status.ready: true 30, false 10\n"
            "  status.cpu: 1 8, 2 8, 3 8, 4 8, 5 8\n")


def ingest(*args: str) -> dict[str, Any]:
    r = cli("ingest", "--store-always", "--json", *args, input=TEXT)
    assert r.code == 0, r.out
    return r.json["data"]  # type: ignore[no-any-return]


def index_root(home: Path) -> Path:
    return home / "cache" / "index"


def blob_of(home: Path, name: str) -> str:
    meta = orjson.loads((home / "agents/default/meta" / f"{name}.json").read_bytes())
    return str(meta["versions"][-1]["blob"])


def check_json(name: str) -> None:
    r = cli("get-in", name, "items.7.metadata.name")
    assert (r.code, r.text) == (0, "node-7\n")
    r = cli("get-in", name, "items.3.status")
    assert (r.code, r.text) == (0, '{\n  "ready": true,\n  "cpu": 4\n}\n')
    r = cli("schema", name)
    assert (r.code, r.text) == (0, JSON_SCHEMA)
    r = cli("item-schema", name, "items")
    assert (r.code, r.text) == (0, ITEM_SCHEMA)
    r = cli("iterate-over", name, "items", "--fields", "metadata.name,status.cpu", "--limit", "2")
    assert (r.code, r.text) == (0, "_index\tmetadata.name\tstatus.cpu\n"
                                   "0\tnode-0\t1\n1\tnode-1\t2\n")


def check_text(name: str) -> None:
    for args in (("get-in", name, "items.7.metadata.name"), ("item-schema", name, "items"),
                 ("iterate-over", name, "items", "--fields", "metadata.name")):
        r = cli(*args, "--json")
        assert r.code == 1, args
        assert r.json["error"] == NOT_STRUCTURED, args
    r = cli("schema", name)
    assert r.code == 0 and r.text.startswith("text: 405 lines\n")
    assert "items" not in r.text.split("first_lines")[0]


def check_csv(name: str) -> None:
    r = cli("schema", name)
    assert r.code == 0 and r.text.splitlines()[:2] == CSV_SCHEMA_HEAD
    # no JSON path into a table (how CSV paths read is not this test's business)
    r = cli("get-in", name, "items.7.metadata.name", "--json")
    assert r.code in (1, 4) and r.json["ok"] is False


CHECKS = {"text": check_text, "csv": check_csv, "json": check_json}


@pytest.mark.parametrize("other", ["text", "csv"])
@pytest.mark.parametrize("json_first", [False, True], ids=["other-first", "json-first"])
def test_same_bytes_as_json_and_as_another_format(scratch_home: Path, other: str,
                                                  json_first: bool) -> None:
    """The QA repro: two tools, automatic names, the same bytes, two formats."""
    steps = [("b", ()), ("a", ("--format", other))]
    if not json_first:
        steps.reverse()
    made = {}
    for tool, extra in steps:
        p = ingest("--tool", tool, *extra)
        made["json" if tool == "b" else other] = p
    j, o = made["json"], made[other]
    assert (j["format"], o["format"]) == ("json", other)
    assert j["name"].startswith("b/") and o["name"].startswith("a/")
    home = scratch_home
    assert (home / "agents/default/files" / j["name"]).read_text() == TEXT
    assert (home / "agents/default/files" / o["name"]).read_text() == TEXT
    assert blob_of(home, j["name"]) == blob_of(home, o["name"])
    # the pointers describe their own format, whichever came first
    assert (j["array"]["path"], j["array"]["length"], j["array"]["lines"]) == ("items", 40,
                                                                               [3, 404])
    assert shell_of(j["next"][0]) == f"scratch schema {j['name']}"
    assert "schema" not in o and "array" not in o and o["text"]
    check_json(j["name"])
    CHECKS[other](o["name"])
    blob = blob_of(home, j["name"])
    assert sorted(p.name for p in index_root(home).iterdir()) == sorted([f"{blob}.json",
                                                                         f"{blob}.{other}"])


@pytest.mark.parametrize("other", ["text", "csv"])
def test_summaries_follow_the_format_and_name(scratch_home: Path, other: str) -> None:
    ingest("o", "--format", other)
    ingest("j")
    ingest("j2")  # same bytes, same format, another name
    first = cli("summarize", "o", "--json").json["data"]
    expected_other = {"text": f"o: text, {HEAD}\n",
                      "csv": f"o: csv, {HEAD}\nvalues in 404 rows:\n"}[other]
    # JSON text read as CSV: its "columns" are lines of JSON, counted like any values
    assert first["summary"].startswith(expected_other) and first["cached"] is False
    assert other == "csv" or first["summary"] == expected_other
    for name in ("j", "j2"):
        r = cli("summarize", name, "--json")
        assert r.code == 0
        assert (r.json["data"]["summary"], r.json["data"]["cached"]) == (json_summary(name),
                                                                          False)
    again = cli("summarize", "j")
    assert (again.code, again.text) == (0, json_summary("j"))
    assert cli("summarize", "o", "--json").json["data"]["cached"] is True
    assert cli("summarize", "j", "--json").json["data"]["cached"] is True


def test_the_same_tool_reading_the_bytes_as_another_format_makes_another_entry(
        scratch_home: Path) -> None:
    text = ingest("--tool", "k", "--format", "text")
    again = ingest("--tool", "k", "--format", "text")
    assert again["name"] == text["name"] and again["already_stored"] is True
    as_json = ingest("--tool", "k")
    assert as_json["name"] != text["name"] and "already_stored" not in as_json
    assert as_json["format"] == "json"
    check_json(as_json["name"])
    check_text(text["name"])


def test_a_named_entry_keeps_its_format_for_identical_bytes_and_says_so(
        scratch_home: Path) -> None:
    ingest("x", "--format", "text")
    r = cli("ingest", "x", "--store-always", "--json", input=TEXT)
    assert r.code == 0
    d = r.json["data"]
    assert (d["name"], d["version"], d["format"], d["already_stored"]) == ("x", 1, "text", True)
    assert d["warnings"] == ["x already holds these bytes as text; identical content makes no "
                             "new version, so they are not read as json (ingest them under "
                             "another name for that)"]
    check_text("x")
    r = cli("ingest", "x", "--store-always", "--format", "text", "--json", input=TEXT)
    assert r.json["data"]["format"] == "text" and "warnings" not in r.json["data"]


def _old_layout(home: Path, blob: str, fmt: str) -> Path:
    """Move ``<blob>.<fmt>`` to ``<blob>`` and drop what older builds did not record."""
    root = index_root(home)
    old = root / blob
    (root / f"{blob}.{fmt}").rename(old)
    meta = orjson.loads((old / "meta.json").read_bytes())
    del meta["requested_format"]
    (old / "meta.json").write_bytes(orjson.dumps(meta))
    return old


def test_an_old_layout_index_of_the_right_format_is_used_in_place(scratch_home: Path) -> None:
    ingest("j")
    blob = blob_of(scratch_home, "j")
    old = _old_layout(scratch_home, blob, "json")
    check_json("j")
    assert sorted(p.name for p in index_root(scratch_home).iterdir()) == [blob]
    assert json.loads((old / "meta.json").read_text())["format"] == "json"


def test_an_old_layout_index_of_another_format_is_left_and_not_used(scratch_home: Path) -> None:
    ingest("t", "--format", "text")
    blob = blob_of(scratch_home, "t")
    old = _old_layout(scratch_home, blob, "text")  # as an older scratch left it
    ingest("j")  # the bug: this used to answer from the text index
    check_json("j")
    check_text("t")
    assert sorted(p.name for p in index_root(scratch_home).iterdir()) == [blob, f"{blob}.json"]
    assert json.loads((old / "meta.json").read_text())["format"] == "text"


def test_a_corrupt_old_layout_index_is_rebuilt(scratch_home: Path) -> None:
    ingest("j")
    blob = blob_of(scratch_home, "j")
    old = _old_layout(scratch_home, blob, "json")
    (old / "meta.json").write_text("{not json")
    check_json("j")
    assert (index_root(scratch_home) / f"{blob}.json" / "meta.json").is_file()


def test_an_index_recording_another_format_is_rebuilt(scratch_home: Path) -> None:
    """Defence in depth: whatever put it there, a text index under the JSON key is not used."""
    ingest("t", "--format", "text")
    ingest("j")
    blob = blob_of(scratch_home, "j")
    root = index_root(scratch_home)
    shutil.rmtree(root / f"{blob}.json")
    shutil.copytree(root / f"{blob}.text", root / f"{blob}.json")
    check_json("j")
    meta = json.loads((root / f"{blob}.json" / "meta.json").read_text())
    assert (meta["format"], meta["requested_format"]) == ("json", "json")
    check_text("t")


def test_open_refuses_an_index_of_another_format(tmp_path: Path) -> None:
    from scratch.index import EntryIndex, IndexInvalid, build_index

    content = tmp_path / "content"
    content.write_text(TEXT)
    build_index(content, tmp_path / "ix", "text").close()
    with pytest.raises(IndexInvalid) as info:
        EntryIndex.open(content, tmp_path / "ix", "json")
    assert info.value.details["reason"] == "format_mismatch"
    EntryIndex.open(content, tmp_path / "ix", "text").close()
    EntryIndex.open(content, tmp_path / "ix").close()  # no format asked: any will do
    # a build that fell back to text (the content is not JSON) counts as built for JSON
    content.write_text("{not json\n")
    ix = build_index(content, tmp_path / "bad", "json")
    assert (ix.format, ix.meta["requested_format"]) == ("text", "json")
    ix.close()
    EntryIndex.open(content, tmp_path / "bad", "json").close()
