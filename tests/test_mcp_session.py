"""A warm server's session across many calls: what it keeps open stays bounded, and what it
answers is always the current content (scratch.mcp.serve.session, in-process, with real stores)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scratch.mcp.dispatch import run_tool
from scratch.mcp.serve.session import KEPT_PINS, ServerState
from tests.helpers import cli

PROC_FD = Path("/proc/self/fd")


def open_fds() -> int:
    return len(os.listdir(PROC_FD))


@pytest.mark.skipif(not PROC_FD.is_dir(), reason="needs /proc to count descriptors")
def test_reading_many_entries_keeps_no_descriptor_per_entry(scratch_home: Path) -> None:
    for i in range(40):
        assert cli("write", f"notes/n{i}", input=f"note {i}\n").code == 0
    session = ServerState().session_for("conn", "default", None, "test")
    first = run_tool("head", {"file": "notes/n0", "lines": 5}, session)
    assert first.ok and first.text == "1:note 0\n"
    before = open_fds()
    for i in range(40):
        out = run_tool("head", {"file": f"notes/n{i}", "lines": 5}, session)
        assert out.ok and out.text == f"1:note {i}\n", out.texts
    # the content files of the entries read last, not one per entry read
    assert KEPT_PINS < 40
    assert open_fds() - before <= KEPT_PINS


def test_a_version_written_between_calls_is_what_the_next_call_reads(
        scratch_home: Path) -> None:
    cli("write", "plan", input="one\n")
    session = ServerState().session_for("conn", "default", None, "test")
    assert run_tool("read", {"file": "plan"}, session).text.startswith("one\n")
    for n in range(2, 6):
        cli("write", "plan", input=f"version {n}\n")  # another process, the CLI
        out = run_tool("read", {"file": "plan"}, session)
        assert out.ok and out.text.startswith(f"version {n}\n"), out.texts


def test_a_warm_grep_searches_what_was_written_since(scratch_home: Path) -> None:
    # a warm process keeps the maps of files it searched: a new version, or a log that grew,
    # is searched as it is now
    from scratch.answers.kernel.kept_indexes import keep_indexes
    keep_indexes(16)
    try:
        cli("write", "plan", input="alpha 1\nbeta\n")  # every version the same size
        cli("log", "append", "events", input="alpha one")
        session = ServerState().session_for("conn", "default", None, "test")
        for n in range(3):
            first = run_tool("grep", {"file": "plan", "pattern": "alpha", "max_count": 1,
                                      "context": 0}, session)
            assert first.ok and first.text == f"1:alpha {n + 1}\n", first.texts
            cli("write", "plan", input=f"alpha {n + 2}\nbeta\n")
        for n in range(3):
            cli("log", "append", "events", input=f"alpha {n}")
            out = run_tool("grep", {"file": "events", "pattern": "alpha", "context": 0},
                           session)
            assert out.ok and len(out.text.splitlines()) == n + 2, out.texts
    finally:
        keep_indexes(0)


def _used(out: Any) -> int:
    return int(out.meta["scratch/budget"]["used"])


def other_process(*args: str) -> Any:
    """``scratch ARGS --json`` as another process sharing the session ``shared``."""
    proc = subprocess.run([sys.executable, "-m", "scratch", *args, "--json"],
                          env={**os.environ, "SCRATCH_SESSION": "shared"},
                          capture_output=True, text=True, timeout=60)
    return json.loads(proc.stdout)


def test_a_budget_the_cli_changed_between_calls_is_the_one_the_next_call_is_sized_on(
        scratch_home: Path) -> None:
    # the server sizes answers on the budget state it last saw; the CLI, sharing the
    # session, records the model's count and resets it: each next call starts from that
    cli("write", "notes", input="".join(f"line {i}\n" for i in range(1, 200)))
    session = ServerState(session="shared").session_for("conn", "default", None, "test")
    first = run_tool("head", {"file": "notes", "lines": 5}, session)
    assert first.ok
    spent = first.tokens
    assert spent and _used(first) == spent
    assert other_process("budget", "used", "5000")["ok"]
    after_report = run_tool("head", {"file": "notes", "lines": 5}, session)
    assert after_report.ok and _used(after_report) == 5000 + spent
    assert other_process("budget", "reset")["ok"]
    after_reset = run_tool("head", {"file": "notes", "lines": 5}, session)
    assert after_reset.ok and _used(after_reset) == spent
    status = other_process("budget")["data"]
    assert status["used"] == spent and status["calls"] == 1


def test_a_window_the_cli_set_between_calls_decides_the_next_refusal_or_answer(
        scratch_home: Path) -> None:
    cli("write", "notes", input="".join(f"line {i}\n" for i in range(1, 200)))
    session = ServerState(session="shared").session_for("conn", "default", None, "test")
    used = _used(run_tool("head", {"file": "notes", "lines": 5}, session))
    probe = ServerState(session="probe").session_for("conn", "default", None, "test")
    price = run_tool("head", {"file": "notes", "lines": 150}, probe).tokens
    assert price and price > 400
    # the server last saw a roomy budget; the CLI shrinks the window to leave one token less
    # than the answer costs (usable = 80% of it): refused
    assert other_process("budget", "set-window", str(-(-(used + price - 1) * 5 // 4)))["ok"]
    refused = run_tool("head", {"file": "notes", "lines": 150}, session)
    assert not refused.ok and refused.code == "budget_exceeded", refused.texts
    # and a --fit page is sized on what is left now, not on what the server saw before
    cut = run_tool("head", {"file": "notes", "lines": 150, "fit": True}, session)
    assert cut.ok, cut.texts
    shown = cut.text.splitlines()
    assert 0 < len(shown) < 150 and shown[0] == "1:line 1"
    assert int(cut.meta["scratch/budget"]["remaining"]) >= 0
    # the server last saw a spent budget; the CLI resets it and widens the window: answered
    assert other_process("budget", "reset")["ok"]
    assert other_process("budget", "set-window", "0")["ok"]
    again = run_tool("head", {"file": "notes", "lines": 150}, session)
    assert again.ok and again.text.startswith("1:line 1\n")
    assert _used(again) == again.tokens
