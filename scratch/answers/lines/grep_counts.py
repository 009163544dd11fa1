"""grep's counting answers: ``--count`` (the number of selected lines of the whole entry)
and ``--count-by GROUP`` (the values a capture group took, ranked like iterate-over's counts),
and the whole entry's count a grep that ``-m`` stopped reports.

Invariants:
- Counts run over the entry's bytes through an mmap with the index's line starts, with the
  capture-free matcher (:func:`scratch.query.grep.iter_selected_lines`): lines that do not
  match cost what ``grep`` costs. ``--count`` honours ``-m`` as a cap (as ``grep -c -m``) and
  ``--from-line``; ``--count-by`` always counts the whole entry.
- Group values come from :mod:`scratch.query.groups`; a group that took no part in a line's
  match is the ``missing`` bucket.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from scratch.answers.kernel.candidate import Candidate
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.target import Target, open_target
from scratch.calls import Call
from scratch.errors import InvalidPattern, UsageError, argument

if TYPE_CHECKING:
    from scratch.query.grep import GrepOptions

T = TypeVar("T")


def _with_buffer(target: Target, use: Callable[[bytes | mmap.mmap], T]) -> T:
    """``use(buf)`` over the entry's bytes (an mmap; ``b""`` for an empty entry)."""
    if target.index.meta["bytes"] == 0:
        return use(b"")
    with open(target.path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            return use(buf)
        finally:
            buf.close()


def count_matches(target: Target, options: GrepOptions, from_line: int = 1) -> int:
    """Selected lines of the whole entry (from ``from_line``), no context, up to -m."""
    from scratch.query.grep import iter_selected_lines
    index = target.index
    if index.line_count == 0 or from_line > index.line_count:
        return 0
    cap = options.max_count

    def count(buf: bytes | mmap.mmap) -> int:
        n = 0
        for _ in iter_selected_lines(buf, options, start=index.line_offset(from_line),
                                     first_lineno=from_line, line_starts=index.line_starts()):
            n += 1
            if cap is not None and n >= cap:
                break
        return n

    return int(_with_buffer(target, count))


def counting(ctx: Context, ref: str | None, pattern: str | None, *, all: bool, count: bool,
              count_by: str | int | None, ignore_case: bool, fixed: bool,
              max_count: int | None, invert: bool, fit: bool, from_line: int, offset: int,
              limit: int | None, context: int, asked: Call) -> Candidate:
    import time

    from scratch.answers.rows.counting import count_by_answer, count_result
    if all:
        raise UsageError(f"{argument('count')} and {argument('count_by')} work on one entry, "
                         f"not with {argument('all')}", code="invalid_argument",
                         argument="all")
    if ref is None or pattern is None:
        missing = "ref" if ref is None else "pattern"
        raise UsageError(f"grep needs {argument(missing)}", code="invalid_argument",
                         argument=missing)
    if count and count_by is not None:
        raise UsageError(f"{argument('count')} and {argument('count_by')} are two answers: "
                         "give one", code="invalid_argument", argument="count_by")
    if context:
        raise UsageError(f"{argument('context')} shows lines around matches; counts have none",
                         code="invalid_argument", argument="context")
    if from_line < 1:
        raise UsageError(f"{argument('from_line')} must be >= 1, not {from_line}",
                         code="invalid_argument", argument="from_line")
    if max_count is not None and max_count < 0:
        raise UsageError(f"{argument('max_count')} must be >= 0, not {max_count}",
                         code="invalid_argument", argument="max_count")
    from scratch.query.grep import GrepOptions
    options = GrepOptions(pattern=pattern, ignore_case=ignore_case, fixed=fixed, invert=invert,
                          max_count=max_count)
    target = open_target(ctx, ref, logs=True)
    base = {"name": target.name, "version": target.version, "pattern": pattern}
    try:
        started = time.monotonic()
        if count:
            if fit or offset or limit is not None:
                raise UsageError(f"{argument('count')} is one number: {argument('fit')}, "
                                 f"{argument('offset')} and {argument('limit')} page "
                                 f"{argument('count_by')} values", code="invalid_argument",
                                 argument="count")
            n = count_matches(target, options, from_line)
            seconds = time.monotonic() - started
            lines = target.index.line_count
            what = "lines that do not match" if invert else "lines match"
            notice = (f"{n:,} of {lines:,} {what}"
                      + (f" (stopped at the first {max_count:,})" if max_count is not None
                         and n >= max_count else "") + f" ({seconds:.2f} s)")
            return count_result("grep", asked, {**base, "lines": lines,
                                                "seconds": round(seconds, 3)},
                                n, notice, "grep_too_large", on_close=target.index.close)
        from scratch.query.groups import group_counts
        index = target.index
        if from_line > 1 or max_count is not None:
            raise UsageError(f"{argument('count_by')} counts over the whole entry: "
                             f"{argument('max_count')} and {argument('from_line')} do "
                             "not apply", code="invalid_argument")
        try:
            counted = _with_buffer(target, lambda buf: group_counts(
                buf, options, count_by if count_by is not None else 0,
                line_starts=index.line_starts()))
        except InvalidPattern as exc:
            exc.details.setdefault("suggestions", [asked.with_args(fixed=True)])
            raise
        seconds = time.monotonic() - started
        return count_by_answer(asked, counted, command="grep", code="grep_too_large",
                               base=base, noun="matching line", items=None, engine="re2",
                               seconds=seconds, offset=offset, limit=limit, fit=fit,
                               on_close=target.index.close, strings=True)
    except BaseException:
        target.index.close()
        raise
