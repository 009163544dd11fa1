"""Pre-tokenizer patterns for the pure-Python counter: the official ones and ASCII twins.

The official o200k_base/cl100k_base patterns need Unicode classes (``\\p{L}``, ``\\p{N}``, ...),
so they run on the third-party ``regex`` module, whose import and compile cost ~10 ms in every
fresh process. Most priced answers are pure ASCII, and on ASCII text every class has a small
exact equivalent, so :data:`ASCII_PATTERNS` are written for the standard library ``re`` (which
scratch imports anyway; compiling one costs ~0.5 ms).

Equivalence on pure-ASCII text (the only text they are used on):
- ``\\p{L}`` = ``[A-Za-z]``; ``\\p{Lu}`` = ``[A-Z]``; ``\\p{Ll}`` = ``[a-z]``; ``\\p{Lt}``,
  ``\\p{Lm}``, ``\\p{Lo}``, ``\\p{M}`` match no ASCII character; ``\\p{N}`` = ``[0-9]``.
- ``\\s`` = Unicode White_Space = ``[\\t\\n\\x0b\\x0c\\r ]`` in ASCII. Not ``re``'s ``\\s``, which
  also matches ``\\x1c``-``\\x1f``; so ``\\S`` is the complement of that set, written out.
- ``(?i:'s|...)`` is spelled out per letter (``'[sS]``): same alternatives, same order.
- ``$`` (end of text, as in Rust) is ``\\Z``; possessive quantifiers are kept (``re`` has them
  since Python 3.11). Both engines backtrack with leftmost-first alternation, so the same
  pattern picks the same pieces.
This is tested against the official pattern on every ASCII line of the corpus, on every
ASCII character and pair, and on fuzzed ASCII text, and counts against tiktoken.
"""

from __future__ import annotations

_WS = r"\t\n\x0b\x0c\r "  # Unicode White_Space within ASCII
_CONTRACTION = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"

O200K_ASCII = (
    rf"[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+{_CONTRACTION}|"
    rf"[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*{_CONTRACTION}|"
    r"[0-9]{1,3}|"
    rf" ?[^{_WS}A-Za-z0-9]+[\r\n/]*|"
    rf"[{_WS}]*[\r\n]+|"
    rf"[{_WS}]+(?![^{_WS}])|"
    rf"[{_WS}]+"
)

CL100K_ASCII = (
    r"'(?:[sdmtSDMT]|[lL][lL]|[vV][eE]|[rR][eE])|"
    r"[^\r\nA-Za-z0-9]?+[A-Za-z]++|"
    r"[0-9]{1,3}+|"
    rf" ?[^{_WS}A-Za-z0-9]++[\r\n]*+|"
    rf"[{_WS}]++\Z|"
    rf"[{_WS}]*[\r\n]|"
    rf"[{_WS}]+(?![^{_WS}])|"
    rf"[{_WS}]"
)

ASCII_PATTERNS: dict[str, str] = {"o200k_base": O200K_ASCII, "cl100k_base": CL100K_ASCII}


def official_for_python(pat_str: str) -> str:
    """An official pattern as Python's ``regex`` module must see it: Rust's ``$`` matches only
    at the very end, Python's also before a final newline, so ``$`` becomes ``\\Z``."""
    return pat_str.replace("$", r"\Z")
