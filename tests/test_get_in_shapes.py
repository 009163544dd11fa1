"""get-in beyond values: negative indexes everywhere an index is taken, --keys (what an object
or array holds), --fields (items projected) and --count (nodes a JSONPath selects); checked
against the document in plain Python."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scratch.tokens import count_text
from tests.helpers import cli, spec

DOC = {"kind": "List",
       "items": [{"metadata": {"name": f"pod-{i}", "labels": {"app": "web" if i % 2 else "db"}},
                  "status": {"phase": ["Running", "Failed", "Pending"][i % 3]},
                  "spec": {"containers": [{"name": f"c{j}"} for j in range(i % 3 + 1)]}}
                 for i in range(12)],
       "note": "x" * 50, "count": 12, "ok": True, "nothing": None}


def ingest(name: str, data: bytes, *extra: str) -> None:
    r = cli("ingest", name, "--store-always", "--json", *extra, input=data)
    assert r.code == 0, r.out


@pytest.fixture
def doc(scratch_home: Path) -> str:
    ingest("doc", json.dumps(DOC).encode())
    return "doc"


def value(*args: str) -> object:
    r = cli("get-in", *args, "--json")
    assert r.code == 0, r.out
    d = r.json["data"]
    return d["value"] if "value" in d else d["text"].removesuffix("\n")


def test_negative_indexes_in_every_path_syntax(doc: str) -> None:
    last = DOC["items"][-1]
    assert value(doc, "items.-1") == last
    assert value(doc, "items.-1.metadata.name") == last["metadata"]["name"]
    assert value(doc, "items[-2].metadata.name") == DOC["items"][-2]["metadata"]["name"]
    assert value(doc, "$.items[-1].metadata.name") == last["metadata"]["name"]
    assert value(doc, "/items/11/metadata/name") == last["metadata"]["name"]
    r = cli("get-in", doc, "items.-13", "--json")
    assert r.code == 4 and r.json["error"]["code"] == "key_path_not_found"


def test_a_bare_negative_index_is_a_path_not_an_option(scratch_home: Path) -> None:
    lines = [{"i": i} for i in range(5)]
    ingest("nd", "".join(json.dumps(x) + "\n" for x in lines).encode())
    ingest("t.csv", b"a,b\n1,x\n2,y\n3,z\n")
    ingest("docs.yaml", yaml.safe_dump_all([{"kind": "A"}, {"kind": "B"}]).encode())
    assert value("nd", "-1") == {"i": 4}
    assert value("nd", "-2", "--fit") == {"i": 3}
    assert value("t.csv", "-1") == {"a": 3, "b": "z"}
    assert value("t.csv", "-3.b") == "x"
    assert value("docs.yaml", "-1") == {"kind": "B"}
    r = cli("get-in", "nd", "--no-such-flag")
    assert r.code == 2 and "No such option: --no-such-flag" in r.err


def test_negative_offset_pages_from_the_end(doc: str) -> None:
    whole = cli("get-in", doc, "items.0").text.splitlines(keepends=True)
    r = cli("get-in", doc, "items.0", "--offset", "-3", "--json")
    assert r.json["data"]["text"] == "".join(whole[-3:])
    assert r.json["data"]["offset"] == len(whole) - 3


def test_keys_of_an_object_with_type_and_size(doc: str) -> None:
    r = cli("get-in", doc, ".", "--keys", "--json")
    assert r.code == 0
    keys = r.json["data"]["keys"]
    assert [k["key"] for k in keys] == list(DOC)
    by = {k["key"]: k for k in keys}
    assert (by["items"]["type"], by["items"]["length"]) == ("array", 12)
    assert (by["note"]["type"], by["note"]["length"]) == ("string", 50)
    assert (by["count"]["type"], by["count"]["length"]) == ("integer", None)
    assert by["nothing"]["type"] == "null" and by["ok"]["type"] == "boolean"
    # tokens: what get-in of that key costs, about
    items_cost = count_text(cli("get-in", doc, "items").text, spec())
    assert abs(by["items"]["tokens"] - items_cost) <= items_cost * 0.2
    human = cli("get-in", doc, ".", "--keys")
    assert human.text.splitlines()[0] == "key\ttype\tlength\ttokens"
    assert human.text.splitlines()[1].startswith("kind\tstring\t4\t")
    assert "object at the root: 6 keys" in human.err


def test_keys_of_an_array_and_of_an_item_of_yaml(scratch_home: Path, doc: str) -> None:
    r = cli("get-in", doc, "items", "--keys")
    assert r.code == 0 and r.text == "array of 12 items: object 12\n"
    assert "scratch item-schema doc items" in r.err
    mixed = [1, "a", None, {"x": 1}, [2], 2.5, True]
    ingest("m.yaml", yaml.safe_dump({"list": mixed, "obj": {"a": [1, 2], "b": "text"}}).encode())
    assert cli("get-in", "m.yaml", "list", "--keys").text == (
        "array of 7 items: integer 1, string 1, null 1, object 1, array 1, number 1, "
        "boolean 1\n")
    r = cli("get-in", "m.yaml", "obj", "--keys", "--json")
    assert [(k["key"], k["type"], k["length"]) for k in r.json["data"]["keys"]] == [
        ("a", "array", 2), ("b", "string", 4)]
    r = cli("get-in", "m.yaml", "obj.b", "--keys", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "not_a_container"


def test_keys_page_with_limit_and_fit(scratch_home: Path) -> None:
    wide = {f"key{i:03d}": {"v": list(range(i % 5))} for i in range(300)}
    ingest("wide", json.dumps(wide).encode())
    r = cli("get-in", "wide", ".", "--keys", "--offset", "10", "--limit", "3", "--json")
    assert [k["key"] for k in r.json["data"]["keys"]] == ["key010", "key011", "key012"]
    env = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "400"}
    r = cli("get-in", "wide", ".", "--keys", "--fit", "--json", env=env)
    seen: list[str] = []
    while True:
        assert r.code == 0, r.out
        seen += [k["key"] for k in r.json["data"]["keys"]]
        nxt = r.json["data"].get("next")
        if nxt is None:
            break
        r = cli(*__import__("shlex").split(nxt["shell"])[1:], "--json", env=env)
    assert seen == list(wide)


def test_fields_project_each_item(doc: str) -> None:
    want = [{"metadata.name": x["metadata"]["name"], "status.phase": x["status"]["phase"],
             "nope": None} for x in DOC["items"]]
    assert value(doc, "items", "--fields", "metadata.name,status.phase,nope") == want
    failed = [{"metadata.name": x["metadata"]["name"]} for x in DOC["items"]
              if x["status"]["phase"] == "Failed"]
    assert value(doc, "$.items[?@.status.phase == 'Failed']", "--fields",
                 "metadata.name") == failed
    human = cli("get-in", doc, "items", "--fields", "metadata.name", "--limit", "3")
    assert human.text == ('[\n  {"metadata.name":"pod-0"},\n  {"metadata.name":"pod-1"},\n'
                          '  {"metadata.name":"pod-2"}\n]\n')  # --limit counts items
    assert value(doc, "items.3", "--fields", "metadata.labels.app") == {
        "metadata.labels.app": "web"}


def test_count_of_a_jsonpath_query(doc: str) -> None:
    containers = sum(len(x["spec"]["containers"]) for x in DOC["items"])
    r = cli("get-in", doc, "$.items[*].spec.containers[*]", "--count", "--json")
    assert r.code == 0 and r.json["data"]["count"] == containers
    r = cli("get-in", doc, "$.items[?@.metadata.labels.app == 'db']", "--count")
    assert r.text == f"{sum(1 for x in DOC['items'] if x['metadata']['labels']['app'] == 'db')}\n"
    assert cli("get-in", doc, "items.0", "--count").text == "1\n"
    r = cli("get-in", doc, "items.0.nope", "--count", "--json")
    assert r.code == 4 and r.json["error"]["code"] == "key_path_not_found"
    r = cli("get-in", doc, "items", "--count", "--keys", "--json")
    assert r.code == 2 and "three answers" in r.json["error"]["message"]
