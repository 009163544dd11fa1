"""scratch remote / scratch sync: the commands, and each merge rule, on real stores with a
bare remote in a temp dir (file remotes only: no network)."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from tests.sync_support import bare, fsck_clean, git, ok, on, snapshot, sync


@pytest.fixture
def trio(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Stores a and b, each with remote origin at the same bare repository."""
    remote = bare(tmp_path / "remote.git")
    a, b = tmp_path / "a", tmp_path / "b"
    for home in (a, b):
        ok(home, "remote", "add", "origin", str(remote))
    return a, b, remote


def append(home: Path, log: str, *entries: str) -> None:
    for entry in entries:
        ok(home, "log", "append", log, entry)
        time.sleep(0.003)  # distinct millisecond timestamps


def test_remote_add_list_remove(tmp_path: Path) -> None:
    home = tmp_path / "s"
    remote = bare(tmp_path / "r.git")
    assert ok(home, "remote", "add", "origin", str(remote)) == {"name": "origin",
                                                                "url": str(remote)}
    assert ok(home, "remote", "list") == {"remotes": [{"name": "origin", "url": str(remote)}]}
    r = on(home, "remote", "list")
    assert r.text == f"name    url\norigin  {remote}\n"
    dup = on(home, "--json", "remote", "add", "origin", str(remote))
    assert dup.code == 2 and dup.json["error"]["code"] == "remote_exists"
    for url in ("ext::sh -c touch% /tmp/pwned", "-oProxyCommand=x", "fd::3", "foo::bar",
                "gopher://x/y", ""):
        bad = on(home, "--json", "remote", "add", "--", "evil", url)
        assert bad.code == 2 and bad.json["error"]["code"] == "invalid_remote_url", url
    bad = on(home, "--json", "remote", "add", "no/slash", str(remote))
    assert bad.json["error"]["code"] == "invalid_remote_name"
    sync(home)
    assert git(home, "for-each-ref", "--format=%(refname)", "refs/remotes", "refs/scratch"
               ).stdout.split() == ["refs/remotes/origin/main",
                                    "refs/scratch/sync/origin/default"]
    assert ok(home, "remote", "remove", "origin") == {"name": "origin", "url": str(remote),
                                                      "removed": True}
    assert git(home, "for-each-ref", "refs/remotes", "refs/scratch").stdout == ""
    gone = on(home, "--json", "remote", "remove", "origin")
    assert gone.code == 4 and gone.json["error"]["code"] == "remote_not_found"
    none = on(home, "--json", "sync")
    assert none.code == 2 and none.json["error"]["code"] == "no_remote"
    assert none.json["error"]["suggestions"] == [{
        "command": "remote add", "args": {"name": "origin", "url": "URL"},
        "shell": f"scratch remote add origin URL --store {home} --json"}]


def test_first_sync_pushes_and_another_store_receives(trio: tuple[Path, Path, Path]) -> None:
    a, b, remote = trio
    ok(a, "write", "notes/plan.md", input="step 1\n")
    append(a, "events", "a1")
    first = sync(a)
    assert first["sent"] == [{"agent": "default", "name": "events"},
                             {"agent": "default", "name": "notes/plan.md"}]
    assert first["pushed"] == git(remote, "rev-parse", "main").stdout.strip()
    got = sync(b)
    assert sorted(r["name"] for r in got["received"]) == ["events", "notes/plan.md"]
    assert got["pushed"] is None and got["local_commit"] is not None
    assert snapshot(a) == snapshot(b)
    assert on(b, "read", "notes/plan.md").out == b"step 1\n"
    again = sync(b)
    assert (again["received"], again["sent"], again["pushed"], again["local_commit"]) == \
        ([], [], None, None)
    assert on(b, "sync").text == "sync origin (agent default): received 0 entries, sent 0; " \
        "up to date\n"
    for repo in (a, b, remote):
        fsck_clean(repo)
    assert git(b, "status", "--porcelain").stdout == ""  # the work tree is HEAD's


def test_logs_every_entry_once_in_timestamp_order_with_moved_ids(
        trio: tuple[Path, Path, Path]) -> None:
    a, b, _ = trio
    append(a, "ev", "a1")
    sync(a)
    sync(b)
    append(a, "ev", "a2")
    append(b, "ev", "b1", "b2")
    append(a, "ev", "a3")
    assert sync(b)["pushed"]
    merged = sync(a)
    assert merged["logs"] == [{"agent": "default", "name": "ev", "received": 2,
                               "renumbered": [{"from": [3, 3], "to": [5, 5]}],
                               "first_changed_id": 3}]
    text = on(a, "sync").text  # nothing new now
    assert "ids" not in text
    back = sync(b)
    assert back["logs"] == [{"agent": "default", "name": "ev", "received": 2,
                             "renumbered": [{"from": [2, 3], "to": [3, 4]}],
                             "first_changed_id": 2}]
    rows = snapshot(a)["ev"]
    assert [(i, e) for i, _, e in rows] == [(1, "a1"), (2, "a2"), (3, "b1"), (4, "b2"),
                                            (5, "a3")]
    assert [ts for _, ts, _ in rows] == sorted(ts for _, ts, _ in rows)
    assert snapshot(a) == snapshot(b)
    meta = orjson.loads((a / "agents/default/meta/ev.json").read_bytes())
    assert meta["log"] == {"next_id": 6, "count": 5, "first_id": 1}
    ok(a, "log", "append", "ev", "a4")
    assert ok(a, "log", "tail", "ev", "-n", "1")["entries"][0]["id"] == 6


def test_log_renumbering_is_reported_in_human_output(trio: tuple[Path, Path, Path]) -> None:
    a, b, _ = trio
    sync(a)
    append(b, "ev", "b1")
    append(a, "ev", "a1")
    sync(b)
    r = on(a, "sync")
    assert r.code == 0
    assert r.text.splitlines()[1:] == ["  log ev: ids 1 are now 2",
                                       "  log ev: 1 new entry; read on with scratch log read ev "
                                       f"--since 0 --store {a}"]  # runs as printed


def test_versions_written_on_both_sides_are_both_kept(trio: tuple[Path, Path, Path]) -> None:
    a, b, _ = trio
    ok(a, "write", "f.md", input="one\n")
    sync(a)
    sync(b)
    ok(a, "write", "f.md", input="two from a\n")
    time.sleep(0.01)
    ok(b, "write", "f.md", input="two from b\n")
    sync(b)
    got = sync(a)
    assert got["versions"] == [{"agent": "default", "name": "f.md", "ours": [2],
                                "theirs": [3], "renumbered": [], "current": 3}]
    back = sync(b)
    assert back["versions"] == [{"agent": "default", "name": "f.md", "ours": [3],
                                 "theirs": [2], "renumbered": [{"from": 2, "to": 3}],
                                 "current": 3}]
    for home in (a, b):
        assert on(home, "read", "f.md").out == b"two from b\n"  # written last
        assert on(home, "read", "f.md@2").out == b"two from a\n"
        diff = ok(home, "read", "f.md", "--since-version", "2")
        assert (diff["from_version"], diff["to_version"], diff["added"], diff["removed"]) == \
            (2, 3, 1, 1)
    assert snapshot(a) == snapshot(b)


def test_delete_on_one_side_and_write_on_the_other_keeps_the_write(
        trio: tuple[Path, Path, Path]) -> None:
    a, b, _ = trio
    ok(a, "write", "f.md", input="v1\n")
    append(a, "ev", "e1")
    sync(a)
    sync(b)
    ok(a, "rm", "f.md")
    ok(a, "rm", "ev")
    ok(b, "write", "f.md", input="v2 from b\n")
    append(b, "ev", "e2")
    sync(a)
    got = sync(b)
    assert sorted(k["name"] for k in got["kept_writes"]) == ["ev", "f.md"]
    sync(a)
    for home in (a, b):
        assert on(home, "read", "f.md").out == b"v2 from b\n"
        assert [e for _, _, e in snapshot(home)["ev"]] == ["e1", "e2"]
    assert snapshot(a) == snapshot(b)
    ok(a, "rm", "f.md")
    sync(a)
    sync(b)
    assert on(b, "--json", "read", "f.md").json["error"]["code"] == "entry_not_found"


def test_the_same_output_stored_on_two_stores_is_one_entry(
        trio: tuple[Path, Path, Path]) -> None:
    a, b, _ = trio
    sync(a)
    sync(b)
    body = "".join(f"line {i} of a tool output\n" for i in range(50))
    name_b = ok(b, "ingest", "--tool", "probe", "--store-always", input=body)["name"]
    time.sleep(1.1)  # another second: another automatic name
    name_a = ok(a, "ingest", "--tool", "probe", "--store-always", input=body)["name"]
    assert name_a != name_b and name_a[-8:] == name_b[-8:]
    sync(b)
    got = sync(a)
    assert got["deduplicated"] == [{"agent": "default", "name": name_a, "same_as": name_b}]
    sync(b)
    for home in (a, b):
        assert [r["name"] for r in ok(home, "ls")["entries"]] == [name_b]
        assert on(home, "head", name_b[-8:-2], "-n", "1", "--no-numbers").out == \
            b"line 0 of a tool output\n"
    assert snapshot(a) == snapshot(b)


def test_an_output_over_max_file_bytes_stays_local(trio: tuple[Path, Path, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, remote = trio
    monkeypatch.setenv("SCRATCH_SYNC_MAX_FILE_BYTES", "4000")
    big = "".join(f"row {i:05d} of a big output\n" for i in range(400))  # 10,400 bytes
    ok(a, "write", "big.txt", input=big)
    ok(a, "write", "small.txt", input="small\n")
    got = sync(a)
    assert got["local_only"] == [{"agent": "default", "name": "big.txt", "bytes": len(big),
                                  "reason": "over sync.max_file_bytes"}]
    assert on(a, "sync").text == (
        "sync origin (agent default): received 0 entries, sent 0; up to date\n"
        "  local only: big.txt (10,400 bytes, over sync.max_file_bytes)\n")
    blob = git(a, "rev-parse", "HEAD:agents/default/files/big.txt").stdout.strip()
    assert git(remote, "cat-file", "-e", blob, check=False).returncode != 0  # never sent
    assert "agents/default/files/big.txt" not in git(remote, "ls-tree", "-r", "--name-only",
                                                     "main").stdout
    sync(b)
    assert [r["name"] for r in ok(b, "ls")["entries"]] == ["small.txt"]
    status = ok(a, "sync", "--status")["status"][0]["agents"][0]
    assert status["local_only"] == [{"name": "big.txt", "bytes": len(big),
                                     "reason": "over sync.max_file_bytes"}]
    ok(a, "write", "small.txt", input="small v2\n")  # later changes still travel
    sync(a)
    sync(b)
    assert on(b, "read", "small.txt").out == b"small v2\n"
    assert on(a, "read", "big.txt").out == big.encode()  # and it stays whole here
    for repo in (a, b, remote):
        fsck_clean(repo)


def test_agent_option_syncs_one_namespace_and_all_every_one(
        trio: tuple[Path, Path, Path]) -> None:
    a, b, _ = trio
    ok(a, "write", "x.md", "--agent", "ops", input="ops\n")
    ok(a, "write", "y.md", "--agent", "dev", input="dev\n")
    got = sync(a, "--agent", "ops")
    assert got["agents"] == ["ops"] and got["sent"] == [{"agent": "ops", "name": "x.md"}]
    sync(b, "--all")
    assert (b / "agents/ops/files/x.md").read_bytes() == b"ops\n"
    assert not (b / "agents/dev").exists()
    sync(a, "--all")
    sync(b, "--all")
    assert (b / "agents/dev/files/y.md").read_bytes() == b"dev\n"
    ok(b, "write", "z.md", "--agent", "dev", input="z\n")
    ok(b, "write", "w.md", "--agent", "ops", input="w\n")
    sync(b, "--agent", "dev")
    got = sync(a, "--agent", "ops")
    assert got["received"] == []  # ops's change on b was not pushed
    got = sync(a, "--all")
    assert got["received"] == [{"agent": "dev", "name": "z.md"}]


def test_status_shows_ahead_behind_and_local_only(trio: tuple[Path, Path, Path]) -> None:
    a, b, _ = trio
    append(a, "ev", "a1")
    sync(a)
    sync(b)
    append(a, "ev", "a2", "a3")
    ok(a, "write", "mine.md", input="only here\n")
    append(b, "other", "b1")
    sync(b)
    status = ok(a, "sync", "--status")["status"]
    assert status == [{
        "remote": "origin", "url": status[0]["url"], "fetched": True, "fetch_error": None,
        "tip": status[0]["tip"],
        "agents": [{"agent": "default", "ahead": 2, "behind": 1,
                    "outgoing": [{"name": "ev", "log_entries": 2}, {"name": "mine.md"}],
                    "incoming": [{"name": "other", "log_entries": 1}], "both": [],
                    "local_only": [{"name": "mine.md", "reason": "not pushed yet"}]}],
        "purge": None}]
    assert on(a, "sync", "--status").text.splitlines()[1:] == [
        "  default: ahead 2, behind 1, both changed 0",
        "    would send: ev (2 log entries)",
        "    would send: mine.md",
        "    would receive: other (1 log entries)",
        "    only here: mine.md (not pushed yet)"]
    assert snapshot(a)["ev"][-1][2] == "a3"  # --status moved nothing
    assert "other" not in snapshot(a)


def test_sync_json_keys_are_stable(trio: tuple[Path, Path, Path]) -> None:
    a, _, _ = trio
    r = on(a, "--json", "sync")
    doc = r.json
    assert set(doc) == {"scratch", "ok", "command", "data", "meta"}
    assert list(doc["data"]["remotes"][0]) == [
        "remote", "url", "agents", "received", "sent", "logs", "versions", "kept_writes",
        "deduplicated", "conflicts", "warnings", "local_only", "fetched", "local_commit",
        "pushed", "purges_applied", "replaced", "pruned", "attempts"]


def test_an_entry_here_and_a_folder_there_are_both_kept(trio: tuple[Path, Path, Path]) -> None:
    a, b, _ = trio
    sync(a)
    sync(b)
    ok(a, "write", "plan", input="a file named plan\n")
    ok(b, "write", "plan/step1", input="a file in a folder named plan\n")
    sync(b)
    got = sync(a)
    assert [(c["name"], c["theirs_as"][:len("plan.conflict-")], c["theirs_as"][-6:])
            for c in got["conflicts"]] == [("plan/step1", "plan.conflict-", "/step1")]
    moved = got["conflicts"][0]["theirs_as"]
    assert on(a, "read", "plan").out == b"a file named plan\n"
    assert on(a, "read", moved).out == b"a file in a folder named plan\n"
    sync(b)
    assert snapshot(a) == snapshot(b)
