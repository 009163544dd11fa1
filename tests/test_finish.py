"""finish (issue 29 point 3): a worker's usage event, scratchpad_usage, counted as scratch stats
counts, kept in the call ledger (scratch calls shows it) and in the run's events."""

from __future__ import annotations

from pathlib import Path

from scratch.store import ledger
from tests.helpers import cli
from tests.test_artifact_read import PODS, as_, data, error


def test_the_event_counts_exactly_what_stats_counts(scratch_home: Path) -> None:
    stored = data(as_("w1", "ingest", "--tool", "kubectl_get_pods", input=PODS.read_bytes()))
    assert stored["tokens"] > 60_000  # an output stored instead of shown: intercepted
    data(as_("w1", "head", "kubectl_get_pods", "-n", "5"))  # extracted
    data(as_("w1", "schema", "kubectl_get_pods", "--depth", "1"))
    assert error(as_("w1", "head", "kubectl_get_pods", "-n", "8000"), 3)["code"] == (
        "head_too_large")  # refused: in neither count
    event = data(as_("w1", "finish"))
    stats = data(as_("w1", "stats", run=None))
    (mine,) = [row for row in stats["agents"] if row["agent"] == "w1"]
    assert mine["tokens_intercepted"] > 0 and mine["tokens_extracted"] > 0
    assert event == {
        "event": "scratchpad_usage", "time": event["time"], "agent": "w1", "session": "default",
        "run": "r1", "iteration": 1, "tokens_intercepted": mine["tokens_intercepted"],
        "tokens_extracted": mine["tokens_extracted"], "calls": 4, "reason": "finish",
        "interface": "cli"}
    # the ledger: one record per call, the event among them, charging nothing
    recs = ledger.read(scratch_home, agent="w1")
    assert [r["command"] for r in recs] == ["ingest", "head", "schema", "head",
                                            "scratchpad_usage", "finish", "stats"]
    usage = recs[4]
    assert (usage["event"], usage["run"], usage["iteration"], usage["tokens"],
            usage["intercepted"]) == ("scratchpad_usage", "r1", 1, 0, 0)
    assert usage["args"] == {"tokens_intercepted": event["tokens_intercepted"],
                             "tokens_extracted": event["tokens_extracted"], "calls": 4,
                             "reason": "finish"}
    assert all(r.get("run") == "r1" and r.get("iteration") == 1 for r in recs[:6])
    assert "run" not in recs[6]  # stats ran outside the run
    shown = cli("calls", "--agent", "w1").text
    assert (f"scratchpad_usage {event['tokens_intercepted']:,} intercepted "
            f"{event['tokens_extracted']:,} extracted") in shown
    # and the run's events: what a UI reads per run
    run = data(cli("runs", "show", "r1", "--json"))
    assert run["usage"] == [event]
    (worker,) = run["workers"]
    assert (worker["agent"], worker["finished"], worker["calls"], worker["iterations"]) == (
        "w1", 1, 5, [1])
    assert (worker["tokens_intercepted"], worker["tokens_extracted"]) == (
        event["tokens_intercepted"], event["tokens_extracted"])


def test_a_second_finish_counts_only_the_calls_since_the_first(scratch_home: Path) -> None:
    data(as_("w1", "write", "notes.md", input=b"a\n"))
    data(as_("w1", "read", "notes.md"))
    first = data(as_("w1", "finish"))
    assert (first["calls"], first["tokens_intercepted"]) == (2, 0)
    assert first["tokens_extracted"] > 0
    second = data(as_("w1", "finish"))
    assert (second["calls"], second["tokens_intercepted"], second["tokens_extracted"]) == (
        1, 0, 0)  # the first finish call itself, which charged nothing
    assert [e["calls"] for e in data(cli("runs", "show", "r1", "--json"))["usage"]] == [2, 1]


def test_a_finish_outside_a_run_is_the_agents_alone(scratch_home: Path) -> None:
    data(as_("solo", "write", "notes.md", input=b"a\n", run=None))
    event = data(as_("solo", "finish", run=None))
    assert (event["run"], event["iteration"], event["calls"]) == (None, None, 1)
    assert not (scratch_home / "runs").exists()
    assert ledger.read(scratch_home, agent="solo")[-2]["event"] == "scratchpad_usage"


def test_each_worker_finishes_with_its_own_figures(scratch_home: Path) -> None:
    data(as_("w1", "artifact", "put", "r1", "pods.json", str(PODS)))
    data(as_("w2", "artifact", "read", "r1", "pods.json"))  # a pointer: w2's
    w2 = data(as_("w2", "finish"))
    w1 = data(as_("w1", "finish"))
    assert w1["tokens_extracted"] == 0 and w1["calls"] == 1
    assert w2["tokens_extracted"] > 0 and w2["calls"] == 1
    assert [e["agent"] for e in data(cli("runs", "show", "r1", "--json"))["usage"]] == [
        "w2", "w1"]
