"""A person at a terminal is not an agent: with no agent named (no --agent, no SCRATCH_AGENT),
stdout a terminal and no --json, the budget is charged and shown but never refuses; the
per-call cap still does (with --fit offered). Driven through a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "scratch" / "samples" / "pods.json"
SCRATCH = [sys.executable, "-m", "scratch"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(SCRATCH_HOME=str(home), PYTHONPATH=str(REPO), COLUMNS="200", TERM="dumb",
               **extra)
    return env


def at_terminal(home: Path, *args: str, **extra: str) -> tuple[int, str]:
    """``scratch ARGS`` with stdout and stderr on a pseudo-terminal: exit code and what the
    terminal showed (escape sequences taken out)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([*SCRATCH, *args], env=env_for(home, **extra), stdout=slave,
                            stderr=slave, stdin=subprocess.DEVNULL, cwd=home)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    code = proc.wait(timeout=120)
    shown = b"".join(chunks).decode("utf-8", errors="replace").replace("\r\n", "\n")
    return code, ANSI.sub("", shown)


def piped(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SCRATCH, *args], env=env_for(home, **extra), capture_output=True,
                          text=True, check=False, timeout=120, cwd=home)


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    home = tmp_path / "store"
    home.mkdir()
    # a usable budget of 3,000 tokens, a per-call cap of 2,500
    (home / "scratch.toml").write_text("[budget]\ncontext_window = 3000\nsafety_margin = 0.0\n"
                                       "max_extraction_tokens = 2500\n")
    with SAMPLE.open("rb") as sample:
        stored = subprocess.run([*SCRATCH, "ingest", "--tool", "pods", "--store-always"],
                                env=env_for(home), stdin=sample, capture_output=True,
                                text=True, check=False, timeout=120, cwd=home)
    assert stored.returncode == 0, stored.stderr
    return home


FOOTER = re.compile(r"^-- ([0-9,]+) tokens \(o200k_base\) · budget ([0-9,]+) of 3,000 left(.*)$",
                    re.M)
HEAD = ("head", "pods", "-n", "100")  # about 860 tokens: three fit in the budget, not four


def used(home: Path, session: str, *agent: str) -> int:
    done = piped(home, "--json", *agent, "--session", session, "budget")
    assert done.returncode == 0, done.stdout
    return int(json.loads(done.stdout)["data"]["used"])


def test_a_person_at_a_terminal_is_charged_and_shown_the_budget_but_never_refused(
        home: Path) -> None:
    footers = []
    for _ in range(5):
        code, shown = at_terminal(home, "--session", "t", *HEAD)
        assert code == 0, shown
        assert '"apiVersion": "v1"' in shown  # the answer itself, on the screen
        found = FOOTER.findall(shown)
        assert len(found) == 1, shown
        footers.append(found[0])
    charged = [int(f[0].replace(",", "")) for f in footers]
    assert len(set(charged)) == 1 and 3000 // 4 < charged[0] < 3000 // 3
    # the budget is charged in full and shown running out, then used up
    assert [int(f[1].replace(",", "")) for f in footers] == [
        max(0, 3000 - charged[0] * (i + 1)) for i in range(5)]
    assert footers[-1][2] == " · the budget is used up"
    assert used(home, "t") == 5 * charged[0]


@pytest.mark.parametrize("how", ["--agent", "SCRATCH_AGENT", "--json", "a pipe"])
def test_an_agent_is_held_to_the_budget(home: Path, how: str) -> None:
    """Naming an agent, asking for JSON, or stdout not a terminal: refused (exit 3) once the
    budget is spent, as before."""
    def one() -> tuple[int, str]:
        if how == "--agent":
            return at_terminal(home, "--agent", "default", "--session", "a", *HEAD)
        if how == "SCRATCH_AGENT":
            return at_terminal(home, "--session", "a", *HEAD, SCRATCH_AGENT="default")
        if how == "--json":
            return at_terminal(home, "--json", "--session", "a", *HEAD)
        done = piped(home, "--session", "a", *HEAD)
        return done.returncode, done.stdout + done.stderr

    codes = []
    for _ in range(4):
        code, shown = one()
        codes.append(code)
    assert codes == [0, 0, 0, 3]
    assert "budget_exceeded" in shown


def test_the_per_call_cap_still_protects_a_persons_screen_with_fit_offered(home: Path) -> None:
    code, shown = at_terminal(home, "--session", "c", "head", "pods", "-n", "2000")
    assert code == 3
    assert "error [head_too_large]" in shown and "over the per-call cap of 2500" in shown
    assert "--fit" in shown and '"apiVersion"' not in shown
    code, shown = at_terminal(home, "--session", "c", "head", "pods", "-n", "2000", "--fit")
    assert code == 0 and '"apiVersion": "v1"' in shown
    charged = int(FOOTER.findall(shown)[0][0].replace(",", ""))
    assert 2000 < charged <= 2500


def test_help_says_a_person_is_not_an_agent(home: Path) -> None:
    done = piped(home, "--help")
    text = " ".join(done.stdout.split())
    assert done.returncode == 0
    assert ("A person at a terminal is not an agent: with no agent named (no --agent, no "
            "$SCRATCH_AGENT), stdout a terminal and no --json, the budget is charged and shown "
            "but never refuses; the per-call cap still does, with --fit offered.") in text
