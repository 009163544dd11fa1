"""Help and usage are plain text when stdout is not a terminal (a pipe, an agent)."""

from __future__ import annotations

import subprocess
import sys

BOX = ("╭", "│", "╰", "\x1b[")


def scratch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scratch", *args], capture_output=True,
                          text=True)


def test_help_is_plain_text_in_a_pipe() -> None:
    for args in ((["--help"]), (["head", "--help"]), (["log", "--help"]),
                 (["budget", "--help"])):
        p = scratch(*args)
        assert p.returncode == 0, args
        assert p.stdout.startswith("Usage: scratch"), (args, p.stdout[:80])
        assert not any(b in p.stdout for b in BOX), args


def test_usage_errors_are_plain_text_in_a_pipe() -> None:
    p = scratch("head")
    assert p.returncode == 2
    assert p.stderr.splitlines()[-1] == "Error: Missing argument 'REF'."
    assert not any(b in p.stderr for b in BOX)


def test_an_error_is_one_line_and_its_suggestions(tmp_path) -> None:
    env = {"SCRATCH_HOME": str(tmp_path / "s"), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-m", "scratch", "write", "f"], input="a\nb\n", text=True,
                   env=env, check=True, capture_output=True)
    p = subprocess.run([sys.executable, "-m", "scratch", "get-in", "f", "x"], text=True,
                       env=env, capture_output=True)
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert lines[0].startswith("error [")
    assert all(not line.startswith("{") for line in lines)  # the JSON object only with --json
