"""The call ledger's record, append and read (scratch.store.ledger), on real files."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from scratch.store import ledger


def rec(command: str = "get-in", *, agent: str = "default", session: str = "default",
        at: str = "2026-12-02T00:41:07.123Z", **fields: object) -> ledger.Record:
    base = ledger.make(interface="cli", agent=agent, session=session, command=command,
                       args={"ref": "pods"}, at=at)
    base.update(fields)  # type: ignore[typeddict-item]
    return base


def test_append_numbers_records_and_read_gives_them_back(tmp_path: Path) -> None:
    assert ledger.append(tmp_path, rec(tokens=12, entry="pods", version=3, ms=4.216)) == 1
    assert ledger.append(tmp_path, rec("head", outcome="refused", code="over_cap")) == 2
    path = tmp_path / "state" / "agents" / "default" / "calls.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = path.read_bytes().splitlines()
    assert orjson.loads(lines[0]) == {
        "v": 1, "seq": 1, "time": "2026-12-02T00:41:07.123Z", "interface": "cli",
        "agent": "default", "session": "default", "command": "get-in",
        "args": {"ref": "pods"}, "outcome": "ok", "code": None, "message": None,
        "suggestions": [], "tokens": 12, "intercepted": 0, "entry": "pods", "version": 3,
        "ms": 4.216}
    got = ledger.read(tmp_path)
    assert [(r["seq"], r["command"], r["outcome"], r["code"]) for r in got] == [
        (1, "get-in", "ok", None), (2, "head", "refused", "over_cap")]
    assert ledger.count(tmp_path) == 2
    assert ledger.agents(tmp_path) == ["default"]


def test_make_rounds_and_cuts_the_message() -> None:
    r = ledger.make(interface="mcp-stdio", agent="a", session="s", command="grep",
                    message="first line " + "x" * 400 + "\nsecond", ms=1.23456, at="T")
    assert r["ms"] == 1.23
    assert r["message"] is not None and len(r["message"]) == 300
    assert r["message"].startswith("first line x") and r["message"].endswith("…")
    assert r["seq"] == 0 and r["suggestions"] == [] and r["time"] == "T"


def test_now_is_utc_with_milliseconds() -> None:
    text = ledger.now()
    assert len(text) == 24 and text.endswith("Z") and text[10] == "T" and text[19] == "."
    moment = datetime.fromisoformat(text[:-1] + "+00:00")
    assert abs((datetime.now(UTC) - moment).total_seconds()) < 3600


def test_preview_bounds_values_and_never_copies_bodies() -> None:
    args = ledger.preview_args({"name": "notes", "content": "secret body " * 50,
                                "data": b"\x00" * 7, "path": "p" * 250, "none": None,
                                "paths": [str(i) for i in range(12)], "n": 3, "on": True},
                               bodies=("content", "data"))
    assert args == {"name": "notes", "content": "<600 chars>", "data": "<7 bytes>",
                    "path": "p" * 199 + "…",
                    "paths": [str(i) for i in range(10)] + ["… 2 more"], "n": 3, "on": True}
    assert ledger.preview({"k": "v" * 300}) == {"k": "v" * 199 + "…"}


def test_seq_is_per_agent_and_read_merges_agents_by_time(tmp_path: Path) -> None:
    ledger.append(tmp_path, rec(agent="b", at="2026-12-02T00:00:02.000Z"))
    ledger.append(tmp_path, rec(agent="a", at="2026-12-02T00:00:01.000Z"))
    ledger.append(tmp_path, rec(agent="a", at="2026-12-02T00:00:03.000Z", session="s2"))
    got = ledger.read(tmp_path)
    assert [(r["agent"], r["seq"]) for r in got] == [("a", 1), ("b", 1), ("a", 2)]
    assert [r["seq"] for r in ledger.read(tmp_path, agent="a")] == [1, 2]
    assert [r["seq"] for r in ledger.read(tmp_path, agent="a", session="s2")] == [2]
    assert ledger.sessions(tmp_path, "a") == ["default", "s2"]
    assert ledger.agents(tmp_path) == ["a", "b"]
    assert ledger.read(tmp_path, agent="nobody") == []


def test_offset_and_limit_page_back_from_the_newest(tmp_path: Path) -> None:
    for i in range(7):
        ledger.append(tmp_path, rec(f"c{i}"))
    names = lambda rs: [r["command"] for r in rs]  # noqa: E731
    assert names(ledger.read(tmp_path, limit=3)) == ["c4", "c5", "c6"]
    assert names(ledger.read(tmp_path, offset=3, limit=3)) == ["c1", "c2", "c3"]
    assert names(ledger.read(tmp_path, offset=6, limit=3)) == ["c0"]
    assert names(ledger.read(tmp_path, offset=7)) == []
    assert names(ledger.read(tmp_path, offset=5)) == ["c0", "c1"]
    assert ledger.count(tmp_path) == 7


def test_since_takes_times_and_durations(tmp_path: Path) -> None:
    ledger.append(tmp_path, rec("old", at="2026-12-01T23:00:00.000Z"))
    ledger.append(tmp_path, rec("new", at="2026-12-02T00:41:07.123Z"))
    assert [r["command"] for r in ledger.read(tmp_path, since="2026-12-02")] == ["new"]
    assert [r["command"] for r in ledger.read(tmp_path, since="2026-12-02T00:41:07.123Z")] \
        == ["new"]
    assert ledger.count(tmp_path, since=datetime(2026, 12, 1, 22, tzinfo=UTC)) == 2
    at = datetime(2026, 12, 2, 0, 45, tzinfo=UTC)
    assert ledger.parse_since("10m", at=at) == "2026-12-02T00:35:00.000Z"
    assert ledger.parse_since("90s", at=at) == "2026-12-02T00:43:30.000Z"
    assert ledger.parse_since("2h", at=at) == "2026-12-01T22:45:00.000Z"
    assert ledger.parse_since(timedelta(days=1), at=at) == "2026-12-01T00:45:00.000Z"
    assert ledger.parse_since("2026-12-02T01:00+01:00") == "2026-12-02T00:00:00.000Z"
    with pytest.raises(ValueError):
        ledger.parse_since("yesterday")


def test_offset_time_since_compares_in_utc(tmp_path: Path) -> None:
    ledger.append(tmp_path, rec("old", at="2026-12-01T23:00:00.000Z"))
    ledger.append(tmp_path, rec("new", at="2026-12-02T00:41:07.123Z"))
    # 01:00 at +01:00 is 00:00 UTC: only the newer call
    assert [r["command"] for r in ledger.read(tmp_path, since="2026-12-02T01:00+01:00")] \
        == ["new"]


def test_bound_drops_the_oldest_counts_them_and_seq_goes_on(tmp_path: Path) -> None:
    line = len(orjson.dumps({**rec(), "seq": 10})) + 1
    max_bytes = line * 10
    for _ in range(11):
        ledger.append(tmp_path, rec(), max_bytes=max_bytes)
    path = ledger.ledger_file(tmp_path, "default")
    kept = ledger.read(tmp_path)
    assert path.stat().st_size <= max_bytes * ledger.KEEP_SHARE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # 11 lines passed the bound; about three quarters of it (7 lines) stay
    assert [r["seq"] for r in kept] == [5, 6, 7, 8, 9, 10, 11]
    assert ledger.dropped(tmp_path, "default") == 4
    assert ledger.dropped(tmp_path) == 4
    assert ledger.append(tmp_path, rec(), max_bytes=max_bytes) == 12
    for _ in range(4):
        ledger.append(tmp_path, rec(), max_bytes=max_bytes)
    assert ledger.dropped(tmp_path, "default") + ledger.count(tmp_path) == 16
    assert ledger.read(tmp_path)[-1]["seq"] == 16


def test_a_record_bigger_than_the_bound_leaves_an_empty_file_and_counts(tmp_path: Path) -> None:
    assert ledger.append(tmp_path, rec(), max_bytes=10) == 1
    assert ledger.read(tmp_path) == []
    assert ledger.dropped(tmp_path, "default") == 1
    assert ledger.append(tmp_path, rec(), max_bytes=10) == 2  # numbering goes on from dropped


def test_a_torn_last_line_is_skipped_and_ended(tmp_path: Path) -> None:
    ledger.append(tmp_path, rec("first"))
    path = ledger.ledger_file(tmp_path, "default")
    with open(path, "ab") as fh:
        fh.write(b'{"v": 1, "seq": 2, "time": "2026-')  # a writer killed mid-line
    assert [r["command"] for r in ledger.read(tmp_path)] == ["first"]
    assert ledger.append(tmp_path, rec("third")) == 2
    assert [r["command"] for r in ledger.read(tmp_path)] == ["first", "third"]
    assert path.read_bytes().count(b"\n") == 3


def test_lines_longer_than_the_tail_still_number_on(tmp_path: Path) -> None:
    ledger.append(tmp_path, rec(args={"q": "x" * 9000}))  # longer than the tail read
    assert ledger.append(tmp_path, rec()) == 2


def test_append_never_raises_and_never_follows_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    store = tmp_path / "store"
    (store / "state" / "agents").mkdir(parents=True)
    (store / "state" / "agents" / "evil").symlink_to(outside)
    assert ledger.append(store, rec(agent="evil")) == 0
    assert list(outside.iterdir()) == []
    (store / "state" / "agents" / "linked").mkdir()
    target = outside / "secret"
    target.write_text("keep")
    (store / "state" / "agents" / "linked" / "calls.jsonl").symlink_to(target)
    assert ledger.append(store, rec(agent="linked")) == 0
    assert target.read_text() == "keep"
    assert ledger.read(store, agent="linked") == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a read-only directory")
def test_a_read_only_store_costs_the_record_not_the_call(tmp_path: Path) -> None:
    ledger.append(tmp_path, rec())
    directory = ledger.ledger_file(tmp_path, "default").parent
    os.chmod(directory, 0o500)
    os.chmod(ledger.ledger_file(tmp_path, "default"), 0o400)
    try:
        assert ledger.append(tmp_path, rec()) == 0
        assert [r["seq"] for r in ledger.read(tmp_path)] == [1]
    finally:
        os.chmod(directory, 0o700)


def test_a_file_that_is_no_ledger_costs_the_record(tmp_path: Path) -> None:
    directory = tmp_path / "state" / "agents"
    directory.mkdir(parents=True)
    (directory / "default").write_text("a file where the agent's directory goes")
    assert ledger.append(tmp_path, rec()) == 0
    (directory / "other").mkdir()
    os.mkfifo(directory / "other" / "calls.jsonl")
    assert ledger.append(tmp_path, rec(agent="other")) == 0  # not a regular file: refused


FULL_DISK = """
import os, resource, signal, sys
from pathlib import Path
from scratch.store import ledger
root = Path(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
size = ledger.ledger_file(root, "default").stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 20, size + 20))
r = ledger.make(interface="cli", agent="default", session="default", command="head")
print(ledger.append(root, r))
"""


def test_a_full_disk_costs_the_record_not_the_call(tmp_path: Path) -> None:
    import subprocess
    import sys
    ledger.append(tmp_path, rec("first"))
    # the file may not grow past 20 more bytes, as on a disk that is full
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "0\n", "")
    assert [r["command"] for r in ledger.read(tmp_path)] == ["first"]  # the torn part skipped
    assert ledger.append(tmp_path, rec("third")) == 2
    assert [r["command"] for r in ledger.read(tmp_path)] == ["first", "third"]


def test_corrupt_dropped_sidecar_counts_as_zero(tmp_path: Path) -> None:
    ledger.append(tmp_path, rec())
    (ledger.ledger_file(tmp_path, "default").parent / "calls.dropped").write_text("{nope")
    assert ledger.dropped(tmp_path) == 0
    assert ledger.append(tmp_path, rec()) == 2


def test_a_ledger_directory_removed_meanwhile_is_made_again(tmp_path: Path) -> None:
    import shutil
    assert ledger.append(tmp_path, rec()) == 1
    shutil.rmtree(tmp_path / "state")
    assert ledger.append(tmp_path, rec()) == 1  # a fresh ledger, numbered from 1 again
    assert [r["seq"] for r in ledger.read(tmp_path)] == [1]


APPENDER = """
import sys
from pathlib import Path
from scratch.store import ledger
root, who = Path(sys.argv[1]), sys.argv[2]
for i in range(50):
    r = ledger.make(interface="cli", agent="default", session=who, command="head",
                    args={"i": i, "q": "x" * 300})
    assert ledger.append(root, r, max_bytes=0) > 0
"""


def test_processes_appending_at_once_get_unique_seqs_and_whole_lines(tmp_path: Path) -> None:
    import subprocess
    import sys
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(tmp_path), f"p{n}"])
             for n in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    got = ledger.read(tmp_path)
    assert sorted(r["seq"] for r in got) == list(range(1, 201))
    assert [r["seq"] for r in got] == list(range(1, 201))  # the file's order is seq order
    for n in range(4):  # each process's own calls in the order it made them
        assert [r["args"]["i"] for r in got if r["session"] == f"p{n}"] == list(range(50))
    raw = ledger.ledger_file(tmp_path, "default").read_bytes()
    assert raw.count(b"\n") == 200


def test_the_ledger_imports_no_cli_mcp_or_http_stack() -> None:
    import subprocess
    import sys
    probe = ("import sys, scratch.store.ledger as l; from pathlib import Path; import tempfile; "
             "d = Path(tempfile.mkdtemp()); "
             "l.append(d, l.make(interface='cli', agent='a', session='s', command='head')); "
             "l.read(d); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('typer', 'click', 'rich', 'mcp', 'httpx', 'httpx2', 'anyio', 'starlette', "
             "'duckdb', 'tiktoken')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=False, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")


def test_an_answer_is_kept_whole_within_its_bound_and_cut_past_it() -> None:
    assert ledger.answer_preview("x" * 60, 10) == "x" * 60  # 6 characters a token of the cap
    assert ledger.answer_preview("x" * 61, 10) == "x" * 60 + "\n… (1 more characters not kept)"
    assert ledger.answer_preview("é" * 60_001, 0) == "é" * 60_000 + \
        "\n… (1 more characters not kept)"  # no cap: the default cap's bound
    r = ledger.make(interface="cli", agent="a", session="s", command="head", answer="a\nb\n")
    assert r["answer"] == "a\nb\n"
    assert "answer" not in ledger.make(interface="cli", agent="a", session="s", command="head")


def test_scan_skips_and_counts_lines_that_are_no_record(tmp_path: Path) -> None:
    ledger.append(tmp_path, rec("first"))
    path = tmp_path / "state" / "agents" / "default" / "calls.jsonl"
    good = orjson.loads(path.read_bytes())
    bad = [b"not json", b"[1, 2]", orjson.dumps({**good, "seq": 5, "tokens": "12"}),
           orjson.dumps({k: v for k, v in good.items() if k != "outcome"}),
           orjson.dumps({**good, "seq": 6, "suggestions": [{"command": 1}]}),
           orjson.dumps({**good, "seq": 7, "answer": 3}),
           orjson.dumps({**good, "seq": 8, "tokens": True})]
    with open(path, "ab") as fh:
        fh.write(b"\n".join(bad) + b"\n")
    assert ledger.append(tmp_path, rec("second")) == 9  # numbered past the last seq seen
    records, skipped = ledger.scan(tmp_path, "default")
    assert ([r["command"] for r in records], skipped) == (["first", "second"], len(bad))
    assert [r["command"] for r in ledger.read(tmp_path)] == ["first", "second"]
    assert ledger.tally(ledger.read(tmp_path), "command")["first"]["calls"] == 1


def test_a_record_holding_a_long_answer_numbers_the_next_one(tmp_path: Path) -> None:
    for n in range(3):
        answer = "line of an answer\n" * (20_000 * (n + 1))  # 360 KB and more: past the tail
        assert ledger.append(tmp_path, rec(answer=answer)) == n + 1
    assert [len(r["answer"]) for r in ledger.read(tmp_path)] == [360_000, 720_000, 1_080_000]


def test_one_line_reader_parses_each_line_and_marks_the_torn() -> None:
    data = b'{"seq": 1}\n\n   \nnot json\n[1]\n{"seq": 2, "time": "2026-'
    assert list(ledger.parsed_lines(data)) == [{"seq": 1}, ledger.TORN, [1], ledger.TORN]
    assert list(ledger.parsed_lines(b"")) == []


def test_scan_and_scrub_read_the_same_lines_and_agree_on_torn_ones(tmp_path: Path) -> None:
    # the one reader feeds both: what scan skips as not JSON, scrub drops (it could hold
    # anything); a JSON value that is no record scan skips and scrub keeps as it is; a
    # scrubbed record is still read as a record
    for command in ("first", "second", "third"):
        ledger.append(tmp_path, rec(command, entry=f"{command}.txt"))
    path = ledger.ledger_file(tmp_path, "default")
    with open(path, "ab") as fh:
        fh.write(b'{"v": 1, "seq": 9, "ti\n[1, 2]\n\n')  # a torn write, a stray value
    records, skipped = ledger.scan(tmp_path, "default")
    assert ([r["command"] for r in records], skipped) == (["first", "second", "third"], 2)
    changed = ledger.scrub(tmp_path, "default", lambda r: r.get("entry") == "second.txt",
                           "purge second.txt")
    assert changed == 2  # the picked record and the torn line
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and lines[-2] == b"[1,2]" and len(lines) == 5
    records, skipped = ledger.scan(tmp_path, "default")
    assert ([r["command"] for r in records], skipped) == (["first", "second", "third"], 1)
    (scrubbed,) = [r for r in records if r["command"] == "second"]
    assert scrubbed["purged"] == "purge second.txt"  # type: ignore[typeddict-item]
    assert (scrubbed["args"], scrubbed["message"], scrubbed["suggestions"]) == ({}, None, [])
    # still a call: counted by the tallies (what scrub says it keeps true)
    assert ledger.tally(records, "command")["second"]["calls"] == 1
