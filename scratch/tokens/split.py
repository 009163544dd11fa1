"""Split a byte stream into consecutive pieces of at most N tokens, cut at line ends.

Invariants:
- Joining the pieces gives the input back byte for byte; no piece is empty.
- Every piece counts at most N tokens on its own (Claude: in the scaled units). The one
  exception is a single character that alone needs more than N tokens (N below 4), which
  is kept whole rather than broken.
- Pieces end at line ends; a piece ends inside a line only when that line alone is longer
  than N tokens, and then at a token boundary, never inside a UTF-8 character.
- Greedy: each piece takes as many whole lines as fit.
- Bounded memory: the input is read as safe-cut segments (:mod:`scratch.tokens.cuts`) of about
  N bytes (at most 64 KB), whose counts add up; only the segment that overflows the current
  piece is tokenized to find where to cut, and every planned piece is verified by counting it
  alone.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator

from scratch.errors import UsageError
from scratch.tokens.models import EncodingSpec
from scratch.tokens.stream import _check_limit, _counted, _offsets
from scratch.tokens.tokenizer import Tokenizer, get_tokenizer

_MAX_SEGMENT = 1 << 14
_MAX_LINE = 1 << 16
_NEWLINE = re.compile("\n")


def split_stream(chunks: Iterable[bytes], n: int, spec: EncodingSpec) -> Iterator[bytes]:
    """The input as consecutive pieces of at most ``n`` tokens each (see the module invariants)."""
    _check_limit(n, "the chunk size", 1)
    tok = get_tokenizer(spec.base)
    limit = spec.base_limit(n)
    if limit < 1:
        raise UsageError(f"a chunk of {n} tokens cannot hold one {spec.name} token",
                         code="invalid_argument", value=str(n))
    target = max(64, min(limit, _MAX_SEGMENT))
    pending: list[tuple[bytes, int, bool]] = []  # (bytes, base count, ends a line)
    used = 0
    # Lines longer than _MAX_LINE are read in in-line-cut segments, so the one segment that
    # must be tokenized to place a cut stays small.
    for seg, text, count in _counted(chunks, tok, target, limit=_MAX_LINE,
                                     inline_target=_MAX_SEGMENT):
        ends_line = seg.endswith(b"\n")
        if used + count <= limit:
            pending.append((seg, count, ends_line))
            used += count
            continue
        if pending and not pending[-1][2]:
            # pending ends inside a (very long) line: cut after its last whole line first
            k = max((i + 1 for i, p in enumerate(pending) if p[2]), default=0)
            if k:
                yield b"".join(p[0] for p in pending[:k])
                pending = pending[k:]
                used = sum(p[1] for p in pending)
                if used + count <= limit:
                    pending.append((seg, count, ends_line))
                    used += count
                    continue
        plan = _plan(tok, text, limit, limit - used, line_end_first=bool(pending))
        cuts = _offsets(seg, text, [end for end, _ in plan])
        first = seg[:cuts[0]]
        if pending or first:
            yield b"".join(p[0] for p in pending) + first
        for (_, _c), a, b in zip(plan[1:-1], cuts[:-2], cuts[1:-1], strict=False):
            yield seg[a:b]
        last = seg[cuts[-2]:] if len(cuts) > 1 else b""
        pending = [(last, plan[-1][1], ends_line)] if last else []
        used = plan[-1][1] if last else 0
    if pending:
        yield b"".join(p[0] for p in pending)


def _plan(tok: Tokenizer, text: str, limit: int, room: int,
          line_end_first: bool) -> list[tuple[int, int]]:
    """Cut ``text`` (one segment) into pieces: ``(end in characters, count)``.

    The first piece must fit in ``room`` (what the current output piece has left) and, when
    ``line_end_first``, end at a line end -- it may be empty; the others fit in ``limit``; the
    last one ends at the end of ``text``. Each step encodes only a window of about the
    tokens it needs: its token ends propose cuts, and each piece is then verified by
    counting it alone.
    """
    line_ends = [m.end() for m in _NEWLINE.finditer(text)]
    plan: list[tuple[int, int]] = []
    s = 0
    size = len(text)
    while True:
        cap = room if not plan else limit
        if cap <= 0:
            plan.append((s, 0))
            continue
        span = max(256, 6 * cap)
        while True:
            stop = min(size, s + span)
            ids = tok.encode(text[s:stop])
            if len(ids) > cap or stop == size:
                break
            span *= 4
        if stop == size and len(ids) <= cap:
            plan.append((size, len(ids)))
            return plan
        ends = [e + s if e != -1 else -1 for e in tok.char_ends(ids[:cap + 1])][:cap]
        reach = max(ends)
        cut = _fit_lines(tok, text, s, reach, line_ends, cap)
        if cut is None:
            if not plan and line_end_first:
                cut = (s, 0)  # nothing fits in the room: the output piece ends before this
            else:
                cut = _fit_tokens(tok, text, s, ends, cap)
        plan.append(cut)
        s = cut[0]


def _fit_lines(tok: Tokenizer, text: str, s: int, reach: int, line_ends: list[int],
               cap: int) -> tuple[int, int] | None:
    """The last line end after ``s`` whose piece ``text[s:end]`` counts <= ``cap`` (the
    estimate ``reach`` is tried first, then a binary search below it)."""
    lo = bisect_right(line_ends, s)  # first line end after s
    hi = bisect_right(line_ends, reach) - 1  # last line end within the estimate
    if hi < lo:
        return None
    c = tok.count(text[s:line_ends[hi]])
    if c <= cap:
        return line_ends[hi], c
    best: tuple[int, int] | None = None
    hi -= 1
    while lo <= hi:
        mid = (lo + hi) // 2
        c = tok.count(text[s:line_ends[mid]])
        if c <= cap:
            best = (line_ends[mid], c)
            lo = mid + 1
        else:
            hi = mid - 1
    return best


def _fit_tokens(tok: Tokenizer, text: str, s: int, ends: list[int],
                cap: int) -> tuple[int, int]:
    """The longest token-boundary piece from ``s`` counting <= ``cap`` (``ends``: the token
    ends of a window encoded from ``s``); one character when nothing fits (it needs more than
    ``cap`` tokens alone)."""
    for e in reversed(ends):
        if e != -1 and e > s:
            c = tok.count(text[s:e])
            if c <= cap:
                return e, c
    return s + 1, tok.count(text[s:s + 1])
