"""The call ledger through every interface, and `scratch calls` / the list_calls tool.

Each interface is the real one: the CLI as a process, `scratch mcp serve` over stdio and over
HTTP driven by the MCP SDK's client, and `scratch mcp proxy` in front of the SDK-built fixture
upstream (tests/data/mcp_upstreams). What each call left is read back from the store's
ledger file (scratch.store.ledger.read) and through `scratch calls`.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scratch.store import ledger

REPO = Path(__file__).resolve().parents[1]
SCRATCH = [sys.executable, "-m", "scratch"]
SECRET = "the body of a write, which the ledger never copies"
DOC = json.dumps({"items": [{"name": f"pod-{i}", "status": "Running" if i % 3 else "Failed"}
                            for i in range(400)]}, indent=1) + "\n"


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(SCRATCH_HOME=str(home), PYTHONPATH=str(REPO), COLUMNS="200", **extra)
    return env


def scratch(home: Path, *args: str, input: str | None = None,
            **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SCRATCH, *args], env=env_for(home, **extra), input=input,
                          capture_output=True, text=True, check=False, timeout=120)


def used(home: Path) -> int:
    done = scratch(home, "--json", "budget")
    assert done.returncode == 0, done.stdout
    return int(json.loads(done.stdout)["data"]["used"])


def shape(rec: ledger.Record) -> tuple[object, ...]:
    """A record without what varies from run to run (its time and milliseconds)."""
    return (rec["seq"], rec["interface"], rec["agent"], rec["session"], rec["command"],
            rec["args"], rec["outcome"], rec["code"], rec["tokens"], rec["intercepted"],
            rec["entry"], rec["version"])


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    home = tmp_path / "store"
    home.mkdir()
    (home / "scratch.toml").write_text("[budget]\nmax_extraction_tokens = 300\n")
    return home


# -- the CLI ----------------------------------------------------------------------------------

def test_every_cli_call_is_recorded_with_its_outcome_tokens_and_entry(home: Path) -> None:
    assert scratch(home, "write", "notes/plan.md", input=SECRET).returncode == 0
    assert scratch(home, "write", "pods", input=DOC).returncode == 0
    got = scratch(home, "--json", "get-in", "pods", "items.7")
    assert got.returncode == 0, got.stdout
    tokens = json.loads(got.stdout)["meta"]["tokens"]["count"]
    missing = scratch(home, "head", "nope")
    assert missing.returncode == 4
    before = used(home)
    refused = scratch(home, "--json", "head", "pods@1", "-n", "300")
    assert refused.returncode == 3
    refusal_tokens = used(home) - before  # a refusal is charged what it prints
    assert refusal_tokens > 0
    refusal = json.loads(refused.stdout)
    assert refusal["error"]["code"] == "head_too_large"
    bad = scratch(home, "slice", "pods", "5", "2")  # START after END: a usage error
    assert bad.returncode == 2

    everything = ledger.read(home)
    assert [r["seq"] for r in everything if r["command"] == "budget"] == [5, 7]
    records = [r for r in everything if r["command"] != "budget"]
    assert [shape(r) for r in records] == [
        (1, "cli", "default", "default", "write",
         {"name": "notes/plan.md", "content": f"<{len(SECRET)} bytes>"}, "ok", None, 0, 0,
         "notes/plan.md", 1),
        (2, "cli", "default", "default", "write",
         {"name": "pods", "content": f"<{len(DOC)} bytes>"}, "ok", None, 0, 0, "pods", 1),
        (3, "cli", "default", "default", "get-in", {"ref": "pods", "path": "items.7"}, "ok",
         None, tokens, 0, "pods", 1),
        (4, "cli", "default", "default", "head", {"ref": "nope"}, "error", "entry_not_found",
         0, 0, "nope", None),
        (6, "cli", "default", "default", "head", {"ref": "pods@1", "lines": 300}, "refused",
         "head_too_large", refusal_tokens, 0, "pods", 1),
        (8, "cli", "default", "default", "slice", {"ref": "pods", "start": 5, "end": 2},
         "error", records[5]["code"], 0, 0, "pods", None),
    ]
    assert records[5]["code"] == json.loads(scratch(home, "--json", "slice", "pods", "5", "2"
                                                    ).stdout)["error"]["code"]
    # the refusal's suggestions, as core calls (the same ones the agent was shown)
    shown = [s["command"] for s in refusal["error"]["suggestions"]]
    assert [s["command"] for s in records[4]["suggestions"]] == shown and shown
    assert records[4]["suggestions"] == [
        {"command": s["command"], "args": s["args"]} for s in refusal["error"]["suggestions"]]
    assert records[4]["message"] == refusal["error"]["message"].split("\n")[0]
    assert all(r["ms"] > 0 for r in records)
    path = ledger.ledger_file(home, "default")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert SECRET.encode() not in path.read_bytes()  # what a write stored is never copied
    # what the agent got back is kept: the --json document it read, byte for byte; a write's
    # answer is its confirmation; an error or a refusal has none (its code and message)
    assert records[2]["answer"] == got.stdout and "pod-7" in got.stdout
    assert records[0]["answer"] == "notes/plan.md: version 1 (50 bytes, 1 line)\n"
    assert SECRET not in records[0]["answer"]
    assert ["answer" in r for r in records[3:]] == [False, False, False]


def test_scratch_calls_pages_filters_and_shows_a_table(home: Path) -> None:
    assert scratch(home, "write", "a", input="one\n").returncode == 0
    assert scratch(home, "--agent", "bob", "--session", "s1", "ls").returncode == 0
    assert scratch(home, "head", "a", SCRATCH_SESSION="s2").returncode == 0
    assert scratch(home, "--agent", "bob", "head", "zzz").returncode == 4

    every = json.loads(scratch(home, "--json", "calls").stdout)["data"]
    assert (every["agent"], every["session"], every["total"], every["dropped"]) == (
        None, None, 4, 0)
    assert [(c["agent"], c["command"]) for c in every["calls"]] == [
        ("default", "write"), ("bob", "ls"), ("default", "head"), ("bob", "head")]
    bob = json.loads(scratch(home, "--json", "--agent", "bob", "calls").stdout)["data"]
    assert [(c["seq"], c["command"], c["session"]) for c in bob["calls"]] == [
        (1, "ls", "s1"), (2, "head", "default")]
    s2 = json.loads(scratch(home, "--json", "--session", "s2", "calls").stdout)["data"]
    assert [(c["agent"], c["command"]) for c in s2["calls"]] == [("default", "head")]
    # every page is read before its own call is appended
    expected = [(c["agent"], c["seq"]) for c in ledger.read(home)][-3:-1]
    page = json.loads(scratch(home, "--json", "calls", "--limit", "2", "--offset", "1").stdout)
    assert [(c["agent"], c["seq"]) for c in page["data"]["calls"]] == expected
    total = ledger.count(home)
    assert json.loads(scratch(home, "--json", "calls", "--since", "1h").stdout)[
        "data"]["total"] == total == 8
    assert json.loads(scratch(home, "--json", "calls", "--since", "2999-01-01").stdout)[
        "data"]["calls"] == []

    bobs = ledger.read(home, agent="bob")
    assert [c["command"] for c in bobs] == ["ls", "head", "calls"]
    table = scratch(home, "--agent", "bob", "calls", "--limit", "1")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert len(lines) == 2
    # one agent named: no agent column; every session: a session column
    assert lines[0].split() == ["seq", "time", "via", "session", "call", "outcome", "tokens",
                                "entry", "ms"]
    row = lines[1].split()  # the time is two words: 12-02 00:41:07
    # the CLI passes only what was given: `calls --agent bob --json` had no arguments
    # (spelled to run as printed here: with the --agent this listing was given)
    assert row[0] == "3" and row[3:8] == ["cli", "default", "calls", "--agent", "bob"]
    assert row[8:10] == ["ok", "0"]
    every_agent = scratch(home, "--session", "s1", "calls").stdout.splitlines()
    assert every_agent[0].split() == ["seq", "time", "via", "agent", "call", "outcome",
                                      "tokens", "entry", "ms"]
    assert [r.split()[4:6] for r in every_agent[1:]] == [["bob", "ls"]]
    assert table.stderr == "2 earlier calls: scratch calls --limit 1 --offset 1 --agent bob\n"

    wrong = scratch(home, "--json", "calls", "--since", "yesterday")
    assert wrong.returncode == 2
    assert json.loads(wrong.stdout)["error"]["code"] == "invalid_argument"
    assert "--since must be an ISO time" in json.loads(wrong.stdout)["error"]["message"]


def test_the_bound_drops_the_oldest_and_calls_says_so(home: Path) -> None:
    (home / "scratch.toml").write_text("[ledger]\nmax_bytes = 2000\n")
    for i in range(12):
        assert scratch(home, "write", f"n{i}", input="x\n").returncode == 0
    shown = json.loads(scratch(home, "--json", "calls", "--limit", "1000").stdout)["data"]
    assert shown["dropped"] > 0
    assert shown["dropped"] + shown["total"] == 12
    assert [c["seq"] for c in shown["calls"]] == list(range(shown["dropped"] + 1, 13))
    assert ledger.ledger_file(home, "default").stat().st_size <= 2000
    dropped = ledger.dropped(home)  # the call above was appended too, and may have cut more
    assert dropped >= shown["dropped"]
    table = scratch(home, "calls")
    assert f"{dropped} older calls dropped to keep the ledger within ledger.max_bytes" \
        in table.stderr


def test_the_ledger_stays_out_of_git_and_so_out_of_every_sync(home: Path,
                                                              tmp_path: Path) -> None:
    from tests.sync_support import bare, git
    remote = bare(tmp_path / "remote.git")
    assert scratch(home, "remote", "add", "origin", str(remote)).returncode == 0
    assert scratch(home, "write", "a", input="one\n").returncode == 0
    done = scratch(home, "--json", "sync", "origin")
    assert done.returncode == 0, done.stdout
    assert ledger.count(home) == 3
    pushed = git(remote, "ls-tree", "-r", "--name-only", "main").stdout.split()
    assert "agents/default/a" in pushed or any(p.startswith("agents/") for p in pushed)
    assert not [p for p in pushed if p.startswith("state/") or "calls" in p]


def test_a_read_only_ledger_costs_the_record_not_the_answer(home: Path) -> None:
    assert scratch(home, "write", "a", input="one\n").returncode == 0
    path = ledger.ledger_file(home, "default")
    path.unlink()
    os.symlink(home / "nowhere", path)  # a link placed there: refused, never followed
    answer = scratch(home, "head", "a")
    assert (answer.returncode, answer.stdout) == (0, "1:one\n")
    assert not (home / "nowhere").exists()


def test_stats_shows_tokens_per_command_and_per_session(home: Path) -> None:
    assert scratch(home, "write", "pods", input=DOC).returncode == 0
    costs = []
    for session in ("s1", "s1", "s2"):
        done = scratch(home, "--json", "--session", session, "get-in", "pods", "items.3")
        costs.append(json.loads(done.stdout)["meta"]["tokens"]["count"])
    data = json.loads(scratch(home, "--json", "stats").stdout)["data"]["agents"][0]
    by_command = data["tokens_by_command"]
    assert by_command["get-in"] == {"calls": 3, "refused": 0, "errors": 0,
                                    "tokens": sum(costs), "intercepted": 0,
                                    "ms": by_command["get-in"]["ms"]}
    assert by_command["write"]["calls"] == 1 and by_command["write"]["tokens"] == 0
    by_session = data["tokens_by_session"]
    assert {k: (v["calls"], v["tokens"]) for k, v in by_session.items()} == {
        "default": (1, 0), "s1": (2, costs[0] + costs[1]), "s2": (1, costs[2])}
    table = scratch(home, "stats").stdout
    assert f"get-in {sum(costs):,} (3 calls)" in table


# -- MCP over stdio, with the SDK's client ---------------------------------------------------

mcp_support = pytest.importorskip("tests.mcp_support")


@pytest.fixture()
def stdio(home: Path) -> Iterator[Any]:
    c = mcp_support.stdio_client(home, "--agent", "ops", env=env_for(home))
    yield c
    c.close()


def test_mcp_stdio_calls_are_recorded_and_list_calls_shows_only_the_agents_own(
        home: Path, stdio: Any) -> None:
    assert scratch(home, "write", "theirs", input="default's\n").returncode == 0
    assert not stdio.call("write_file", {"path": "pods", "content": DOC}).is_error
    answered = stdio.call("get_in", {"file": "pods", "path": "items.2"})
    assert not answered.is_error
    missing = stdio.call("head", {"file": "nope"})
    assert missing.is_error
    schema = stdio.call("head", {"file": "pods", "lines": 0})  # below the schema's minimum
    assert schema.is_error and json.loads(schema.content[0].text)["code"] == "invalid_arguments"

    records = ledger.read(home, agent="ops")
    session = records[0]["session"]
    assert session.startswith("mcp-")
    assert [shape(r) for r in records] == [
        # the arguments as the tool call gave them, its defaults included
        (1, "mcp-stdio", "ops", session, "write", {"name": "pods",
                                                   "content": f"<{len(DOC)} bytes>",
                                                   "allow_empty": False, "no_redact": False},
         "ok", None, 0, 0, "pods", 1),
        (2, "mcp-stdio", "ops", session, "get-in",
         {"ref": "pods", "path": "items.2", "offset": 0, "fit": False, "keys": False,
          "count": False}, "ok", None, mcp_support.charged(answered), 0, "pods", 1),
        (3, "mcp-stdio", "ops", session, "head",
         {"ref": "nope", "lines": 50, "fit": False, "numbers": True}, "error",
         "entry_not_found", 0, 0, "nope", None),
        # refused before it reached the core: its arguments as the tool names them
        (4, "mcp-stdio", "ops", session, "head", {"file": "pods", "lines": 0}, "error",
         "invalid_arguments", 0, 0, None, None),
    ]
    assert SECRET not in ledger.ledger_file(home, "ops").read_text()

    listed = stdio.call("list_calls", {})
    assert not listed.is_error
    text = listed.content[0].text
    # each call as this interface spells it: the tool and its arguments
    assert 'get_in {"file":"pods","path":"items.2"}' in text and "entry_not_found" in text
    assert 'write_file {"path":"pods","content":"<' in text and "get-in" not in text
    assert "theirs" not in text and "default" not in text.replace(session, "")
    # no tool argument names another agent
    wrong = stdio.call("list_calls", {"agent": "default"})
    assert wrong.is_error and json.loads(wrong.content[0].text)["code"] == "invalid_arguments"
    usage = stdio.text("get_usage_stats")
    assert f"tokens by command: get-in {mcp_support.charged(answered):,} (1 call)" in usage


# -- MCP over HTTP ----------------------------------------------------------------------------

def test_mcp_http_calls_are_recorded_per_token_agent_and_isolated(home: Path) -> None:
    ops_token = mcp_support.add_token(home, "ops")
    dev_token = mcp_support.add_token(home, "dev")
    server = mcp_support.HttpServer(home, "--rate-limit", "0")
    try:
        ops = server.client(ops_token)
        dev = server.client(dev_token)
        try:
            assert not ops.call("write_file", {"path": "ops-notes", "content": "x\n"}).is_error
            assert not ops.call("head", {"file": "ops-notes"}).is_error
            assert dev.call("head", {"file": "ops-notes"}).is_error  # not dev's entry
            dev_list = dev.call("list_calls", {}).content[0].text
            ops_list = ops.call("list_calls", {}).content[0].text
        finally:
            ops.close()
            dev.close()
    finally:
        server.stop()
    assert [(r["interface"], r["agent"], r["command"], r["outcome"])
            for r in ledger.read(home, agent="ops")] == [
        ("mcp-http", "ops", "write", "ok"), ("mcp-http", "ops", "head", "ok"),
        ("mcp-http", "ops", "calls", "ok")]
    assert [(r["interface"], r["command"], r["code"]) for r in ledger.read(home, agent="dev")
            ] == [("mcp-http", "head", "entry_not_found"), ("mcp-http", "calls", None)]
    def rows(table: str) -> list[str]:  # the tool of each row (one agent: no agent column)
        lines = table.splitlines()
        assert "agent" not in lines[0].split()
        return [r.split()[5] for r in lines[1:]]

    assert rows(dev_list) == ["head"]
    assert rows(ops_list) == ["write_file", "head"]


# -- the MCP proxy, in front of a real upstream ----------------------------------------------

@pytest.mark.parametrize("mode", ["sdk", "legacy"])
def test_the_proxys_interceptions_and_relayed_calls_are_recorded(home: Path, tmp_path: Path,
                                                                 mode: str) -> None:
    """Both of the proxy's paths: the SDK's, and (after a legacy handshake) calls relayed
    as lines (scratch.mcp.proxy.relay)."""
    from tests.test_mcp_proxy import fixture_entry, proxy_client, servers_file
    (home / "scratch.toml").write_text(
        '[mcp.servers.fx.scratchpad]\n"*" = { min_tokens = 2000 }\n')
    # the modern protocol adopted at once: with "auto" the proxy sometimes serves the
    # connection in the handshake era and refuses the client's enveloped calls (seen in
    # test_mcp_proxy_faults' [sdk] cases too, before the ledger)
    kwargs = {"mode": "legacy" if mode == "legacy" else "2026-07-28"}
    c = proxy_client(home, servers_file(tmp_path, {"fx": fixture_entry()}), **kwargs)
    try:
        small = c.call("text", {"size": 500})
        assert not small.is_error
        big = c.call("text", {"size": 200_000})
        stored = big.meta["scratch"]
        failed = c.call("error", {"size": 300})
        assert failed.is_error
        listed = c.call("list_calls", {}).content[0].text
    finally:
        c.close()
    records = ledger.read(home, agent="default")
    assert [(r["interface"], r["command"], r["outcome"], r["code"]) for r in records] == [
        ("proxy", "upstream", "ok", None), ("proxy", "ingest", "ok", None),
        ("proxy", "upstream", "error", "upstream_tool_error"), ("proxy", "calls", "ok", None)]
    assert records[0]["args"] == {"server": "fx", "tool": "text"}
    assert all(r["ms"] > 0 for r in records)  # from the request sent to the answer
    ingest = records[1]
    assert ingest["args"]["tool"] == "fx.text" and ingest["args"]["content"].endswith(" bytes>")
    assert (ingest["entry"], ingest["version"]) == (stored["stored"], 1)
    assert ingest["tokens"] == stored["pointer_tokens"]
    assert ingest["intercepted"] == stored["tokens"] - stored["pointer_tokens"] > 0
    assert "upstream_tool_error" in listed and "ingest" in listed


def test_ledger_sync_log_carries_the_calls_to_another_store(tmp_path: Path) -> None:
    from tests.sync_support import bare, ok, on
    remote = bare(tmp_path / "remote.git")
    here, there = tmp_path / "here", tmp_path / "there"
    for home in (here, there):
        assert on(home, "remote", "add", "origin", str(remote)).code == 0
    toml = here / "scratch.toml"
    toml.write_text((toml.read_text() if toml.exists() else "")
                    + '\n[ledger]\nsync_log = "calls-log"\n')
    settings = {s["key"]: s for s in ok(here, "config")["settings"]}
    assert settings["ledger.sync_log"]["value"] == "calls-log"
    assert on(here, "write", "a", input="one\n").code == 0
    assert on(here, "head", "a").code == 0
    assert on(here, "head", "missing").code == 4
    ok(here, "sync", "origin")
    ok(there, "sync", "origin")
    got = ok(there, "log", "read", "calls-log")["entries"]
    carried = [e["entry"] for e in got]
    mine = ledger.read(here, agent="default")
    assert [(c["seq"], c["command"], c["outcome"]) for c in carried] == [
        (r["seq"], r["command"], r["outcome"]) for r in mine[:len(carried)]]
    assert [c["command"] for c in carried][-3:] == ["write", "head", "head"]
    assert carried[-1]["code"] == "entry_not_found"
    # what each call answered stays in this store's ledger: the log carries the rest
    assert mine[len(carried) - 2]["answer"] == "1:one\n" and carried[-2] == {
        k: v for k, v in mine[len(carried) - 2].items() if k != "answer"}
    assert all("answer" not in c for c in carried)
    # the next sync appends only what came after: each call once
    assert on(here, "head", "a").code == 0
    ok(here, "sync", "origin")
    ok(there, "sync", "origin")
    again = ok(there, "log", "read", "calls-log")["entries"]
    seqs = [e["entry"]["seq"] for e in again]
    assert seqs == sorted(set(seqs)) and len(seqs) == len(carried) + 2  # sync, then head
    assert not (there / "state" / "agents" / "default" / "calls.synced").exists()


def test_without_ledger_sync_log_a_sync_makes_no_log(tmp_path: Path) -> None:
    from tests.sync_support import bare, ok, on
    remote = bare(tmp_path / "remote.git")
    home = tmp_path / "here"
    assert on(home, "remote", "add", "origin", str(remote)).code == 0
    assert on(home, "write", "a", input="one\n").code == 0
    ok(home, "sync", "origin")
    assert [e["name"] for e in ok(home, "ls")["entries"]] == ["a"]


def test_calls_leaves_out_what_each_call_answered(home: Path) -> None:
    assert scratch(home, "write", "pods", input=DOC).returncode == 0
    got = scratch(home, "head", "pods", "-n", "3")
    assert got.returncode == 0
    (head,) = [r for r in ledger.read(home) if r["command"] == "head"]
    assert head["answer"] == got.stdout  # the ledger keeps it (scratch ui shows it) ...
    listed = json.loads(scratch(home, "--json", "calls").stdout)["data"]["calls"]
    assert [r["command"] for r in listed] == ["write", "head"]
    assert all("answer" not in r for r in listed)  # ... a page of calls does not repeat it
    assert listed[1] == {k: v for k, v in head.items() if k != "answer"}
