"""A warm server's session across many calls: what it keeps open stays bounded, and what it
answers is always the current content (scratch.mcp.session, in-process, with real stores)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scratch.mcp.dispatch import run_tool
from scratch.mcp.session import ServerState
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
    assert open_fds() - before <= 3  # one call's pins at most, not one per entry read


def test_a_version_written_between_calls_is_what_the_next_call_reads(
        scratch_home: Path) -> None:
    cli("write", "plan", input="one\n")
    session = ServerState().session_for("conn", "default", None, "test")
    assert run_tool("read", {"file": "plan"}, session).text.startswith("one\n")
    for n in range(2, 6):
        cli("write", "plan", input=f"version {n}\n")  # another process, the CLI
        out = run_tool("read", {"file": "plan"}, session)
        assert out.ok and out.text.startswith(f"version {n}\n"), out.texts
