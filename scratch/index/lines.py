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
import struct
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

CHUNK = 8 << 20
FORCE_CUT = 64 << 20  # with no safe cut in this much text, cut at any newline (total inexact)

TOKENS_MAGIC = b"SCTOKv1\0"
TOKENS_HEADER = struct.Struct("<8sQqQ")  # magic, line_count, exact total (-1: unknown), flags
CountLines = Callable[[Sequence[str], str], list[int]]

# A cut after "\n" is safe when the next line starts (after spaces/tabs) with a character that
# is neither whitespace (Unicode) nor "/". Bytes version: ASCII printable except "/" and space,
# or a UTF-8 lead byte that does not start a Unicode whitespace character.
_SAFE_CUT = re.compile(
    rb"\n(?=[ \t]*(?:[\x21-\x2e\x30-\x7e]|(?!\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a"
    rb"\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80)[\xc2-\xf4]))")
_UNSAFE_STR = re.compile(r"\n(?![ \t]*[^\s/])")
# Characters str.splitlines() breaks on besides "\n"; when absent it is a fast exact split.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


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
        m = _SAFE_CUT.search(data, max(0, len(data) - (1 << 20)))
        if m is None:
            last = None
            for last in _SAFE_CUT.finditer(data):  # noqa: B007 - keep the last match
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


def _split_text(text: str, n: int) -> list[str]:
    """The ``n`` lines of ``text`` with their ``\\n``."""
    if not _OTHER_BREAKS.search(text):
        lines = text.splitlines(keepends=True)
        if len(lines) == n:
            return lines
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


class LinePass:
    """Accumulates offsets and token prefix sums chunk by chunk into open files."""

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
        if lines_out is not None:
            array("Q", [0]).tofile(lines_out)
        for out in token_outs.values():
            out.write(TOKENS_HEADER.pack(TOKENS_MAGIC, 0, -1, 0))
            array("Q", [0]).tofile(out)

    def feed(self, chunk: bytes, cut_safe: bool = True) -> None:
        if not chunk:
            return
        n = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        text_lines: list[str] | None = None
        text = ""
        if self.token_outs:
            text = decode_text(chunk)
            text_lines = _split_text(text, n)
        if self.lines_out is not None:
            if text_lines is not None and chunk.isascii():
                acc = itertools.accumulate(map(len, text_lines), initial=self.offset)
                next(acc)
                array("Q", acc).tofile(self.lines_out)
            else:
                parts = chunk.split(b"\n")
                if chunk.endswith(b"\n"):
                    parts.pop()
                ends = map(operator.add, itertools.accumulate(map(len, parts)),
                           itertools.count(self.offset + 1))
                offs = array("Q", ends)
                if not chunk.endswith(b"\n"):
                    offs[-1] -= 1  # the last line has no terminator
                offs.tofile(self.lines_out)
        if text_lines is not None:
            assert self.count_lines is not None
            for base, out in self.token_outs.items():
                counts = self.count_lines(text_lines, base)
                sums = itertools.accumulate(counts, initial=self.totals[base])
                next(sums)
                arr = array("Q", sums)
                arr.tofile(out)
                self.totals[base] = arr[-1] if arr else self.totals[base]
                self.corrections[base] += self._correction(text, text_lines, counts, base)
        self.exact = self.exact and cut_safe
        self.line_count += n
        self.offset += len(chunk)

    def _correction(self, text: str, lines: list[str], counts: list[int], base: str) -> int:
        """Exact count minus the sum of line counts, for this chunk's runs of unsafe lines."""
        ends: list[int] | None = None
        groups: list[tuple[int, int]] = []
        for m in _UNSAFE_STR.finditer(text):
            if m.start() == len(text) - 1:
                break  # the chunk's last newline: the cut was chosen safe
            if ends is None:
                ends = list(itertools.accumulate(map(len, lines)))
            i = bisect_right(ends, m.start())  # line i+1 is glued to line i
            if groups and groups[-1][1] == i:
                groups[-1] = (groups[-1][0], i + 1)
            else:
                groups.append((i, i + 1))
        if not groups:
            return 0
        texts = ["".join(lines[a:b + 1]) for a, b in groups]
        assert self.count_lines is not None
        together = self.count_lines(texts, base)
        return sum(t - sum(counts[a:b + 1]) for t, (a, b) in zip(together, groups, strict=True))

    def finish(self) -> None:
        for base, out in self.token_outs.items():
            total = self.totals[base] + self.corrections[base] if self.exact else -1
            out.seek(0)
            out.write(TOKENS_HEADER.pack(TOKENS_MAGIC, self.line_count, total, 0))


def run_line_pass(content: Path, lines_out: BinaryIO | None, token_outs: Mapping[str, BinaryIO],
                  count_lines: CountLines | None,
                  progress: Callable[[str, int, int | None], None] | None = None) -> LinePass:
    lp = LinePass(lines_out, token_outs, count_lines)
    size = content.stat().st_size
    with open(content, "rb") as f:
        for chunk, safe in iter_chunks(f):
            lp.feed(chunk, safe)
            if progress is not None:
                progress("index", lp.offset, size)
    lp.finish()
    return lp
