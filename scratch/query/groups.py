"""Counts of a capture group's values over the lines a grep selects (``grep --count-by``).

Semantics: every line the pattern selects (as :func:`scratch.query.grep.iter_selected_lines`
selects them, so the counts add up to ``grep --count``) gives one value: the text the group
captured in the line's first match (UTF-8, undecodable bytes replaced; a ``\\r`` ending the
line is not part of it), or :data:`~scratch.query.aggregate.MISSING` when the group took no
part in that match. Group 0 is the whole match. Groups are named by number (``1``) or, for
``(?P<name>...)``, by name.

Engine: RE2 again (linear time), compiled with captures for the selected lines only; the
selection itself runs on the capture-free matcher, so lines that do not match cost what
``grep --count`` costs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from scratch.errors import InvalidPattern, UsageError, argument
from scratch.query.grep import (
    ByteBuffer,
    Compiled,
    GrepOptions,
    compile_pattern,
    iter_selected_lines,
)
from scratch.valuecounts import MISSING, CountBy, rank, tally


def _capturing(options: GrepOptions) -> Compiled:
    import re2

    opts = re2.Options()
    opts.log_errors = False
    opts.case_sensitive = not options.ignore_case
    opts.max_mem = 64 << 20
    source = options.pattern.encode("utf-8", errors="surrogateescape")
    if options.fixed:
        opts.literal = True
    try:
        compiled: Compiled = re2.compile(source, opts)
        return compiled
    except re2.error as exc:  # compile_pattern already checked it: a guard only
        raise InvalidPattern(f"invalid pattern: {exc}", pattern=options.pattern) from None


def group_index(compiled: Compiled, group: str | int) -> int:
    """The number of ``group`` (a number or a name) in ``compiled``; a clear error when the
    pattern has no such group."""
    names = {(k.decode() if isinstance(k, bytes) else str(k)): int(v)
             for k, v in (compiled.groupindex or {}).items()}
    count = int(compiled.groups)
    text = str(group).strip()
    if text.isdigit():
        n = int(text)
        if n <= count:
            return n
    elif text in names:
        return names[text]
    have = (f"it has {count} group{'s' if count != 1 else ''}"
            + (f" ({', '.join(names)})" if names else "") if count
            else "it has no groups: put the part to count in ( )")
    raise UsageError(f"the pattern has no group {text!r}: {have} (0 is the whole match)",
                     code="invalid_argument", group=text, groups=count, names=list(names))


def group_counts(buf: ByteBuffer, options: GrepOptions, group: str | int, *,
                 line_starts: Sequence[int] | None = None, name: str | None = None) -> CountBy:
    """Value counts of ``group`` over the selected lines of ``buf`` (every bucket)."""
    if options.invert:
        raise UsageError(f"{argument('invert')} selects lines that do not match: they have no "
                         "groups to count", code="invalid_argument", argument="invert")
    matcher = compile_pattern(options)  # validates the pattern with RE2's own errors
    compiled = _capturing(options)
    k = group_index(compiled, group)

    def values() -> Iterator[tuple[object]]:
        for _, ls, le in iter_selected_lines(buf, options, line_starts=line_starts,
                                             matcher=matcher):
            line = bytes(buf[ls:le])
            if line.endswith(b"\r"):
                line = line[:-1]
            m = compiled.search(line)
            v = None if m is None else m.group(k)
            yield (MISSING if v is None else v.decode("utf-8", "replace"),)

    label = name or (str(group) if not str(group).isdigit() else f"group {int(group)}")
    return rank(tally(values()), [label], limit=None)
