"""stats' bytes (issue 31's gap): the call ledger, with the answers it keeps, is counted in
what an agent holds, beside the entries' bytes that quota.bytes bounds. Through the CLI, so
every call is in the ledger as an agent's would be."""

from __future__ import annotations

import json
from pathlib import Path

from scratch.store import ledger
from tests.helpers import cli


def test_the_ledger_and_its_kept_answers_are_counted(scratch_home: Path) -> None:
    body = b"".join(b"line %d of the notes\n" % n for n in range(40))
    assert cli("write", "notes.txt", "--agent", "alice", input=body).code == 0
    assert cli("head", "notes.txt", "-n", "5", "--agent", "alice").code == 0
    assert cli("grep", "notes.txt", "of the", "-m", "3", "--agent", "alice").code == 0
    assert cli("write", "b.txt", "--agent", "bob", input=b"bb\n").code == 0
    path = ledger.ledger_file(scratch_home, "alice")
    size = path.stat().st_size  # the stats call's own record is written after its answer
    answers = [r.get("answer", "") for r in ledger.read(scratch_home, agent="alice")]
    assert len(answers) == 3 and answers[1].startswith("1:line 0 of the notes\n")
    kept = sum(len(a.encode()) for a in answers)

    every = cli("--json", "stats").json["data"]["agents"]
    (alice,) = [r for r in every if r["agent"] == "alice"]
    assert (alice["bytes"], alice["ledger_bytes"], alice["answer_bytes"],
            alice["total_bytes"]) == (len(body), size, kept, len(body) + size)
    assert 0 < kept < size
    (bob,) = [r for r in every if r["agent"] == "bob"]
    assert bob["ledger_bytes"] == ledger.file_bytes(scratch_home, "bob") > 0
    assert bob["total_bytes"] == 3 + bob["ledger_bytes"]
    assert list(alice)[:8] == ["agent", "files", "logs", "bytes", "log_entries",
                               "ledger_bytes", "answer_bytes", "total_bytes"]

    table = cli("stats").text.splitlines()
    assert table[0].split()[:7] == ["agent", "files", "logs", "log", "entries", "bytes",
                                    "ledger"]
    # the second stats call's ledger holds the first's record too
    grown = path.stat().st_size
    row = next(line for line in table if line.startswith("alice"))
    assert row.split()[1:6] == ["1", "0", "0", str(len(body)), str(grown)]


def test_an_agents_own_stats_say_the_ledger_bytes(scratch_home: Path) -> None:
    assert cli("write", "a.txt", input=b"a\n").code == 0
    assert cli("head", "a.txt").code == 0
    size = ledger.file_bytes(scratch_home, "default")
    answer = sum(len(r.get("answer", "").encode()) for r in ledger.read(scratch_home))
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.execution import execute
    from scratch.answers.kernel.rendering import PlainCalls
    from scratch.calls import call
    own = execute(Context.build(), PlainCalls(), call("stats", agent="default"))
    assert isinstance(own.text, str)
    lines = own.text.splitlines()
    assert lines[4:7] == ["bytes: 2", f"ledger bytes: {size} (answers {answer})",
                          f"total bytes: {2 + size}"]
    assert json.loads(json.dumps(own.data))["total_bytes"] == 2 + size
    assert ledger.file_bytes(scratch_home, "nobody") == 0
