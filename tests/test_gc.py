"""scratch gc: retention.max_age, retention.keep_versions and cache.max_bytes, with and without
--prune-history; the defaults keep everything; gc starts by itself once a day after a change
where retention is configured, and never on a read."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from scratch.store import Store
from scratch.store.gitstore import blob_sha
from scratch.sync.retention import gc
from tests.conftest import REPO
from tests.purge_support import anywhere, history_holds
from tests.sync_support import fsck_clean, git, ok, on

MARKER = "GC-MARKER-0bd5e2"


def configure(home: Path, text: str) -> None:
    (home / "scratch.toml").write_text(text)


def test_the_defaults_keep_everything(scratch_home: Path) -> None:
    home = scratch_home
    for i in range(5):
        ok(home, "write", "n.md", input=f"{i}\n")
    ok(home, "read", "n.md@1")
    head = git(home, "rev-parse", "HEAD").stdout
    r = on(home, "gc")
    assert r.code == 0 and r.text == (
        "nothing to do: no retention is configured (retention.max_age, "
        "retention.keep_versions, cache.max_bytes all keep everything)\n")
    later = datetime.now(UTC) + timedelta(days=3650)
    report = gc(Store.open(home), now=later, prune_history=True)
    assert report["removed"] == [] and report["versions"] == [] and report["purge"] is None
    assert git(home, "rev-parse", "HEAD").stdout == head
    assert ok(home, "read", "n.md@1") and (home / "cache" / "blobs").iterdir()


def test_max_age_removes_as_rm_does_or_purges_with_prune_history(scratch_home: Path) -> None:
    home = scratch_home
    ok(home, "write", "old.md", input=f"{MARKER}\n")
    configure(home, '[retention]\nmax_age = "30d"\n')
    ok(home, "write", "gone.md", input=f"{MARKER} deleted\n")
    ok(home, "rm", "gone.md")
    soon = datetime.now(UTC) + timedelta(days=10)
    assert gc(Store.open(home), now=soon)["removed"] == []
    later = datetime.now(UTC) + timedelta(days=31)
    ok(home, "write", "fresh.md", input="new\n")
    report = gc(Store.open(home), now=later, dry_run=True)
    assert [e["name"] for e in report["removed"]] == ["fresh.md", "old.md"]
    # as rm: the content leaves the work tree, history keeps it, restore brings it back
    report = gc(Store.open(home), now=later)
    assert [e["name"] for e in report["removed"]] == ["fresh.md", "old.md"]
    assert on(home, "read", "old.md").code == 4
    assert git(home, "log", "-1", "--format=%s").stdout.strip() == (
        "Retention (agent default): delete 2 entries unchanged for over 30d.")
    assert history_holds(home, MARKER)
    assert ok(home, "restore", "fresh.md@1")
    # --prune-history: entries unchanged that long, deleted (by rm or by gc) or not (the
    # restored one: a month later it is as old), are purged
    report = gc(Store.open(home), now=later, prune_history=True)
    assert [e["name"] for e in report["removed"]] == ["fresh.md", "gone.md", "old.md"]
    assert report["purge"] is not None and report["purge"]["purge"]
    assert not history_holds(home, MARKER) and anywhere(home, MARKER.encode()) == []
    assert ok(home, "ls")["entries"] == []
    fsck_clean(home)


def test_keep_versions(scratch_home: Path) -> None:
    home = scratch_home
    for i in range(1, 5):
        ok(home, "write", "n.md", input=f"{MARKER} {i}\n" if i < 3 else f"kept {i}\n")
    ok(home, "write", "n.md", input=f"{MARKER} 1\n")  # version 5: the bytes of version 1
    ok(home, "read", "n.md@2")
    ok(home, "read", "n.md@3")
    configure(home, "[retention]\nkeep_versions = 3\n")
    dry = on(home, "gc", "--dry-run")
    assert dry.text == (
        "Would do (--dry-run: nothing was changed):\n"
        "agent default: retention.max_age none, retention.keep_versions 3, cache.max_bytes "
        "no limit\n"
        "n.md (agent default): versions 1, 2 no longer readable (kept: 3, 4, 5); their bytes "
        "stay in git history\n")
    ok(home, "gc")
    gone = on(home, "--json", "read", "n.md@2")
    assert gone.code == 4 and gone.json["error"]["code"] == "version_removed"
    assert gone.json["error"]["message"] == (
        "'n.md' version 2 is no longer kept (retention.keep_versions 3); versions 3-5 are "
        "readable")
    assert on(home, "head", "n.md@1").code == 4
    assert on(home, "read", "n.md@3").text == "kept 3\n"
    assert on(home, "read", "n.md").text == f"{MARKER} 1\n"
    # the cache of version 2 went; version 3's stays (it is still readable)
    assert sorted(p.name for p in (home / "cache" / "blobs").iterdir()) == [
        blob_sha(b"kept 3\n")]
    assert history_holds(home, f"{MARKER} 2")
    again = ok(home, "gc")
    assert again["versions"] == []  # nothing more to do
    pruned = ok(home, "gc", "--prune-history")
    assert pruned["versions"][0]["versions"] == [1, 2]
    assert pruned["purge"]["unkept"] == [{"agent": "default", "name": "n.md",
                                          "versions": [1, 2]}]
    assert not history_holds(home, f"{MARKER} 2")
    assert anywhere(home, f"{MARKER} 2".encode()) == []
    assert history_holds(home, f"{MARKER} 1")  # version 5 holds those bytes: they stay
    meta = orjson.loads((home / "agents/default/meta/n.md.json").read_bytes())
    assert [v.get("removed", "").split(";")[0] for v in meta["versions"]] == [
        "retention.keep_versions 3"] * 2 + [""] * 3
    assert on(home, "read", "n.md@3").text == "kept 3\n"
    fsck_clean(home)


def test_cache_max_bytes_removes_the_oldest_first(scratch_home: Path) -> None:
    home = scratch_home
    for i in range(1, 5):
        ok(home, "write", "n.md", input=f"{i}" * 4000 + "\n")
    for v in (1, 2, 3):
        ok(home, "read", "n.md@" + str(v))
    blobs = home / "cache" / "blobs"
    items = sorted((p for d in ("blobs", "index") for p in (home / "cache" / d).iterdir()),
                   key=lambda p: p.name)
    for age, path in enumerate(items):  # a known order, oldest first: the sorted names
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    total = sum(p.stat().st_size for p in blobs.iterdir())
    assert len(list(blobs.iterdir())) == 3
    configure(home, f"[cache]\nmax_bytes = {total}\n")
    r = ok(home, "gc")["caches"]
    assert r["max_bytes"] == total and r["after"] <= total
    removed = [row["path"] for row in r["removed"]]
    assert removed == [p.relative_to(home).as_posix() for p in items[:len(removed)]]
    assert all(not (home / p).exists() for p in removed)
    assert on(home, "read", "n.md@1").text.startswith("1111")  # rebuilt from git


def test_a_bad_max_age_is_a_config_error(scratch_home: Path) -> None:
    ok(scratch_home, "ls")
    configure(scratch_home, '[retention]\nmax_age = "soon"\n')
    r = on(scratch_home, "--json", "gc")
    assert r.code == 2 and r.json["error"]["code"] == "config_error"
    assert "retention.max_age must be a duration such as 30d" in r.json["error"]["message"]


def wait_for(path: Path, after: object = None, timeout: float = 60.0) -> dict[str, object]:
    """The background gc's record in ``path`` once it says how a run ended (one that began
    other than ``after``): polled, never a fixed sleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = orjson.loads(path.read_bytes())
            if "ok" in value and value.get("started") != after:
                return value
        except (OSError, orjson.JSONDecodeError):
            pass
        time.sleep(0.05)
    pytest.fail(f"{path} never said how a gc ended")


def test_gc_starts_by_itself_once_a_day_after_a_change_never_on_a_read(
        scratch_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = scratch_home
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the detached gc runs this checkout
    ok(home, "write", "n.md", input="1\n")
    ok(home, "write", "n.md", input="2\n")
    last = home / "state" / "gc-last.json"
    configure(home, "[retention]\nkeep_versions = 1\n")
    ok(home, "read", "n.md")
    ok(home, "ls")
    assert not last.exists()  # reads never start it
    ok(home, "write", "other.md", input="x\n")  # a change: it starts, detached
    record = wait_for(last)
    assert record["ok"] is True and record["versions"] == 1
    assert on(home, "--json", "read", "n.md@1").json["error"]["code"] == "version_removed"
    assert git(home, "log", "-1", "--format=%s").stdout.strip() == (
        "Retention (agent default): keep the newest 1 versions of 1 entry.")
    stamp = last.stat().st_mtime
    ok(home, "write", "n.md", input="3\n")  # within the day: no second run
    assert last.stat().st_mtime == stamp and on(home, "read", "n.md@2").code == 0
    old = time.time() - 2 * 86400
    os.utime(last, (old, old))
    ok(home, "write", "n.md", input="4\n")
    wait_for(last, after=record["started"])
    assert last.stat().st_mtime > old
    assert on(home, "--json", "read", "n.md@3").json["error"]["code"] == "version_removed"
