"""scratch purge on one store: every version of an entry goes from the work tree, the whole git
history, the caches (indexes, SQL copies, count caches, old versions, summaries) and the call
ledger; nothing else changes; a dry run says exactly what goes; bad input is refused; a purge
killed at any step leaves a sound store and finishes when run again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from scratch.store.gitstore import blob_sha
from scratch.sync.purge import STEPS
from scratch.sync.scrub import size_of
from tests.conftest import REPO
from tests.helpers import cli
from tests.purge_support import anywhere, history_holds, lost_found
from tests.sync_support import bare, fsck_clean, git, ok, on

MARKER = "PURGE-MARKER-7f3a9c"


def ndjson(rows: int) -> bytes:
    """An NDJSON output over 1 MB (so sql makes its columnar copy), the marker in one row."""
    lines = [orjson.dumps({"i": i, "status": ["ok", "bad"][i % 2],
                           "token": MARKER if i == 7 else f"t{i:08d}", "pad": "x" * 60})
             for i in range(rows)]
    return b"\n".join(lines) + b"\n"


def fill(home: Path) -> None:
    """secret.txt (two versions) and an output holding the marker, read every way that
    leaves a cache or a ledger record; other.txt and a log beside them."""
    ok(home, "write", "notes/keep.md", input="kept before\n")
    ok(home, "write", "secret.txt", input=f"v1 {MARKER}\n")
    ok(home, "write", "secret.txt", input=f"v2 {MARKER} again\n")
    ok(home, "write", "other.txt", input="other\n")
    ok(home, "log", "append", "events", '{"step": 1}')
    ok(home, "ingest", "--tool", "dump", "--store-always", "dump/rows", input=ndjson(20000))
    os.environ["SCRATCH_SQL_COPY"] = "foreground"
    try:
        ok(home, "sql", "dump/rows", "SELECT status, count(*) AS n FROM entry GROUP BY 1")
    finally:
        del os.environ["SCRATCH_SQL_COPY"]
    ok(home, "iterate-over", "dump/rows", ".", "--count-by", "status")
    ok(home, "read", "secret.txt@1")
    ok(home, "grep", "secret.txt", MARKER)
    ok(home, "summarize", "dump/rows")
    ok(home, "grep", "dump/rows", MARKER)


def test_purge_leaves_nothing_of_the_entry_anywhere(scratch_home: Path) -> None:
    home = scratch_home
    fill(home)
    cache = home / "cache"
    assert list((cache / "blobs").iterdir()) and list((cache / "summaries").iterdir())
    assert any((d / "sql").is_dir() for d in (cache / "index").iterdir())
    assert anywhere(home, MARKER.encode()) and history_holds(home, MARKER)
    kept_before = {name: cli("--store", str(home), "read", name).out
                   for name in ("notes/keep.md", "other.txt")}
    first = git(home, "rev-list", "--max-parents=0", "HEAD").stdout.strip()

    a = ok(home, "purge", "secret.txt")
    b = ok(home, "purge", "dump/rows")
    assert [e["name"] for e in a["entries"] + b["entries"]] == ["secret.txt", "dump/rows"]

    assert not history_holds(home, MARKER)
    assert anywhere(home, MARKER.encode()) == []
    assert lost_found(home) == "" and not (home / ".git" / "lost-found").exists()
    fsck_clean(home)
    assert git(home, "status", "--porcelain").stdout == ""
    # what stays is as it was: content, versions, the first commits' ids
    for name, body in kept_before.items():
        assert cli("--store", str(home), "read", name).out == body
    assert ok(home, "log", "read", "events")["entries"][0]["entry"] == {"step": 1}
    assert git(home, "rev-list", "--max-parents=0", "HEAD").stdout.strip() == first
    assert [r["name"] for r in ok(home, "ls")["entries"]] == ["events", "notes/keep.md",
                                                               "other.txt"]
    assert on(home, "--json", "read", "secret.txt").json["error"]["code"] == "entry_not_found"
    # the ledger keeps each call (its seq, time, outcome, tokens) but not what it asked
    records = [orjson.loads(line) for line in
               (home / "state/agents/default/calls.jsonl").read_bytes().splitlines()]
    scrubbed = [r for r in records if r.get("purged")]
    assert {r["entry"] for r in scrubbed} == {"secret.txt", "dump/rows"}
    assert all(set(r) == {"v", "seq", "time", "interface", "agent", "session", "command",
                          "outcome", "code", "tokens", "intercepted", "entry", "version", "ms",
                          "purged"} for r in scrubbed)
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    # the records say what went, never the content
    records_dir = sorted((home / "purges").iterdir())
    assert len(records_dir) == 2
    record = orjson.loads(records_dir[0].read_bytes()) if a["purge"] in records_dir[0].name \
        else orjson.loads(records_dir[1].read_bytes())
    assert record["entries"] == [{"agent": "default", "name": "secret.txt"}]
    assert record["paths"] == ["agents/default/files/secret.txt",
                               "agents/default/logs/secret.txt.jsonl",
                               "agents/default/meta/secret.txt.json"]
    assert len(record["blobs"]) == 4  # two versions, two metadata files


def test_a_dry_run_says_exactly_what_goes_and_changes_nothing(scratch_home: Path) -> None:
    home = scratch_home
    ok(home, "write", "a.md", input="first\n")
    ok(home, "write", "s.md", input=f"{MARKER}\n")
    ok(home, "write", "s.md", input=f"{MARKER} 2\n")
    ok(home, "write", "b.md", input="after\n")
    ok(home, "read", "s.md@1")
    head = git(home, "rev-parse", "HEAD").stdout
    r = on(home, "purge", "--dry-run", "s.md")
    assert r.code == 0, r.err
    old = blob_sha(f"{MARKER}\n".encode())
    caches = [f"cache/blobs/{old}", f"cache/index/{old}.text"]
    size = sum(size_of(home / c) for c in caches)
    assert r.text == (
        "Would purge, from the store and its history (--dry-run: nothing was changed):\n"
        "  s.md (agent default): file, 2 versions\n"
        "history: 1 of 5 commits rewritten, 2 dropped (they held only what goes); 4 objects "
        "of content taken out; 1 ref moved\n"
        f"caches: 2 files and folders ({size:,} bytes):\n"
        f"  {caches[0]}\n  {caches[1]}\n"
        "call ledger: 3 records of agent default scrubbed\n")
    assert git(home, "rev-parse", "HEAD").stdout == head
    assert history_holds(home, MARKER)
    dry = ok(home, "purge", "--dry-run", "s.md")
    done = ok(home, "purge", "s.md")
    assert {**dry, "dry_run": False, "purge": done["purge"], "kept": []} == done


def test_bad_input(scratch_home: Path) -> None:
    home = scratch_home
    ok(home, "write", "a.md", input="a\n")
    missing = on(home, "--json", "purge", "nope.md")
    assert missing.code == 4 and missing.json["error"]["code"] == "entry_not_found"
    for args in ([], ["a.md", "--all"], ["--namespace", "--all"]):
        r = on(home, "--json", "purge", *args)
        assert r.code == 2 and r.json["error"]["code"] == "invalid_argument", args
    bad = on(home, "--json", "purge", "../x")
    assert bad.code == 2 and bad.json["error"]["code"] == "invalid_name"
    nobody = on(home, "--json", "--agent", "ghost", "purge", "--namespace")
    assert nobody.code == 4 and nobody.json["error"]["code"] == "agent_not_found"
    assert git(home, "log", "--oneline").stdout.count("\n") == 2  # nothing was made


def test_a_deleted_entry_and_companions_are_purged_too(scratch_home: Path) -> None:
    home = scratch_home
    ok(home, "write", "gone.md", input=f"{MARKER}\n")
    ok(home, "rm", "gone.md")
    doc = orjson.dumps({"kind": "List", "items": [{"spec": orjson.dumps(
        {"token": MARKER, "n": list(range(300))}).decode()}]})
    ingested = ok(home, "ingest", "--tool", "t", "--store-always", "out", input=doc)
    companions = ingested.get("companions") or []
    gone = ok(home, "purge", "gone.md")
    assert gone["entries"][0]["deleted"] is True
    out = ok(home, "purge", "out")
    assert [e["name"] for e in out["entries"]] == ["out", *companions]
    assert not history_holds(home, MARKER) and anywhere(home, MARKER.encode()) == []
    fsck_clean(home)


def test_a_namespace_and_every_namespace(scratch_home: Path) -> None:
    home = scratch_home
    ok(home, "--agent", "ops", "write", "x.md", input=f"{MARKER} ops\n")
    ok(home, "--agent", "ops", "log", "append", "ev", MARKER)
    ok(home, "--agent", "dev", "write", "y.md", input="dev\n")
    ok(home, "--agent", "ops", "read", "x.md")
    r = ok(home, "--agent", "ops", "purge", "--namespace")
    assert r["namespaces"] == ["ops"] and {e["name"] for e in r["entries"]} == {"x.md", "ev"}
    assert not (home / "agents/ops").exists()
    # the ops ledger went with the namespace: what it holds now is the purge's own call
    assert [c["command"] for c in ok(home, "--agent", "ops", "calls")["calls"]] == ["purge"]
    assert anywhere(home, MARKER.encode()) == [] and not history_holds(home, MARKER)
    assert ok(home, "--agent", "dev", "read", "y.md")
    ok(home, "--agent", "dev", "write", "z.md", input=f"{MARKER} dev\n")
    every = ok(home, "purge", "--all")
    assert every["namespaces"] == ["dev"]  # ops is in neither the files nor history now
    assert not (home / "agents").exists() and anywhere(home, MARKER.encode()) == []
    assert git(home, "ls-files").stdout.split() == [".gitignore"] + [
        f"purges/{p.name}" for p in sorted((home / "purges").iterdir())]
    fsck_clean(home)


# -- kill -9 at every step ---------------------------------------------------------------------

def purge_process(home: Path, name: str, kill_at: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_PURGE")}
    if kill_at:
        env["SCRATCH_PURGE_KILL_AT"] = kill_at
    return subprocess.run([sys.executable, "-m", "scratch", "--store", str(home), "--json",
                           "purge", name], cwd=REPO, env=env, capture_output=True, text=True)


def whole(home: Path) -> None:
    """Every entry readable, the work tree HEAD's, fsck clean."""
    rows = ok(home, "ls")["entries"]
    for row in rows:
        if row["kind"] != "log":
            assert on(home, "read", row["name"]).code == 0
    assert git(home, "status", "--porcelain").stdout == ""
    fsck_clean(home)


@pytest.mark.parametrize("step", STEPS)
def test_a_purge_killed_at_any_step_leaves_a_sound_store_and_finishes(
        tmp_path: Path, scratch_home: Path, step: str) -> None:
    home = scratch_home
    remote = bare(tmp_path / "remote.git")
    ok(home, "remote", "add", "origin", str(remote))
    ok(home, "write", "secret.txt", input=f"v1 {MARKER}\n")
    ok(home, "write", "other.txt", input="other\n")
    ok(home, "sync")  # so several refs move: HEAD, the remote's, the sync bases
    ok(home, "write", "secret.txt", input=f"v2 {MARKER}\n")
    ok(home, "read", "secret.txt@1")
    killed = purge_process(home, "secret.txt", step)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    whole(home)
    assert ok(home, "read", "other.txt")
    again = purge_process(home, "secret.txt", None)
    assert again.returncode == 0, again.stderr
    data = orjson.loads(again.stdout)["data"]
    assert data["entries"][0]["name"] == "secret.txt"
    assert not (home / "state" / "purge.json").exists()
    whole(home)
    assert not history_holds(home, MARKER) and anywhere(home, MARKER.encode()) == []
    assert on(home, "read", "secret.txt").code == 4
