"""Small helpers for wording answers, usable from every layer (standard library only)."""

from __future__ import annotations


def plural(n: int, word: str, *, grouped: bool = False) -> str:
    """``1 line``, ``2 lines`` (``1,000 lines`` when ``grouped``): a count and its noun,
    agreeing."""
    return (f"{n:,} " if grouped else f"{n} ") + (word if n == 1 else word + "s")
