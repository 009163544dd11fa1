"""Automatic names never lose an output over a name clash."""

from __future__ import annotations

import json
import re

from tests.helpers import cli, shells

DOC = json.dumps({"items": [{"name": f"pod-{i}", "phase": "Running"} for i in range(400)]})


def test_an_entry_named_like_the_tool_moves_its_outputs_aside(scratch_home) -> None:
    assert cli("write", "kubectl", input="notes\n").code == 0
    r = cli("ingest", "--tool", "kubectl", "--store-always", "--json", input=DOC)
    assert r.code == 0, r.out
    name = r.json["data"]["name"]
    assert re.fullmatch(r"kubectl\.outputs/\d{8}T\d{6}Z-[0-9a-f]{8}", name), name
    assert json.loads(cli("read", name).out) == json.loads(DOC)
    assert cli("read", "kubectl").out == b"notes\n"  # the entry itself is untouched
    again = cli("ingest", "--tool", "kubectl", "--store-always", "--json", input=DOC)
    assert again.json["data"]["name"] == name  # identical content: the same entry


def test_without_a_clash_outputs_go_under_the_tool(scratch_home) -> None:
    r = cli("ingest", "--tool", "kubectl", "--store-always", "--json", input=DOC)
    assert r.json["data"]["name"].startswith("kubectl/")


def test_a_hash_shared_by_two_names_asks_for_a_name(scratch_home) -> None:
    a = cli("ingest", "--tool", "a", "--store-always", "--json", input=DOC).json["data"]["name"]
    b = cli("ingest", "--tool", "b", "--store-always", "--json", input=DOC).json["data"]["name"]
    digits = a[-8:]
    for prefix in (digits, digits[:3]):
        r = cli("get-in", prefix, "items.0", "--json")
        assert r.code == 2
        err = r.json["error"]
        assert err["code"] == "ambiguous_ref"
        assert err["message"] == (f"hash prefix {prefix!r} matches 2 entries; all end in the "
                                  f"same hash {digits}; give the full name")
        assert err["matches"] == [a, b]
        assert shells(err["suggestions"]) == [f"scratch head {a}", f"scratch head {b}"]
        assert all(cli(*s.split()[1:]).code == 0 for s in shells(err["suggestions"]))
