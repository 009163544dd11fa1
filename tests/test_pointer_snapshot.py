"""A pointer of NDJSON whose lines are snapshots of one state summarizes the last one (issue
30 item 10): NGINX Plus ``/status`` dumps, one per line (the shared corpus; skipped when
absent), through the CLI and MCP; records that are no snapshots keep their pointer."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from tests.helpers import cli

CAP = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "3000"}


@pytest.mark.corpus
def test_status_dumps_one_a_line_show_the_last_state(corpus_dir: Path,
                                                     scratch_home: Path) -> None:
    source = corpus_dir / "ndjson/nginxplus_json_logs.ndjson"
    last = json.loads(source.read_bytes().splitlines()[-1])
    r = cli("ingest", "status", "--store-always", input=source.read_bytes(), env=CAP)
    assert r.code == 0, r.err
    text = r.text
    conn = last["connections"]
    assert ("snapshots: each of the 500 lines is a whole state (nginx_version 1.9.4, address "
            "206.251.255.64 in the first and the last); the last, line 500:\n"
            f"  version 6, nginx_version 1.9.4, address 206.251.255.64, generation 11, "
            f"load_timestamp 1445680800424, timestamp {last['timestamp']}\n"
            f"  pid {last['pid']}\n"
            "  processes: respawned 0\n"
            f"  connections: accepted {conn['accepted']}, dropped {conn['dropped']}, active "
            f"{conn['active']}, idle {conn['idle']}\n") in text
    assert "  server_zones (3): hg.nginx.org, trac.nginx.org, lxr.nginx.org\n" in text
    assert "  upstreams (4): trac-backend, hg-backend, lxr-backend, demo-backend\n" in text
    calls = [ln.strip() for ln in text.split("\nnext:\n")[1].splitlines()]
    # the last state whole (with --fit: it is more than the 3,000-token cap set here)
    assert calls[:2] == ["scratch schema status", "scratch get-in status -1 --fit"]
    got = cli("get-in", "status", "-1", "--json", env=CAP)
    assert got.code == 0 and got.json["data"]["value"]["timestamp"] == last["timestamp"]
    data = cli("ingest", "status", "--store-always", "--json", input=source.read_bytes(),
               env=CAP).json["data"]
    assert data["snapshot"]["line"] == 500 and data["snapshot"]["same"] == {
        "nginx_version": "1.9.4", "address": "206.251.255.64"}
    for c in data["next"]:
        cli("budget", "reset")
        assert cli(*shlex.split(c)[1:], "--json", env=CAP).code == 0, c
    # over MCP the same summary, the last state's call a tool call
    state = ServerState()
    session = state.session_for(("stdio",), "default", None, "stdio")
    out = run_tool("ingest", {"content": source.read_text(), "name": "status2",
                              "store_always": True}, session)
    assert out.ok and "snapshots: each of the 500 lines is a whole state" in out.text
    assert '{"name":"get_in","arguments":{"file":"status2","path":"-1"' in out.text


def test_records_that_change_identity_are_no_snapshots(scratch_home: Path) -> None:
    """Alike nested records whose identity differs line to line (one pod a line): records."""
    lines = [json.dumps({"kind": f"Kind{i}", "id": f"pod-{i}", "meta": {
        f"k{j}": j for j in range(12)}, "spec": {f"s{j}": i for j in range(12)}})
        for i in range(300)]
    r = cli("ingest", "pods", "--store-always", input="\n".join(lines) + "\n")
    assert r.code == 0 and "snapshots:" not in r.text and "get-in pods -1" not in r.text
