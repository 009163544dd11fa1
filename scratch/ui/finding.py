"""Grep for the pages: the first matching lines of an entry, and the true count of them,
within a time limit.

The engine is grep's own (:mod:`scratch.query.grep`: RE2, the same matching lines ``scratch
grep`` selects), run over the entry's stored content through the index's line starts.

Invariants:
- Shown lines are bounded: at most ``show`` of them, a line longer than :data:`WINDOW_OVER`
  bytes as the engine's window around its first match (about 1 KB), never the line.
- A count is of the whole entry. It runs until the request's deadline; one not finished is
  kept (the byte, line and count it reached, per version, pattern and size), so the next
  request goes on from there, and the page says how far it got. A finished count is kept,
  so paging costs nothing more. Kept counts are bounded (:data:`KEPT_COUNTS`).
"""

from __future__ import annotations

import mmap
import os
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scratch.answers.kernel.target import Target
    from scratch.query.grep import GrepLine, GrepOptions

WINDOW_OVER = 4096  # bytes of a line over which a match shows the engine's window of it
KEPT_COUNTS = 1024  # counts kept between requests (finished or not)
CHECK_EVERY = 512  # matching lines counted between looks at the clock


class Count(NamedTuple):
    """A count of an entry's matching lines: ``matched`` of them up to byte ``at`` (a line
    start; the entry's size when ``done``), the next line there being ``line``."""

    matched: int
    at: int
    line: int
    done: bool


class Found(NamedTuple):
    """The first matching lines from a line on, and the entry's count."""

    lines: list[GrepLine]
    counted: Count
    total_lines: int


_counts: OrderedDict[tuple[object, ...], Count] = OrderedDict()
_lock = threading.Lock()


def _key(target: Target, options: GrepOptions, size: int) -> tuple[object, ...]:
    st = os.stat(target.path)
    return (str(target.path), st.st_ino, size, st.st_mtime_ns, options.pattern,
            options.ignore_case, options.fixed)


def find(target: Target, options: GrepOptions, *, from_line: int, show: int,
         deadline: float) -> Found:
    """The first ``show`` lines matching ``options`` from line ``from_line`` of ``target``,
    and its count (see the module docstring) as far as ``deadline`` (``time.monotonic``)
    lets it go."""
    from scratch.query.grep import compile_pattern, grep_buffer
    options = replace(options, max_count=None, context=0, invert=False)
    matcher = compile_pattern(options)  # a bad pattern says so before any file is read
    index = target.index
    size = int(index.meta["bytes"])
    lines_total = index.line_count
    if size == 0 or lines_total == 0:
        return Found([], Count(0, 0, 1, True), lines_total)
    with open(target.path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        if len(buf) != size:  # the file is not the one the index describes
            return Found([], Count(0, 0, 1, True), lines_total)
        starts = index.line_starts()
        shown: list[GrepLine] = []
        if show > 0 and from_line <= lines_total:
            for region in grep_buffer(buf, replace(options, max_count=show),
                                      start=index.line_offset(from_line),
                                      first_lineno=from_line, line_starts=starts,
                                      matcher=matcher, window_over=WINDOW_OVER):
                shown += region.lines
        key = _key(target, options, size)
        with _lock:
            count = _counts.get(key) or Count(0, 0, 1, False)
        if not count.done:
            count = _count_on(buf, options, matcher, starts, count, size, deadline)
            with _lock:
                _counts[key] = count
                _counts.move_to_end(key)
                while len(_counts) > KEPT_COUNTS:
                    _counts.popitem(last=False)
        return Found(shown, count, lines_total)
    finally:
        buf.close()


def _count_on(buf: mmap.mmap, options: GrepOptions, matcher: object, starts: Sequence[int],
              count: Count, size: int, deadline: float) -> Count:
    from scratch.query.grep import Matcher, iter_selected_lines
    assert isinstance(matcher, Matcher)
    n, at, line = count.matched, count.at, count.line
    for i, (lineno, _start, end) in enumerate(iter_selected_lines(
            buf, options, start=at, first_lineno=line, line_starts=starts, matcher=matcher), 1):
        n += 1
        at, line = end + 1, lineno + 1
        if i % CHECK_EVERY == 0 and time.monotonic() > deadline and at < size:
            return Count(n, at, line, False)
    return Count(n, size, line, True)
