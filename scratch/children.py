"""Work run on the other core by a child Python process instead of a thread.

A thread that does Python work between its C calls takes the GIL from the caller's own Python
work, again and again: ingest's secret scan and line pass, run so beside the parse, made the
parse twice as slow (and themselves too). A child of the same interpreter runs the module
``python -S -m MODULE ARGS...``: it imports from this process's own path (where this scratch
and its dependencies were found) without running the site hooks again (``-S``: a third of an
interpreter's start-up).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess


def start_child(module: str, args: list[str], stdin: int | IO[bytes] | None = None
                ) -> subprocess.Popen[bytes]:
    """``python -S -m module *args`` started with this process's import path; its standard
    output is a pipe, its errors are dropped. Raises OSError when it cannot start."""
    import subprocess

    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (root, *sys.path) if p and isinstance(p, str))}
    return subprocess.Popen([sys.executable, "-S", "-m", module, *args], stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            close_fds=True)


def child_output(child: subprocess.Popen[bytes]) -> bytes | None:
    """Everything the child wrote to its standard output, once it has ended; None when it
    failed (a non-zero exit, or its output could not be read: then it is killed)."""
    assert child.stdout is not None
    with child.stdout as answer:
        try:
            out = answer.read()
        except OSError:
            out = b""
            child.kill()
    return out if child.wait() == 0 else None


def end_child(child: subprocess.Popen[bytes]) -> None:
    """End the child if it still runs, wait for it and close its pipes."""
    if child.poll() is None:
        child.kill()
    child.wait()
    for pipe in (child.stdin, child.stdout):
        if pipe is not None:
            pipe.close()
