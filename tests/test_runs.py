"""scratch.runs, the core of issue 29 points 1-3 that the CLI, MCP, the hooks and the UI call:
joining a run, its iterations, its namespace in the store, finish_worker, the views; and sync
carrying a run's artifacts and events to a second store through a real bare remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from scratch import runs
from scratch.errors import InvalidName, NotFound, UsageError
from scratch.store import ledger
from tests.sync_support import bare, fsck_clean, git, ok, on
from tests.test_artifact_read import PODS, REPORT


def put(home: Path, agent: str, run: str, name: str, content: bytes) -> None:
    ok(home, "artifact", "put", run, name, "--agent", agent, "--run", run, input=content)


def test_join_run_checks_the_run_and_its_iteration(scratch_home: Path) -> None:
    assert runs.join_run(scratch_home, None) == runs.Joined(None, None, False)
    assert runs.join_run(scratch_home, "r1") == runs.Joined("r1", 1, False)
    with pytest.raises(runs.IterationNotFound) as found:
        runs.join_run(scratch_home, "r1", 2)
    assert found.value.code == "iteration_not_found" and found.value.details["latest"] == 1
    for bad in ("..", "a/b", "a\nb", "x" * 129, "run.1"):
        with pytest.raises(InvalidName) as invalid:
            runs.join_run(scratch_home, bad)
        assert invalid.value.code == "invalid_run"
    with pytest.raises(UsageError) as no_run:
        runs.join_run(scratch_home, None, coordinator=True)
    assert no_run.value.code == "not_in_run"
    assert not scratch_home.exists()  # checking creates nothing


def test_iterations_are_the_largest_started(scratch_home: Path) -> None:
    put(scratch_home, "w1", "r1", "a.txt", b"a\n")
    space = runs.RunStore.open_run(scratch_home, "r1", "boss")
    assert runs.latest_iteration(scratch_home, "r1") == 1
    assert [runs.start_iteration(space), runs.start_iteration(space)] == [2, 3]
    assert runs.join_run(scratch_home, "r1") == runs.Joined("r1", 3, False)
    assert runs.join_run(scratch_home, "r1", "2", True) == runs.Joined("r1", 2, True)
    kinds = [(e["event"], e.get("iteration"), e.get("agent")) for e in
             runs.read_events(scratch_home, "r1")]
    assert kinds == [("iteration", 2, "boss"), ("iteration", 3, "boss")]
    log = git(scratch_home, "log", "--format=%s", "-3").stdout.splitlines()
    assert log[0] == "Append entry 2 to log events (agent boss)."
    assert log[2] == "Put artifact a.txt (agent w1), version 1. Run r1, iteration 1."


def test_the_views_a_ui_calls(scratch_home: Path) -> None:
    put(scratch_home, "w1", "r1", "report.json", REPORT)
    put(scratch_home, "w1", "r1", "report.json", REPORT + b"\n")
    put(scratch_home, "w2", "r2", "other.txt", b"x\n")
    ok(scratch_home, "artifact", "read", "r1", "report.json", "--agent", "w2", "--run", "r1")
    ok(scratch_home, "finish", "--agent", "w2", "--run", "r1")
    ok(scratch_home, "artifact", "ls", "r1", "--agent", "boss", "--run", "r1", "--coordinator")
    rows = runs.list_runs(scratch_home)
    assert [(r["run"], r["iterations"], r["artifacts"], r["usage_events"]) for r in rows] == [
        ("r1", 1, 1, 1), ("r2", 1, 1, 0)]
    (art,) = runs.list_artifacts(scratch_home, "r1")
    assert (art["name"], art["ref"], art["version"], art["bytes"], art["agent"],
            art["iteration"]) == ("report.json", "artifact:r1/report.json", 2,
                                  len(REPORT) + 1, "w1", 1)
    info = runs.run_info(scratch_home, "r1")
    assert [(w["agent"], w["coordinator"], w["finished"]) for w in info["workers"]] == [
        ("boss", True, 0), ("w1", False, 0), ("w2", False, 1)]
    assert [(e["agent"], e["reason"], e["iteration"]) for e in info["usage"]] == [
        ("w2", "finish", 1)]
    assert ok(scratch_home, "runs")["runs"] == rows
    assert [r["run"] for r in ok(scratch_home, "runs", "--run", "r2")["runs"]] == ["r2"]
    shown = on(scratch_home, "runs", "show", "r1").text
    assert shown.startswith("run r1: 1 iteration, 1 artifact\nworkers:\n  boss (coordinator)")
    assert on(scratch_home, "--json", "runs", "show", "r1", "--run", "r2").json["error"][
        "code"] == "entry_not_found"
    assert runs.list_artifacts(scratch_home, "nope") == []
    assert runs.run_info(scratch_home, "nope")["workers"] == []
    with pytest.raises(InvalidName):
        runs.list_artifacts(scratch_home, "../r1")


def test_finish_worker_is_the_one_function_every_finish_calls(scratch_home: Path) -> None:
    heard: list[runs.UsageEvent] = []
    stop = runs.on_usage(heard.append)
    try:
        ok(scratch_home, "write", "n.md", "--agent", "w1", "--run", "r1", input=b"a\n")
        # a session that closes with nothing intercepted or extracted: nothing recorded
        assert runs.finish_worker(scratch_home, agent="w1", session="default", run="r1",
                                  iteration=1, explicit=False, reason="subagent_stop",
                                  interface="hook") is None
        ok(scratch_home, "read", "n.md", "--agent", "w1", "--run", "r1")
        event = runs.finish_worker(scratch_home, agent="w1", session="default", run="r1",
                                   iteration=1, explicit=False, reason="subagent_stop",
                                   interface="hook")
    finally:
        stop()
    assert event is not None and heard == [event]
    assert (event["reason"], event["interface"], event["calls"]) == ("subagent_stop", "hook", 2)
    assert ledger.read(scratch_home, agent="w1")[-1]["interface"] == "hook"
    assert runs.usage_events(scratch_home, "r1")[-1]["reason"] == "subagent_stop"
    with pytest.raises(InvalidName):
        runs.finish_worker(scratch_home, agent="w1", session="s", run="a/b")


def test_another_runs_reader_finds_nothing(scratch_home: Path) -> None:
    put(scratch_home, "w1", "r1", "a.txt", b"a\n")
    with pytest.raises(NotFound) as outside:
        runs.check_member("r2", "r1", "a.txt", "w9")
    assert outside.value.code == "entry_not_found"
    runs.check_member("r1", "r1", "a.txt", "w2")
    runs.check_member(None, "r1", "a.txt", "w2")  # on the command line, naming it is joining


def test_sync_carries_a_runs_artifacts_and_events_to_a_second_store(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    a, b = tmp_path / "a", tmp_path / "b"
    for home in (a, b):
        ok(home, "remote", "add", "origin", str(remote))
    put(a, "w1", "r1", "report.json", REPORT)
    ok(a, "artifact", "put", "r1", "pods.json", str(PODS), "--agent", "w1", "--run", "r1")
    ok(a, "finish", "--agent", "w1", "--run", "r1")
    pushed = ok(a, "sync", "--agent", "w1", "--run", "r1")["remotes"][0]
    assert pushed["agents"] == ["run.r1", "w1"] and pushed["pushed"]
    assert sorted(r["name"] for r in pushed["sent"] if r["agent"] == "run.r1") == [
        "events", "pods.json", "report.json"]
    # the second store, meanwhile, put an artifact of its own and started iteration 2
    put(b, "w3", "r1", "b-side.txt", b"from b\n")
    ok(b, "runs", "iterate", "r1", "--agent", "w3")
    got = ok(b, "sync", "--all")["remotes"][0]
    assert "run.r1" in got["agents"]
    names = [x["name"] for x in ok(b, "artifact", "ls", "r1")["artifacts"]]
    assert names == ["b-side.txt", "pods.json", "report.json"]
    assert (b / "runs" / "r1" / "files" / "pods.json").read_bytes() == PODS.read_bytes()
    read = ok(b, "artifact", "read", "r1", "report.json", "--agent", "w3", "--run", "r1")
    assert read["content"] == REPORT.decode()
    assert [e["agent"] for e in runs.usage_events(b, "r1")] == ["w1"]
    assert runs.latest_iteration(b, "r1") == 2
    # back to the first: both sides' artifacts and events
    ok(a, "sync", "--agent", "w1", "--run", "r1")
    assert [x["name"] for x in ok(a, "artifact", "ls", "r1")["artifacts"]] == names
    assert runs.latest_iteration(a, "r1") == 2
    fsck_clean(a)
    fsck_clean(remote)
    listed = git(remote, "ls-tree", "-r", "--name-only", "main").stdout.split()
    assert "runs/r1/files/pods.json" in listed and "runs/r1/logs/events.jsonl" in listed
    # a remote whose history holds a run id scratch refuses is refused whole, nothing merged
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    (clone / "runs" / "a.b" / "files").mkdir(parents=True)
    (clone / "runs" / "a.b" / "files" / "x").write_text("x\n")
    git(clone, "add", "runs")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "odd")
    git(clone, "push", "-q", "origin", "HEAD:main")
    refused = on(b, "--json", "sync", "--all")
    assert refused.code == 1 and refused.json["error"]["code"] == "sync_unsafe_remote"
    assert refused.json["error"]["path"] == "runs/a.b/files/x"
    assert not (b / "runs" / "a.b").exists()
