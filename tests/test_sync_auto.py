"""sync.auto = true: a change starts a detached sync and the command does not wait for it.

A ``git`` on PATH that pauses 3 s before every fetch and push makes the sync slow on
purpose: the command must be back well before that, and the remote must get the change."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from tests.conftest import REPO
from tests.sync_support import bare, git, ok

PAUSE = 3.0


def slow_git(bin_dir: Path) -> Path:
    bin_dir.mkdir()
    real = shutil.which("git")
    script = bin_dir / "git"
    script.write_text(f'#!/bin/sh\ncase "$1" in fetch|push) sleep {PAUSE};; esac\n'
                      f'exec {real} "$@"\n')
    script.chmod(0o755)
    return bin_dir


def test_a_change_syncs_in_the_background_without_waiting(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    home = tmp_path / "s"
    ok(home, "remote", "add", "origin", str(remote))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(SCRATCH_HOME=str(home), SCRATCH_SYNC_AUTO="true",
               PATH=f"{slow_git(tmp_path / 'bin')}:{env['PATH']}")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "scratch", "write", "notes/a.md"],
                          input=b"auto\n", cwd=REPO, env=env, capture_output=True, timeout=60)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"notes/a.md: version 1 (5 bytes, 1 line)\n"
    assert took < PAUSE, f"the command waited for the sync ({took:.2f} s)"
    assert git(remote, "rev-parse", "--verify", "-q", "main", check=False).returncode != 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (home / "state" / "sync-last.json").exists():
            break
        time.sleep(0.1)
    last = orjson.loads((home / "state" / "sync-last.json").read_bytes())
    assert last["errors"] == [] and last["results"][0]["remote"] == "origin"
    assert git(remote, "show", "main:agents/default/files/notes/a.md").stdout == "auto\n"
    # a command that changes nothing starts nothing
    (home / "state" / "sync-last.json").unlink()
    proc = subprocess.run([sys.executable, "-m", "scratch", "ls"], cwd=REPO, env=env,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0
    time.sleep(PAUSE + 1)
    assert not (home / "state" / "sync-last.json").exists()


def test_sync_auto_is_a_boolean_setting(tmp_path: Path) -> None:
    home = tmp_path / "s"
    (home).mkdir()
    ok(home, "ls")
    (home / "scratch.toml").write_text("[sync]\nauto = 3\n")
    from tests.sync_support import on
    r = on(home, "--json", "ls")
    assert r.code == 2 and r.json["error"]["code"] == "config_error"
    assert r.json["error"]["message"] == "sync.auto must be true or false, got 3 (scratch.toml)"
    (home / "scratch.toml").write_text("[sync]\nauto = true\nmax_file_bytes = 1000\n")
    rows = {row["key"]: row for row in ok(home, "config")["settings"]}
    assert (rows["sync.auto"]["value"], rows["sync.auto"]["source"]) == (True, "scratch.toml")
    assert rows["sync.max_file_bytes"]["value"] == 1000


def test_a_change_through_an_mcp_tool_syncs_too_and_a_read_does_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scratch.mcp.dispatch import run_tool
    from scratch.mcp.serve.session import ServerState

    remote = bare(tmp_path / "remote.git")
    home = tmp_path / "s"
    ok(home, "remote", "add", "origin", str(remote))
    for k in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("SCRATCH_HOME", str(home))
    monkeypatch.setenv("SCRATCH_SYNC_AUTO", "true")
    session = ServerState().session_for("conn", "default", None, "test")
    out = run_tool("write_file", {"path": "notes/m.md", "content": "via mcp\n"}, session)
    assert out.ok, out.texts
    last_file = home / "state" / "sync-last.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not last_file.exists():
        time.sleep(0.1)
    last = orjson.loads(last_file.read_bytes())
    assert last["errors"] == [] and last["results"][0]["remote"] == "origin"
    assert git(remote, "show", "main:agents/default/files/notes/m.md").stdout == "via mcp\n"
    last_file.unlink()
    assert run_tool("read_file", {"path": "notes/m.md"}, session).ok
    time.sleep(1.0)
    assert not last_file.exists()  # a read changes nothing: no sync started
