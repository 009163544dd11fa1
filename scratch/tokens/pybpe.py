"""A small pure-Python BPE counter for short texts, exact to tiktoken's ``encode_ordinary``.

Why: building tiktoken's ``Encoding`` costs ~0.15-0.2 s (o200k_base) on every process start,
while a typical answer scratch prices is a few KB. Counting those here costs a few ms:
ranks come from a memory-mapped :class:`~scratch.tokens.ranktable.RankTable` (or a rank
``dict`` when one is already loaded), and pure-ASCII text is split with the standard
library ``re`` (:mod:`scratch.tokens.pretok`); only other text needs the ``regex`` module.

Same algorithm as tiktoken: split with the encoding's pre-token pattern; a piece that is a
token counts 1; otherwise repeatedly merge the adjacent pair whose concatenation has the
lowest rank (the leftmost on ties) until no adjacent pair is a token. The pairs live in a
heap keyed by (rank, start) and a popped pair is used only if both its parts still exist,
so each step merges exactly the pair tiktoken's scan would pick, in O(n log n) instead of
O(n^2). Pieces longer than :data:`MAX_PIECE` bytes are refused so the caller uses tiktoken.
Parity with tiktoken is tested on every corpus file and on adversarial strings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from heapq import heapify, heappop, heappush
from typing import Protocol

from scratch.tokens.pretok import official_for_python

MAX_PIECE = 1 << 13
_CACHE_LIMIT = 1 << 16


class RankLookup(Protocol):
    """What the counter needs of the ranks: ``dict.get`` (a dict or a RankTable)."""

    def get(self, key: bytes, default: None = None, /) -> int | None: ...


class _Pattern(Protocol):
    """A compiled ``regex`` pattern (the module ships no types here)."""

    def findall(self, text: str, /) -> list[str]: ...


class PieceTooLong(Exception):
    """A pre-token too long for the pure-Python merge loop; count with tiktoken."""


class PyBpe:
    """Counts tokens of ``pat_str``'s encoding with ``ranks``.

    ``ascii_pat`` (optional) is a standard-``re`` pattern equivalent to ``pat_str`` on
    pure-ASCII text; when given, ASCII texts never import ``regex``.
    """

    def __init__(self, pat_str: str, ranks: RankLookup, ascii_pat: str | None = None) -> None:
        self._pat_str = pat_str
        self._pat: _Pattern | None = None
        self._ascii: re.Pattern[str] | None = re.compile(ascii_pat) if ascii_pat else None
        self._get = ranks.get
        self._cache: dict[str, int] = {}

    def _unicode_pattern(self) -> _Pattern:
        if self._pat is None:
            import regex

            compiled: _Pattern = regex.compile(official_for_python(self._pat_str))
            self._pat = compiled
        return self._pat

    def pieces(self, text: str) -> list[str]:
        """The pre-tokens of ``text``."""
        if self._ascii is not None and text.isascii():
            return self._ascii.findall(text)
        return self._unicode_pattern().findall(text)

    def merge_count(self, piece: bytes) -> int:
        """Tokens in one pre-token's bytes."""
        n = len(piece)
        if n > MAX_PIECE:
            raise PieceTooLong(n)
        if n < 2 or self._get(piece) is not None:
            return n and 1
        return self._merge(piece)[0]

    def token_ends(self, piece: bytes) -> list[int]:
        """Byte offsets where each token of one pre-token's bytes ends (cutting inside a
        pre-token too long for the limit)."""
        n = len(piece)
        if n > MAX_PIECE:
            raise PieceTooLong(n)
        if n < 2 or self._get(piece) is not None:
            return [n] if n else []
        nxt = self._merge(piece)[1]
        ends: list[int] = []
        s = 0
        while s < n:
            s = nxt[s]
            ends.append(s)
        return ends

    def _merge(self, piece: bytes) -> tuple[int, list[int]]:
        """The merges of one pre-token of 2+ bytes: (parts left, ``nxt``: where the part
        starting at each part start ends)."""
        n = len(piece)
        get = self._get
        # Parts are identified by their start offset: nxt[s] is where the part starting at s
        # ends (-1 once it was merged into its left neighbour); prv[s] where its left one starts.
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        heap: list[tuple[int, int, int]] = []  # (rank, start, end) of a candidate merge
        for s in range(n - 1):
            r = get(piece[s:s + 2])
            if r is not None:
                heap.append((r, s, s + 2))
        heapify(heap)
        parts = n
        while heap:
            _, s, e = heappop(heap)
            m = nxt[s]
            if m < 0 or m >= n or nxt[m] != e:
                continue  # stale: one of the two parts has changed since this was pushed
            nxt[s] = e
            nxt[m] = -1
            if e < n:
                prv[e] = s
            parts -= 1
            p = prv[s]
            if p >= 0:
                r = get(piece[p:e])
                if r is not None:
                    heappush(heap, (r, p, e))
            if e < n:
                f = nxt[e]
                r = get(piece[s:f])
                if r is not None:
                    heappush(heap, (r, s, f))
        return parts, nxt

    def count(self, text: str) -> int:
        """Tokens in ``text``; raises :class:`PieceTooLong` for pathological pre-tokens and
        ``UnicodeEncodeError`` for lone surrogates (the caller fixes them first)."""
        cache = self._cache
        n = 0
        for piece in self.pieces(text):
            c = cache.get(piece)
            if c is None:
                c = self.merge_count(piece.encode("utf-8"))
                if len(cache) < _CACHE_LIMIT:
                    cache[piece] = c
            n += c
        return n

    def count_pieces(self, pieces: Sequence[str], limit: int) -> list[tuple[int, int]]:
        """(characters, tokens) of each of ``pieces`` in order, until their tokens reach
        ``limit`` (the piece that reaches it is the last one): the cut of a prefix counts only
        the pre-tokens it may hold."""
        cache = self._cache
        out: list[tuple[int, int]] = []
        n = 0
        for piece in pieces:
            c = cache.get(piece)
            if c is None:
                c = self.merge_count(piece.encode("utf-8"))
                if len(cache) < _CACHE_LIMIT:
                    cache[piece] = c
            out.append((len(piece), c))
            n += c
            if n >= limit:
                break
        return out

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]
