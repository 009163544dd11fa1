"""Progress of long work: the core says what it has done, an interface shows it.

Work that can take more than a moment (reading and indexing a big input, DuckDB building a
columnar copy or scanning a big file, a sync's steps) calls :func:`report` with a stage, what
is done and the total when known. Without a reporter that is all it costs. An interface
installs one for the duration of a call with :func:`reporting`: the CLI a line on stderr at
a terminal (:class:`TerminalLine`), the MCP server progress notifications when the client
sent a ``progressToken``. Nothing here writes to stdout.

Invariants:
- A reporter is per call (a context variable: a worker thread installs its own), and one
  that raises never breaks the work it reports on (its error is dropped).
- :class:`Shown` decides when a report is worth showing, for every interface alike: not
  before the call has run ``after`` seconds (config ``progress.after``, default 1: a call
  faster than that shows nothing), then at most every ``every`` seconds, and always on a new
  stage. ``after`` 0 shows the first report at once, which is how tests see it without
  racing the clock.
- Units come from the stage (:data:`STAGES`): bytes, percent, a count of things (rows,
  agents), or none (a step whose length nothing measures: its label and time).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from typing import IO

# (stage, done, total or None): what ingest's callbacks have always been
Progress = Callable[[str, int, "int | None"], None]

# stage -> (what a person reads, the unit of done and total)
STAGES: dict[str, tuple[str, str]] = {
    "read": ("reading the input", "bytes"),
    "store": ("storing it", "bytes"),
    "count": ("counting its tokens", "bytes"),
    "analyze": ("analyzing", "bytes"),
    "index": ("indexing", "bytes"),
    "rows": ("writing the rows for SQL", "rows"),
    "query": ("running the query", "percent"),
    "copy": ("making the columnar copy", "percent"),
    "fetch": ("sync: fetching from the remote", ""),
    "merge": ("sync: merging", "agents"),
    "apply": ("sync: writing the merged entries", ""),
    "push": ("sync: pushing to the remote", ""),
}

_CURRENT: contextvars.ContextVar[Progress | None] = contextvars.ContextVar(
    "scratch_progress", default=None)


def report(stage: str, done: int, total: int | None = None) -> None:
    """Say that ``done`` of ``total`` (None: unknown) of ``stage`` is done; nothing without a
    reporter."""
    reporter = _CURRENT.get()
    if reporter is None:
        return
    try:
        reporter(stage, done, total)
    except Exception:  # noqa: BLE001 - showing progress never breaks the work
        pass


def active() -> bool:
    """Whether a reporter listens (work may skip measuring what nobody would see)."""
    return _CURRENT.get() is not None


@contextlib.contextmanager
def reporting(reporter: Progress | None) -> Iterator[None]:
    """Reports made in this context (this thread, this task) go to ``reporter``."""
    token = _CURRENT.set(reporter)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def watching(current: Callable[[], float], stage: str, *, every: float = 0.2,
             stop: Callable[[], bool]) -> Callable[[], None]:
    """Report ``current()`` (a share done, 0-100) of ``stage`` from a thread every ``every``
    seconds until ``stop()``; returns the function that ends it (joins the thread). For work
    that reports nothing itself (a DuckDB statement: its ``query_progress``). Nothing starts
    without a reporter."""
    reporter = _CURRENT.get()
    if reporter is None:
        return lambda: None
    import threading
    done = threading.Event()

    def run() -> None:
        while not done.wait(every) and not stop():
            try:
                share = current()
            except Exception:  # noqa: BLE001 - the work may have ended meanwhile
                return
            if share >= 0:
                with contextlib.suppress(Exception):
                    reporter(stage, int(share), 100)

    with contextlib.suppress(Exception):  # it has begun: 0% (what the first look will say)
        reporter(stage, 0, 100)
    thread = threading.Thread(target=run, name="scratch-progress", daemon=True)
    thread.start()

    def end() -> None:
        done.set()
        thread.join()

    return end


# -- when to show, and how it reads ---------------------------------------------------------


class Shown:
    """Which reports to show (see the module): the first after ``after`` seconds, then at
    most one each ``every`` seconds, and every new stage."""

    def __init__(self, after: float = 1.0, every: float = 0.1,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.started = clock()
        self.after = after
        self.every = every
        self.last = -1.0e18
        self.stage: str | None = None
        self.stage_started = self.started
        self.stage_done = 0

    def wanted(self, stage: str) -> bool:
        now = self.clock()
        if now - self.started < self.after:
            return False
        if stage != self.stage:
            self.stage, self.stage_started, self.last = stage, now, now
            return True
        if now - self.last < self.every:
            return False
        self.last = now
        return True

    def elapsed(self) -> float:
        """Seconds the current stage has run."""
        return self.clock() - self.stage_started


def _size(n: int) -> str:
    value = float(n)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if round(value, 1) < 1024 or unit == "TB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} bytes"  # pragma: no cover - the loop returns


def describe(stage: str, done: int, total: int | None, elapsed: float = 0.0) -> str:
    """A report as a person reads it: what is done and what is left, e.g. ``indexing: 120.0
    MB of 1.9 GB (6%), 1.8 GB left, about 40 s``."""
    label, unit = STAGES.get(stage, (stage, "steps"))
    if not unit:
        return label + (f" ({elapsed:.0f} s)" if elapsed >= 1.0 else "")
    if unit == "percent":
        return f"{label}: {done}%" + (f", {100 - done}% left" if done < 100 else "")
    amount = _size if unit == "bytes" else (lambda n: f"{n:,} {unit}")
    if total is None or total <= 0:
        return f"{label}: {amount(done)} so far"
    done = min(done, total)
    line = f"{label}: {amount(done)} of {amount(total)} ({done * 100 // total}%)"
    if done < total:
        line += f", {amount(total - done)} left"
        if elapsed >= 1.0 and done > 0:
            line += f", about {max(1, round(elapsed * (total - done) / done))} s"
    return line


class TerminalLine:
    """Progress as one line on a terminal (stderr), rewritten in place and wiped when the
    work ends, so what the command prints next starts on a clean line."""

    def __init__(self, stream: IO[str], shown: Shown, width: int = 80) -> None:
        self.stream = stream
        self.shown = shown
        self.width = max(20, width)
        self.drawn = False

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if not self.shown.wanted(stage):
            return
        line = describe(stage, done, total, self.shown.elapsed())[: self.width - 1]
        self.stream.write("\r\x1b[2K" + line)
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.drawn = False
