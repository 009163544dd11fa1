"""Long work shows its progress (issue 30, item 15): to a person at a terminal on stderr (what is
done and what is left), never on stdout, in --json or into a pipe; over MCP as progress
notifications when the client sent a progressToken.

Nothing here races the clock: the rules of when to show are tested on a clock the test moves;
the commands run with config ``progress.after`` 0 (the first report of each stage shows at
once) on a real pseudo-terminal, or with it at an hour (nothing may show).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from scratch import progress
from scratch.progress import Shown, TerminalLine, describe
from tests.sync_support import bare
from tests.terminal_support import SCRATCH, run_at_terminal, scratch_env

SAMPLE = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"
AT_ONCE = {"SCRATCH_PROGRESS_AFTER": "0"}
NEVER = {"SCRATCH_PROGRESS_AFTER": "3600"}
ERASE = "\r\x1b[2K"


def test_a_report_reads_as_done_and_left() -> None:
    mb = 1 << 20
    assert describe("index", 120 * mb, 1900 * mb) == (
        "indexing: 120.0 MB of 1.9 GB (6%), 1.7 GB left")
    assert describe("index", 120 * mb, 1900 * mb, elapsed=4.0) == (
        "indexing: 120.0 MB of 1.9 GB (6%), 1.7 GB left, about 59 s")
    assert describe("read", 3 * mb + 512 * 1024, None) == "reading the input: 3.5 MB so far"
    assert describe("store", 1024, 1024) == "storing it: 1.0 KB of 1.0 KB (100%)"
    assert describe("query", 40, 100) == "running the query: 40%, 60% left"
    assert describe("copy", 100, 100) == "making the columnar copy: 100%"
    assert describe("rows", 30_000, None) == "writing the rows for SQL: 30,000 rows so far"
    assert describe("merge", 1, 4) == "sync: merging: 1 agents of 4 agents (25%), 3 agents left"
    assert describe("fetch", 0, None) == "sync: fetching from the remote"
    assert describe("push", 0, None, elapsed=3.2) == "sync: pushing to the remote (3 s)"


def test_when_a_report_is_shown() -> None:
    now = [100.0]
    shown = Shown(after=1.0, every=0.1, clock=lambda: now[0])
    assert not shown.wanted("read")  # a call faster than a second shows nothing
    now[0] = 101.0
    assert shown.wanted("read")
    now[0] = 101.05
    assert not shown.wanted("read")  # at most ten a second
    assert shown.wanted("index")  # but every new stage
    now[0] = 101.2
    assert shown.wanted("index")
    at_once = Shown(after=0.0, clock=lambda: now[0])
    assert at_once.wanted("read")


def test_the_terminal_line_is_rewritten_then_wiped() -> None:
    out = io.StringIO()
    line = TerminalLine(out, Shown(after=0.0), width=30)
    line("read", 1 << 20, None)
    line("index", 5, 10)
    line.close()
    assert out.getvalue() == (ERASE + "reading the input: 1.0 MB so " + ERASE
                              + "indexing: 5 bytes of 10 bytes" + ERASE)
    silent = io.StringIO()
    TerminalLine(silent, Shown(after=0.0)).close()
    assert silent.getvalue() == ""  # nothing drawn, nothing to wipe


def test_reports_go_to_the_calls_reporter_only_and_never_break_it() -> None:
    seen: list[tuple[str, int, int | None]] = []
    progress.report("read", 1)  # nobody listens: nothing happens
    with progress.reporting(lambda *a: seen.append(a)):
        assert progress.active()
        progress.report("read", 5, 10)
    assert not progress.active()
    assert seen == [("read", 5, 10)]

    def broken(stage: str, done: int, total: int | None) -> None:
        raise RuntimeError("a reporter that fails")

    with progress.reporting(broken):
        progress.report("read", 1)  # the work goes on


def _lines(terminal: str) -> list[str]:
    """The progress lines drawn (each after an erase), in order."""
    return [part.split("\r")[0].split("\n")[0] for part in terminal.split(ERASE)[1:]
            if part.split("\r")[0].split("\n")[0]]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "store"
    home.mkdir()
    return home


def test_ingest_shows_each_stage_on_stderr_and_nothing_on_stdout(home: Path) -> None:
    with SAMPLE.open("rb") as sample:
        shown = run_at_terminal(home, "ingest", "--tool", "pods", "--store-always",
                                stdout_too=False, stdin=sample, **AT_ONCE)
    assert shown.code == 0, shown.terminal
    drawn = _lines(shown.terminal)
    stages = [d.split(":")[0] for d in drawn]
    assert stages[0] == "reading the input" and "storing it" in stages
    assert "indexing" in stages
    size = SAMPLE.stat().st_size
    assert f"storing it: 64.0 KB of {size / 1024:.1f} KB ({65536 * 100 // size}%), " \
           f"{(size - 65536) / 1024:.1f} KB left" in drawn
    # wiped at the end: the footer starts a clean line
    assert shown.terminal.rsplit(ERASE, 1)[1].startswith("-- ")
    # the line was wiped before the footer, and stdout is the pointer alone
    assert shown.out.startswith(b"stored pods/") and b"\x1b" not in shown.out
    assert b"reading the input" not in shown.out


def test_no_progress_in_json_into_a_pipe_or_before_the_threshold(home: Path) -> None:
    import subprocess
    with SAMPLE.open("rb") as sample:
        shown = run_at_terminal(home, "--json", "ingest", "--tool", "pods", "--store-always",
                                stdout_too=False, stdin=sample, **AT_ONCE)
    assert shown.code == 0 and ERASE not in shown.terminal
    assert json.loads(shown.out)["ok"] is True
    with SAMPLE.open("rb") as sample:
        piped = subprocess.run([*SCRATCH, "ingest", "--tool", "pods2", "--store-always"],
                               env=scratch_env(home, **AT_ONCE), stdin=sample,
                               capture_output=True, timeout=300, cwd=home)
    assert piped.returncode == 0 and b"\x1b" not in piped.stderr + piped.stdout
    assert b"reading the input" not in piped.stderr
    with SAMPLE.open("rb") as sample:
        quick = run_at_terminal(home, "ingest", "--tool", "pods3", "--store-always",
                                stdout_too=False, stdin=sample, **NEVER)
    assert quick.code == 0 and ERASE not in quick.terminal


def test_sql_and_an_index_built_on_first_use_show_progress(home: Path) -> None:
    import shutil
    with SAMPLE.open("rb") as sample:
        assert run_at_terminal(home, "ingest", "--tool", "pods", "--store-always",
                               stdout_too=False, stdin=sample).code == 0
    shown = run_at_terminal(home, "sql", "pods", "SELECT count(*) AS n FROM entry",
                            stdout_too=False, **AT_ONCE)
    assert shown.code == 0 and shown.out == b"n\n60\n"
    assert "running the query: 0%, 100% left" in _lines(shown.terminal)
    shutil.rmtree(home / "cache" / "index")  # as after a sync brought the entry
    shown = run_at_terminal(home, "schema", "pods", "--depth", "1", stdout_too=False,
                            **AT_ONCE)
    assert shown.code == 0
    assert any(line.startswith("indexing: ") for line in _lines(shown.terminal))


def test_sync_shows_its_steps(home: Path, tmp_path: Path) -> None:
    import subprocess
    env = scratch_env(home)
    for args in (["remote", "add", "origin", str(bare(tmp_path / "remote.git"))],
                 ["write", "notes"]):
        done = subprocess.run([*SCRATCH, *args], env=env, input=b"a note\n",
                              capture_output=True, timeout=300, cwd=home)
        assert done.returncode == 0, done.stderr
    shown = run_at_terminal(home, "sync", stdout_too=False, **AT_ONCE)
    assert shown.code == 0, shown.terminal
    assert _lines(shown.terminal) == ["sync: fetching from the remote",
                                      "sync: merging: 0 agents of 1 agents (0%), 1 agents left",
                                      "sync: pushing to the remote"]


def test_mcp_sends_progress_notifications_when_asked(home: Path) -> None:
    from tests.mcp_support import server_env, stdio_client
    client = stdio_client(home, env=server_env(home, **AT_ONCE))
    try:
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            seen.append((p, total, message))

        result = client.portal.call(lambda: client.client.call_tool(
            "ingest", {"content": SAMPLE.read_text(), "tool": "pods", "store_always": True},
            progress_callback=on_progress))
        assert not result.is_error
        messages = [m for _, _, m in seen]
        assert messages and messages[0].startswith("reading the input: ")
        assert any(m.startswith("indexing: ") for m in messages)
        values = [p for p, _, _ in seen]
        assert values == sorted(values) and len(set(values)) == len(values)
        # no token, no notifications: the same call answers alike
        quiet = client.call("ingest", {"content": SAMPLE.read_text(), "tool": "pods",
                                       "store_always": True})
        assert not quiet.is_error
    finally:
        client.close()
