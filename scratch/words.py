"""Small helpers for wording answers, usable from every layer (standard library only)."""

from __future__ import annotations


def plural(n: int, word: str, *, grouped: bool = False) -> str:
    """``1 line``, ``2 lines`` (``1,000 lines`` when ``grouped``): a count and its noun,
    agreeing."""
    return (f"{n:,} " if grouped else f"{n} ") + (word if n == 1 else word + "s")


BINARY_LINE_BYTES = 256  # the bytes of one line of binary content an answer shows


def escape_bytes(raw: bytes, limit: int | None = BINARY_LINE_BYTES,
                 total: int | None = None) -> str:
    """Binary content as text a terminal and a model can take: printable ASCII as it is (a
    backslash doubled), tab, carriage return and newline as ``\\t``, ``\\r``, ``\\n``, every
    other byte ``\\xNN``; at most ``limit`` bytes of it, then ``… (N more bytes)`` (``total``:
    the length of what ``raw`` begins, when it was read only in part). No NUL or control byte
    reaches the output, and the text reads back to the bytes."""
    shown = raw if limit is None else raw[:limit]
    out = []
    for b in shown:
        if b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        elif b == 0x09:
            out.append("\\t")
        elif b == 0x0D:
            out.append("\\r")
        elif b == 0x0A:
            out.append("\\n")
        else:
            out.append(f"\\x{b:02x}")
    more = (len(raw) if total is None else total) - len(shown)
    return "".join(out) + (f"… ({more:,} more bytes)" if more > 0 else "")
