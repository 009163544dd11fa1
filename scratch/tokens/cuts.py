"""Where text can be cut so that token counts add up exactly.

A *safe cut* at position p means: for every supported encoding, tokenizing ``text[:p]`` and
``text[p:]`` separately gives exactly the tokens of ``text`` (so counts add, ids concatenate).
Counting a huge input in independent pieces, in parallel, in constant memory, relies on this.

Two rules, both about the characters on each side of p only:

1. **Line rule** (preferred): p is right after ``\\n`` and the next line starts with optional
   spaces/tabs followed by a character that is neither whitespace nor ``/``.
   - o200k_base / cl100k_base: no pre-token pattern can match across ``\\n`` into such a line:
     the letter patterns exclude ``\\r\\n`` from their optional leading character; the
     whitespace patterns (``\\s*[\\r\\n]+``, ``\\s*[\\r\\n]``, ``\\s++$``) end at the last newline
     of a whitespace run, and this run contains no newline after p; the punctuation pattern
     takes trailing ``[\\r\\n/]*`` (o200k) or ``[\\r\\n]*`` (cl100k) -- hence ``/`` must not
     follow p directly (``}\\n/`` is one o200k pre-token), and spaces/tabs stop it.
   - gemma3: no vocabulary piece contains ``\\n`` followed by anything but ``\\n`` (a test
     scans all 262,144 pieces), so no BPE merge can span p and both sides merge independently.
2. **In-line rule** (only for lines too long to buffer): p is between an ASCII letter or digit
   and one of ``" , : { } [``. OpenAI letter/digit pre-tokens end there (a following ``'``
   could start a contraction, so it is excluded) and no pre-token starts before them; the
   gemma3 vocabulary has no piece containing such a pair (scanned by the same test).

Cuts are found on UTF-8 bytes for streams (the rules look at ASCII bytes only, so a cut never
splits a character) and on ``str`` for text already in memory. Missing a possible cut is
always safe; it only costs buffer size.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# Non-ASCII lead bytes are allowed after the newline unless they start a Unicode whitespace
# character: U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
_LINE_CUT_BYTES = re.compile(
    rb"\n(?=[ \t]*(?:[\x21-\x2e\x30-\x7e]"
    rb"|(?!\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80)"
    rb"[\xc2-\xf4]))")
_INLINE_CUT_BYTES = re.compile(rb"[A-Za-z0-9](?=[\",:{}\[])")
_LINE_CUT_STR = re.compile(r"\n(?=[ \t]*[^\s/])")
_INLINE_CUT_STR = re.compile(r"[A-Za-z0-9](?=[\",:{}\[])")

# Bytes kept back from a rescan when a buffer grows without a cut: a cut needs to see the
# indentation and the first character of the next line, and indentation longer than this
# only costs a missed cut.
_RESCAN = 256


def iter_segments(chunks: Iterable[bytes], target: int = 1 << 20,
                  limit: int | None = None, inline_target: int | None = None) -> Iterator[bytes]:
    """Re-cut a byte stream into segments that end at safe cuts.

    Each segment ends at the first line-rule cut after ``target`` bytes (``target`` 1 gives
    one segment per safe line) if there is one before ``limit`` bytes; otherwise at an
    in-line-rule cut after ``inline_target`` bytes (default ``target``), or failing that at
    the next line-rule cut. The last segment ends where the input ends. Joining the
    segments gives the input back exactly; counts of the segments add up to the count of the
    whole. Memory stays around ``max(limit, chunk size)`` unless a single line offers no cut
    at all.
    """
    target = max(target, 1)
    if limit is None:
        limit = max(4 * target, 8 << 20)
    if inline_target is None:
        inline_target = target
    inline_target = max(1, min(inline_target, limit))
    buf = b""
    start = 0  # segment start inside buf
    scan = 0  # where the next line-cut search may begin (everything before was searched)
    iscan = 0  # the same for the in-line rule
    for chunk in chunks:
        if not chunk:
            continue
        if start:
            buf = buf[start:]
            scan = max(scan - start, 0)
            iscan = max(iscan - start, 0)
            start = 0
        buf = buf + chunk if buf else bytes(chunk)
        while True:
            size = len(buf) - start
            if size <= target:
                break
            lo = max(start + target - 1, scan)
            bound = start + limit  # a line cut must come before this ...
            m = _LINE_CUT_BYTES.search(buf, lo, bound) if lo < bound else None
            if m is None and size >= limit:
                # ... else a long line is cut in-line, or at its end when it has no such cut
                m = _INLINE_CUT_BYTES.search(buf, max(start + inline_target - 1, iscan))
                if m is None:
                    iscan = max(iscan, len(buf) - 1)
                    m = _LINE_CUT_BYTES.search(buf, max(lo, bound - _RESCAN))
            if m is None:
                scan = max(scan, len(buf) - _RESCAN)
                break
            cut = m.end()
            yield buf[start:cut]
            start = cut
            scan = max(scan, cut)
            iscan = max(iscan, cut)
    if len(buf) > start:
        yield buf[start:]


def split_text(text: str, target: int = 1 << 16, limit: int | None = None) -> list[str]:
    """:func:`iter_segments` for a ``str`` already in memory (same rules, in characters)."""
    if len(text) <= target:
        return [text]
    if limit is None:
        limit = max(4 * target, 8 << 20)
    out: list[str] = []
    start = 0
    n = len(text)
    while n - start > target:
        m = _LINE_CUT_STR.search(text, start + target - 1)
        if m is not None and m.end() - start <= limit:
            cut = m.end()
        else:
            m2 = _INLINE_CUT_STR.search(text, start + target - 1, start + limit)
            if m2 is not None:
                cut = m2.end()
            elif m is not None:
                cut = m.end()
            else:
                break
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out


def line_cuts(text: str) -> Iterator[int]:
    """Offsets just after every safe line-rule cut in ``text`` (used by the split planner)."""
    for m in _LINE_CUT_STR.finditer(text):
        yield m.end()
