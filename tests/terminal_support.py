"""Run ``scratch`` as a person at a terminal would: some of its streams on a real
pseudo-terminal, read to the end (no clock involved)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import IO, NamedTuple

REPO = Path(__file__).resolve().parents[1]
SCRATCH = [sys.executable, "-m", "scratch"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Shown(NamedTuple):
    code: int
    terminal: str  # what the pseudo-terminal showed, escape sequences kept
    out: bytes  # stdout, when it was a pipe

    @property
    def plain(self) -> str:
        """The terminal's text with escape sequences taken out."""
        return ANSI.sub("", self.terminal)


def scratch_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SCRATCH_") and k not in ("COLUMNS", "LINES")}
    env.update({"SCRATCH_HOME": str(home), "PYTHONPATH": str(REPO), "TERM": "xterm-256color",
                **extra})
    env.pop("NO_COLOR", None)
    return env


def run_at_terminal(home: Path, *args: str, stdout_too: bool = True,
                    stdin: IO[bytes] | None = None, columns: int = 100,
                    **extra: str) -> Shown:
    """``scratch ARGS`` with stderr (and, with ``stdout_too``, stdout) on a pseudo-terminal
    ``columns`` wide; stdout otherwise a pipe."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen([*SCRATCH, *args], env=scratch_env(home, **extra),
                            stdout=slave if stdout_too else subprocess.PIPE, stderr=slave,
                            stdin=stdin if stdin is not None else subprocess.DEVNULL, cwd=home)
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
    out = proc.stdout.read() if proc.stdout is not None else b""
    code = proc.wait(timeout=300)
    shown = b"".join(chunks).decode("utf-8", errors="replace").replace("\r\n", "\n")
    return Shown(code, shown, out)
