"""head, tail, slice (and read --fit): line ranges of an entry as candidate answers.

Invariants:
- Lines are 1-indexed and inclusive; only the bytes of the shown lines are read (one seek).
- A range's text is priced from the index's per-line token sums (plus the ``N:`` prefixes
  when numbered), so no tokenizer is loaded to answer it; with ``--json`` the envelope is
  counted (the index's sum of the lines, without numbers, bounds it first).
- A --fit page shows the first k lines of the range; ``next`` is ``slice REF last+1 END
  --fit``, END being the end asked for. When not even the first line fits it is answered in
  pieces (see :mod:`scratch.answers.lines.pieces`).
- Binary content (an entry stored as binary) is shown escaped and bounded: each line's first
  :data:`scratch.words.BINARY_LINE_BYTES` bytes as :func:`scratch.words.escape_bytes` writes
  them (no NUL or control byte on stdout or in a model's context), priced as shown.
- A refusal offers the same command asking for fewer lines (``head -n K``, ``tail -n K``,
  ``slice START START+K-1``), --fit when it shows a line or a piece, and when not even one
  line fits: that line in pieces, the NDJSON item it holds, and the schema at a depth that
  fits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.candidate import FIT, SHRINK, Alternative, Candidate
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Payload, Result
from scratch.answers.kernel.target import Target, open_target, range_cost
from scratch.answers.lines.pieces import CODES, LinePiece
from scratch.calls import Call, call
from scratch.errors import OutOfRange, ScratchError, UsageError
from scratch.words import plural

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step


def line_text(raw: bytes, binary: bool = False, total: int | None = None) -> str:
    """One stored line as shown: text decoded (U+FFFD for bytes that are not UTF-8), binary
    content escaped and bounded (``total``: the line's length when ``raw`` is its start)."""
    if binary:
        from scratch.words import escape_bytes
        return escape_bytes(raw, total=total)
    return raw.decode("utf-8", errors="replace")


def format_lines(lines: list[bytes], start: int, numbers: bool, binary: bool = False,
                 totals: list[int] | None = None) -> str:
    out = []
    for i, raw in enumerate(lines):
        text = line_text(raw, binary, totals[i] if totals else None)
        out.append(f"{start + i}:{text}" if numbers else text)
    return "\n".join(out) + ("\n" if out else "")


def lines_data(target: Target, start: int, end: int, lines: list[bytes],
               binary: bool = False, totals: list[int] | None = None) -> dict[str, object]:
    out: dict[str, object] = {
        "name": target.name, "version": target.version, "start": start, "end": end,
        "total_lines": target.index.line_count,
        "lines": [line_text(b, binary, totals[i] if totals else None)
                  for i, b in enumerate(lines)]}
    if binary:
        out["binary"] = True
    return out


def is_binary(target: Target) -> bool:
    return target.format == "binary" or target.binary


class LineRange(Candidate):
    """Lines ``start..end`` of ``target`` as ``command`` shows them (see the module)."""

    what = "the first line alone"

    def __init__(self, target: Target, start: int, end: int, *, command: str, numbers: bool,
                 fit: bool, asked: Call | None = None, asked_end: int | None = None,
                 owner: bool = True) -> None:
        self.target = target
        self.start = start
        self.end = end
        self.command = command
        self.code = CODES[command]
        self.numbers = numbers
        self.asked_end = end if asked_end is None else asked_end
        self.units = end - start + 1
        self.shrink_units = self.units
        self._owner = owner  # closes the target's index when done
        self._read: tuple[int, list[bytes]] = (start, [])
        self.binary = is_binary(target)
        super().__init__(asked or self._call(start, end, fit), fit=fit)

    # -- calls ---------------------------------------------------------------------------------

    def _flags(self) -> dict[str, bool]:
        return {} if self.numbers else {"numbers": False}

    def _call(self, start: int, end: int, fit: bool) -> Call:
        """The call that shows lines start..end as this command asks for them."""
        ref = self.target.ref
        f = {"fit": True} if fit else {}
        if self.command == "read":
            return call("read", ref=ref, **f)
        if self.command == "tail":
            return call("tail", ref=ref, lines=end - start + 1, **self._flags(), **f)
        if self.command == "head" and start == 1:
            return call("head", ref=ref, lines=end, **self._flags(), **f)
        return call("slice", ref=ref, start=start, end=end, **self._flags(), **f)

    def fit_call(self) -> Call | None:
        return self.asked.with_args(fit=True)

    def resume(self, k: int) -> Call | None:
        last = self.start + k - 1
        if last >= self.asked_end:
            return None
        return call("slice", ref=self.target.ref, start=last + 1, end=self.asked_end,
                    fit=True, **self._flags())

    # -- pages ---------------------------------------------------------------------------------

    def _lines(self, k: int) -> list[bytes]:
        start, have = self._read
        if len(have) < k:
            if self.binary:  # each line up to its bound (and the byte that says it goes on)
                from scratch.words import BINARY_LINE_BYTES
                index = self.target.index
                have = [index.read_line_part(n, 0, BINARY_LINE_BYTES + 1)
                        for n in range(self.start, self.start + k)]
            else:
                have = self.target.index.read_lines(self.start, self.start + k - 1)
            self._read = (start, have)
        return have[:k]

    def page(self, k: int) -> Result[dict[str, object]]:
        last = self.start + k - 1
        lines = self._lines(k)
        totals = ([self.target.index.line_length(n) for n in range(self.start, last + 1)]
                  if self.binary else None)
        text = format_lines(lines, self.start, self.numbers, self.binary, totals)
        data = lines_data(self.target, self.start, last, lines, self.binary, totals)
        return Result(self.command, data=data, text=text, price=self.text_price(k))

    def text_price(self, k: int) -> int | None:
        if self.binary:  # escaped: priced as shown, not from the index's counts of the bytes
            return None
        return range_cost(self.target, self.start, self.start + k - 1, self.target.spec,
                          numbers=self.numbers)

    def estimate(self, k: int) -> int | None:
        if self.binary:  # at most 2 tokens an escaped byte (\x00 is two), each line bounded
            from scratch.words import BINARY_LINE_BYTES
            index = self.target.index
            return sum(2 * min(index.line_length(n), BINARY_LINE_BYTES) + 8
                       for n in range(self.start, self.start + k))
        return range_cost(self.target, self.start, self.start + k - 1, self.target.spec,
                          numbers=False)

    def shrunk(self, k: int) -> Candidate | None:
        if self.command == "read":  # the first lines, numbered as head prints them
            return LineRange(self.target, 1, k, command="head", numbers=True, fit=False,
                             owner=False)
        if self.command == "tail":
            return LineRange(self.target, self.end - k + 1, self.end, command="tail",
                             numbers=self.numbers, fit=False, owner=False)
        return LineRange(self.target, self.start, self.start + k - 1, command=self.command,
                         numbers=self.numbers, fit=False, owner=False)

    def pieces(self) -> Candidate | None:
        return LinePiece(self.target, self.start, self.asked_end, 0, command=self.command,
                         numbers=self.numbers, owner=False)

    def plan(self) -> list[Step]:
        return [SHRINK, FIT, *line_alternatives(self.target, self.start, unless_shrunk=True)]

    def details(self) -> dict[str, object]:
        return {"total_lines": self.target.index.line_count, "start": self.start,
                "end": self.end}

    def close(self) -> None:
        if self._owner:
            self.target.index.close()


def line_alternatives(target: Target, line: int, *, unless_shrunk: bool = False
                      ) -> list[Alternative]:
    """Ways into an entry whose line ``line`` alone is over the cap: that line in pieces
    (``slice L L --fit``), the item it holds (an NDJSON line, paged with --fit), and the schema
    at a depth that fits."""
    from scratch.answers.commands.schema import schema_candidate

    ref = target.ref
    out = [Alternative(call("slice", ref=ref, start=line, end=line, fit=True),
                       unless_shrunk=unless_shrunk)]
    if target.format == "ndjson":
        from bisect import bisect_right
        try:
            starts = target.index.item_starts([])
            i = bisect_right(starts, line) - 1
            if i >= 0 and starts[i] == line:
                out.append(Alternative(call("get-in", ref=ref, path=str(i), fit=True),
                                       unless_shrunk=unless_shrunk))
        except ScratchError:
            pass
    out.append(Alternative(candidate=lambda cap: schema_candidate(target), shrink=True,
                           unless_shrunk=unless_shrunk))
    return out


def line_range(ctx: Context, ref: str, start: int, end: int | None, *, command: str,
               numbers: bool = True, fit: bool = False, from_byte: int | None = None,
               asked: Call | None = None, target: Target | None = None
               ) -> Candidate | Result[Payload]:
    """The candidate answer of lines ``start..end`` (None: to the end) of REF, read from
    ``target`` when the caller opened it already (tail: to count its lines), which it then
    owns."""
    if target is None:
        target = open_target(ctx, ref, logs=True)
    total = target.index.line_count
    if total == 0 and command in ("head", "tail"):
        target.index.close()
        return Result(command, data={"name": target.name, "version": target.version,
                                     "start": 1, "end": 0, "total_lines": 0, "lines": []},
                      text="")
    if end is None:
        end = total
    if start < 1 or end < start:
        target.index.close()
        raise UsageError(f"need 1 <= START <= END, got {start}..{end}", code="invalid_argument",
                         start=start, end=end)
    if start > total:
        target.index.close()
        raise OutOfRange(f"{target.name} has {plural(total, 'line')}; line {start} is past "
                         "the end", total_lines=total, start=start,
                         suggestions=[call("tail", ref=target.ref, lines=50)] if total else [])
    clipped = min(end, total)  # a range running past the end is cut there, not refused
    if from_byte is not None:  # the rest of line START, from a byte offset: piece by piece
        return LinePiece(target, start, clipped, from_byte, command=command, numbers=numbers,
                         asked=asked)
    return LineRange(target, start, clipped, command=command, numbers=numbers, fit=fit,
                     asked=asked)
