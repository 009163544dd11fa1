"""`scratch run` interrupted itself (SIGINT, SIGTERM): what arrived is kept and flagged partial.

The command signals its own parent ($PPID of the sh is scratch), so scratch always runs as a
real subprocess (``python -m scratch``) here, never in-process. The first signal is passed on
to the command and its output read on; a second kills the command and stops waiting; scratch
exits with 128 + the number of the signal it received first.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.helpers import cli

SEQ_20000 = b"".join(b"%d\n" % i for i in range(1, 20001))
SEQ_5000 = b"".join(b"%d\n" % i for i in range(1, 5001))
# what sh runs after signalling scratch: it ends only when the signal passed on kills sh (a
# test waits for that, however slow the machine, instead of racing a fixed sleep)
UNTIL_KILLED = "while :; do sleep 0.05; done"


def scratch(home: Path, *args: str, timeout: float = 20) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "SCRATCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "scratch", *args], capture_output=True,
                          env=env, timeout=timeout)


def stored(home: Path, name: str) -> bytes:
    return (home / "agents" / "default" / "files" / name).read_bytes()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("sig,code", [("TERM", 143), ("INT", 130)])
def test_signal_to_scratch_keeps_what_arrived(scratch_home: Path, sig: str, code: int) -> None:
    # the signal is passed on to sh, which dies of it: "tail-line" is never written (the loop
    # ends only with sh, so no timing decides it), and scratch still waits for the pipe to
    # close (the last sleep holds it) before ingesting
    cmd = f"seq 1 20000; kill -{sig} $PPID; {UNTIL_KILLED}; echo tail-line"
    r = scratch(scratch_home, "run", "--json", "big", "--", "sh", "-c", cmd)
    assert r.returncode == code, r.stderr
    env = orjson.loads(r.stdout)
    assert env["ok"] is True and env["command"] == "run"
    p = env["data"]
    assert (p["name"], p["stored"], p["partial"]) == ("big", True, True)
    assert (p["bytes"], p["lines"]) == (len(SEQ_20000), 20000)
    assert env["meta"]["command_exit"] == code  # sh was killed by the signal passed on
    assert env["meta"]["interrupted"] == f"SIG{sig}"
    assert stored(scratch_home, "big") == SEQ_20000
    log = subprocess.run(["git", "-C", str(scratch_home), "log", "-1", "--format=%s"],
                         capture_output=True, text=True, check=True).stdout
    assert "Partial output." in log
    # read back through the CLI: every line is there, the last one included
    r = scratch(scratch_home, "--json", "tail", "big", "-n", "2")
    assert r.returncode == 0
    data = orjson.loads(r.stdout)["data"]
    assert (data["total_lines"], data["lines"]) == (20000, ["19999", "20000"])


@pytest.mark.timeout(30)
def test_human_mode_notices_name_the_signal(scratch_home: Path) -> None:
    r = scratch(scratch_home, "run", "big", "--", "sh", "-c",
                f"seq 1 20000; kill -TERM $PPID; {UNTIL_KILLED}; echo tail-line")
    assert r.returncode == 143
    err = r.stderr.decode()
    assert "scratch: sh was killed by signal 15\n" in err
    assert "scratch: interrupted by SIGTERM; kept the 108,894 bytes that arrived\n" in err
    assert b"PARTIAL" in r.stdout  # the pointer says so too
    assert stored(scratch_home, "big") == SEQ_20000
    # a tiny output is shown as it is; with --store-always it is stored, flagged partial
    r = scratch(scratch_home, "run", "--store-always", "small", "--", "sh", "-c",
                "echo half; kill -INT $PPID; sleep 0.1")
    assert (r.returncode, r.stdout) == (130, b"half\n")
    err = r.stderr.decode()
    assert ("scratch: stored as small (version 1); the output is shorter than a pointer to "
            "it; PARTIAL: the command failed, was killed or was interrupted mid-output\n") in err
    assert "scratch: interrupted by SIGINT; kept the 5 bytes that arrived\n" in err
    assert stored(scratch_home, "small") == b"half\n"


@pytest.mark.timeout(30)
def test_command_that_exits_cleanly_on_the_signal_is_still_partial(scratch_home: Path) -> None:
    # the command catches the signal passed on, writes a last line and exits 0: what it wrote
    # while shutting down is kept, and scratch still exits 128 + N
    cmd = ("trap 'echo bye; exit 0' TERM; seq 1 20000; kill -TERM $PPID; "
           "i=0; while [ $i -lt 100 ]; do i=$((i+1)); sleep 0.05; done; echo never")
    r = scratch(scratch_home, "run", "--json", "graceful", "--", "sh", "-c", cmd)
    assert r.returncode == 143
    env = orjson.loads(r.stdout)
    assert env["data"]["partial"] is True
    assert (env["meta"]["command_exit"], env["meta"]["interrupted"]) == (0, "SIGTERM")
    assert stored(scratch_home, "graceful") == SEQ_20000 + b"bye\n"


@pytest.mark.timeout(30)
def test_nothing_arrived_stores_nothing(scratch_home: Path) -> None:
    r = scratch(scratch_home, "run", "--store-always", "empty", "--", "sh", "-c",
                f"kill -TERM $PPID; {UNTIL_KILLED}; echo late")
    assert (r.returncode, r.stdout) == (143, b"")
    err = r.stderr.decode()
    assert "scratch: the input was empty; nothing stored\n" in err
    assert "scratch: interrupted by SIGTERM; nothing had arrived\n" in err
    r = scratch(scratch_home, "run", "--json", "empty", "--", "sh", "-c",
                "kill -INT $PPID; sleep 0.2")
    assert r.returncode == 130
    env = orjson.loads(r.stdout)
    assert env["data"] == {"stored": False, "empty": True, "bytes": 0}
    assert (env["meta"]["command_exit"], env["meta"]["interrupted"]) == (130, "SIGINT")
    assert cli("ls", "--json").json["data"]["entries"] == []


@pytest.mark.timeout(60)
def test_second_signal_kills_a_command_that_ignores_the_first(scratch_home: Path,
                                                             tmp_path: Path) -> None:
    # sh ignores TERM and sends TERM to scratch until scratch's second one SIGKILLs it (a
    # signal sent while the first is still unhandled may merge with it: no fixed gap to trust).
    # The background sleep is a child of sh that keeps the pipe open after sh dies: scratch
    # reads what is in the pipe and stops there instead of waiting for it, so the sleep is
    # still running when scratch has exited (no clock: it would hold scratch for 10 minutes)
    orphan_pid = tmp_path / "orphan.pid"
    cmd = (f"trap '' TERM; seq 1 5000; sleep 600 & echo $! > {orphan_pid}; "
           "while :; do kill -TERM $PPID; sleep 0.2; done")
    env = {**os.environ, "SCRATCH_HOME": str(scratch_home)}
    out, err = tmp_path / "out", tmp_path / "err"
    # files, not pipes: the orphaned sleep inherits scratch's stderr and would hold a pipe open;
    # its own session lets the test end that sleep afterwards
    with open(out, "wb") as fo, open(err, "wb") as fe:
        proc = subprocess.Popen([sys.executable, "-m", "scratch", "run", "--json", "stubborn",
                                 "--", "sh", "-c", cmd], stdout=fo, stderr=fe, env=env,
                                start_new_session=True)
        orphan = None
        try:
            code = proc.wait(timeout=50)
            orphan = int(orphan_pid.read_text())
            os.kill(orphan, 0)  # raises ProcessLookupError if scratch had waited for it
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if orphan is not None:
                try:
                    os.kill(orphan, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    assert code == 143, err.read_bytes()
    envelope = orjson.loads(out.read_bytes())
    assert (envelope["data"]["partial"], envelope["data"]["lines"]) == (True, 5000)
    assert envelope["meta"]["command_exit"] == 128 + signal.SIGKILL
    assert envelope["meta"]["interrupted"] == "SIGTERM"
    assert stored(scratch_home, "stubborn") == SEQ_5000


@pytest.mark.timeout(30)
def test_an_ignored_sigint_stays_ignored_for_the_command(scratch_home: Path) -> None:
    # a background job's SIGINT is ignored; scratch must not hand the command a default
    # disposition in its place (the command's SIGINT to itself does nothing)
    inner = "kill -INT $$; echo survived"
    env = {**os.environ, "SCRATCH_HOME": str(scratch_home)}
    r = subprocess.run(["sh", "-c", 'trap "" INT; exec "$@"', "sh", sys.executable, "-m",
                        "scratch", "run", "--", "sh", "-c", inner],
                       capture_output=True, env=env, timeout=20)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"survived\n", b"")


def test_handlers_are_restored_after_the_run() -> None:
    # in-process, with a command that signals nobody: once run returns, the previous
    # handlers are back (so a Ctrl-C during a later ingest aborts as usual)
    from scratch.cli.argv import rewrite_run_argv

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    r = cli(*rewrite_run_argv(["run", "--", "sh", "-c", "echo hi"]))
    assert (r.code, r.out) == (0, b"hi\n")
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
