"""Paths: parsing, canonical formatting (quoting round trip), resolution and its diagnostics."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from scratch.errors import ExitCode, InvalidPattern, KeyPathNotFound
from scratch.jsonvalues import json_type
from scratch.pathnames import WILDCARD, format_jsonpath, format_path, format_pointer
from scratch.query.paths import evaluate, locate, parse_path, resolve
from tests.conftest import CORPUS  # ../shared/corpus, or $SCRATCH_CORPUS


def _load(rel: str) -> Any:
    path = CORPUS / rel
    if not path.is_file():
        pytest.skip(f"corpus file {rel} not available")
    return json.loads(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    ("text", "kind", "segments"),
    [
        ("", "dot", ()),
        (".", "dot", ()),
        ("$", "dot", ()),
        ("items.0.metadata.name", "dot", ("items", 0, "metadata", "name")),
        (".items.0", "dot", ("items", 0)),
        ('metadata.annotations."kubectl.kubernetes.io/last-applied-configuration"', "dot",
         ("metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")),
        ('data."0"', "dot", ("data", "0")),
        ("data.0", "dot", ("data", 0)),
        ("items.-1", "dot", ("items", -1)),
        ("items[0].name", "dot", ("items", 0, "name")),
        ("items[-2]", "dot", ("items", -2)),
        ("a[\"b.c\"]['d']", "dot", ("a", "b.c", "d")),
        ("a.'it\\'s'", "dot", ("a", "it's")),
        ('a."tab\\there"', "dot", ("a", "tab\there")),
        ("a.007", "dot", ("a", "007")),  # leading zeros: a key, not an index
        ("a.-0", "dot", ("a", "-0")),
        ("labels.app/name", "dot", ("labels", "app/name")),
        ("ключ.値", "dot", ("ключ", "値")),
        ("/items/0/metadata/name", "pointer", ("items", 0, "metadata", "name")),
        ("/a~1b/c~0d/~01", "pointer", ("a/b", "c~d", "~1")),
        ("/", "pointer", ("",)),
        ("/a//b", "pointer", ("a", "", "b")),
        ("/items/01", "pointer", ("items", "01")),
        ("/items/-", "pointer", ("items", "-")),
        ("$.items[0].metadata.name", "jsonpath", ("items", 0, "metadata", "name")),
        ("$['a.b'][\"c\"][-1]", "jsonpath", ("a.b", "c", -1)),
        ("$.items.0.name", "dot", ("items", 0, "name")),  # not JSONPath: read as a dot path
        ("$ref.x", "dot", ("$ref", "x")),
    ],
)
def test_parse_path(text: str, kind: str, segments: tuple[Any, ...]) -> None:
    parsed = parse_path(text)
    assert parsed.kind == kind
    assert parsed.segments == segments
    assert parsed.singular


def test_parse_queries_that_select_many() -> None:
    p = parse_path("$.items[?@.status.phase=='Failed'].metadata.name")
    assert (p.kind, p.segments, p.singular) == ("jsonpath", None, False)
    w = parse_path("items.*.metadata.name")
    assert w.segments == ("items", WILDCARD, "metadata", "name")
    assert w.jsonpath == "$.items[*].metadata.name"
    assert not w.singular
    assert parse_path("items[*].a").segments == ("items", WILDCARD, "a")


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("a..b", 2),
        ("a.", 1),
        ("a[", 1),
        ("a[x]", 2),
        ('a"b', 1),
        ('a."x', 2),
        ("a]", 1),
        ("a[0]b", 4),
        ('a."bad\\q"', 2),
        ("/a/~2", 3),
        ("/~", 1),
        ("$.items[?@.x==]", 14),
        ("$.items[?@.status.phase=='Failed'", 33),
        ("$[?foo(@)]", 3),
    ],
)
def test_invalid_paths_report_position(text: str, position: int) -> None:
    with pytest.raises(InvalidPattern) as info:
        parse_path(text)
    err = info.value
    assert err.code == "invalid_path"
    assert err.exit_code == ExitCode.USAGE
    assert err.details["position"] == position
    assert err.details["path"] == text
    assert f"position {position}" in err.message


def test_strict_jsonpath_syntax_refuses_dot_path_leniency() -> None:
    with pytest.raises(InvalidPattern) as info:
        parse_path("$.items.0", syntax="jsonpath")
    assert info.value.details["position"] == 8
    assert parse_path("/a", syntax="dot").segments == ("/a",)
    with pytest.raises(InvalidPattern) as info:
        parse_path("a.b", syntax="pointer")
    assert info.value.details["position"] == 0


# --------------------------------------------------------------------------------- formatting

ODD_KEYS = [
    "", " ", "a b", "a.b", "kubectl.kubernetes.io/last-applied-configuration", "0", "-1", "007",
    "-0", "1e3", "*", "$ref", "/etc", "~", "a[0]", "]", '"', "'", "\\", "tab\t", "nl\n",
    "\x00", "ключ", "値", "emoji 😀", "\u200b", "-", "true", "null", "a/b", "#",
]


@pytest.mark.parametrize("key", ODD_KEYS)
def test_odd_keys_round_trip(key: str) -> None:
    for segs in ([key], ["x", key], ["x", 0, key, -1, "y"]):
        text = format_path(segs)
        assert parse_path(text).segments == tuple(segs), text
        assert format_path(parse_path(text).segments or ()) == text


@pytest.mark.parametrize("key", ODD_KEYS)
def test_pointer_escapes_round_trip(key: str) -> None:
    doc = {"x": {key: ["leaf"]}}
    pointer = format_pointer(["x", key, 0])
    match = evaluate(doc, pointer)[0]
    assert (match.value, match.location) == ("leaf", ("x", key, 0))
    assert evaluate(doc, match.path)[0].value == "leaf"  # and the dot path of the location


def test_format_path_choices() -> None:
    assert format_path([]) == "."
    assert format_path(["items", 0, "metadata", "name"]) == "items.0.metadata.name"
    assert format_path(["data", "0"]) == 'data."0"'
    assert format_path(["a.b", ""]) == '"a.b".""'
    assert format_path(["$ref"]) == '"$ref"'
    assert format_path(["defs", "$ref"]) == "defs.$ref"  # only a first segment is ambiguous
    assert format_path(["a", WILDCARD, "b"]) == "a[*].b"
    assert format_path(["ключ", "emoji 😀"]) == 'ключ."emoji 😀"'
    assert format_jsonpath(["items", 0, "a.b", WILDCARD, "it's", "ok_1"]) == (
        "$.items[0]['a.b'][*]['it\\'s'].ok_1"
    )


def test_random_keys_round_trip() -> None:
    rng = random.Random(20240601)
    alphabet = "ab.[]\"'\\ -0123456789*$/~\t\u00e9😀"
    for _ in range(2000):
        segs: list[str | int] = []
        for _ in range(rng.randint(1, 5)):
            if rng.random() < 0.2:
                segs.append(rng.randint(-3, 30))
            else:
                segs.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))))
        text = format_path(segs)
        assert parse_path(text).segments == tuple(segs), (segs, text)


def test_fixed_point_of_lenient_inputs() -> None:
    for text in ["a.007", "$.items.0", ".a[0]['b']", "a.'x y'", "items[*].n", "/a~1b/0"]:
        once = format_path(parse_path(text).segments or ())
        assert format_path(parse_path(once).segments or ()) == once


def test_json_type() -> None:
    assert [json_type(v) for v in [{}, [], "", 1, 1.0, True, None]] == [
        "object", "array", "string", "integer", "number", "boolean", "null"]


# --------------------------------------------------------------------------------- resolution

DOC = {
    "data": {"0": "key zero", "a.b": {"": "empty key"}},
    "arr": [10, 20, 30],
    "s": "text",
    "j": '{"embedded": true}',
    "": {"x": 1},
}


def test_resolve_basics() -> None:
    assert resolve(DOC, parse_path("data.0").segments) == "key zero"  # index-like on an object
    assert resolve(DOC, parse_path('data."0"').segments) == "key zero"
    assert resolve(DOC, parse_path('data."a.b".""').segments) == "empty key"
    assert resolve(DOC, parse_path("arr.-1").segments) == 30
    assert resolve(DOC, parse_path("arr[1]").segments) == 20
    assert resolve(DOC, parse_path("/").segments) == {"x": 1}
    assert resolve(DOC, parse_path("").segments) is DOC
    m = locate(DOC, parse_path("arr.-1").segments)
    assert m.location == ("arr", 2) and m.path == "arr.2"
    assert locate(DOC, parse_path("data.0").segments).path == 'data."0"'


def _err(doc: Any, text: str) -> KeyPathNotFound:
    with pytest.raises(KeyPathNotFound) as info:
        evaluate(doc, text)
    assert info.value.code == "key_path_not_found"
    assert info.value.exit_code == ExitCode.NOT_FOUND
    json.dumps(info.value.to_dict())  # serialisable
    return info.value


def test_missing_key_details() -> None:
    e = _err(DOC, "data.a_b")
    assert e.details["valid_prefix"] == "data"
    assert e.details["failed_segment"] == "a_b"
    assert e.details["available_keys"] == ["0", "a.b"]
    assert e.details["key_count"] == 2
    assert e.details["suggestions"] == ['data."a.b"']


def test_quoted_index_on_array_and_scalars() -> None:
    e = _err(DOC, 'arr."1"')
    assert e.details["array_length"] == 3
    assert e.details["suggestions"] == ["arr.1"]
    e = _err(DOC, "arr.7")
    assert (e.details["array_length"], e.details["failed_segment"]) == (3, 7)
    assert e.details["suggestions"] == ["arr.2"]
    e = _err(DOC, "arr.-4")
    assert e.details["valid_prefix"] == "arr"
    e = _err(DOC, "s.x")
    assert e.details["value_type"] == "string"
    assert e.details["suggestions"] == ["s"]
    assert "hint" not in e.details
    e = _err(DOC, "j.embedded")
    assert e.details["hint"] == "the value is a string that holds JSON text"
    e = _err({"a": [1]}, "a.0.b")
    assert (e.details["value_type"], e.details["valid_prefix"]) == ("integer", "a.0")


def test_available_keys_are_capped_in_document_order() -> None:
    big = {f"k{i:03d}": i for i in range(120)}
    e = _err(big, "nope")
    assert e.details["available_keys"] == [f"k{i:03d}" for i in range(50)]
    assert e.details["key_count"] == 120
    assert e.details["valid_prefix"] == "."


def test_jsonpath_plain_chain_explains_missing_or_keeps_rfc_semantics() -> None:
    e = _err(DOC, "$.data.zero")
    assert e.details["valid_prefix"] == "data"
    assert evaluate(DOC, "$.data.zero", explain_missing=False) == []
    e = _err(DOC, "$.data[0]")  # JSONPath: an index never selects an object member
    assert e.details["suggestions"] == ['data."0"']
    assert evaluate(DOC, "$.arr[?@ > 100]") == []  # a filter selecting nothing is not an error


# ------------------------------------------------------------------------- real corpus files


@pytest.mark.corpus
def test_k8s_pods_paths() -> None:
    doc = _load("k8s/honeycomb/pods.json")
    items = doc["items"]
    assert resolve(doc, parse_path("items.0.metadata.name").segments) == items[0]["metadata"]["name"]
    assert evaluate(doc, "/items/3/spec/nodeName")[0].value == items[3]["spec"]["nodeName"]
    assert evaluate(doc, "items.-1.metadata.uid")[0].location == (
        "items", len(items) - 1, "metadata", "uid")
    # A key with dots, reachable through quoting, as printed by format_path.
    idx = next(i for i, it in enumerate(items)
               if "kubectl.kubernetes.io/restartedAt" in it["metadata"].get("annotations", {}))
    path = format_path(["items", idx, "metadata", "annotations", "kubectl.kubernetes.io/restartedAt"])
    assert path == f'items.{idx}.metadata.annotations."kubectl.kubernetes.io/restartedAt"'
    assert evaluate(doc, path)[0].value == items[idx]["metadata"]["annotations"][
        "kubectl.kubernetes.io/restartedAt"]
    # JSONPath filter vs plain Python.
    expect = [(("items", i, "metadata", "name"), it["metadata"]["name"])
              for i, it in enumerate(items) if it["metadata"]["namespace"] == "kube-system"]
    got = evaluate(doc, "$.items[?@.metadata.namespace=='kube-system'].metadata.name")
    assert [(m.location, m.value) for m in got] == expect and expect
    names = evaluate(doc, "items.*.metadata.name")
    assert [m.value for m in names] == [it["metadata"]["name"] for it in items]
    assert names[0].path == "items.0.metadata.name"


@pytest.mark.corpus
def test_k8s_pods_diagnostics() -> None:
    doc = _load("k8s/honeycomb/pods.json")
    items = doc["items"]
    e = _err(doc, "items.0.metdata.name")
    assert e.details["valid_prefix"] == "items.0"
    assert e.details["available_keys"] == list(items[0])
    assert e.details["suggestions"] == ["items.0.metadata.name"]
    e = _err(doc, "items.metadata.name")
    assert e.details["array_length"] == len(items)
    assert e.details["suggestions"] == ["items.0.metadata.name", "$.items[*].metadata.name"]
    e = _err(doc, f"items.{len(items)}.spec")
    assert e.details["suggestions"] == [f"items.{len(items) - 1}.spec"]
    e = _err(doc, "Items")
    assert e.details["suggestions"] == ["items"]
    for suggestion in e.details["suggestions"]:
        evaluate(doc, suggestion)  # usable verbatim


@pytest.mark.corpus
def test_aws_and_github_paths() -> None:
    ec2 = _load("aws/custodian/ec2.DescribeInstances.json")
    res = ec2["data"]["Reservations"]
    got = evaluate(ec2, "$.data.Reservations[*].Instances[*].InstanceId")
    assert [m.value for m in got] == [i["InstanceId"] for r in res for i in r["Instances"]]
    assert got[-1].path == f"data.Reservations.{len(res) - 1}.Instances.{len(res[-1]['Instances']) - 1}.InstanceId"
    running = evaluate(ec2, "$..Instances[?@.State.Name=='running'].InstanceId")
    assert [m.value for m in running] == [
        i["InstanceId"] for r in res for i in r["Instances"] if i["State"]["Name"] == "running"]
    events = _load("github/github_events.json")
    pushes = evaluate(events, "$[?@.type=='PushEvent'].repo.name")
    assert [m.value for m in pushes] == [e["repo"]["name"] for e in events if e["type"] == "PushEvent"]
    assert evaluate(events, "0.actor.login")[0].value == events[0]["actor"]["login"]


def test_query_modules_import_light() -> None:
    """Importing the engines loads neither the regex engine, the JSONPath library nor the CLI."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import scratch.query.paths, scratch.query.grep, scratch.query.items\n"
        "import scratch.query.schema, scratch.query.summary\n"
        "heavy = {'re2', 'jsonpath_rfc9535', 'typer', 'rich', 'yaml'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
