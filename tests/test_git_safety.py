"""No git command scratch runs may run a configured program, and git's locks never stall it.

Each attack is real: the store's own .git/config, .git/info/attributes or an untracked
.gitattributes at the store root name a shell script that would leave a marker file, and
scratch's commands (write, ingest small and big, log append, rm, restore, history, reading an
old version) run with real git. Afterwards no marker exists, every commit is there, the
stored blobs are the bytes written, and ``git fsck`` is clean.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scratch.redact import Redaction
from scratch.store.gitstore import blob_sha
from tests.helpers import cli


def git(home: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", "-C", str(home), *args], capture_output=True, text=True,
                          env=env, check=True).stdout


@pytest.fixture
def marker_program(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "MARKER"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat\n")
    script.chmod(0o755)
    return script, marker


def _attack(home: Path, kind: str, script: Path, tmp_path: Path) -> None:
    info = home / ".git" / "info"
    info.mkdir(exist_ok=True)
    if kind == "gpg":
        git(home, "config", "commit.gpgSign", "true")
        git(home, "config", "gpg.program", str(script))
    elif kind == "ssh":
        git(home, "config", "commit.gpgSign", "true")
        git(home, "config", "gpg.format", "ssh")
        git(home, "config", "gpg.ssh.program", str(script))
        git(home, "config", "user.signingkey", str(tmp_path / "key"))
    elif kind == "x509":
        git(home, "config", "commit.gpgSign", "true")
        git(home, "config", "gpg.format", "x509")
        git(home, "config", "gpg.x509.program", str(script))
    elif kind == "clean-info":
        git(home, "config", "filter.x.clean", str(script))
        git(home, "config", "filter.x.smudge", str(script))
        (info / "attributes").write_text("* filter=x\n")
    elif kind == "process-worktree":
        git(home, "config", "filter.x.process", str(script))
        git(home, "config", "filter.x.required", "true")
        (home / ".gitattributes").write_text("* filter=x diff=x\n")
        git(home, "config", "diff.x.textconv", str(script))
    elif kind == "include":
        extra = tmp_path / "extra.gitconfig"
        extra.write_text(f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {script}\n"
                         f"[core]\n\tfsmonitor = {script}\n\thooksPath = {tmp_path}\n"
                         f"\tpager = {script}\n\tsshCommand = {script}\n")
        git(home, "config", "include.path", str(extra))
    elif kind == "eol":
        # no program, but content changed on the way in: CRLF conversion and an encoding
        (info / "attributes").write_text("* text eol=crlf working-tree-encoding=UTF-16\n")
    else:  # pragma: no cover
        raise AssertionError(kind)


ATTACKS = ["gpg", "ssh", "x509", "clean-info", "process-worktree", "include", "eol"]


@pytest.mark.parametrize("kind", ATTACKS)
def test_configured_programs_never_run(scratch_home: Path, tmp_path: Path, kind: str,
                                       marker_program: tuple[Path, Path]) -> None:
    script, marker = marker_program
    assert cli("write", "notes", input="v1\r\nline two\n").code == 0
    _attack(scratch_home, kind, script, tmp_path)
    big = b"".join(b'{"i": %d, "pad": "%s"}\n' % (i, b"x" * 60) for i in range(70_000))
    assert len(big) > 4 << 20  # the object is streamed into git by scratch, a slice at a time
    steps = [
        cli("write", "notes", input="v2\r\nline two\n"),
        cli("ingest", "small", "--store-always", input=b'{"a": [1, 2, 3]}'),
        cli("ingest", "big", "--store-always", input=big),
        cli("log", "append", "lg", "--lines", input="one\ntwo\n"),
        cli("read", "notes@1"),
        cli("history", "notes"),
        cli("restore", "notes@1"),
        cli("rm", "small"),
    ]
    for r in steps:
        assert r.code == 0, (kind, r.out, r.err)
    assert steps[4].out == b"v1\r\nline two\n"
    assert not marker.exists(), marker.read_text()
    # every change is a commit, and what git holds is the bytes written
    log = git(scratch_home, "log", "--format=%s")
    assert "Restore notes (agent default), version 3. Restored from version 1." in log
    assert "Delete small (agent default)." in log
    tree = git(scratch_home, "ls-tree", "-r", "HEAD")
    files = scratch_home / "agents/default/files"
    for name in ("notes", "big"):
        assert blob_sha((files / name).read_bytes()) in tree, name
    assert blob_sha(big) in tree
    fsck = subprocess.run(["git", "-C", str(scratch_home), "fsck", "--strict"],
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def test_commits_are_not_signed_and_leave_the_index_matching_head(scratch_home: Path) -> None:
    cli("write", "a", input="1\n")
    git(scratch_home, "config", "commit.gpgSign", "true")
    git(scratch_home, "config", "gpg.program", "false")  # signing would fail the commit
    assert cli("write", "a", input="2\n").code == 0
    assert "gpgsig" not in git(scratch_home, "cat-file", "commit", "HEAD")
    assert git(scratch_home, "-c", "commit.gpgSign=false", "status", "--porcelain") == ""


# ---------------------------------------------------------------------------------------------
# git's own lock files


HOLDER = """
import sys, time, pathlib
lock = pathlib.Path(sys.argv[1])
fh = open(lock, "x")  # as git does: O_CREAT|O_EXCL, kept open while it works
print("held", flush=True)
sys.stdin.readline()
fh.close()
lock.unlink()
"""


def _store(home: Path):  # type: ignore[no-untyped-def]
    from scratch.store import Store

    return Store.open(home, "default")


def test_a_stale_index_lock_is_cleared_at_once(scratch_home: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import scratch.store.gitstore as gs

    cli("write", "a", input="1\n")
    lock = scratch_home / ".git/index.lock"
    lock.write_bytes(b"")  # left by a git killed with its process group: nobody has it open
    # not because of its age: it is new, and the age rule is pushed out of reach
    monkeypatch.setattr(gs, "STALE_LOCK_SECONDS", 1e9)
    store = _store(scratch_home)
    store.write("a", b"2\n", redaction=Redaction())
    assert not lock.exists()
    assert git(scratch_home, "status", "--porcelain") == ""
    assert git(scratch_home, "show", "HEAD:agents/default/files/a") == "2\n"


def test_a_stale_branch_lock_is_cleared_at_once(scratch_home: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import scratch.store.gitstore as gs

    cli("write", "a", input="1\n")
    lock = scratch_home / ".git/refs/heads/main.lock"
    lock.write_text("0" * 40 + "\n")
    monkeypatch.setattr(gs, "STALE_LOCK_SECONDS", 1e9)
    _store(scratch_home).write("a", b"2\n", redaction=Redaction())
    assert not lock.exists()
    assert git(scratch_home, "show", "HEAD:agents/default/files/a") == "2\n"


def test_a_live_index_lock_is_respected(scratch_home: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    cli("write", "a", input="1\n")
    lock = scratch_home / ".git/index.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        before = (scratch_home / ".git/index").read_bytes()
        slept: list[float] = []
        with monkeypatch.context() as m:
            m.setattr(time, "sleep", slept.append)
            assert cli("write", "a", input="2\n").code == 0  # the commit needs no index
        assert slept == []  # and does not wait for the lock to go, nor for its age
        assert lock.exists()  # not taken from its live holder
        assert (scratch_home / ".git/index").read_bytes() == before  # left to the holder
        assert git(scratch_home, "show", "HEAD:agents/default/files/a") == "2\n"
    finally:
        assert holder.stdin is not None
        holder.stdin.write("done\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    assert holder.returncode == 0 and not lock.exists()
    assert cli("write", "a", input="3\n").code == 0
    assert git(scratch_home, "status", "--porcelain") == ""  # the index caught up


def test_lock_holders_sees_an_open_file(tmp_path: Path) -> None:
    from scratch.store.gitstore import lock_holders

    path = tmp_path / "some.lock"
    path.write_bytes(b"")
    if lock_holders(path) is None:
        pytest.skip("no /proc on this system")
    assert lock_holders(path) is False
    with open(path, "rb"):
        assert lock_holders(path) is True
    assert lock_holders(path) is False


def test_loose_objects_are_packed_as_gc_auto_would(scratch_home: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import scratch.store.gitstore as gs

    cli("write", "a", input="1\n")
    counts = dict(line.split(": ") for line in git(scratch_home, "count-objects", "-v")
                  .splitlines())
    assert int(counts["count"]) > 0 and counts["packs"] == "0"
    monkeypatch.setattr(gs, "LOOSE_OBJECTS_PER_FANOUT", -1)  # as if 17/ were full
    _store(scratch_home).write("a", b"2\n", redaction=Redaction())
    counts = dict(line.split(": ") for line in git(scratch_home, "count-objects", "-v")
                  .splitlines())
    assert counts["count"] == "0" and int(counts["packs"]) >= 1
    assert cli("read", "a").out == b"2\n" and cli("read", "a@1").out == b"1\n"
    assert subprocess.run(["git", "-C", str(scratch_home), "fsck", "--strict"],
                          capture_output=True).returncode == 0
