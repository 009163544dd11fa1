"""`scratch run`: the command's exit status and stderr pass through, its stdout is ingested,
the tool name defaults to the program and its first word, partial output is kept and flagged.

In-process runs go through ``rewrite_run_argv`` like ``scratch.cli.main`` does; where the
command's own stderr or stdin matters the CLI runs as a subprocess (``python -m scratch``).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest

from scratch.cli.argv import rewrite_run_argv
from tests.helpers import Run, cli

PODS = Path(str(files("scratch") / "samples" / "pods.json"))


def run(*args: str, env: dict[str, str] | None = None) -> Run:
    return cli(*rewrite_run_argv(["run", *args]), env=env)


def entries() -> list[dict]:
    return cli("ls", "--json").json["data"]["entries"]


def shell(cmd: str, home: Path, *, input: bytes | None = None
          ) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "SCRATCH_HOME": str(home)}
    return subprocess.run(["bash", "-c", cmd], capture_output=True, env=env, input=input,
                          timeout=60)


def test_exit_code_and_small_output_pass_through() -> None:
    r = run("--", "sh", "-c", "echo hi; exit 3")
    assert (r.code, r.out) == (3, b"hi\n")
    assert r.err == "scratch: sh exited with status 3\n"
    assert entries() == []
    r = run("--", "sh", "-c", "printf 'no newline'")
    assert (r.code, r.out, r.err) == (0, b"no newline", "")


def test_stderr_and_stdin_pass_through(scratch_home: Path) -> None:
    py = sys.executable
    r = shell(f"{py} -m scratch run -- sh -c 'echo out; echo err >&2; exit 5'", scratch_home)
    assert (r.returncode, r.stdout) == (5, b"out\n")
    assert r.stderr == b"err\nscratch: sh exited with status 5\n"
    # the command reads scratch's own stdin (`scratch run -- jq . < file` must work)
    r = shell(f"{py} -m scratch run -- cat", scratch_home, input=b"a\r\nb\xff")
    assert (r.returncode, r.stdout, r.stderr) == (0, b"a\r\nb\xff", b"")


def test_default_tool_name() -> None:
    p = run("--store-always", "--json", "--", "sh", "-c", "echo hi").json["data"]
    assert p["name"].startswith("sh_echo_hi/")
    p = run("--store-always", "--json", "--tool", "mine", "--", "echo", "x").json["data"]
    assert p["name"].startswith("mine/")


def test_default_tool_from_a_program_on_path(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "kubectl"
    fake.write_text(f"#!/bin/sh\ncat '{PODS}'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    r = run("--json", "--", "kubectl", "-n", "shop", "get", "pods", "-o", "json", env=env)
    assert r.code == 0, r.out
    p = r.json["data"]
    # the first non-option word after the program; "shop" is the value of -n, not a word
    assert p["name"].startswith("kubectl_get/")
    r = run("--json", "--", "kubectl", "get", "pods", "-A", "-o", "json", env=env)
    p = r.json["data"]
    assert p["name"].startswith("kubectl_get/") and p["format"] == "json"
    assert p["array"]["path"] == "items" and p["array"]["length"] == 60
    assert "partial" not in p
    assert r.json["command"] == "run" and r.json["meta"]["command_exit"] == 0


def test_command_failing_mid_output_is_kept_and_flagged(scratch_home: Path) -> None:
    r = run("--json", "big", "--", "sh", "-c", f"cat '{PODS}'; exit 2")
    assert r.code == 2
    p = r.json["data"]
    assert (p["name"], p["partial"]) == ("big", True)
    assert r.json["meta"]["command_exit"] == 2
    stored = scratch_home / "agents" / "default" / "files" / "big"
    assert stored.stat().st_size == p["bytes"]
    log = subprocess.run(["git", "-C", str(scratch_home), "log", "-1", "--format=%s"],
                         capture_output=True, text=True, check=True).stdout
    assert "Partial output." in log
    # human mode: a tiny output (shorter than any pointer to it) is shown as it is, and the
    # notice says where it is stored and that it is partial
    r = run("--store-always", "small", "--", "sh", "-c", "echo half; kill -9 $$")
    assert r.code == 128 + 9
    assert r.text == "half\n"
    assert ("scratch: stored as small (version 1); the output is shorter than a pointer to "
            "it; PARTIAL: the command failed, was killed or was interrupted mid-output") in r.err
    assert "scratch: sh was killed by signal 9\n" in r.err
    assert (scratch_home / "agents/default/files/small").read_bytes() == b"half\n"


def test_failing_command_without_output_stores_nothing() -> None:
    r = run("--store-always", "--", "sh", "-c", "exit 4")
    assert (r.code, r.out) == (4, b"")
    assert "the input was empty; nothing stored" in r.err
    assert entries() == []


def test_name_before_the_double_dash(scratch_home: Path) -> None:
    # tiny outputs are shown as they are; the notice names the entry they were stored as
    r = run("--store-always", "mynamE", "--", "sh", "-c", "echo one")
    assert r.code == 0 and "stored as mynamE (version 1)" in r.err
    r = run("--tool", "t", "--store-always", "mynamE", "--", "sh", "-c", "echo two")
    assert "stored as mynamE (version 2)" in r.err
    r = run("--store-always", "--name", "other", "--", "echo", "x")
    assert "stored as other (version 1)" in r.err
    assert sorted(e["name"] for e in entries()) == ["mynamE", "other"]
    # the real entry point does the same rewrite
    r2 = shell(f"{sys.executable} -m scratch run --store-always viaMain -- echo 3", scratch_home)
    assert r2.returncode == 0 and b"stored as viaMain (version 1)" in r2.stderr

def test_command_not_found_and_not_executable(tmp_path: Path) -> None:
    r = run("--json", "--", "no-such-command-xyz", "arg")
    assert r.code == 127  # as a shell, env or nice report it
    assert r.json["error"] == {"code": "command_not_found",
                               "message": "command not found: no-such-command-xyz",
                               "command": "no-such-command-xyz"}
    script = tmp_path / "noexec.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    r = run("--json", "--", str(script))
    assert r.code == 126 and r.json["error"]["code"] == "command_not_executable"
    assert entries() == []


def test_bad_arguments_are_refused_before_the_command_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for args in (("--format", "nope"), ("--name", "../x")):
        r = run("--json", *args, "--", "sh", "-c", f"touch '{marker}'; echo x")
        assert r.code == 2
        assert r.json["error"]["code"] in ("invalid_argument", "invalid_name")
    assert not marker.exists()
    r = run("--json", "--")
    assert r.code == 2


@pytest.mark.parametrize("args,expected", [
    (["run", "n", "--", "ls"], ["run", "--name", "n", "--", "ls"]),
    (["--json", "run", "--tool", "t", "n", "--", "ls", "x"],
     ["--json", "run", "--tool", "t", "--name", "n", "--", "ls", "x"]),
    (["run", "--", "ls", "n"], ["run", "--", "ls", "n"]),
    (["run", "a", "b", "--", "ls"], ["run", "a", "b", "--", "ls"]),  # ambiguous: left alone
    (["ingest", "x"], ["ingest", "x"]),
])
def test_rewrite_run_argv(args: list[str], expected: list[str]) -> None:
    assert rewrite_run_argv(args) == expected
