"""scratch purge across stores: the next sync replaces the remote's history (force with lease on
the commit last seen there; a local-path remote is pruned), a second store that syncs from it
applies the purge to its own history, and a remote that moved since the purge is refused
until asked to replace its history. Real bare remotes, real stores, byte searches of each."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.purge_support import anywhere, history_holds, lost_found
from tests.sync_support import bare, fsck_clean, git, ok, on, sync

MARKER = "SYNC-PURGE-MARKER-51c0de"


def two_stores(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A and B sharing remote R; both hold secret.md (two versions, each with the marker)."""
    remote = bare(tmp_path / "remote.git")
    a, b = tmp_path / "a", tmp_path / "b"
    for home in (a, b):
        ok(home, "remote", "add", "origin", str(remote))
    ok(a, "write", "keep.md", input="kept\n")
    ok(a, "write", "secret.md", input=f"one {MARKER}\n")
    sync(a)
    ok(a, "write", "secret.md", input=f"two {MARKER}\n")
    ok(a, "log", "append", "ev", "e1")
    sync(a)
    sync(b)
    ok(b, "write", "b.md", input="from b\n")
    ok(b, "read", "secret.md@1")
    sync(b)
    sync(a)
    for repo in (a, b, remote):
        assert anywhere(repo, MARKER.encode())
    return a, b, remote


def clean(repo: Path) -> None:
    assert anywhere(repo, MARKER.encode()) == []
    assert not history_holds(repo, MARKER)
    assert "dangling" not in lost_found(repo)
    fsck_clean(repo)


def test_a_purge_reaches_the_remote_and_every_store_that_syncs(tmp_path: Path) -> None:
    a, b, remote = two_stores(tmp_path)
    dry = ok(a, "purge", "--dry-run", "secret.md")
    assert dry["remotes"] == [{"remote": "origin", "url": str(remote), "rewritten": True,
                               "pruned": True}]
    text = on(a, "purge", "--dry-run", "secret.md").text
    assert ("remote origin: history replaced at the next sync (force with lease; a "
            "local path: pruned there too)\n") in text
    done = ok(a, "purge", "secret.md")
    clean(a)
    assert anywhere(remote, MARKER.encode())  # until the next sync
    first = sync(a)
    assert first["replaced"] is True and first["pruned"] is True and first["pushed"]
    clean(remote)
    assert git(remote, "rev-parse", "main").stdout.strip() == first["pushed"]
    human = sync(a)  # once replaced, an ordinary sync again
    assert human["replaced"] is False
    # B learns of the purge from what it fetches, and drops the entry and its objects
    second = sync(b)
    assert second["purges_applied"] == [done["purge"]]
    clean(b)
    assert on(b, "--json", "read", "secret.md").json["error"]["code"] == "entry_not_found"
    assert on(b, "read", "b.md").text == "from b\n" and on(b, "read", "keep.md").text == "kept\n"
    assert [e["entry"] for e in ok(b, "log", "read", "ev")["entries"]] == ["e1"]
    # and the stores go on syncing as before: B's history is the remote's again
    ok(b, "write", "after.md", input="later\n")
    assert sync(b)["pushed"]
    sync(a)
    assert on(a, "read", "after.md").text == "later\n"
    for repo in (a, b, remote):
        clean(repo)
    assert (a / "purges" / f"{done['purge']}.json").is_file()
    assert (b / "purges" / f"{done['purge']}.json").is_file()


def test_a_remote_that_moved_since_the_purge_is_refused_until_asked(tmp_path: Path) -> None:
    a, b, remote = two_stores(tmp_path)
    ok(a, "purge", "secret.md")
    ok(b, "write", "b2.md", input="pushed after the purge\n")
    sync(b)  # B knows nothing of it yet: the remote moves on, secret.md and all
    moved = git(remote, "rev-parse", "main").stdout.strip()
    r = on(a, "--json", "sync")
    assert r.code == 1
    err = r.json["error"]
    assert err["code"] == "sync_remote_moved" and err["remote"] == "origin"
    assert err["message"].startswith("origin moved since this store's purge: another store "
                                     "pushed to it, and what it has still holds entries purged "
                                     "here (secret.md (agent default))")
    # as printed, it runs on the same store (its --store repeated) and answers in JSON
    assert [s["shell"] for s in err["suggestions"]] == [
        f"scratch sync origin --replace-history --store {a} --json"]
    assert git(remote, "rev-parse", "main").stdout.strip() == moved  # untouched
    clean(a)  # what the refused fetch brought is gone again
    replaced = ok(a, "sync", "--replace-history")["remotes"][0]
    assert replaced["replaced"] is True and replaced["pruned"] is True
    clean(remote)
    assert on(a, "read", "b2.md").text == "pushed after the purge\n"  # B's work is kept
    applied = sync(b)
    assert len(applied["purges_applied"]) == 1
    clean(b)
    assert on(b, "read", "b2.md").text == "pushed after the purge\n"
    sync(a)
    clean(a)


def test_status_never_fetches_a_history_a_purge_replaces(tmp_path: Path) -> None:
    a, _b, remote = two_stores(tmp_path)
    ok(a, "purge", "secret.md")
    status = ok(a, "sync", "--status")["status"][0]
    assert status["purge"].startswith("a purge here rewrote its history")
    clean(a)
    assert "a purge here rewrote its history" in on(a, "sync", "--status").text
    sync(a)
    clean(remote)


def test_the_synced_call_log_is_scrubbed_in_history_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRATCH_LEDGER_SYNC_LOG", "calls")
    remote = bare(tmp_path / "remote.git")
    a, b = tmp_path / "a", tmp_path / "b"
    for home in (a, b):
        ok(home, "remote", "add", "origin", str(remote))
    ok(a, "write", "secret.md", input=f"{MARKER}\n")
    ok(a, "grep", "secret.md", MARKER)  # the marker is in the call's arguments
    ok(a, "write", "other.md", input="other\n")
    sync(a)
    sync(b)  # B pushes its own calls
    sync(a)  # so A has seen the remote's last commit when it purges
    calls = [e["entry"] for e in ok(a, "log", "read", "calls")["entries"]]
    assert any(c["command"] == "grep" and c["args"].get("pattern") == MARKER for c in calls)
    assert anywhere(b, MARKER.encode())
    dry = ok(a, "purge", "--dry-run", "secret.md")
    assert dry["sync_logs"] == {"agents/default/logs/calls.jsonl": 2}  # the write, the grep
    ok(a, "purge", "secret.md")
    clean(a)
    after = [e["entry"] for e in ok(a, "log", "read", "calls")["entries"]]
    assert len(after) == len(calls)  # the same ids and lines, two of them scrubbed
    assert [c["command"] for c in after] == [c["command"] for c in calls]
    assert sum(1 for c in after if c.get("purged")) == 2
    sync(a)
    clean(remote)
    sync(b)
    clean(b)
