"""sync as a declared command (issue 19 point 4): the same command through the CLI and MCP,
counted in stats; over MCP an agent syncs only its own namespace and adds no remote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import ServerState
from scratch.mcp.specs import BY_NAME
from tests.sync_support import bare, git, ok, on


@pytest.fixture
def home(scratch_home: Path, tmp_path: Path) -> Path:
    """The test's store (also the MCP server's, through SCRATCH_HOME) with remote origin."""
    ok(scratch_home, "remote", "add", "origin", str(bare(tmp_path / "remote.git")))
    ok(scratch_home, "write", "notes/plan.md", input="step 1\n")
    return scratch_home


def session() -> object:
    return ServerState().session_for("conn", "default", None, "test")


def test_sync_and_its_status_through_the_cli(home: Path, tmp_path: Path) -> None:
    status = on(home, "--json", "sync", "--status")
    assert status.code == 0, status.text
    assert sorted(status.json) == ["command", "data", "meta", "ok", "scratch"]
    assert status.json["command"] == "sync"
    assert list(status.json["data"]) == ["status"]
    row = status.json["data"]["status"][0]
    assert row["remote"] == "origin" and [a["agent"] for a in row["agents"]] == ["default"]
    assert [r["name"] for r in row["agents"][0]["outgoing"]] == ["notes/plan.md"]
    done = on(home, "--json", "sync", "origin")
    assert done.code == 0, done.text
    assert list(done.json["data"]) == ["remotes"]
    pushed = done.json["data"]["remotes"][0]
    assert pushed["remote"] == "origin" and pushed["agents"] == ["default"]
    assert pushed["pushed"] == git(tmp_path / "remote.git", "rev-parse", "main").stdout.strip()


def test_sync_tools_are_the_sessions_and_offer_no_other_agent() -> None:
    sync, status = BY_NAME["sync"], BY_NAME["sync_status"]
    assert (sync.command, status.command) == ("sync", "sync")
    assert [p.name for p in sync.params] == ["remote"] == [p.name for p in status.params]
    assert sync.annotations()["readOnlyHint"] is False
    assert status.annotations()["readOnlyHint"] is True and status.fixed == {"status": True}
    assert "remote_add" not in BY_NAME and "remote" not in {t.command for t in BY_NAME.values()}


def test_sync_through_mcp_pushes_this_agents_entries(home: Path, tmp_path: Path) -> None:
    s = session()
    listed = run_tool("sync_status", {}, s)  # type: ignore[arg-type]
    assert listed.ok, listed.text
    assert "origin" in listed.text and "would send: notes/plan.md" in listed.text
    pushed = run_tool("sync", {"remote": "origin"}, s)  # type: ignore[arg-type]
    assert pushed.ok, pushed.text
    remote = tmp_path / "remote.git"
    tip = git(remote, "rev-parse", "main").stdout.strip()
    assert tip and tip[:12] in pushed.text
    files = git(remote, "ls-tree", "-r", "--name-only", "main").stdout.split()
    assert "agents/default/files/notes/plan.md" in files


def test_all_agents_is_not_an_mcp_argument(home: Path) -> None:
    refused = run_tool("sync", {"all": True}, session())  # type: ignore[arg-type]
    assert not refused.ok and refused.code == "invalid_arguments"
    error = json.loads(refused.text)
    assert error["argument"] == "all" and "unknown argument 'all'" in error["message"]


def test_an_mcp_error_offers_no_remote_to_add(scratch_home: Path) -> None:
    ok(scratch_home, "write", "x", input="x\n")
    none = run_tool("sync", {}, session())  # type: ignore[arg-type]
    assert not none.ok and none.code == "no_remote"
    assert json.loads(none.text).get("suggestions", []) == []  # remote add is the CLI's


def test_stats_count_a_sync(home: Path) -> None:
    ok(home, "sync")
    run_tool("sync_status", {}, session())  # type: ignore[arg-type]
    mine = ok(home, "stats")["agents"][0]
    assert mine["agent"] == "default" and mine["operations"]["sync"] == 2
