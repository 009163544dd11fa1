"""Maps of records are rows: an object whose values are objects (an Insights workload's
``namespaces``, an OpenAPI ``definitions``) works wherever an array of objects does
(iterate-over with --fields/--where/--sort/--count/--count-by, item-schema, get-in --fields,
sql --path), each row carrying its key in ``_key`` or the name --key-field picks; the outline
and ``schema`` say "map of N records"; a path that holds no rows is ``not_an_array`` with the
calls that work there.

The core sample is real (tests/data/workload_info.json, see tests/data/README.md); the OpenAPI
checks use the shared corpus and skip when it is absent. Expected values are computed from
the file with the stdlib json module.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from tests.helpers import cli, ok_json, shell_of
from tests.workload_support import DATA, DOC, NAMESPACES

SWAGGER = "json/openapi/kubernetes-swagger-v1.27.json"




def refused(*args: str) -> dict[str, Any]:
    r = cli(*args, "--json")
    assert r.code == 2, r.out
    error: dict[str, Any] = r.json["error"]
    return error


# ------------------------------------------------------------------------------ iterate-over


def test_rows_of_a_map_carry_their_key(wl: str) -> None:
    keys = list(NAMESPACES)
    r = cli("iterate-over", wl, "namespaces", "--fields", "count", "--limit", "3")
    assert r.code == 0, r.err
    assert r.text == "_index\t_key\tcount\n" + "".join(
        f"{i}\t{k}\t{NAMESPACES[k]['count']}\n" for i, k in enumerate(keys[:3]))
    data = ok_json("iterate-over", wl, "namespaces", "--fields", "count,_key", "--offset", "-2")
    assert data["data"]["rows"] == [{"_index": i, "count": NAMESPACES[k]["count"], "_key": k}
                                    for i, k in enumerate(keys) if i >= len(keys) - 2]
    assert data["data"]["length"] == len(keys) == 23


def test_where_sort_count_and_count_by_over_a_map(wl: str) -> None:
    big = [k for k, v in NAMESPACES.items() if v["count"] > 3]
    assert ok_json("iterate-over", wl, "namespaces", "--count")["data"]["count"] == 23
    got = ok_json("iterate-over", wl, "namespaces", "--where", "@.count > 3", "--count")["data"]
    assert (got["count"], got["items"]) == (len(big), 23)
    r = cli("iterate-over", wl, "namespaces", "--fields", "count", "--sort", "count", "--desc",
            "--limit", "4")
    ranked = sorted(NAMESPACES.items(), key=lambda kv: -kv[1]["count"])[:4]
    assert r.code == 0
    assert r.text == "_index\t_key\tcount\n" + "".join(
        f"{list(NAMESPACES).index(k)}\t{k}\t{v['count']}\n" for k, v in ranked)
    assert r.err.splitlines()[0] == ("23 records, by count descending; 4 rows shown "
                                     "(matches 1..4 in that order)")
    counted = ok_json("iterate-over", wl, "namespaces", "--count-by", "count", "--limit", "50")
    want = Counter(v["count"] for v in NAMESPACES.values())
    assert {b["value"]: b["count"] for b in counted["data"]["values"]} == dict(want)
    assert counted["data"]["distinct"] == len(want)
    by_key = ok_json("iterate-over", wl, "namespaces", "--where", "@._key == 'Dp998f8zoHIJ'",
                "--fields", "count")["data"]["rows"]
    assert by_key == [{"_index": 4, "_key": "Dp998f8zoHIJ", "count": 3}]


def test_key_field_names_the_key(wl: str) -> None:
    r = cli("iterate-over", wl, "images", "--fields", "repository", "--key-field", "image")
    assert r.code == 0
    assert r.text == "_index\timage\trepository\n" + "".join(
        f"{i}\t{k}\t{v['repository']}\n" for i, (k, v) in enumerate(DOC["images"].items()))
    e = refused("iterate-over", wl, "namespaces", "--fields", "shapes", "--key-field", "count")
    assert e["code"] == "invalid_argument" and e["argument"] == "key_field"
    assert e["message"] == ("the records at namespaces already have a field 'count', the one "
                            "a row would carry its key in; pick another name with --key-field")
    assert [shell_of(s) for s in e["suggestions"]] == [
        "scratch iterate-over wl namespaces --fields shapes --key-field _count"]
    assert refused("iterate-over", wl, "namespaces", "--count", "--key-field", " x")[
        "code"] == "invalid_argument"


def test_a_record_with_a_key_field_keeps_it(scratch_home: Path) -> None:
    # the default key name steps aside for a record's own _key; a picked one is refused
    doc = {"a": {"_key": 1, "n": 2}, "b": {"n": 3}}
    assert cli("write", "m", input=json.dumps(doc)).code == 0
    r = cli("iterate-over", "m", ".", "--fields", "_key,n")
    assert r.text == "_index\t__key\t_key\tn\n0\ta\t1\t2\n1\tb\tnull\t3\n"
    assert ok_json("get-in", "m", ".", "--fields", "n")["data"]["value"] == [
        {"__key": "a", "n": 2}, {"__key": "b", "n": 3}]
    e = refused("item-schema", "m", ".", "--key-field", "n")
    assert e["code"] == "invalid_argument"
    assert [shell_of(s) for s in e["suggestions"]] == [
        "scratch item-schema m . --key-field _n"]


def test_long_cells_of_map_rows_say_where_they_are(corpus_dir: Path) -> None:
    doc = json.loads((corpus_dir / SWAGGER).read_text())
    assert cli("write", "swag", input=(corpus_dir / SWAGGER).read_bytes()).code == 0
    defs = doc["definitions"]
    k = next(i for i, v in enumerate(defs.values()) if len(v.get("description", "")) > 200)
    key = list(defs)[k]
    rows = ok_json("iterate-over", "swag", "definitions", "--fields", "description", "--offset",
              str(k), "--limit", "1")["data"]["rows"]
    assert rows[0]["_truncated"] == {"description": {
        "path": f"definitions.{json.dumps(key)}.description",
        "length": len(defs[key]["description"])}}
    whole = ok_json("get-in", "swag", rows[0]["_truncated"]["description"]["path"])
    assert whole["data"]["text"] == defs[key]["description"] + "\n"


# ------------------------------------------------------------ item-schema, get-in, sql


def test_item_schema_of_a_map(wl: str) -> None:
    data = ok_json("item-schema", wl, "namespaces", "--depth", "1")["data"]
    assert data["length"] == 23 and data["item_types"] == {"object": 23}
    seen = Counter(k for v in NAMESPACES.values() for k in v)
    assert seen["terminalCount"] == 2  # a key only some records have
    order = list(dict.fromkeys(k for v in NAMESPACES.values() for k in v))
    assert [(f["path"], f["presence"]) for f in data["fields"]] == [
        ("_key", "23/23"), *((k, f"{seen[k]}/23") for k in order)]
    r = cli("item-schema", wl, "images", "--key-field", "sha")
    assert r.text == ("item types: object 3\nsha: string 3/3\nlayerIDs: array of string 3/3\n"
                      "repository: string 3/3\n")


def test_get_in_fields_of_a_map(wl: str) -> None:
    got = ok_json("get-in", wl, "namespaces", "--fields", "count")["data"]
    assert got["fields"] == ["_key", "count"]
    assert got["value"] == [{"_key": k, "count": v["count"]} for k, v in NAMESPACES.items()]
    named = ok_json("get-in", wl, "images", "--fields", "repository", "--key-field", "sha")["data"]
    assert named["value"] == [{"sha": k, "repository": v["repository"]}
                              for k, v in DOC["images"].items()]
    # a field of the object itself: the object is projected, as before
    one = ok_json("get-in", wl, f"namespaces.{list(NAMESPACES)[0]}", "--fields", "count")["data"]
    assert one["value"] == {"count": NAMESPACES[list(NAMESPACES)[0]]["count"]}


def test_sql_over_a_map(wl: str) -> None:
    data = ok_json("sql", wl, "SELECT _key, count FROM entry ORDER BY count DESC, _key LIMIT 3",
              "--path", "namespaces")["data"]
    want = sorted(NAMESPACES.items(), key=lambda kv: (-kv[1]["count"], kv[0]))[:3]
    assert data["rows"] == [[k, v["count"]] for k, v in want]
    assert data["tables"] == {"entry": "wl: the 23 records of the map namespaces"}
    described = ok_json("sql", wl, "--describe", "--path", "images", "--key-field", "sha")["data"]
    assert [c["column"] for c in described["columns"]["entry"]] == ["sha", "layerIDs",
                                                                   "repository"]


def test_sql_without_a_path_points_at_the_maps(scratch_home: Path) -> None:
    doc = {"servers": {"a": {"up": 3}, "b": {"up": 5}}, "v": 1}
    assert cli("write", "s", input=json.dumps(doc)).code == 0
    e = refused("sql", "s", "SELECT count(*) FROM entry")
    assert e["code"] == "invalid_path"
    assert e["message"] == ("this entry holds no array of items to query; give --path: the "
                            "path to an array or a map of records; servers is a map of 2 "
                            "records")
    assert [shell_of(s) for s in e["suggestions"]] == ["scratch sql s --path servers --describe",
                                                      "scratch schema s"]
    assert ok_json("sql", "s", "SELECT _key, up FROM entry ORDER BY up", "--path", "servers")[
        "data"]["rows"] == [["a", 3], ["b", 5]]


# ---------------------------------------------------------------- schema and the pointer


def test_schema_and_pointer_name_maps_of_records(wl: str) -> None:
    text = cli("schema", wl, "--depth", "1").text
    assert text == (".: object{4} L1-1324\n  pods: integer L2\n  imageCount: integer L3\n"
                    "  images: map of 3 records L4-34\n  namespaces: map of 23 records L35-1323\n")
    data = ok_json("schema", wl, "--depth", "1")["data"]["schema"]["schema"]
    assert [(c["path"], c.get("records")) for c in data["children"]] == [
        ("pods", None), ("imageCount", None), ("images", True), ("namespaces", True)]
    r = cli("ingest", "wl2", "--store-always", input=DATA.read_bytes())
    assert r.code == 0
    outline = r.text.split("schema:\n", 1)[1]
    assert "\n    images: map of 3 records L4-34\n" in outline
    assert "\n    namespaces: map of 23 records L35-1323\n" in outline
    # each namespace is a record of a map, not a map itself (its values are not all objects)
    assert f"namespaces.{list(NAMESPACES)[0]}: object{{2}}" in outline


def test_a_pod_is_not_called_a_map_but_reads_as_one(corpus_dir: Path) -> None:
    # metadata, spec and status share no key: the outline says object{3}; asked for, its
    # three values are still rows
    pod = "k8s/openshift-insights/pod_prometheus-k8s-0.json"
    doc = json.loads((corpus_dir / pod).read_text())
    assert list(doc) == ["metadata", "spec", "status"]
    assert cli("write", "pod", input=(corpus_dir / pod).read_bytes()).code == 0
    assert cli("schema", "pod", "--depth", "1").text.splitlines()[0] == ".: object{3} L1-867"
    r = cli("iterate-over", "pod", ".", "--count")
    assert r.code == 0 and r.text == "3\n"


def test_openapi_definitions_are_rows(corpus_dir: Path) -> None:
    doc = json.loads((corpus_dir / SWAGGER).read_text())
    assert cli("write", "swag", input=(corpus_dir / SWAGGER).read_bytes()).code == 0
    lines = cli("schema", "swag", "--depth", "1").text.splitlines()
    assert "  definitions: map of 492 records L55933-69482" in lines
    assert "  paths: map of 374 records L4-55932" in lines
    counted = ok_json("iterate-over", "swag", "definitions", "--count-by", "type")["data"]
    want = Counter(v.get("type") for v in doc["definitions"].values())
    assert {b["value"] if b["type"] != "missing" else None: b["count"]
            for b in counted["values"]} == dict(want)
    assert [b["count"] for b in counted["values"]] == sorted(want.values(), reverse=True)


# ------------------------------------------------------------------------- not_an_array


def test_not_an_array_suggests_calls_that_run(wl: str) -> None:
    e = refused("iterate-over", wl, ".", "--fields", "x")
    assert e["code"] == "not_an_array"
    assert e["message"] == (". is object, not an array nor a map of records (2 of its 4 "
                            "values are not objects)")
    shells = [shell_of(s) for s in e["suggestions"]]
    assert shells == ["scratch get-in wl . --fit", "scratch get-in wl . --keys",
                      "scratch schema wl ."]
    for s in e["suggestions"]:  # each runs as it is
        args = s["args"]
        line = [s["command"], args["ref"], args["path"],
                *(["--keys"] if args.get("keys") else []), *(["--fit"] if args.get("fit") else [])]
        assert cli(*line).code == 0, line
    scalar = refused("item-schema", wl, "pods")
    assert scalar["message"] == "pods is integer, not an array"
    assert [shell_of(s) for s in scalar["suggestions"]] == ["scratch get-in wl pods"]
    assert refused("sql", wl, "SELECT 1", "--path", "imageCount")["code"] == "not_an_array"


# --------------------------------------------------------------------------------- MCP


def test_maps_over_mcp(wl: str) -> None:
    session = ServerState().session_for("conn", "default", None, "test")
    out = run_tool("iterate_over", {"file": "wl", "path": "images", "fields": "repository"},
                   session)
    assert out.ok, out.text
    assert out.texts[0] == "_index\t_key\trepository\n" + "".join(
        f"{i}\t{k}\t{v['repository']}\n" for i, (k, v) in enumerate(DOC["images"].items()))
    # the key name is the CLI's choice: over MCP the rows carry _key
    out = run_tool("iterate_over", {"file": "wl", "path": "namespaces", "count": True,
                                    "key_field": "ns"}, session)
    assert not out.ok and json.loads(out.text)["code"] == "invalid_arguments"
    out = run_tool("get_in", {"file": "wl", "path": "images", "fields": "repository"},
                   session)
    assert out.ok, out.text
    assert out.texts[0] == "[\n" + "".join(
        f'  {{"_key":"{k}","repository":"{v["repository"]}"}}'
        f'{"," if i < len(DOC["images"]) - 1 else ""}\n'
        for i, (k, v) in enumerate(DOC["images"].items())) + "]\n"
    out = run_tool("item_schema", {"file": "wl", "path": "namespaces", "max_depth": 1},
                   session)
    assert out.ok and out.texts[0].splitlines()[:2] == ["item types: object 23",
                                                       "_key: string 23/23"]
    out = run_tool("item_schema", {"file": "wl", "path": "pods"}, session)
    assert not out.ok
    e = json.loads(out.text)
    assert e["code"] == "not_an_array" and "--" not in out.text
    assert e["suggestions"] == [{"name": "get_in", "arguments": {"file": "wl", "path": "pods"}}]
    out = run_tool("sql", {"file": "wl", "query": "SELECT count(*) FROM entry",
                           "path": "namespaces"}, session)
    assert out.ok
    assert out.texts[0] == "count_star()\n23\n"


def test_rows_of_a_map_without_fields_are_the_records_as_stored(wl: str) -> None:
    r = cli("iterate-over", "wl", "namespaces", "--offset", "2", "--limit", "1")
    key = list(NAMESPACES)[2]
    assert r.text == ("_index\t_key\titem\n"
                      f"2\t{key}\t{json.dumps(NAMESPACES[key], separators=(',', ':'))}\n")


def test_schema_shows_one_record_for_a_map_of_them(wl: str) -> None:
    r = cli("schema", "wl", "namespaces", "--depth", "1")
    first = list(NAMESPACES)[0]
    assert r.text.splitlines()[1:] == [
        f"  namespaces.{first}: object{{{len(NAMESPACES[first])}}} L36-131",
        f"  … {len(NAMESPACES) - 1} more records alike (item-schema namespaces lists their "
        "keys)"]


def test_the_pointer_offers_the_rows_of_a_map_with_more_records_than_any_array(
        wl: str) -> None:
    r = cli("ingest", "wl3", "--store-always", "--json", input=DATA.read_bytes())
    nxt = r.json["data"]["next"][:2]
    first = next(iter(NAMESPACES.values()))
    scalar = [k for k, v in first.items() if not isinstance(v, (dict, list))][:2]
    assert nxt == ["scratch item-schema wl3 namespaces --depth 1",
                   f"scratch iterate-over wl3 namespaces --fields _key,{','.join(scalar)} "
                   "--limit 20"]
    listed = cli("iterate-over", "wl3", "namespaces", "--fields", ",".join(["_key", *scalar]),
                 "--limit", "20")
    assert listed.code == 0
    assert [line.split("\t")[1] for line in listed.text.splitlines()[1:]] == list(NAMESPACES)[:20]
