"""Torture checks (see tests/torture.py): processes at once, processes killed at random moments,
and the crash points between them made deterministic.

The suite runs small versions; the ``slow`` ones are the sizes of the run that found the bugs
(8 processes x 200 operations; 150 kills: a few minutes on 2 cores), run with
``SCRATCH_SLOW=1 python -m pytest tests/test_torture.py -m slow``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import torture
from tests.helpers import cli

full_size = pytest.mark.skipif(os.environ.get("SCRATCH_SLOW") != "1",
                               reason="full-size torture run: set SCRATCH_SLOW=1")


def test_processes_with_mixed_operations(tmp_path: Path) -> None:
    report = torture.run_mixed(tmp_path / "store", workers=4, ops=40)
    torture.check_mixed(tmp_path / "store", report)
    assert report["reads"] > 0 and report["batches"] and report["writes"]


@pytest.mark.slow
@full_size
def test_eight_processes_two_hundred_operations_each(tmp_path: Path) -> None:
    report = torture.run_mixed(tmp_path / "store", workers=8, ops=200)
    torture.check_mixed(tmp_path / "store", report)
    assert len(report["seen"]) > 100


def test_kill_9_during_writes_and_log_batches(tmp_path: Path) -> None:
    report = torture.run_kills(tmp_path / "store", kills=30)
    assert report["killed"] > 0 and report["finished"] > 0
    torture.check_kills(tmp_path / "store", report)


@pytest.mark.slow
@full_size
def test_kill_9_many_times(tmp_path: Path) -> None:
    report = torture.run_kills(tmp_path / "store", kills=150, seed=11)
    assert report["killed"] > 30
    torture.check_kills(tmp_path / "store", report)


# ---------------------------------------------------------------------------------------------
# the crash points, one at a time: a process dies (os._exit, as SIGKILL would leave it) exactly
# there, and the next open recovers

DIE = """
import os, sys
from pathlib import Path
from scratch.store import Store
from scratch.store import logs
from scratch.redact.records import Redaction
st = Store.open(Path(sys.argv[1]), "default")
point = sys.argv[2]
def die(*a, **k):
    os._exit(9)
if point == "before-swap":  # new files written beside their targets, nothing moved yet
    st._swapping = die
elif point == "before-commit":  # the new version in place, not committed
    st.git.commit = die
elif point == "before-index":  # committed, its index not moved into .git/index yet
    st.git._install_index = die
elif point == "log-before-commit":
    st.git.commit = die
if point.startswith("log"):
    logs.append(st, "lg", [b"killed-1", b"killed-2"], redaction=Redaction())
else:
    st.write("a", b"v2\\n", redaction=Redaction())
"""


def _die_at(home: Path, point: str) -> None:
    proc = subprocess.run([sys.executable, "-c", DIE, str(home), point], capture_output=True)
    assert proc.returncode == 9, proc.stderr


def _tmp_files(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in (home / "agents").rglob(".tmp-*"))


@pytest.mark.parametrize("point", ["before-swap", "before-commit", "before-index"])
def test_a_writer_killed_at_each_point_is_recovered(scratch_home: Path, point: str) -> None:
    cli("write", "a", input="v1\n")
    _die_at(scratch_home, point)
    if point == "before-swap":
        assert _tmp_files(scratch_home)  # what a kill leaves: temporaries beside the entries
    r = cli("read", "a")  # the next open recovers, then answers
    assert r.code == 0
    assert r.out == (b"v2\n" if point == "before-index" else b"v1\n")
    assert _tmp_files(scratch_home) == []
    assert not (scratch_home / "state/journal.json").exists()
    assert not (scratch_home / "state/writer").exists()
    status = torture.git(scratch_home, "status", "--porcelain", "--untracked-files=no")
    assert status.stdout == ""
    assert torture.git(scratch_home, "fsck", "--strict").returncode == 0
    assert cli("write", "a", input="v3\n").code == 0
    assert cli("read", "a").out == b"v3\n"


def test_a_killed_log_append_is_undone(scratch_home: Path) -> None:
    cli("log", "append", "lg", input="kept")
    before = (scratch_home / "agents/default/logs/lg.jsonl").read_bytes()
    _die_at(scratch_home, "log-before-commit")
    assert b"killed-1" in (scratch_home / "agents/default/logs/lg.jsonl").read_bytes()
    r = cli("log", "read", "lg", "--json")  # the next open cuts the uncommitted batch off
    assert [e["entry"] for e in r.json["data"]["entries"]] == ["kept"]
    assert (scratch_home / "agents/default/logs/lg.jsonl").read_bytes() == before
    status = torture.git(scratch_home, "status", "--porcelain", "--untracked-files=no")
    assert status.stdout == ""
    r = cli("log", "append", "lg", "--json", input="next")
    assert r.json["data"]["first_id"] == 2  # the batch that never committed left no gap


def test_temporaries_of_dead_processes_in_cache_and_state_are_swept(scratch_home: Path) -> None:
    cli("write", "a", input="v1\n")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    left = [scratch_home / "cache/tmp" / f".tmp-spool-{dead}-abcd1234",
            scratch_home / "cache/tmp" / f".tmp-ingest-{dead}-zz",
            scratch_home / "state" / f".tmp-{dead}-0123456789ab~"]
    mine = scratch_home / "cache/tmp" / f".tmp-spool-{os.getpid()}-alive"
    for p in [*left, mine]:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x")
    assert cli("ls").code == 0
    assert [p.exists() for p in left] == [False, False, False]
    assert mine.exists()  # its creator (this process) is alive
