"""Reading one line too long for an answer, in pieces (``slice REF L END --from-byte B``).

A minified JSON kept ``--raw``, a log line holding a whole request body, a YAML string of
100 KB: one line can cost more tokens than the per-call cap allows, and line windows cannot cut
it. With ``--fit`` such a line is answered piece by piece instead of refused:

- A piece is the longest run of the line's bytes, from ``from_byte``, whose answer fits the cap
  and the budget (as the rendering prices it: the text, or the --json envelope). It ends at a
  pre-token boundary (o200k/cl100k; at most one pre-token short of the longest) or a token
  boundary (gemma3) of the agent's tokenizer, moved back so no UTF-8 character is split.
- Only the bytes a piece can hold are read and tokenized: a window of a few times the bytes k
  tokens take (:func:`scratch.tokens.stream.truncate_window`), shared by every fitting probe
  of the answer, so a piece of a 50 MB line -- even one with no safe cut in it -- costs what
  the piece costs, and so does a refusal that sizes its suggestions on the first piece.
- ``next`` continues the same line at the byte where the piece ended, then the lines after it
  up to the END asked for; following it covers the line exactly once, with no gap or overlap.
- The data says which part of which line it is: ``line_part`` = ``{"line", "from_byte",
  "to_byte", "line_bytes"}`` (bytes of the line without its terminator).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.candidate import Candidate
from scratch.answers.kernel.result import Result
from scratch.answers.kernel.target import Target
from scratch.calls import Call, call
from scratch.errors import OutOfRange, UsageError

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step

CODES = {"head": "head_too_large", "tail": "tail_too_large", "slice": "slice_too_large",
         "read": "read_too_large"}


def line_span(target: Target, line: int) -> tuple[int, int]:
    """Byte offsets of line ``line`` in the content, without its terminator (``\\n`` or
    ``\\r\\n``)."""
    index = target.index
    lo = index.line_offset(line)
    hi = index.line_offset(line + 1) if line < index.line_count else index.meta["bytes"]
    with open(target.path, "rb") as fh:
        fh.seek(max(lo, hi - 2))
        tail = fh.read(hi - max(lo, hi - 2))
    if tail.endswith(b"\r\n"):
        hi -= 2
    elif tail.endswith(b"\n"):
        hi -= 1
    return lo, hi


class LinePiece(Candidate):
    """The piece of line ``line`` from ``from_byte`` that fits (see the module docstring);
    ``end`` is the last line of the range asked for, where ``next`` stops. Its units are
    tokens of the line."""

    def __init__(self, target: Target, line: int, end: int, from_byte: int, *, command: str,
                 numbers: bool, asked: Call | None = None, owner: bool = True) -> None:
        if from_byte < 0:
            raise UsageError("--from-byte must be >= 0", code="invalid_argument")
        self.target = target
        self.line = line
        self.end = end
        self.from_byte = from_byte
        self.command = command
        self.code = CODES[command]
        self.numbers = numbers
        self.what = f"a piece of line {line}"
        self._owner = owner
        lo, hi = line_span(target, line)
        self._start = lo + from_byte
        self.line_bytes = hi - lo
        if from_byte and from_byte >= self.line_bytes:
            raise OutOfRange(f"line {line} has {self.line_bytes} bytes; --from-byte {from_byte} "
                             "is past its end", line=line, line_bytes=self.line_bytes,
                             from_byte=from_byte)
        self._stop = hi
        self.units = max(1, hi - self._start)  # a token holds at least one byte
        self._pieces: dict[int, bytes] = {}
        self._window = b""
        flags = {} if numbers else {"numbers": False}
        super().__init__(asked or call("slice", ref=target.ref, start=line, end=end,
                                       from_byte=from_byte, fit=True, **flags), fit=True)

    def _read(self, size: int) -> bytes:
        """The first ``size`` bytes of the rest of the line: the fitting probes of one answer
        share one window, read again only when a probe needs more of it."""
        if len(self._window) < size and len(self._window) < self._stop - self._start:
            self._window = self.target.index.read_line_part(self.line, self.from_byte, size)
        return self._window[:size]

    def _piece(self, k: int) -> bytes:
        if k not in self._pieces:
            from scratch.tokens.stream import truncate_window
            self._pieces[k] = truncate_window(self._read, self._stop - self._start, k,
                                              self.target.spec)
        return self._pieces[k]

    def _flags(self) -> dict[str, bool]:
        return {} if self.numbers else {"numbers": False}

    def resume(self, k: int) -> Call | None:
        to_byte = self.from_byte + len(self._piece(k))
        ref = self.target.ref
        if to_byte < self.line_bytes:
            return call("slice", ref=ref, start=self.line, end=self.end, from_byte=to_byte,
                        fit=True, **self._flags())
        if self.line < self.end:
            return call("slice", ref=ref, start=self.line + 1, end=self.end, fit=True,
                        **self._flags())
        return None

    def estimate(self, k: int) -> int | None:
        return k  # k tokens of the line cost at least k tokens, whatever the rendering

    def page(self, k: int) -> Result[dict[str, object]]:
        piece = self._piece(k)
        to_byte = self.from_byte + len(piece)
        if self.target.format == "binary" or self.target.binary:  # escaped, never raw bytes
            from scratch.words import escape_bytes
            text = escape_bytes(piece, limit=None)
        else:
            text = piece.decode("utf-8", errors="replace")
        shown = (f"{self.line}:" if self.numbers else "") + text + "\n"
        data: dict[str, object] = {
            "name": self.target.name, "version": self.target.version, "start": self.line,
            "end": self.line, "total_lines": self.target.index.line_count, "lines": [text],
            "line_part": {"line": self.line, "from_byte": self.from_byte, "to_byte": to_byte,
                          "line_bytes": self.line_bytes}}
        return Result(self.command, data=data, text=shown)

    def details(self) -> dict[str, object]:
        return {"total_lines": self.target.index.line_count, "start": self.line,
                "end": self.line}

    def plan(self) -> list[Step]:
        return []

    def close(self) -> None:
        if self._owner:
            self.target.index.close()
