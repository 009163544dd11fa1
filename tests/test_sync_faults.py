"""Sync faults: a remote that rewrote its history, one with unrelated or unsafe content, one
that cannot be reached, and the connection dying mid-push and mid-fetch. After each: the
store opens, nothing half-merged is in view, ``git fsck`` is clean, and a second sync
completes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.sync_support import bare, fsck_clean, git, git_env, ok, on, snapshot, sync


def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    remote = bare(tmp_path / "remote.git")
    a, b = tmp_path / "a", tmp_path / "b"
    for home in (a, b):
        ok(home, "remote", "add", "origin", str(remote))
    ok(a, "write", "f.md", input="v1\n")
    ok(a, "log", "append", "ev", "e1")
    sync(a)
    return a, b, remote


def whole(home: Path) -> None:
    """The store opens, its work tree is exactly HEAD's, its repository is sound."""
    assert on(home, "ls").code == 0
    assert git(home, "status", "--porcelain").stdout == ""
    fsck_clean(home)


def commit_on(remote: Path, files: dict[str, str], parents: list[str] = ()) -> str:
    """A commit made straight in the bare remote holding ``files``."""
    env = dict(git_env(), GIT_INDEX_FILE=str(remote / "tmp-index"), GIT_AUTHOR_NAME="x",
               GIT_AUTHOR_EMAIL="x@x", GIT_COMMITTER_NAME="x", GIT_COMMITTER_EMAIL="x@x")
    subprocess.run(["git", f"--git-dir={remote}", "read-tree", "--empty"], env=env, check=True)
    for path, body in files.items():
        mode = "120000" if body.startswith("->") else "100644"
        sha = subprocess.run(["git", f"--git-dir={remote}", "hash-object", "-w", "--stdin"],
                             input=body.removeprefix("->"), text=True, capture_output=True,
                             env=env, check=True).stdout.strip()
        subprocess.run(["git", f"--git-dir={remote}", "update-index", "--add", "--cacheinfo",
                        f"{mode},{sha},{path}"], env=env, check=True)
    tree = subprocess.run(["git", f"--git-dir={remote}", "write-tree"], env=env, text=True,
                          capture_output=True, check=True).stdout.strip()
    args = [a for p in parents for a in ("-p", p)]
    return subprocess.run(["git", f"--git-dir={remote}", "commit-tree", tree, "-m", "x", *args],
                          env=env, text=True, capture_output=True, check=True).stdout.strip()


def test_a_remote_that_rewrote_its_history_is_refused_never_forced(tmp_path: Path) -> None:
    a, _b, remote = setup(tmp_path)
    other = commit_on(remote, {".gitignore": "/cache/\n", "agents/default/files/g.md": "g\n"})
    git(remote, "update-ref", "refs/heads/main", other)
    before = git(a, "rev-parse", "HEAD").stdout
    ok(a, "write", "f.md", input="v2\n")
    r = on(a, "--json", "sync")
    assert r.code == 1
    err = r.json["error"]
    assert err["code"] == "sync_remote_rewritten" and err["remote"] == "origin"
    assert [s["shell"] for s in err["suggestions"]] == [
        f"scratch remote remove origin --store {a} --json",
        f"scratch remote add origin URL --store {a} --json"]
    assert git(remote, "rev-parse", "main").stdout.strip() == other  # untouched
    assert not (a / "agents/default/files/g.md").exists()
    assert git(a, "rev-parse", "HEAD~1").stdout == before
    human = on(a, "sync")
    assert human.err.startswith("error [sync_remote_rewritten]: origin rewrote its history")
    whole(a)
    # once the user points the store at it afresh, it merges (nothing of its own lost)
    ok(a, "remote", "remove", "origin")
    ok(a, "remote", "add", "origin", str(remote))
    sync(a)
    assert (a / "agents/default/files/g.md").read_bytes() == b"g\n"
    assert on(a, "read", "f.md").out == b"v2\n"
    whole(a)


def test_a_remote_with_unrelated_history_is_refused(tmp_path: Path) -> None:
    a, _b, _remote = setup(tmp_path)
    foreign = bare(tmp_path / "project.git")
    git(foreign, "update-ref", "refs/heads/main",
        commit_on(foreign, {"README.md": "a project\n", "src/main.c": "int main;\n"}))
    ok(a, "remote", "add", "project", str(foreign))
    r = on(a, "--json", "sync", "project")
    assert r.code == 1 and r.json["error"]["code"] == "sync_unrelated_history"
    assert r.json["error"]["path"] == "README.md"
    assert not (a / "README.md").exists()
    whole(a)
    assert sync(a, "origin")["attempts"] == 1  # a second sync (to its own remote) completes


def test_a_remote_holding_a_symlink_is_refused(tmp_path: Path) -> None:
    a, _b, remote = setup(tmp_path)
    tip = git(remote, "rev-parse", "main").stdout.strip()
    files = {p: git(remote, "show", f"main:{p}").stdout
             for p in git(remote, "ls-tree", "-r", "--name-only", "main").stdout.split()}
    files["agents/default/files/passwd"] = "->/etc/passwd"
    git(remote, "update-ref", "refs/heads/main", commit_on(remote, files, [tip]))
    r = on(a, "--json", "sync")
    assert r.code == 1 and r.json["error"]["code"] == "sync_unsafe_remote"
    assert r.json["error"]["path"] == "agents/default/files/passwd"
    assert not os.path.lexists(a / "agents/default/files/passwd")
    whole(a)


def test_an_unreachable_remote_fails_cleanly(tmp_path: Path) -> None:
    a, _b, _remote = setup(tmp_path)
    ok(a, "remote", "add", "gone", str(tmp_path / "nowhere.git"))
    r = on(a, "--json", "sync", "gone")
    assert r.code == 1 and r.json["error"]["code"] == "sync_fetch_failed"
    assert r.json["error"]["stage"] == "fetch"
    status = ok(a, "sync", "gone", "--status")["status"][0]
    assert status["fetched"] is False and "failed" in status["fetch_error"]
    whole(a)


def _kill_when_running(needle: str, remote: Path, done: threading.Event,
                       killed: list[int]) -> None:
    """Kill the remote side of a transfer (``needle``: receive-pack or upload-pack) as soon as
    it runs: what a dropped connection looks like to the side that stays."""
    while not done.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if needle.encode() in cmd and str(remote).encode() in cmd:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                    killed.append(int(pid))
                except ProcessLookupError:
                    pass
                return
        time.sleep(0.002)


def _cli_process(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["SCRATCH_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "scratch", "--json", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("stage", ["push", "fetch"])
def test_the_connection_dying_mid_transfer(tmp_path: Path, stage: str) -> None:
    a, b, remote = setup(tmp_path)
    for i in range(2):  # what the remote side is killed while it receives or sends
        ok(a, "write", f"blob{i}.bin", input=os.urandom(2 << 20))
    if stage == "fetch":
        sync(a)
    home, needle = (a, "receive-pack") if stage == "push" else (b, "upload-pack")
    done, killed = threading.Event(), []
    watcher = threading.Thread(target=_kill_when_running, args=(needle, remote, done, killed))
    watcher.start()
    try:
        proc = _cli_process(home, "sync")
    finally:
        done.set()
        watcher.join()
    assert killed, "the transfer ended before it could be cut"
    assert proc.returncode == 1, proc.stdout
    assert f'"code":"sync_{stage}_failed"' in proc.stdout
    whole(home)
    fsck_clean(remote)
    sync(home)  # a second sync completes
    sync(b)
    sync(a)
    assert snapshot(a) == snapshot(b)
    for repo in (a, b, remote):
        fsck_clean(repo)
