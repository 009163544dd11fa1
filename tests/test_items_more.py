"""iterate-over / item-schema: warnings for fields no item has, and CSV/TSV rows as items.

Expected rows are written out by hand (small generated tables) or computed with the stdlib csv
module over the whole file (corpus tables); prices are checked against the real tokenizer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scratch.tokens import count_text, resolve_encoding
from tests.helpers import cli

SAMPLE = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"
O200K = resolve_encoding(None, "o200k_base")


def ingest(name: str, data: bytes, *extra: str) -> dict:
    r = cli("ingest", name, "--store-always", "--json", *extra, input=data)
    assert r.code == 0, r.out
    return r.json["data"]


def reported(err: str) -> int:
    """The token count of the human footer on stderr."""
    return int(err.rsplit("-- ", 1)[1].split(" tokens")[0].replace(",", ""))


def warnings_of(err: str) -> list[str]:
    return [line[len("warning: "):] for line in err.splitlines() if line.startswith("warning: ")]


@pytest.fixture
def pods(scratch_home: Path) -> str:
    ingest("pods", SAMPLE.read_bytes())
    return "pods"


# ------------------------------------------------------------------------ fields no item has

METADATA_KEYS = ("name, namespace, uid, resourceVersion, creationTimestamp, labels, annotations, "
                 "ownerReferences")


def test_misspelled_field_warns_with_close_keys(pods: str) -> None:
    doc = json.loads(SAMPLE.read_text())
    r = cli("iterate-over", pods, "items", "--fields", "metadata.nme", "--limit", "3")
    assert r.code == 0
    assert r.text == "_index\tmetadata.nme\n0\tnull\n1\tnull\n2\tnull\n"
    assert warnings_of(r.err) == [
        "field metadata.nme is in none of items 0..2; did you mean metadata.name? "
        f"(keys at metadata: {METADATA_KEYS})"]
    assert reported(r.err) == count_text(r.text, O200K)
    r = cli("iterate-over", pods, "items", "--fields", "metadata.name,stauts.phase", "--offset",
            "5", "--limit", "2", "--json")
    assert r.code == 0
    assert r.json["data"]["rows"] == [
        {"_index": i, "metadata.name": doc["items"][i]["metadata"]["name"], "stauts.phase": None}
        for i in (5, 6)]
    assert r.json["meta"]["warnings"] == [
        "field stauts.phase is in none of items 5..6; did you mean status.phase? "
        "(keys of the items: apiVersion, kind, metadata, spec, status)"]
    assert abs(r.json["meta"]["tokens"]["count"] - count_text(r.text, O200K)) <= 2


def test_absent_field_warning_shapes(pods: str) -> None:
    def warned(*args: str) -> list[str]:
        r = cli("iterate-over", pods, "items", *args, "--json")
        assert r.code == 0, r.out
        return r.json["meta"].get("warnings", [])

    # one item: "is not in item N"; no close key: the keys alone
    assert warned("--fields", "nothing", "--offset", "7", "--limit", "1") == [
        "field nothing is not in item 7 (keys of the items: apiVersion, kind, metadata, spec, "
        "status)"]
    # past a leaf: the type found there
    assert warned("--fields", "metadata.name.first", "--limit", "2") == [
        "field metadata.name.first is in none of items 0..1 (metadata.name is string)"]
    # a misspelled prefix: the suggestion keeps the rest of the path
    assert warned("--fields", "metdata.name", "--limit", "2") == [
        "field metdata.name is in none of items 0..1; did you mean metadata.name? "
        "(keys of the items: apiVersion, kind, metadata, spec, status)"]
    # under a wildcard; two close keys
    assert warned("--fields", "status.containerStatuses[*].stat", "--limit", "1") == [
        "field status.containerStatuses[*].stat is not in item 0; did you mean "
        "status.containerStatuses[*].state or status.containerStatuses[*].started? (keys at "
        "status.containerStatuses[*]: name, image, ready, restartCount, started, state, imageID)"]
    # present somewhere in the window (even as null), or legitimately absent elsewhere: quiet
    assert warned("--fields", "metadata.name,status.phase", "--limit", "3") == []


def test_where_keys_no_item_has(pods: str) -> None:
    def run(where: str) -> tuple[list[int], list[str]]:
        r = cli("iterate-over", pods, "items", "--fields", "metadata.name", "--limit", "10",
                "--where", where, "--json")
        assert r.code == 0, r.out
        return [row["_index"] for row in r.json["data"]["rows"]], r.json["meta"].get(
            "warnings", [])

    rows, warned = run("@.status.phse == 'Failed'")
    assert rows == [] and warned == [
        "--where key @.status.phse is in none of items 0..9; did you mean @.status.phase? "
        "(keys at status: phase, hostIP, podIP, qosClass, startTime, conditions, "
        "containerStatuses)"]
    # an existence test is about absence; a compared key that is absent with nothing close:
    # both normal, no warning
    assert run("!@.metadata.deletionTimestamp")[1] == []
    assert run("@.status.reason == 'Evicted'")[1] == []
    assert run("@.status.phase == 'Failed'")[1] == []


def test_absent_field_lists_at_most_eight_keys(scratch_home: Path) -> None:
    items = [{f"k{i}": i for i in range(6)}, {f"k{i}": i for i in range(4, 11)}, "text", None]
    ingest("wide", json.dumps(items).encode())
    r = cli("iterate-over", "wide", ".", "--fields", "K3,k99", "--json")
    assert r.code == 0
    assert r.json["data"]["rows"] == [{"_index": i, "K3": None, "k99": None} for i in range(4)]
    assert r.json["meta"]["warnings"] == [
        "field K3 is in none of items 0..3; did you mean k3? (keys of the items: k0, k1, k2, k3, "
        "k4, k5, k6, k7, ... 3 more)",
        "field k99 is in none of items 0..3; did you mean k9? (keys of the items: k0, k1, k2, "
        "k3, k4, k5, k6, k7, ... 3 more)"]
    r = cli("iterate-over", "wide", ".", "--fields", "k0.x", "--offset", "2", "--json")
    assert r.json["meta"]["warnings"] == ["field k0.x is in none of items 2..3 (the items are "
                                          "string|null)"]
