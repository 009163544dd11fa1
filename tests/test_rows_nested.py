"""Nested arrays across items: one path flattens them (``items[*].status.containerStatuses``,
``namespaces[*].shapes``), each row carrying its parent's index in ``_parent`` (and its key in
``_parent_key`` when the parents are a map of records), with every row option
(--fields/--where/--sort/--count/--count-by), item-schema and as the SQL table of --path.

The core sample is real (tests/data/workload_info.json, see tests/data/README.md); the
kubectl PodList checks use the shared corpus and skip when it is absent. Expected values are
computed from the file with the stdlib json module.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from pathlib import Path

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from tests.helpers import cli, ok_json, shell_of
from tests.workload_support import DOC, NAMESPACES

# the flattened shapes: (parent index, parent key, shape)
SHAPES = [(i, k, s) for i, (k, v) in enumerate(NAMESPACES.items()) for s in v["shapes"]]
PODS = "k8s/troubleshoot/pods_kube-system.json"




def cell(v: object) -> str:
    return json.dumps(v) if not isinstance(v, str) else v


def test_rows_carry_their_parent(wl: str) -> None:
    r = cli("iterate-over", wl, "namespaces[*].shapes", "--fields", "duplicates,restartAlways",
            "--offset", "2", "--limit", "4")
    assert r.code == 0, r.err
    assert r.text == "_index\t_parent\t_parent_key\tduplicates\trestartAlways\n" + "".join(
        f"{n}\t{i}\t{k}\t{cell(s.get('duplicates'))}\t{cell(s['restartAlways'])}\n"
        for n, (i, k, s) in enumerate(SHAPES) if 2 <= n < 6)
    # the JSONPath spelling reads the same rows
    same = ok_json("iterate-over", wl, "$.namespaces[*].shapes", "--fields", "restartAlways")
    assert same["data"]["length"] == len(SHAPES) == 44
    assert same["data"]["rows"][:2] == [
        {"_index": n, "_parent": i, "_parent_key": k, "restartAlways": s["restartAlways"]}
        for n, (i, k, s) in enumerate(SHAPES[:2])]


def test_row_options_over_flattened_rows(wl: str) -> None:
    path = "namespaces[*].shapes"
    assert ok_json("iterate-over", wl, path, "--count")["data"]["count"] == 44
    init = [n for n, (_, _, s) in enumerate(SHAPES) if "initContainers" in s]
    got = ok_json("iterate-over", wl, path, "--where", "@.initContainers", "--count")["data"]
    assert (got["count"], got["items"]) == (len(init), 44)
    counted = ok_json("iterate-over", wl, path, "--count-by", "_parent_key", "--limit", "3")["data"]
    want = Counter(k for _, k, _ in SHAPES)
    assert [b["count"] for b in counted["values"]] == [c for _, c in want.most_common(3)]
    assert counted["values"][0] == {"value": want.most_common(1)[0][0], "type": "string",
                                    "count": want.most_common(1)[0][1]}
    assert counted["distinct"] == len(want)
    rows = ok_json("iterate-over", wl, path, "--fields", "duplicates", "--sort", "duplicates",
              "--desc", "--limit", "3")["data"]["rows"]
    ranked = sorted((n for n, (_, _, s) in enumerate(SHAPES) if s.get("duplicates") is not None),
                    key=lambda n: -SHAPES[n][2]["duplicates"])[:3]
    assert [r["_index"] for r in rows] == ranked
    mine = ok_json("iterate-over", wl, path, "--where", "@._parent == 0", "--fields",
              "restartAlways")["data"]["rows"]
    assert [r["_index"] for r in mine] == [n for n, (i, _, _) in enumerate(SHAPES) if i == 0]


def test_cached_counts_keep_maps_nested_rows_and_key_names_apart(wl: str) -> None:
    def count_by(path: str, field: str, *extra: str) -> tuple[str, dict[object, int]]:
        data = ok_json("iterate-over", wl, path, "--count-by", field, *extra)["data"]
        return data["engine"], {b["value"] if b["type"] != "missing" else "(missing)":
                                b["count"] for b in data["values"]}

    want = dict(Counter(s["restartAlways"] for _, _, s in SHAPES))
    assert count_by("namespaces[*].shapes", "restartAlways") == ("python", want)
    assert count_by("namespaces[*].shapes", "restartAlways") == ("cache", want)
    # the map at the same place counts its own records, not the cached nested ones: none of
    # them has the field, which is said, naming the fields they have (issue 30, item 5)
    refused = cli("iterate-over", wl, "namespaces", "--count-by", "restartAlways", "--json")
    assert refused.code == 4 and refused.json["error"]["code"] == "key_path_not_found"
    assert "_key, count, shapes, terminalCount" in refused.json["error"]["message"]
    keys = {k: 1 for k in NAMESPACES}
    assert count_by("namespaces", "_key", "--limit", "30") == ("python", keys)
    assert count_by("namespaces", "ns", "--limit", "30", "--key-field", "ns") == (
        "python", keys)
    assert cli("iterate-over", wl, "namespaces", "--count-by", "ns", "--json").json[
        "error"]["code"] == "key_path_not_found"


def test_item_schema_of_flattened_rows(wl: str) -> None:
    data = ok_json("item-schema", wl, "namespaces[*].shapes", "--depth", "1")["data"]
    seen = Counter(k for _, _, s in SHAPES for k in s)
    order = list(dict.fromkeys(k for _, _, s in SHAPES for k in s))
    assert data["length"] == 44
    assert [(f["path"], f["presence"]) for f in data["fields"]] == [
        ("_parent", "44/44"), ("_parent_key", "44/44"), *((k, f"{seen[k]}/44") for k in order)]


def test_get_in_fields_flattens_nested_arrays(wl: str) -> None:
    got = ok_json("get-in", wl, "namespaces[*].shapes", "--fields", "restartAlways")["data"]
    assert got["fields"] == ["_parent", "_parent_key", "restartAlways"]
    assert got["value"] == [{"_parent": i, "_parent_key": k, "restartAlways": s["restartAlways"]}
                            for i, k, s in SHAPES]
    # matches that are not arrays are projected one by one, as before
    counts = ok_json("get-in", wl, "$.namespaces[*]", "--fields", "count")["data"]["value"]
    assert counts == [{"count": v["count"]} for v in NAMESPACES.values()]


def test_sql_table_of_flattened_rows(wl: str) -> None:
    data = ok_json("sql", wl, "SELECT _parent_key, count(*) AS n FROM entry GROUP BY _parent_key "
              "ORDER BY n DESC, _parent_key LIMIT 2", "--path", "namespaces[*].shapes")["data"]
    want = sorted(Counter(k for _, k, _ in SHAPES).items(), key=lambda kc: (-kc[1], kc[0]))
    assert data["rows"] == [list(kc) for kc in want[:2]]
    assert data["tables"] == {"entry": "wl: the 44 items of namespaces[*].shapes"}


def test_fit_pages_every_flattened_row_once(scratch_home: Path, wl: str) -> None:
    (scratch_home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 300\n")
    seen: list[tuple[int, int, str]] = []
    r = cli("iterate-over", wl, "namespaces[*].shapes", "--fields", "restartAlways", "--fit",
            "--json")
    pages = 0
    while True:
        assert r.code == 0, r.out
        assert r.json["meta"]["tokens"]["count"] <= 300
        seen += [(row["_index"], row["_parent"], row["_parent_key"])
                 for row in r.json["data"]["rows"]]
        pages += 1
        if "next" not in r.json["data"]:
            break
        args = shlex.split(shell_of(r.json["data"]["next"]))
        r = cli(*args[1:], "--json")
    assert pages > 1
    assert seen == [(n, i, k) for n, (i, k, _) in enumerate(SHAPES)]


def test_more_levels_and_items_that_are_not_objects(wl: str) -> None:
    # a[*].b[*].c: _parent is the row of a[*].b the item came from
    containers = [(n, c) for n, (_, _, s) in enumerate(SHAPES) for c in s["containers"]]
    data = ok_json("iterate-over", wl, "namespaces[*].shapes[*].containers", "--fields",
              "imageID", "--limit", "5")["data"]
    assert data["length"] == len(containers)
    assert data["rows"] == [{"_index": j, "_parent": n, "imageID": c["imageID"]}
                            for j, (n, c) in enumerate(containers[:5])]
    # strings in the nested arrays: rows {"_parent", "_parent_key", "value"}
    layers = [(i, k, x) for i, (k, v) in enumerate(DOC["images"].items()) for x in v["layerIDs"]]
    r = cli("iterate-over", wl, "images[*].layerIDs", "--fields", "value", "--limit", "2")
    assert r.text == "_index\t_parent\t_parent_key\tvalue\n" + "".join(
        f"{j}\t{i}\t{k}\t{x}\n" for j, (i, k, x) in enumerate(layers[:2]))


def test_parents_without_the_array_are_counted_in_a_warning(wl: str) -> None:
    have = sum(1 for _, _, s in SHAPES if "initContainers" in s)
    data = ok_json("iterate-over", wl, "namespaces[*].shapes[*].initContainers", "--count")
    assert data["data"]["count"] == sum(len(s.get("initContainers", [])) for _, _, s in SHAPES)
    assert data["meta"]["warnings"] == [
        f"{44 - have} of 44 items at namespaces[*].shapes have no array or map of records at "
        f"initContainers ({44 - have} missing): they give no rows"]


def test_bad_paths(wl: str) -> None:
    r = cli("iterate-over", wl, "$.namespaces[?@.count > 3].shapes", "--count", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_path"
    assert r.json["error"]["message"] == (
        "'$.namespaces[?@.count > 3].shapes' must name one array or map of records, or flatten "
        "nested arrays with [*] (items[*].status.containerStatuses); no filters here: use "
        "--where to filter rows")
    r = cli("iterate-over", wl, "pods[*].x", "--count", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "not_an_array"
    assert r.json["error"]["message"] == "pods is integer, not an array"
    r = cli("iterate-over", wl, "nope[*].x", "--count", "--json")
    assert r.code == 4 and r.json["error"]["code"] == "key_path_not_found"


def test_container_statuses_of_a_pod_list(corpus_dir: Path) -> None:
    doc = json.loads((corpus_dir / PODS).read_text())
    assert cli("write", "pods", input=(corpus_dir / PODS).read_bytes()).code == 0
    statuses = [(i, c) for i, p in enumerate(doc["items"])
                for c in p["status"].get("containerStatuses", [])]
    r = cli("iterate-over", "pods", "items[*].status.containerStatuses", "--fields",
            "name,restartCount,ready", "--sort", "restartCount", "--desc", "--limit", "3")
    assert r.code == 0
    top = sorted(range(len(statuses)), key=lambda j: -statuses[j][1]["restartCount"])[:3]
    assert r.text == "_index\t_parent\tname\trestartCount\tready\n" + "".join(
        f"{j}\t{statuses[j][0]}\t{statuses[j][1]['name']}\t{statuses[j][1]['restartCount']}\t"
        f"{cell(statuses[j][1]['ready'])}\n" for j in top)
    counted = ok_json("iterate-over", "pods", "items[*].status.containerStatuses", "--count-by",
                 "ready")["data"]
    assert {b["value"]: b["count"] for b in counted["values"]} == dict(
        Counter(c["ready"] for _, c in statuses))
    # _parent joins the parents' table (their row numbers, from 0)
    rows = ok_json("sql", "pods", "WITH p AS (SELECT row_number() OVER () - 1 AS i, metadata FROM "
              "pods) SELECT p.metadata.name AS pod, c.name, c.restartCount FROM entry c JOIN p "
              "ON p.i = c._parent ORDER BY c.restartCount DESC LIMIT 1",
              "--path", "items[*].status.containerStatuses", "--table", "pods=pods")
    assert rows["data"]["rows"] == [[doc["items"][statuses[top[0]][0]]["metadata"]["name"],
                                     statuses[top[0]][1]["name"],
                                     statuses[top[0]][1]["restartCount"]]]


def test_flattened_rows_over_mcp(wl: str) -> None:
    session = ServerState().session_for("conn", "default", None, "test")
    out = run_tool("iterate_over", {"file": "wl", "path": "namespaces[*].shapes",
                                    "count_by": "restartAlways"}, session)
    assert out.ok, out.text
    want = Counter(s["restartAlways"] for _, _, s in SHAPES)
    assert out.texts[0] == "restartAlways\tcount\n" + "".join(
        f"{cell(v)}\t{c}\n" for v, c in want.most_common())
    out = run_tool("item_schema", {"file": "wl", "path": "namespaces[*].shapes",
                                   "max_depth": 1}, session)
    assert out.ok
    assert out.texts[0].splitlines()[:3] == ["item types: object 44", "_parent: integer 44/44",
                                             "_parent_key: string 44/44"]
    out = run_tool("sql", {"file": "wl", "query": "SELECT count(*) AS n FROM entry",
                           "path": "namespaces[*].shapes"}, session)
    assert out.ok and out.texts[0] == "n\n44\n"
