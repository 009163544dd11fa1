"""REFs forgive: what an agent is likely to type resolves, or says what would."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import cli, shells

PODS = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"


def ingest(tool: str, doc: object) -> str:
    r = cli("ingest", "--tool", tool, "--store-always", "--json", input=json.dumps(doc))
    assert r.code == 0, r.out
    return r.json["data"]["name"]


def test_a_tool_name_is_its_latest_output(scratch_home: Path) -> None:
    first = ingest("kubectl_get", {"n": 1})
    second = ingest("kubectl_get", {"n": 2})
    assert first != second and first.startswith("kubectl_get/")
    r = cli("get-in", "kubectl_get", "n", "--json")
    assert r.code == 0 and r.json["data"]["name"] == second and r.json["data"]["value"] == 2
    assert cli("head", "kubectl_get", "-n", "1").text == "1:{\n"
    # an entry named like the tool is that entry; the outputs are then under <tool>.outputs/
    cli("write", "gh", input="my notes\n")
    out = ingest("gh", {"n": 3})
    assert out.startswith("gh.outputs/")
    assert cli("head", "gh", "--no-numbers").text == "my notes\n"
    assert cli("get-in", "gh.outputs", "n").text == "3\n"


def test_a_short_hash_prefix_says_how_many_digits_it_needs(scratch_home: Path) -> None:
    name = ingest("t", {"a": 1})
    digits = name[-8:]
    assert cli("get-in", digits[:3], "a").text == "1\n"
    r = cli("head", digits[:2], "--json")
    assert r.code == 4 and r.json["error"]["code"] == "entry_not_found"
    assert "a hash prefix needs at least 3 hex digits" in r.json["error"]["message"]
    assert f"({digits[:2]!r} has 2)" in r.json["error"]["message"]


def test_a_companion_is_reachable_through_its_parents_hash(scratch_home: Path) -> None:
    result = {"content": [{"type": "text", "text": json.dumps({"rows": list(range(300)),
                                                                "note": "x" * 4000})}]}
    r = cli("ingest", "--tool", "mcp", "--store-always", "--json", input=json.dumps(result))
    name = r.json["data"]["name"]
    (companion,) = r.json["data"]["companions"]
    slug = companion[len(name) + 1:]
    r = cli("get-in", f"{name[-8:-4]}.{slug}", "rows.2", "--json")
    assert r.code == 0 and r.json["data"]["name"] == companion and r.json["data"]["value"] == 2


def test_a_path_on_disk_says_entries_come_from_write_or_ingest(scratch_home: Path,
                                                              tmp_path: Path,
                                                              monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("pods.json").write_bytes(PODS.read_bytes())
    r = cli("head", "pods.json", "--json")
    assert r.code == 4
    err = r.json["error"]
    assert "that is a path on disk" in err["message"] and "write" in err["message"]
    assert "ingest" in err["message"]
    assert shells(err["suggestions"])[0] == "scratch write pods.json pods.json"
    assert cli("write", "pods.json", "pods.json").code == 0  # the suggestion, as printed
    assert cli("head", "pods.json", "-n", "1").text == "1:{\n"


def test_a_log_named_where_a_file_is_wanted_offers_the_log_commands(scratch_home: Path
                                                                   ) -> None:
    cli("log", "append", "ev", "one")
    r = cli("get-in", "ev", "x", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "wrong_kind"
    assert shells(r.json["error"]["suggestions"]) == ["scratch log read ev", "scratch tail ev"]
