"""Reading one line too long for an answer, in pieces (``slice REF L END --from-byte B``).

A minified JSON kept ``--raw``, a log line holding a whole request body, a YAML string of
100 KB: one line can cost more tokens than the per-call cap allows, and line windows cannot cut
it. With ``--fit`` such a line is answered piece by piece instead of refused:

- A piece is the longest run of the line's bytes, from ``from_byte``, whose answer fits the cap
  and the budget (as this mode prices it: the text, or the --json envelope). It ends at a
  token boundary of the agent's tokenizer, moved back so no UTF-8 character is split.
- ``next`` continues the same line at the byte where the piece ended, then the lines after it
  up to the END asked for; following it covers the line exactly once, with no gap or overlap.
- The data says which part of which line it is: ``line_part`` = ``{"line", "from_byte",
  "to_byte", "line_bytes"}`` (bytes of the line without its terminator).
"""

from __future__ import annotations

from typing import Any

from scratch.context import Context
from scratch.errors import OutOfRange, UsageError
from scratch.explore.lines import fit_cap, too_big_to_fit
from scratch.explore.target import Target
from scratch.pricing import EnvelopeMeter, charge_answer
from scratch.result import Result

PIECE_BYTES_PER_TOKEN = 64  # bytes of a line read per token of the cap (see line_piece)


def utf8_boundary(data: bytes) -> bytes:
    """``data`` without an incomplete UTF-8 character at its end."""
    i = len(data)
    back = 0
    while i > 0 and back < 4 and 0x80 <= data[i - 1] < 0xC0:  # continuation bytes
        i -= 1
        back += 1
    if i == 0:
        return data
    lead = data[i - 1]
    need = 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if lead >= 0xF0 else 1
    return data if need == 1 or back + 1 >= need else data[:i - 1]


def line_piece(ctx: Context, target: Target, line: int, end: int, from_byte: int, *,
               command: str, code: str, numbers: bool) -> Result:
    """The piece of line ``line`` from ``from_byte`` that fits (see the module docstring);
    ``end`` is the last line of the range asked for, where ``next`` stops."""
    from scratch.tokens import count_text, truncate_stream

    line_bytes = target.index.line_length(line)
    if from_byte < 0:
        raise UsageError("--from-byte must be >= 0", code="invalid_argument")
    if from_byte and from_byte >= line_bytes:
        raise OutOfRange(f"line {line} has {line_bytes} bytes; --from-byte {from_byte} is past "
                         "its end", line=line, line_bytes=line_bytes, from_byte=from_byte)
    spec = ctx.encoding()
    cap = fit_cap(ctx)
    flags = "" if numbers else " --no-numbers"
    meter = EnvelopeMeter(ctx, command, cap) if ctx.json_mode else None

    def answer(piece: bytes) -> tuple[str, dict[str, Any], int]:
        to_byte = from_byte + len(piece)
        text = piece.decode("utf-8", errors="replace")
        shown = (f"{line}:" if numbers else "") + text + "\n"
        nxt = (f"scratch slice {target.ref} {line} {end} --from-byte {to_byte} --fit{flags}"
               if to_byte < line_bytes else
               f"scratch slice {target.ref} {line + 1} {end} --fit{flags}" if line < end
               else None)
        data: dict[str, Any] = {
            "name": target.name, "version": target.version, "start": line, "end": line,
            "total_lines": target.index.line_count, "lines": [text],
            "line_part": {"line": line, "from_byte": from_byte, "to_byte": to_byte,
                          "line_bytes": line_bytes}}
        if nxt:
            data["next"] = nxt
        cost = count_text(shown, spec)
        if meter is not None:
            cost = max(cost, meter.tokens(data))
        return shown, data, cost

    # Only the bytes a piece can take are read (tokenizing a 50 MB line would cost seconds
    # and gigabytes): first 8 bytes per token of the cap, 4 times more while all of it fits
    per_token = 8
    while True:
        rest = target.index.read_line_part(line, from_byte, cap * per_token + 64)
        cut_short = from_byte + len(rest) < line_bytes
        if not cut_short or per_token >= PIECE_BYTES_PER_TOKEN:
            break
        if len(b"".join(truncate_stream([rest], cap, spec))) < len(rest):
            break  # the cap's tokens end inside what was read
        per_token *= 4
    n = cap  # a first guess at the piece's tokens; shrunk until the whole answer fits
    while True:
        piece = utf8_boundary(b"".join(truncate_stream([rest], max(n, 0), spec))) if n > 0 \
            else b""
        if cut_short and piece and len(piece) == len(rest):
            # all that was read fits: its last token may go on past the bytes read, so the
            # piece ends a token earlier (the next piece starts on a token boundary)
            k = count_text(piece.decode("utf-8", errors="replace"), spec)
            piece = utf8_boundary(b"".join(truncate_stream([rest], max(k - 1, 0), spec))) \
                if k > 1 else piece
        if not piece:
            whole = count_text(rest.decode("utf-8", errors="replace"), spec)
            raise too_big_to_fit(ctx, code, f"a piece of line {line}", whole, [])
        shown, data, cost = answer(piece)
        if cost <= cap:
            break
        n = min(n - 1, n - (cost - cap))
    meta = charge_answer(ctx, count_text(shown, spec), code=code,
                         details={"total_lines": target.index.line_count, "start": line,
                                  "end": line})
    notices: tuple[str, ...] = ()
    if data.get("next"):
        meta["next"] = data["next"]
        notices = (f"more: {data['next']}",)
    target.index.close()
    return Result(command, data=data, text=shown, meta=meta, notices=notices)
