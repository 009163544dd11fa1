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


# -- one way to name an entry everywhere (issue 30, item 8) ----------------------------------

# every command that acts on an entry that exists (an argument completed with entry names),
# with the arguments after the entry that make it answer; the entry's place is {}
ON_AN_ENTRY = {
    "diff": ["{}", "1", "1"],
    "export": ["{}"],
    "get-in": ["{}", "0.n"],
    "grep": ["{}", "n"],
    "head": ["{}", "-n", "1"],
    "history": ["{}"],
    "item-schema": ["{}", "."],
    "iterate-over": ["{}", "."],
    "read": ["{}"],
    "restore": ["{}@1"],
    "schema": ["{}"],
    "slice": ["{}", "1", "1"],
    "sql": ["{}", "SELECT count(*) FROM entry"],
    "summarize": ["{}"],
    "tail": ["{}", "-n", "1"],
    "redactions": ["{}"],
    "purge": ["{}", "--dry-run"],
    "rm": ["{}"],  # last: it deletes
}
# commands whose entry argument names what they create or append to: a name as it is
CREATING = {"write", "log append"}
LOGS = {"log read", "log tail"}  # logs have no automatic names: their own names only


def test_every_entry_argument_is_in_the_table() -> None:
    from scratch.answers.kernel.catalogue import every_command
    from scratch.declare import params
    taking = {c.name for c in every_command() for p in params(c) if p.arg.complete == "names"}
    assert taking == set(ON_AN_ENTRY) | CREATING | LOGS


def test_every_command_on_an_entry_takes_every_way_of_naming_it(scratch_home: Path) -> None:
    rows = [{"n": i} for i in range(120)]
    full = ingest("swagger", rows)
    digits = full[-8:]
    for form in (full, "swagger", digits, digits[:4]):
        for command, words in ON_AN_ENTRY.items():
            if command == "rm":
                continue
            args = [w.format(form) for w in words]
            r = cli(*command.split(), *args, "--json",
                    env={"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "100000"})
            assert r.code == 0, (command, args, r.out[:300])
            name = r.json["data"].get("name")
            if name is not None:
                assert name == full, (command, args, name)
    r = cli("rm", digits[:5], "--json")
    assert r.code == 0 and r.json["data"]["name"] == full
    # a deleted entry: its history and restore by its own name
    assert cli("history", full).code == 0
    r = cli("restore", f"{full}@1", "--json")
    assert r.code == 0 and r.json["data"]["name"] == full


def test_a_misspelt_name_gets_did_you_mean_on_every_command(scratch_home: Path) -> None:
    full = ingest("swagger", [{"n": i} for i in range(120)])
    cli("log", "append", "events", input='{"a": 1}\n')
    for command, words in ON_AN_ENTRY.items():
        args = [w.format("swager") for w in words]
        r = cli(*command.split(), *args, "--json")
        assert r.code == 4, (command, r.out[:300])
        error = r.json["error"]
        assert error["code"] == "entry_not_found"
        assert "did you mean 'swagger'?" in error["message"], (command, error["message"])
        first = error["suggestions"][0]
        assert first["command"] == command, (command, first)
        assert "swagger" in first["shell"] and "swager" not in first["shell"]
        assert first["shell"].endswith(" --json")
        assert cli(*shlex_split(first["shell"])[1:]).code in (0, 3), first["shell"]
    for command in sorted(LOGS):
        r = cli(*command.split(), "event", "--json")
        assert r.code == 4 and "did you mean 'events'?" in r.json["error"]["message"]
        assert r.json["error"]["suggestions"][0]["shell"] == f"scratch {command} events --json"
    assert full.startswith("swagger/")


def shlex_split(line: str) -> list[str]:
    import shlex
    return shlex.split(line)
