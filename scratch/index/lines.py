"""One streaming pass over stored content: line start offsets and per-line token prefix sums.

Definitions (shared with :mod:`scratch.index.reader`):

- A line ends with ``\\n`` (a ``\\r`` before it belongs to the line); the last line may lack
  it. ``line_count`` = number of ``\\n`` + 1 if the content does not end with ``\\n`` (0 for
  empty content).
- ``lines.bin``: ``line_count + 1`` native-endian u64 offsets; line ``i`` (1-based) is the
  bytes ``[off[i-1], off[i])`` including its terminator; ``off[line_count]`` is the size.
- The token count of a line is the count of its text *including* its terminator, decoded as
  UTF-8 with each invalid byte as U+FFFD (``scratch.tokens`` rules). Prefix sums
  ``P[0] = 0``, ``P[i] = P[i-1] + count(line i)`` are stored per base encoding.
- The exact token count of the whole content is also stored. Line counts add up to it except
  where a line does not start at a *safe cut* (see ``scratch.tokens.cuts``: the next line
  is blank or starts with ``/``); such runs of lines are counted together once more and the
  difference added, so the total is exact without tokenizing everything twice.

Memory: chunks of about :data:`CHUNK` bytes cut at safe line boundaries; one line longer than
that is held whole.
"""

from __future__ import annotations

import itertools
import operator
import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from scratch.errors import TokenizerError
from scratch.index.files import TOKENS_HEADER, TOKENS_MAGIC

CHUNK = 8 << 20
FORCE_CUT = 64 << 20  # with no safe cut in this much text, cut at any newline (total inexact)

CountLines = Callable[[Sequence[str], str], list[int]]

# A cut after "\n" is safe when the next line starts (after spaces/tabs) with a character that
# is neither whitespace (Unicode) nor "/". Bytes version: ASCII printable except "/" and space,
# or a UTF-8 lead byte that does not start a Unicode whitespace character.
_SAFE_CUT_PATTERN = (
    rb"\n(?=[ \t]*(?:[\x21-\x2e\x30-\x7e]|(?!\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a"
    rb"\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80)[\xc2-\xf4]))")
_safe_cut: re.Pattern[bytes] | None = None  # compiled on first use: readers never cut


def _safe_cut_re() -> re.Pattern[bytes]:
    global _safe_cut
    if _safe_cut is None:
        _safe_cut = re.compile(_SAFE_CUT_PATTERN)
    return _safe_cut


def decode_text(data: bytes) -> str:
    """UTF-8 with one U+FFFD per invalid byte (the token counter's rule)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
        return re.sub("[\udc80-\udcff]", "\ufffd", text)


def iter_chunks(f: BinaryIO, chunk: int = CHUNK) -> Iterator[tuple[bytes, bool]]:
    """(chunk, cut_safe) pieces of whole lines; joined they give the stream back exactly."""
    pending: list[bytes] = []
    size = 0
    while True:
        block = f.read(chunk)
        if block:
            pending.append(block)
            size += len(block)
            if size < chunk and b"\n" not in block:
                continue
        if not pending:
            return
        data = pending[0] if len(pending) == 1 else b"".join(pending)
        pending = []
        size = 0
        if not block:  # end of input
            yield data, True
            return
        m = _safe_cut_re().search(data, max(0, len(data) - (1 << 20)))
        if m is None:
            last = None
            for last in _safe_cut_re().finditer(data):  # noqa: B007 - keep the last match
                pass
            m = last
        if m is not None:
            cut, safe = m.end(), True
        elif len(data) >= FORCE_CUT and b"\n" in data:
            cut, safe = data.rfind(b"\n") + 1, False
        else:
            pending, size = [data], len(data)
            continue
        yield data[:cut], safe
        if cut < len(data):
            pending, size = [data[cut:]], len(data) - cut


_BREAK_BYTES = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")
_BREAK_MULTI = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
# "\n" followed by a line that is not a safe cut: blank/whitespace-only, or starting with "/"
# or another whitespace character after its indentation.
_UNSAFE_BYTES = (rb"\n[ \t]*(?:[\n\r/\x0b\x0c\x1c-\x1f]|\xc2[\x85\xa0]|\xe1\x9a\x80"
                 rb"|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80)")
_unsafe_re: Any = None


def _unsafe_finder() -> Any:
    """re2 scans ~8x faster than re here (no backtracking per newline); re is the fallback."""
    global _unsafe_re
    if _unsafe_re is None:
        try:
            import re2

            _unsafe_re = re2.compile(_UNSAFE_BYTES)
        except Exception:  # noqa: BLE001 - any trouble with the optional engine: use re
            _unsafe_re = re.compile(_UNSAFE_BYTES)
    return _unsafe_re


def _split_text(text: str, chunk: bytes) -> list[str]:
    """The lines of ``text`` (decoded ``chunk``) split on ``\\n`` only, terminators kept."""
    # str.splitlines also breaks on \r, \x0b, \x1c, U+2028...; when none is present it is
    # an exact (and fast) split on "\n". Each check is a memchr-speed search.
    if not any(c in chunk for c in _BREAK_BYTES) and (
            chunk.isascii() or not any(m in chunk for m in _BREAK_MULTI)):
        return text.splitlines(keepends=True)
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


class _Prepared:
    __slots__ = ("lines", "groups")

    def __init__(self, lines: list[str], groups: list[tuple[int, int]]) -> None:
        self.lines = lines
        self.groups = groups


class LinePass:
    """Accumulates offsets and token prefix sums chunk by chunk into open files.

    Counting a chunk runs in a worker thread (tokenizers release the GIL) while the next
    chunk is split, so splitting and counting overlap on two cores.
    """

    def __init__(self, lines_out: BinaryIO | None, token_outs: Mapping[str, BinaryIO],
                 count_lines: CountLines | None) -> None:
        self.lines_out = lines_out
        self.token_outs = token_outs
        self.count_lines = count_lines
        self.line_count = 0
        self.offset = 0
        self.totals = {b: 0 for b in token_outs}
        self.corrections = {b: 0 for b in token_outs}
        self.exact = True
        self._pool: Any = None
        self._pending: Any = None
        if lines_out is not None:
            array("Q", [0]).tofile(lines_out)
        for out in token_outs.values():
            out.write(TOKENS_HEADER.pack(TOKENS_MAGIC, 0, -1, 0))
            array("Q", [0]).tofile(out)

    def feed(self, chunk: bytes, cut_safe: bool = True) -> None:
        if not chunk:
            return
        # offs: the chunk's line starts and its end, absolute (offs[0] == self.offset).
        text_lines: list[str] | None = None
        offs: array | None = None
        if self.token_outs:
            text_lines = _split_text(decode_text(chunk), chunk)
            if chunk.isascii():  # one character per byte: line lengths are byte lengths
                offs = array("Q", itertools.accumulate(map(len, text_lines),
                                                       initial=self.offset))
        if offs is None:
            parts = chunk.split(b"\n")
            if chunk.endswith(b"\n"):
                parts.pop()
            offs = array("Q", map(operator.add, itertools.accumulate(map(len, parts),
                                                                    initial=self.offset),
                                  itertools.count()))
            if not chunk.endswith(b"\n"):
                offs[-1] -= 1  # the last line has no terminator
        n = len(offs) - 1
        if self.lines_out is not None:
            self.lines_out.write(memoryview(offs)[1:])
        if text_lines is not None:
            prepared = _Prepared(text_lines, _unsafe_groups(chunk, offs))
            self._drain()
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(1, thread_name_prefix="scratch-count")
            self._pending = self._pool.submit(self._count, prepared)
        self.exact = self.exact and cut_safe
        self.line_count += n
        self.offset += len(chunk)

    def _count(self, prepared: _Prepared) -> list[tuple[str, list[int], int]]:
        assert self.count_lines is not None
        out = []
        for base in self.token_outs:
            counts = self.count_lines(prepared.lines, base)
            correction = 0
            if prepared.groups:
                texts = ["".join(prepared.lines[a:b + 1]) for a, b in prepared.groups]
                together = self.count_lines(texts, base)
                correction = sum(t - sum(counts[a:b + 1])
                                 for t, (a, b) in zip(together, prepared.groups, strict=True))
            out.append((base, counts, correction))
        return out

    def _drain(self) -> None:
        if self._pending is None:
            return
        results = self._pending.result()
        self._pending = None
        for base, counts, correction in results:
            sums = itertools.accumulate(counts, initial=self.totals[base])
            next(sums)
            arr = array("Q", sums)
            arr.tofile(self.token_outs[base])
            if arr:
                self.totals[base] = arr[-1]
            self.corrections[base] += correction

    def finish(self) -> None:
        try:
            self._drain()
        finally:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None
        for base, out in self.token_outs.items():
            total = self.totals[base] + self.corrections[base] if self.exact else -1
            out.seek(0)
            out.write(TOKENS_HEADER.pack(TOKENS_MAGIC, self.line_count, total, 0))


def _unsafe_groups(chunk: bytes, offs: array) -> list[tuple[int, int]]:
    """Runs of lines (first, last; 0-based in the chunk) joined by unsafe boundaries.
    ``offs`` holds the chunk's absolute line starts and its end."""
    groups: list[tuple[int, int]] = []
    last = len(chunk) - 1
    base = offs[0]
    search = _unsafe_finder().search
    m = search(chunk, 0)
    while m is not None:
        pos = m.start()
        if pos >= last:
            break  # the chunk's last newline: its cut was chosen safe
        m = search(chunk, pos + 1)  # the match may end on the next boundary's "\n"
        # the "\n" at pos ends line i (0-based); line i + 1 is glued to it
        i = bisect_right(offs, base + pos) - 1
        if i >= len(offs) - 2:
            break
        if groups and groups[-1][1] == i:
            groups[-1] = (groups[-1][0], i + 1)
        else:
            groups.append((i, i + 1))
    return groups


def run_line_pass(content: Path, lines_out: BinaryIO | None, token_outs: Mapping[str, BinaryIO],
                  count_lines: CountLines | None,
                  progress: Callable[[str, int, int | None], None] | None = None) -> LinePass:
    lp = LinePass(lines_out, token_outs, count_lines)
    size = content.stat().st_size
    try:
        with open(content, "rb") as f:
            for chunk, safe in iter_chunks(f):
                lp.feed(chunk, safe)
                if progress is not None:
                    progress("index", lp.offset, size)
    except BaseException:
        if lp._pool is not None:  # do not leave the counting thread behind
            lp._pool.shutdown(cancel_futures=True)
        raise
    lp.finish()
    return lp


def default_count_lines() -> CountLines:
    """``scratch.tokens.count_lines`` when available, else toktok's exact BPE counts."""
    try:
        from scratch.tokens import count_lines  # type: ignore[attr-defined]

        return count_lines  # type: ignore[no-any-return]
    except ImportError:
        pass
    try:
        from scratch.tokens.tokenizer import count_lines as cl

        return cl
    except ImportError:
        pass

    def toktok_count(lines: Sequence[str], base: str) -> list[int]:
        import toktok

        try:
            return toktok.batch_count(list(lines), base)  # type: ignore[no-any-return]
        except KeyError:
            raise TokenizerError(f"no tokenizer for encoding {base!r}", base=base) from None

    return toktok_count
