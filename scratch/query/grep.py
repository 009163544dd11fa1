"""grep over lines or a whole byte buffer, in linear time, with context regions.

Semantics (those of ``grep -n``):
* A line is the bytes between two ``\\n``; the ``\\n`` is not part of it, a ``\\r`` before it is
  (so matches are identical to ``grep`` on CRLF files; :meth:`GrepLine.display` drops the
  ``\\r``). A final line without ``\\n`` counts; there is no empty line after a final ``\\n``.
* Lines are bytes. Patterns are UTF-8; ``.`` matches one UTF-8 character; invalid UTF-8 in the
  data never raises. Text is decoded (errors="replace") only for display.
* A match never spans lines: ``^``/``$`` are line anchors and a match that would cross a
  newline is re-checked inside its line.
* ``-v`` selects non-matching lines; ``-m N`` stops after N selected lines (trailing context is
  still shown, as grep does); ``-C/-A/-B`` add context; regions whose context touches or
  overlaps are merged, others are separate :class:`Region` objects (grep prints ``--`` between).

Engine: RE2 (``google-re2``), whose running time is linear in the input, so ``(a+)+$`` on a long
line of ``a`` returns at once. Features RE2 cannot run in linear time (backreferences,
lookaround, atomic groups, possessive repeats, conditionals) are refused with
``invalid_pattern`` -- never silently replaced by a backtracking engine. ``-F`` without ``-i``
uses ``bytes.find``.

Long lines: with ``window_over``, a line longer than that many bytes is not copied out: its
:class:`GrepLine` holds a window of it (up to :data:`WINDOW_BEFORE` bytes before its first
match, the match up to :data:`WINDOW_MATCH` bytes, :data:`WINDOW_AFTER` after; a context
line or a line selected by ``-v``: its first bytes), with ``from_byte``/``line_bytes`` saying
which part it is. So a match on a 50 MB line costs the scan and a window, never the line.

Speed: :func:`grep_buffer` runs the engine over the whole buffer (bytes or mmap) from match to
match instead of once per line, so the Python cost is per *matching* line; line numbers come
from a sorted ``line_starts`` sequence (bisect) or from counting newlines between matches.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeAlias

from scratch.errors import InvalidPattern

if TYPE_CHECKING:
    import mmap

# what grep reads: an entry's bytes or its mapping
ByteBuffer: TypeAlias = "bytes | bytearray | mmap.mmap"


class ReMatch(Protocol):
    """A match of a compiled RE2 pattern (the binding ships no types)."""

    def span(self) -> tuple[int, int]: ...

    def group(self, n: int, /) -> bytes | None: ...


class Compiled(Protocol):
    """A compiled RE2 pattern, as grep uses it."""

    groups: int
    groupindex: Mapping[str | bytes, int] | None

    def search(self, text: ByteBuffer, pos: int = ..., endpos: int = ..., /
               ) -> ReMatch | None: ...

_HINT_LITERAL = "to search for the text literally, search for it as fixed text (not a regex)"

# Constructs Python's re accepts but RE2 refuses because they need backtracking. Order matters:
# longer openers first.
_UNSUPPORTED_GROUPS = [
    ("(?<=", "lookbehind (?<=...)"),
    ("(?<!", "negative lookbehind (?<!...)"),
    ("(?=", "lookahead (?=...)"),
    ("(?!", "negative lookahead (?!...)"),
    ("(?P=", "named backreference (?P=name)"),
    ("(?>", "atomic group (?>...)"),
    ("(?(", "conditional group (?(...)...)"),
]


@dataclass(frozen=True)
class GrepOptions:
    """What to search for. ``context`` is -C; ``before``/``after`` (-B/-A) override it."""

    pattern: str
    ignore_case: bool = False
    fixed: bool = False
    invert: bool = False
    max_count: int | None = None
    context: int = 0
    before: int | None = None
    after: int | None = None

    @property
    def before_lines(self) -> int:
        return self.context if self.before is None else self.before

    @property
    def after_lines(self) -> int:
        return self.context if self.after is None else self.after


WINDOW_BEFORE = 256  # bytes of a long line shown before its first match
WINDOW_MATCH = 512  # ... of the match itself (a longer match is shown cut)
WINDOW_AFTER = 256  # ... after the match


class GrepLine(NamedTuple):
    """One output line: 1-based number, raw bytes (no ``\\n``), selected (True) or context.

    ``line_bytes`` is -1 when ``text`` is the whole line; for a window of a long line it is
    the line's length and ``text`` its bytes from ``from_byte``."""

    lineno: int
    text: bytes
    match: bool
    from_byte: int = 0
    line_bytes: int = -1

    @property
    def windowed(self) -> bool:
        return self.line_bytes >= 0

    @property
    def to_byte(self) -> int:
        return self.from_byte + len(self.text)

    def display(self) -> str:
        text = self.text[:-1] if self.text.endswith(b"\r") else self.text
        return text.decode("utf-8", errors="replace")


@dataclass
class Region:
    """Consecutive output lines (selected lines with their context)."""

    lines: list[GrepLine] = field(default_factory=list)

    @property
    def first_lineno(self) -> int:
        return self.lines[0].lineno

    @property
    def last_lineno(self) -> int:
        return self.lines[-1].lineno

    @property
    def match_count(self) -> int:
        return sum(1 for line in self.lines if line.match)


# ------------------------------------------------------------------------------- the matcher


def _scan_unsupported(pattern: str) -> tuple[int, str] | None:
    """Find the first backtracking-only construct outside character classes."""
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1 : i + 2]
            if not in_class and nxt.isdigit() and nxt != "0":
                return i, f"backreference \\{nxt}"
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            i += 1
            continue
        if ch == "[":
            in_class = True
            i += 1
            if pattern[i : i + 1] == "^":
                i += 1
            if pattern[i : i + 1] == "]":
                i += 1  # a leading ] is a literal
            continue
        for opener, name in _UNSUPPORTED_GROUPS:
            if pattern.startswith(opener, i):
                return i, name
        if ch in "*+?}" and pattern[i + 1 : i + 2] == "+":
            return i + 1, "possessive repeat (x*+, x++)"
        i += 1
    return None


def _pattern_error(pattern: str, re2_message: str) -> InvalidPattern:
    """Explain why RE2 refused ``pattern``, with a 0-based character position."""
    try:
        re.compile(pattern)
    except re.error as exc:
        pos = exc.pos if exc.pos is not None else 0
        return InvalidPattern(
            f"invalid regular expression at position {pos}: {exc.msg}",
            pattern=pattern, position=pos, reason=exc.msg, engine="re2", hint=_HINT_LITERAL,
        )
    except (OverflowError, RecursionError):
        pass
    found = _scan_unsupported(pattern)
    if found is not None:
        pos, feature = found
    else:
        # RE2 messages end with ": <offending fragment>".
        fragment = re2_message.rsplit(": ", 1)[-1]
        pos = max(pattern.find(fragment), 0) if fragment else 0
        feature = re2_message
    return InvalidPattern(
        f"{feature} at position {pos} is not supported by the linear-time regex engine (RE2)",
        pattern=pattern, position=pos, reason=re2_message, engine="re2", unsupported=feature,
        hint="rewrite the pattern without it, or " + _HINT_LITERAL,
    )


_META = set(".^$*+?{}[]\\|()")


def _literal_plan(pattern: str) -> tuple[list[bytes], bool] | None:
    """Literals that stand for ``pattern`` when searching case-sensitively.

    ``(literals, exact)``: exact means a line matches iff it contains one of the literals
    (plain text, or an alternation of plain texts); otherwise it is one literal every match
    must contain, and a line holding it is only a candidate that RE2 then checks. None when
    there is no useful literal. Only speed depends on this, never the result.
    """
    if "\n" in pattern:
        return None
    if not any(ch in _META for ch in pattern.replace("|", "")):
        return [alt.encode("utf-8", errors="surrogateescape") for alt in pattern.split("|")], True
    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]

        tree = sre_parse.parse(pattern)
        if tree.state.flags & (re.IGNORECASE | re.VERBOSE):
            return None
        best: list[int] = []
        run: list[int] = []
        literal_op = sre_parse.LITERAL
        for op, arg in tree.data:
            if op is literal_op:
                run.append(arg)
                continue
            best = max(best, run, key=len)
            run = []
        best = max(best, run, key=len)
    except Exception:  # noqa: BLE001 - no plan is always a correct answer
        return None
    required = "".join(map(chr, best)).encode("utf-8", errors="surrogateescape")
    return ([required], False) if len(required) >= 3 else None


class Matcher:
    """A compiled pattern. Build it with :func:`compile_pattern`."""

    def __init__(self, options: GrepOptions) -> None:
        self.options = options
        self._compiled: Compiled | None = None
        pattern = options.pattern
        plan = None if options.ignore_case else (
            ([pattern.encode("utf-8", errors="surrogateescape")], True) if options.fixed
            else _literal_plan(pattern))
        self._literals: list[bytes] = plan[0] if plan else []
        self._exact = bool(plan and plan[1])
        if self._exact:
            return  # plain text: bytes.find is all we need
        import re2

        opts = re2.Options()
        opts.log_errors = False
        opts.never_capture = True  # we only need where the whole match is
        opts.case_sensitive = not options.ignore_case
        opts.max_mem = 64 << 20
        if options.fixed:
            opts.literal = True
            source = pattern.encode("utf-8", errors="surrogateescape")
        else:
            # (?m): ^ and $ match at line boundaries, so the whole-buffer scan is per line.
            source = b"(?m)" + pattern.encode("utf-8", errors="surrogateescape")
        try:
            compiled = re2.compile(source, opts)
        except re2.error as exc:
            message = exc.args[0] if exc.args else str(exc)
            if isinstance(message, bytes):
                message = message.decode("utf-8", errors="replace")
            raise _pattern_error(pattern, str(message)) from None
        self._compiled = compiled

    def find(self, buf: ByteBuffer, pos: int, end: int) -> tuple[int, int] | None:
        """Span of the leftmost match in ``buf[pos:end]`` (offsets in ``buf``), or None."""
        if self._exact:
            best: tuple[int, int] | None = None
            for lit in self._literals:
                s = buf.find(lit, pos, end if best is None else min(end, best[0] + len(lit)))
                if s >= 0 and (best is None or s < best[0]):
                    best = (s, s + len(lit))
            return best
        assert self._compiled is not None  # not exact: compiled in __init__
        m = self._compiled.search(buf, pos, end)
        return None if m is None else m.span()

    def hits(self, buf: ByteBuffer, end: int) -> Callable[[int], tuple[int, int, bool] | None]:
        """A function ``pos -> (start, end, exact)`` for scanning ``buf[:end]`` forwards.

        ``exact`` false means the span is only a candidate (a required literal) and the line
        around it must be checked with :meth:`find`. Positions passed must not decrease.
        """
        lits = self._literals
        if self._exact and len(lits) == 1:
            lit = lits[0]
            size = len(lit)
            bfind = buf.find

            def one(pos: int) -> tuple[int, int, bool] | None:
                s = bfind(lit, pos, end)
                return None if s < 0 else (s, s + size, True)

            return one
        if self._exact:
            # Several literals: remember each one's next occurrence, re-search only when passed.
            nxt = [-1] * len(lits)
            never = end + 1

            def many(pos: int) -> tuple[int, int, bool] | None:
                best = -1
                for i, lit in enumerate(lits):
                    s = nxt[i]
                    if s < pos:
                        s = buf.find(lit, pos, end)
                        s = never if s < 0 else s
                        nxt[i] = s
                    if s != never and (best < 0 or s < nxt[best]):
                        best = i
                if best < 0:
                    return None
                return nxt[best], nxt[best] + len(lits[best]), True

            return many
        if lits:
            req = lits[0]
            size = len(req)
            bfind = buf.find

            def candidate(pos: int) -> tuple[int, int, bool] | None:
                s = bfind(req, pos, end)
                return None if s < 0 else (s, s + size, False)

            return candidate
        find = self.find

        def regex(pos: int) -> tuple[int, int, bool] | None:
            span = find(buf, pos, end)
            return None if span is None else (span[0], span[1], True)

        return regex

    def search_line(self, line: bytes) -> bool:
        """Does ``line`` (no newline inside) contain a match?"""
        return self.find(line, 0, len(line)) is not None

    def spans(self, line: bytes) -> list[tuple[int, int]]:
        """Byte spans of the non-overlapping matches in ``line`` (for highlighting)."""
        out: list[tuple[int, int]] = []
        pos, n = 0, len(line)
        while pos <= n:
            span = self.find(line, pos, n)
            if span is None:
                break
            if span[1] > span[0]:
                out.append(span)
                pos = span[1]
            else:
                pos = span[1] + 1  # an empty match: step over it
        return out


def compile_pattern(options: GrepOptions) -> Matcher:
    """Validate and compile; raises :class:`InvalidPattern` (``invalid_pattern``)."""
    return Matcher(options)


# ------------------------------------------------------------------------------ line streams


def _as_bytes(text: bytes | str) -> bytes:
    if isinstance(text, str):
        text = text.encode("utf-8", errors="surrogateescape")
    return text[:-1] if text.endswith(b"\n") else text


def grep_lines(lines: Iterable[tuple[int, bytes | str]], options: GrepOptions,
               matcher: Matcher | None = None) -> Iterator[Region]:
    """Regions of selected lines with context, from consecutive ``(lineno, text)`` pairs.

    ``text`` may be bytes or str, with or without its trailing ``\\n``.
    """
    m = matcher or compile_pattern(options)
    find = m.find
    invert = options.invert
    before_n, after_n = options.before_lines, options.after_lines
    max_count = options.max_count
    if max_count is not None and max_count <= 0:
        return
    pending: deque[GrepLine] = deque(maxlen=before_n)
    region: list[GrepLine] | None = None
    last = -1
    after_left = 0
    count = 0
    stopped = False
    for lineno, raw in lines:
        text = _as_bytes(raw)
        if stopped:
            if after_left <= 0:
                break
            assert region is not None
            region.append(GrepLine(lineno, text, False))
            after_left -= 1
            continue
        selected = (find(text, 0, len(text)) is not None) != invert
        if selected:
            first_new = pending[0].lineno if pending else lineno
            if region is not None and first_new > last + 1:
                yield Region(region)
                region = None
            if region is None:
                region = []
            region.extend(pending)
            pending.clear()
            region.append(GrepLine(lineno, text, True))
            last = lineno
            after_left = after_n
            count += 1
            if max_count is not None and count >= max_count:
                stopped = True
        elif region is not None and after_left > 0:
            region.append(GrepLine(lineno, text, False))
            last = lineno
            after_left -= 1
        elif before_n:
            pending.append(GrepLine(lineno, text, False))
    if region:
        yield Region(region)


# ------------------------------------------------------------------------------ byte buffers


def _line_counter(buf: ByteBuffer, start: int, first_lineno: int,
                  line_starts: Sequence[int] | None) -> Callable[[int], int]:
    """A function from a line-start offset to its 1-based line number (offsets only grow)."""
    if line_starts is not None:
        base = bisect_right(line_starts, start) - first_lineno

        def by_index(offset: int) -> int:
            return bisect_right(line_starts, offset) - base

        return by_index
    count = buf.count if hasattr(buf, "count") else (
        lambda sub, a, b: bytes(memoryview(buf)[a:b]).count(sub))
    state = [start, first_lineno]

    def by_counting(offset: int) -> int:
        state[1] += count(b"\n", state[0], offset)
        state[0] = offset
        return state[1]

    return by_counting


def _matching_lines(buf: ByteBuffer, m: Matcher, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(line start, line end) of each line in ``buf[start:end]`` that contains a match."""
    hit, find, bfind, brfind = m.hits(buf, end), m.find, buf.find, buf.rfind
    pos = start
    if m._exact and len(m._literals) == 1:
        # The commonest case (a word, an id) gets its own loop: no call per hit.
        lit = m._literals[0]
        while pos < end:
            s = bfind(lit, pos, end)
            if s < 0:
                return
            nl = brfind(b"\n", pos, s)
            le = bfind(b"\n", s, end)
            if le < 0:
                le = end
            yield (pos if nl < 0 else nl + 1), le
            pos = le + 1
        return
    while pos < end:
        found = hit(pos)
        if found is None:
            return
        s, e, exact = found
        if s == pos:
            ls = pos
        else:
            nl = brfind(b"\n", pos, s)
            ls = pos if nl < 0 else nl + 1
        le = bfind(b"\n", s, end)
        if le < 0:
            le = end
        # A candidate, or a match running past the line end (\s, [^x], a literal \n), is
        # not a match of this line by itself: look again inside the line only.
        if (exact and e <= le) or find(buf, ls, le) is not None:
            yield ls, le
        pos = le + 1


def _all_lines(buf: ByteBuffer, start: int, end: int) -> Iterator[tuple[int, int]]:
    bfind = buf.find
    pos = start
    while pos < end:
        le = bfind(b"\n", pos, end)
        if le < 0:
            le = end
        yield pos, le
        pos = le + 1


def _inverted(buf: ByteBuffer, m: Matcher, start: int, end: int) -> Iterator[tuple[int, int]]:
    pos = start
    for ls, le in _matching_lines(buf, m, start, end):
        if ls > pos:
            yield from _all_lines(buf, pos, ls)
        pos = le + 1
    if pos < end:
        yield from _all_lines(buf, pos, end)


def _window(buf: ByteBuffer, m: Matcher | None, ls: int, le: int) -> tuple[int, int]:
    """The window (start, end offsets in ``buf``) of the long line ``buf[ls:le]`` shown
    around its first match (``m``), or at its start (no ``m``, or no match: ``-v``). A
    window never splits a UTF-8 character."""
    span = m.find(buf, ls, le) if m is not None else None
    s, e = span if span is not None else (ls, ls)
    lo = max(ls, s - WINDOW_BEFORE)
    hi = min(le, min(e, s + WINDOW_MATCH) + WINDOW_AFTER)
    while lo > ls and lo < hi and 0x80 <= buf[lo] < 0xC0:  # inside a character: step past it
        lo += 1
    while hi < le and hi > lo and 0x80 <= buf[hi] < 0xC0:
        hi -= 1
    return lo, hi


def grep_buffer(buf: ByteBuffer, options: GrepOptions, *, start: int = 0, end: int | None = None,
                first_lineno: int = 1, line_starts: Sequence[int] | None = None,
                matcher: Matcher | None = None, window_over: int | None = None
                ) -> Iterator[Region]:
    """Regions of selected lines with context in ``buf[start:end]``.

    ``buf`` is bytes, bytearray or an mmap. ``start`` must be a line start whose number is
    ``first_lineno`` (to resume a search; context never reaches before ``start`` or past
    ``end``). ``line_starts`` -- the sorted byte offsets of every line start of ``buf``
    (``line_starts[0] == 0``), e.g. from the entry's index -- makes line numbers a bisect;
    without it newlines are counted between matches. ``window_over``: lines longer than
    that many bytes are shown as a window (see the module).
    """
    m = matcher or compile_pattern(options)
    end = len(buf) if end is None else end
    max_count = options.max_count
    if max_count is not None and max_count <= 0:
        return
    before_n, after_n = options.before_lines, options.after_lines
    lineno_of = _line_counter(buf, start, first_lineno, line_starts)
    selected = (_inverted if options.invert else _matching_lines)(buf, m, start, end)
    bfind, brfind = buf.find, buf.rfind
    over = window_over if window_over is not None else -1
    around = None if options.invert else m

    def line(n: int, ls: int, le: int, match: bool) -> GrepLine:
        if 0 <= over < le - ls:
            lo, hi = _window(buf, around if match else None, ls, le)
            return GrepLine(n, bytes(buf[lo:hi]), match, lo - ls, le - ls)
        return GrepLine(n, bytes(buf[ls:le]), match)

    if before_n == 0 and after_n == 0:
        # The hot path: one single-line region per selected line, merged when adjacent.
        region: list[GrepLine] = []
        for count, (ls, le) in enumerate(selected, 1):
            n = lineno_of(ls)
            if region and region[-1].lineno + 1 != n:
                yield Region(region)
                region = []
            region.append(line(n, ls, le, True))
            if max_count is not None and count >= max_count:
                break
        if region:
            yield Region(region)
        return

    cur: list[GrepLine] = []
    last_no = 0  # number of the last line put in ``cur``
    last_end = start - 1  # offset of the newline ending that line
    after_left = 0
    for count, (ls, le) in enumerate(selected, 1):
        n = lineno_of(ls)
        gap = n - last_no - 1  # unshown lines between the last shown line and this one
        if cur and gap <= after_left + before_n:
            # Contiguous: everything in between is context.
            pos = last_end + 1
            for k in range(gap):
                e = bfind(b"\n", pos, end)
                e = end if e < 0 else e
                cur.append(line(last_no + 1 + k, pos, e, False))
                pos = e + 1
        else:
            if cur:
                _extend_after(cur, buf, last_no, last_end, after_left, end, line)
                yield Region(cur)
            cur = []
            # Up to before_n lines before this one, never before ``start``.
            starts: list[tuple[int, int]] = []
            e = ls - 1
            while len(starts) < before_n and e >= start:
                nl = brfind(b"\n", start, e)
                s = start if nl < 0 else nl + 1
                starts.append((s, e))
                e = s - 1
            for k, (s, e2) in enumerate(reversed(starts)):
                cur.append(line(n - len(starts) + k, s, e2, False))
        cur.append(line(n, ls, le, True))
        last_no, last_end = n, le
        after_left = after_n
        if max_count is not None and count >= max_count:
            break
    if cur:
        _extend_after(cur, buf, last_no, last_end, after_left, end, line)
        yield Region(cur)


def _extend_after(cur: list[GrepLine], buf: ByteBuffer, last_no: int, last_end: int, k: int,
                  end: int, line: Callable[[int, int, int, bool], GrepLine]) -> None:
    pos = last_end + 1
    for i in range(k):
        if pos >= end:
            return
        e = buf.find(b"\n", pos, end)
        e = end if e < 0 else e
        cur.append(line(last_no + 1 + i, pos, e, False))
        pos = e + 1


def iter_selected_lines(buf: ByteBuffer, options: GrepOptions, *, start: int = 0,
                        end: int | None = None,
                        first_lineno: int = 1, line_starts: Sequence[int] | None = None,
                        matcher: Matcher | None = None) -> Iterator[tuple[int, int, int]]:
    """``(lineno, start offset, end offset)`` of every selected line, no context, no -m.

    The cheap pass for sizing an answer before building it (sum ``end - start`` per line) or
    for counting; the offsets exclude the ``\n``.
    """
    m = matcher or compile_pattern(options)
    end = len(buf) if end is None else end
    lineno_of = _line_counter(buf, start, first_lineno, line_starts)
    pick = _inverted if options.invert else _matching_lines
    for ls, le in pick(buf, m, start, end):
        yield lineno_of(ls), ls, le


def matching_line_numbers(buf: ByteBuffer, options: GrepOptions, *,
                          line_starts: Sequence[int] | None = None) -> list[int]:
    """Numbers of the selected lines (no context, no limit) -- for counts and benchmarks."""
    return [n for n, _, _ in iter_selected_lines(buf, options, line_starts=line_starts)]
