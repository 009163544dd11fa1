"""The store through the real CLI: exact outputs, envelopes, exit codes, commits."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import cli


def git(home: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "-C", str(home), *args], capture_output=True, text=True,
                          env=env, check=True).stdout


def test_write_read_versions_and_unchanged(scratch_home: Path) -> None:
    r = cli("write", "notes/plan.md", input="step 1\n")
    assert (r.code, r.text) == (0, "notes/plan.md: version 1 (7 bytes, 1 line)\n")
    r = cli("write", "notes/plan.md", input="step 1\n")
    assert (r.code, r.text) == (0, "notes/plan.md: unchanged (version 1)\n")
    r = cli("write", "notes/plan.md", "--json", input="step 1\nstep 2\n")
    assert r.json == {"scratch": 1, "ok": True, "command": "write",
                      "data": {"name": "notes/plan.md", "version": 2, "bytes": 14, "lines": 2,
                               "unchanged": False}, "meta": {}}
    assert cli("read", "notes/plan.md").out == b"step 1\nstep 2\n"
    assert cli("read", "notes/plan.md@1").out == b"step 1\n"
    # plain files: a human can cat the current content
    assert (scratch_home / "agents/default/files/notes/plan.md").read_bytes() == b"step 1\nstep 2\n"
    log = git(scratch_home, "log", "--format=%s")
    assert log.splitlines() == ["Write notes/plan.md (agent default), version 2.",
                                "Write notes/plan.md (agent default), version 1.",
                                "Create the scratch store."]


def test_envelope_keys_are_pinned() -> None:
    ok = cli("write", "a", "--json", input="x").json
    assert list(ok) == ["scratch", "ok", "command", "data", "meta"]
    bad = cli("read", "missing", "--json")
    assert bad.code == 4
    assert list(bad.json) == ["scratch", "ok", "command", "error"]
    assert bad.json["ok"] is False
    assert bad.json["error"]["code"] == "entry_not_found"
    assert {"code", "message"} <= set(bad.json["error"])


def test_since_version_compact_diff() -> None:
    lines = [f"line {i}" for i in range(1, 21)]
    cli("write", "f.txt", input="\n".join(lines) + "\n")
    lines2 = list(lines)
    lines2[9] = "line ten"
    lines2.append("line 21")
    cli("write", "f.txt", input="\n".join(lines2) + "\n")
    r = cli("read", "f.txt", "--since-version", "1", "--json")
    assert r.json["data"]["ops"] == [
        {"op": "equal", "count": 9},
        {"op": "remove", "lines": ["line 10"], "line": 10},
        {"op": "add", "lines": ["line ten"], "line": 10},
        {"op": "equal", "count": 10},
        {"op": "add", "lines": ["line 21"], "line": 21},
    ]
    text = cli("read", "f.txt", "--since-version", "1", "-U", "1").text
    assert text == ("--- f.txt@1\n+++ f.txt@2\n@@ -9,3 +9,3 @@\n line 9\n-line 10\n+line ten\n"
                    " line 11\n@@ -20 +20,2 @@\n line 20\n+line 21\n")
    same = cli("read", "f.txt", "--since-version", "2", "--json").json["data"]
    assert same["unchanged"] is True and same["ops"] == []
    missing = cli("read", "f.txt", "--since-version", "7", "--json")
    assert missing.code == 4 and missing.json["error"]["code"] == "version_not_found"


def test_history_diff_restore_rm(scratch_home: Path) -> None:
    cli("write", "a.txt", input="one\n")
    cli("write", "a.txt", input="two\n")
    hist = cli("history", "a.txt", "--json").json["data"]["versions"]
    assert [h["version"] for h in hist] == [1, 2]
    assert [h["bytes"] for h in hist] == [4, 4]
    commits = git(scratch_home, "log", "--format=%h", "--abbrev=12", "--",
                  "agents/default/files/a.txt").split()
    assert [h["commit"] for h in hist] == commits[::-1]
    d = cli("diff", "a.txt", "1", "2")
    assert d.text == "--- a.txt@1\n+++ a.txt@2\n@@ -1 +1 @@\n-one\n+two\n"
    r = cli("restore", "a.txt@1")
    assert r.text == "a.txt: restored version 1 as version 3\n"
    assert cli("read", "a.txt").out == b"one\n"
    r = cli("rm", "a.txt")
    assert r.code == 0
    assert not (scratch_home / "agents/default/files/a.txt").exists()
    assert cli("read", "a.txt").code == 4
    assert cli("ls", "--json").json["data"]["entries"] == []
    assert cli("restore", "a.txt@2").code == 0
    assert cli("read", "a.txt").out == b"two\n"
    assert git(scratch_home, "log", "-1", "--format=%s") == \
        "Restore a.txt (agent default), version 4. Restored from version 2.\n"


@pytest.mark.parametrize("name,rule", [
    ("../x", "'..' segments are not allowed"),
    ("/abs", "a leading '/' is not allowed"),
    ("a//b", "empty segments ('//' or a trailing '/') are not allowed"),
    ("a/./b", "'.' segments are not allowed"),
    ("sp ace", "character ' ' is not allowed; use A-Z a-z 0-9 / _ . -"),
    ("x" * 256, "names are at most 255 characters, this one has 256"),
])
def test_invalid_names_name_the_rule(name: str, rule: str) -> None:
    r = cli("write", name, "--json", input="x")
    assert r.code == 2
    assert r.json["error"]["code"] == "invalid_name"
    assert r.json["error"]["rule"] == rule


def test_agents_are_isolated(scratch_home: Path) -> None:
    cli("write", "secret", "--agent", "alice", input="alice data")
    assert cli("read", "secret", "--agent", "bob").code == 4
    assert cli("ls", "--agent", "bob", "--json").json["data"]["entries"] == []
    r = cli("write", "x", "--agent", "../alice", "--json", input="x")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_agent"
    r = cli("write", "x", "--agent", "ALICE", "--json", input="x")
    assert r.code == 2 and r.json["error"]["code"] == "agent_conflict"
    env_read = cli("read", "secret", env={"SCRATCH_AGENT": "alice"})
    assert env_read.out == b"alice data"


def test_symlink_in_store_is_refused(scratch_home: Path, tmp_path: Path) -> None:
    cli("write", "seed", input="x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "loot").write_text("outside")
    os.symlink(outside, scratch_home / "agents/default/files/link")
    r = cli("read", "link/loot", "--json")
    assert r.code != 0
    r = cli("write", "link/new", "--json", input="x")
    assert r.json["error"]["code"] == "unsafe_path"
    assert not (outside / "new").exists()


def test_logs_append_read_tail() -> None:
    r = cli("log", "append", "events", '{"step": 1}')
    assert r.text == "events: appended entry 1\n"
    r = cli("log", "append", "events", "--lines", input="plain text\n\n[1, 2]\n")
    assert r.text == "events: appended 2 entries, ids 2-3\n"
    page = cli("log", "read", "events", "--limit", "2", "--json").json["data"]
    assert [e["id"] for e in page["entries"]] == [1, 2]
    assert page["entries"][0]["entry"] == {"step": 1}
    assert page["entries"][1]["entry"] == "plain text"
    assert (page["has_more"], page["next_since"]) == (True, 2)
    page = cli("log", "read", "events", "--since", "2", "--json").json["data"]
    assert [e["entry"] for e in page["entries"]] == [[1, 2]]
    assert (page["has_more"], page["next_since"]) == (False, 3)
    tail = cli("log", "tail", "events", "-n", "1", "--json").json["data"]
    assert [e["id"] for e in tail["entries"]] == [3]
    assert all(e["ts"].endswith("Z") for e in page["entries"])


def test_log_ids_never_reused_after_rm() -> None:
    cli("log", "append", "ev", "a")
    cli("log", "append", "ev", "b")
    cli("rm", "ev")
    r = cli("log", "append", "ev", "c", "--json").json["data"]
    assert r["first_id"] == 3


def test_torn_log_line_is_invisible_and_repaired(scratch_home: Path) -> None:
    cli("log", "append", "ev", "a")
    path = scratch_home / "agents/default/logs/ev.jsonl"
    with open(path, "ab") as fh:
        fh.write(b'{"id": 2, "ts": "x", "ent')  # a crash mid-write
    assert [e["id"] for e in cli("log", "read", "ev", "--json").json["data"]["entries"]] == [1]
    cli("log", "append", "ev", "b")
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2 and lines[1].startswith(b'{"id":2,')


def test_limits_and_quotas(scratch_home: Path) -> None:
    scratch_home.mkdir(parents=True)
    (scratch_home / "scratch.toml").write_text(
        "[limits]\nmax_write_bytes = 10\nmax_log_entry_bytes = 5\n[quota]\nfiles = 2\n"
        "log_entries = 3\n")
    r = cli("write", "big", "--json", input="x" * 11)
    assert r.code == 3 and r.json["error"]["code"] == "write_too_large"
    assert r.json["error"]["limit"] == "limits.max_write_bytes"
    r = cli("log", "append", "ev", "123456", "--json")
    assert r.code == 3 and r.json["error"]["code"] == "log_entry_too_large"
    cli("write", "a", input="1")
    cli("write", "b", input="2")
    r = cli("write", "c", "--json", input="3")
    assert r.code == 5
    err = r.json["error"]
    assert (err["code"], err["limit"], err["current"], err["limit_value"]) == \
        ("quota_exceeded", "quota.files", 2, 2)
    assert cli("write", "a", input="11").code == 0  # new versions of existing entries still fit
    cli("rm", "b")
    assert cli("log", "append", "ev", "--lines", input="1\n2\n3\n").code == 0
    r = cli("log", "append", "ev", "4", "--json")
    assert r.code == 5 and r.json["error"]["limit"] == "quota.log_entries"


def test_config_errors_name_the_key(scratch_home: Path) -> None:
    scratch_home.mkdir(parents=True)
    (scratch_home / "scratch.toml").write_text("[budget]\nsafety_margn = 0.1\n")
    r = cli("ls", "--json")
    assert r.code == 2 and r.json["error"]["key"] == "budget.safety_margn"
    (scratch_home / "scratch.toml").write_text("[quota]\nfiles = 'many'\n")
    r = cli("ls", "--json")
    assert r.json["error"]["code"] == "config_error" and r.json["error"]["key"] == "quota.files"


def test_config_shows_sources(scratch_home: Path) -> None:
    scratch_home.mkdir(parents=True)
    (scratch_home / "scratch.toml").write_text("model = 'gpt-4o'\n")
    data = cli("config", "--json", env={"SCRATCH_BUDGET_SAFETY_MARGIN": "0.1"}).json["data"]
    rows = {r["key"]: r for r in data["settings"]}
    assert (rows["model"]["value"], rows["model"]["source"]) == ("gpt-4o", "scratch.toml")
    assert rows["budget.safety_margin"] == {**rows["budget.safety_margin"], "value": 0.1,
                                            "source": "env SCRATCH_BUDGET_SAFETY_MARGIN"}
    assert rows["quota.files"]["source"] == "default"
    assert data["store_source"] == "env SCRATCH_HOME"


def test_empty_stdin_binary_and_invalid_utf8(scratch_home: Path) -> None:
    r = cli("write", "e", "--json", input=b"")
    assert r.code == 2 and r.json["error"]["code"] == "empty_input"
    assert cli("write", "e", "--allow-empty", input=b"").code == 0
    blob = bytes(range(256)) * 4
    cli("write", "bin", input=blob)
    assert cli("read", "bin", "--raw").out == blob  # byte-exact when asked (issue 30 item 11)
    assert b"\x00" not in cli("read", "bin").out  # else a note, never NUL bytes on stdout
    bad = b"caf\xe9 latin-1\n"
    cli("write", "latin", input=bad)
    assert (scratch_home / "agents/default/files/latin").read_bytes() == bad
    r = cli("log", "append", "ev", "--json", input=b"\xff\xfe")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_utf8"


def test_store_permissions_and_gitignore(scratch_home: Path) -> None:
    cli("write", "a", input="x")
    assert stat.S_IMODE(scratch_home.stat().st_mode) == 0o700
    assert stat.S_IMODE((scratch_home / "agents/default/files/a").stat().st_mode) == 0o600
    assert git(scratch_home, "status", "--porcelain") == ""


def test_read_only_store_is_a_clear_error(scratch_home: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    cli("write", "a", input="x")
    scratch_home.chmod(0o500)
    try:
        r = cli("write", "b", "--json", input="y")
        assert r.json["error"]["code"] == "store_read_only"
    finally:
        scratch_home.chmod(0o700)


def test_never_touches_enclosing_repo_or_user_config(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", str(outer)], check=True, env=env)
    home = tmp_path / "fakehome"
    home.mkdir()
    # no identity, and a global config that would break commits if it were read
    (home / ".gitconfig").write_text("[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n")
    run_env = dict(env, HOME=str(home), SCRATCH_HOME=str(outer / "store"),
                   GIT_DIR=str(outer / ".git"))
    proc = subprocess.run([sys.executable, "-m", "scratch", "write", "n", "--json"],
                          input=b"data", capture_output=True, env=run_env, cwd=outer)
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run(["git", "-C", str(outer), "log"], capture_output=True,
                          env=env).returncode != 0  # outer repo still has no commits
    assert (home / ".gitconfig").read_text().startswith("[commit]")


def test_git_passthrough(scratch_home: Path) -> None:
    cli("write", "a", input="x")
    proc = subprocess.run([sys.executable, "-m", "scratch", "git", "log", "--format=%s"],
                          capture_output=True, text=True)
    assert proc.stdout.splitlines()[0] == "Write a (agent default), version 1."


def test_store_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scratch.store.names import find_store_root
    project = tmp_path / "proj"
    (project / ".scratch").mkdir(parents=True)
    (project / "sub").mkdir()
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    assert find_store_root(None, env, project / "sub") == (project / ".scratch",
        "nearest .scratch/ above the current directory")
    assert find_store_root(None, {**env, "SCRATCH_HOME": "/s"}, project)[0] == Path("/s")
    assert find_store_root("/flag", {**env, "SCRATCH_HOME": "/s"}, project)[0] == Path("/flag")
    assert find_store_root(None, env, tmp_path) == (tmp_path / "xdg" / "scratch",
                                                    "XDG data directory")


def test_init_creates_store(tmp_path: Path) -> None:
    r = cli("init", str(tmp_path / "p"), "--json")
    assert r.code == 0 and r.json["data"]["created"] is True
    assert (tmp_path / "p/.scratch/.git").is_dir()
    assert cli("init", str(tmp_path / "p"), "--json").json["data"]["created"] is False


def test_corrupt_meta_is_rebuilt_from_history(scratch_home: Path) -> None:
    cli("write", "a.txt", input="one\n")
    cli("write", "a.txt", input="two\n")
    (scratch_home / "agents/default/meta/a.txt.json").write_text("{not json")
    assert cli("read", "a.txt@1").out == b"one\n"
    hist = cli("history", "a.txt", "--json").json["data"]["versions"]
    assert [h["version"] for h in hist] == [1, 2]
    (scratch_home / "agents/default/meta/a.txt.json").unlink()
    assert cli("read", "a.txt").out == b"two\n"


def test_no_traceback_on_unexpected_input() -> None:
    r = cli("read", "a@0", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_ref"


def test_a_huge_write_limit_does_not_allocate_it(scratch_home: Path) -> None:
    scratch_home.mkdir(parents=True)
    (scratch_home / "scratch.toml").write_text("[limits]\nmax_write_bytes = 64000000000\n")
    r = cli("write", "small", "--json", input="six b\n")
    assert r.code == 0 and r.json["data"]["bytes"] == 6


@pytest.mark.parametrize("name,rule_start", [
    (".git/config", "segments starting with '.git' are reserved"),
    ("a/.gitattributes", "segments starting with '.git' are reserved"),
    (".GIT", "segments starting with '.git' are reserved"),
    (".tmp-x", "segments starting with '.tmp-' are reserved"),
    ("d/" + "a" * 201, "each segment is at most 200 characters"),
])
def test_names_git_or_scratch_would_act_on_are_refused(name: str, rule_start: str) -> None:
    r = cli("write", name, "--json", input="x")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_name"
    assert r.json["error"]["rule"].startswith(rule_start)


def test_store_git_config_cannot_run_code_in_commits(scratch_home: Path, tmp_path: Path) -> None:
    cli("write", "a", "--agent", "alice", input="x")
    marker = tmp_path / "pwned"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "post-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (hooks / "post-commit").chmod(0o755)
    git(scratch_home, "config", "core.hooksPath", str(hooks))
    git(scratch_home, "config", "core.fsmonitor", f"touch {marker}; false #")
    assert cli("write", "b", "--agent", "alice", input="y").code == 0
    assert not marker.exists()


def test_commit_holds_only_its_own_paths(scratch_home: Path) -> None:
    cli("write", "a", input="x")
    (scratch_home / "stray.txt").write_text("junk")
    git(scratch_home, "add", "stray.txt")
    cli("write", "c", input="y")
    files = git(scratch_home, "show", "--name-only", "--format=", "HEAD").split()
    assert files == ["agents/default/files/c", "agents/default/meta/c.json"]


def test_log_ids_survive_a_crash_and_a_change_of_kind(scratch_home: Path) -> None:
    cli("log", "append", "L", "one")
    path = scratch_home / "agents/default/logs/L.jsonl"
    with open(path, "ab") as fh:  # an append whose metadata was never saved
        fh.write(b'{"id":2,"ts":"2026-01-01T00:00:00.000Z","entry":"two"}\n')
    assert cli("log", "append", "L", "three", "--json").json["data"]["first_id"] == 3
    cli("rm", "L")
    cli("write", "L", input="now a file\n")
    cli("rm", "L")
    assert cli("log", "append", "L", "again", "--json").json["data"]["first_id"] == 4


def test_damaged_log_lines_are_skipped_with_a_warning(scratch_home: Path) -> None:
    cli("log", "append", "L", "first")
    path = scratch_home / "agents/default/logs/L.jsonl"
    with open(path, "ab") as fh:
        fh.write(b"garbage\n")
    cli("log", "append", "L", "second")
    r = cli("log", "read", "L", "--json")
    assert r.code == 0
    assert [e["entry"] for e in r.json["data"]["entries"]] == ["first", "second"]
    assert r.json["meta"]["warnings"] == ["1 damaged line(s) in the log file were skipped"]
    long = '"' + "x" * 100_000 + '"'
    cli("log", "append", "L", "--lines", input=long + "\n")
    with open(path, "r+b") as fh:  # tear the long last line well past 64 KiB from its start
        fh.truncate(path.stat().st_size - 5)
    cli("log", "append", "L", "after")
    entries = cli("log", "read", "L", "--json").json["data"]["entries"]
    assert [e["entry"] for e in entries][-1] == "after"


def test_big_integers_in_log_entries_stay_exact() -> None:
    cli("log", "append", "L", "123456789012345678901234567890")
    out = cli("log", "read", "L", "--json").out
    entry = json.loads(out)["data"]["entries"][0]["entry"]  # orjson would read a float
    assert entry == 123456789012345678901234567890


@pytest.mark.parametrize("args,command", [
    (["--json", "write"], "write"),
    (["log", "read", "x", "--limit", "abc", "--json"], "log"),
    (["--json", "nosuchcmd"], "nosuchcmd"),
])
def test_usage_errors_honour_json(args: list[str], command: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "scratch", *args], capture_output=True)
    assert proc.returncode == 2
    envelope = json.loads(proc.stdout)
    assert (envelope["ok"], envelope["command"], envelope["error"]["code"]) == \
        (False, command, "usage_error")


def test_git_passthrough_does_not_create_a_store(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "scratch", "--store", str(tmp_path / "typo"),
                           "--json", "git", "log"], capture_output=True)
    assert proc.returncode == 4
    assert json.loads(proc.stdout)["error"]["code"] == "store_missing"
    assert not (tmp_path / "typo").exists()


def test_a_crash_between_rename_and_commit_is_undone(scratch_home: Path) -> None:
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from scratch.store import Store\n"
        "from scratch.redact import Redaction\n"
        "st = Store.open(Path(sys.argv[1]), 'default')\n"
        "st.git.commit = lambda *a, **k: os._exit(9)\n"  # die after the files moved in
        "st.write('a', b'v2\\n', redaction=Redaction())\n"
    )
    cli("write", "a", input="v1\n")
    cli("write", "b", input="b1\n")
    proc = subprocess.run([sys.executable, "-c", code, str(scratch_home)], capture_output=True)
    assert proc.returncode == 9
    assert (scratch_home / "state/journal.json").exists()
    assert cli("read", "a").out == b"v1\n"  # the reader undoes the interrupted change first
    assert cli("history", "a", "--json").json["data"]["versions"][-1]["version"] == 1
    assert not (scratch_home / "state/journal.json").exists()
    assert git(scratch_home, "status", "--porcelain") == ""
    assert cli("write", "a", input="v2\n", ).code == 0
    assert cli("read", "a@2").out == b"v2\n"


def test_ls_and_history_survive_lost_metadata(scratch_home: Path) -> None:
    cli("write", "a", input="v1\n")
    cli("write", "a", input="v2\n")
    (scratch_home / "agents/default/meta/a.json").unlink()
    assert [r["name"] for r in cli("ls", "--json").json["data"]["entries"]] == ["a"]
    hist = cli("history", "a", "--json").json["data"]["versions"]
    assert [h["version"] for h in hist] == [1, 2] and all(h["commit"] for h in hist)


def test_entry_and_folder_names_clash_cleanly() -> None:
    cli("write", "m", input="5")
    r = cli("write", "m.json/k", "--json", input="6")
    assert r.code == 2 and r.json["error"]["code"] == "name_conflict"
    r = cli("log", "append", "ev", "--json", input=b"")
    assert r.json["error"]["code"] == "empty_input"
    assert "--allow-empty" not in r.json["error"]["message"]


def test_git_keeps_the_double_dash_before_a_path_that_is_gone(scratch_home: Path) -> None:
    # `scratch git log -- PATH` as typed: the parser dropped the `--`, and git refused a path
    # that no longer exists in the work tree (a purged entry's, say)
    assert cli("write", "kept.md", input="x\n").code == 0
    env = {**os.environ, "SCRATCH_HOME": str(scratch_home)}
    done = subprocess.run([sys.executable, "-m", "scratch", "git", "log", "--oneline", "--",
                           "agents/default/files/never.md"], capture_output=True, text=True,
                          env=env, check=False, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
