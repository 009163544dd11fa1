"""A bounded pre-scan of bracket nesting, run before anything that parses recursively.

orjson stops at 1024 levels, the standard library's parser and the index's analysis at the
interpreter's recursion limit, libyaml's composer recurses in C, and the canonical layout of
a document ``d`` deep takes ``d**2`` bytes: a 100 KB input of 100,000 ``[`` used to cost
gigabytes before it failed. :func:`too_deep` says, in linear time and without recursion,
whether ``data`` nests ``[``/``{`` deeper than :data:`MAX_DEPTH` and where the bracket that
goes one level too deep is (its byte offset), so such content goes straight to text with the
reason and the position.

What it counts: ``[`` and ``{`` open a level, ``]`` and ``}`` close one (a closer at level 0
is ignored, as in YAML where a ``]`` can be plain text), brackets inside double-quoted strings
(``\\"`` and ``\\\\`` escapes honoured) do not count. For JSON that is exactly the nesting
depth (NDJSON is checked line by line); for YAML flow collections it may count a bracket inside
a single-quoted or plain scalar, which only matters for text holding more than
:data:`MAX_DEPTH` unclosed brackets.

The work is a few passes of C code over the input (``count``, ``replace``, ``translate``,
``split``), then one ``count`` per 256 brackets for a bound on the depth; the exact depths
(``itertools.accumulate`` over the brackets) only when that bound passes the limit, and a
per-token Python loop only to place a nesting already known to be too deep.
"""

from __future__ import annotations

import re
from array import array
from itertools import accumulate
from operator import sub

# The depth stored as structure: under orjson's 1024 and under what the recursive analysis of
# :mod:`scratch.index` takes at the interpreter's recursion limit of 1000 (with the caller's
# own frames on the stack: a CLI command, an MCP request handler).
MAX_DEPTH = 900

_KEEP = b'[]{}"'
_DELETE = bytes(b for b in range(256) if b not in _KEEP)
_FOLD = bytes.maketrans(b"[{]}", b"(())")  # openers to "(", closers to ")"
_STEP = bytes.maketrans(b"()", b"\x01\xff")  # as signed bytes: +1, -1
_BLOCK = 256
_CHUNK = 1 << 14  # brackets whose depths are lists at once (~1 MB)
_TOKEN = re.compile(rb'\\[\\"]|["\[\]{}]')


def nested_too_deeply(offset: int, depth: int = MAX_DEPTH) -> str:
    """The reason given for content :func:`too_deep` refused at byte ``offset`` (the words
    :func:`scratch.reindent.reindent` gives when its own pass finds it)."""
    from scratch.reindent import too_deep_reason
    return too_deep_reason(offset, depth)


def too_deep(data: bytes, limit: int = MAX_DEPTH) -> int | None:
    """Byte offset of the first ``[``/``{`` that opens level ``limit + 1`` of ``data``, or
    None when the nesting stays within ``limit`` (see the module docstring)."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return None  # the common case: one pass, nothing copied
    kept = data
    if b'\\"' in kept:  # escaped backslashes, then escaped quotes, as a left-to-right scan
        kept = kept.replace(b"\\\\", b"").replace(b'\\"', b"")  # does (else neither matters)
    if not _deeper(_outside_strings(kept.translate(None, _DELETE)), limit):
        return None
    return _place(data, limit)


def _outside_strings(kept: bytes) -> bytes:
    """The brackets of ``kept`` (brackets and quotes only) outside its strings; after an
    unterminated string's quote nothing counts."""
    # two quotes side by side close a string and open one, or open one and close it, with no
    # bracket between them: gone, they change nothing (and most strings hold no bracket)
    kept = kept.replace(b'""', b"")
    if b'"' not in kept:
        return kept
    return b"".join(kept.split(b'"')[::2])


def _deeper(brackets: bytes, limit: int) -> bool:
    """True if the brackets-only ``brackets`` go deeper than ``limit``.

    First a bound from blocks of :data:`_BLOCK` brackets (one ``count`` each): the depth in a
    block is at most the bound at its start plus its openers, and the bound at its end the
    larger of that start plus its net count and its openers. Only when the bound passes
    ``limit`` are the depths computed, in chunks: the depth after each bracket is the running
    sum of the steps less the lowest sum so far (a closer at depth 0 counts for nothing)."""
    if len(brackets) <= limit:
        return False
    folded = brackets.translate(_FOLD)
    bound = 0
    for start in range(0, len(folded), _BLOCK):
        block = folded[start:start + _BLOCK]
        opens = block.count(b"(")
        if bound + opens > limit:
            break
        bound = max(bound + 2 * opens - len(block), opens)
    else:
        return False
    total = low = 0
    for start in range(0, len(folded), _CHUNK):
        steps = array("b", folded[start:start + _CHUNK].translate(_STEP))
        sums = list(accumulate(steps, initial=total))
        lows = list(accumulate(sums, min, initial=low))
        if max(map(sub, sums, lows[1:])) > limit:
            return True
        total, low = sums[-1], lows[-1]
    return False


def _place(data: bytes, limit: int) -> int | None:
    """The offset :func:`too_deep` returns, found token by token (the same counting rules);
    only run once the nesting is known to be too deep, so it stops at that bracket."""
    depth = 0
    in_string = False
    for m in _TOKEN.finditer(data):
        c = data[m.start()]
        if c == 0x5C:  # an escaped quote or backslash
            continue
        if c == 0x22:
            in_string = not in_string
        elif in_string:
            continue
        elif c == 0x5B or c == 0x7B:
            depth += 1
            if depth > limit:
                return m.start()
        elif depth:
            depth -= 1
    return None


def position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based (line, column in characters) of byte ``offset`` of ``data``."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", "replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column
