"""Real token counts, offline, per model; context windows and the context budget.

Importing this package is cheap: no tokenizer library is imported until something is counted.

Public API (see each module for the invariants):
- :mod:`~scratch.tokens.models`: :data:`ENCODINGS`, :class:`EncodingSpec`,
  :func:`resolve_encoding` (model/encoding -> spec), :func:`context_window`.
- :mod:`~scratch.tokens.tokenizer`: :func:`get_tokenizer` (per-process, lazy, verified),
  :func:`count_text`, :func:`count_lines`, :func:`decode_text`, :func:`set_cache_dir`.
- :mod:`~scratch.tokens.stream` / :mod:`~scratch.tokens.split`: :func:`count_stream`,
  :func:`ids_stream`, :func:`truncate_stream`, :func:`tail_stream`, :func:`split_stream` over
  iterables of bytes, in bounded memory.
- :mod:`~scratch.tokens.budget`: :class:`Budget`, the per-session context budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.lazy import lazy_exports

# Each name is imported from its module on first use (PEP 562), so a command that only needs
# the model table (every priced answer) does not pay for the budget, stream and tokenizer
# modules.
_HOME = {
    "Budget": "budget",
    **dict.fromkeys(("BASE_ENCODINGS", "DEFAULT_CLAUDE_FACTOR", "ENCODINGS", "EncodingSpec",
                     "context_window", "encoding_for_model", "normalize_model",
                     "resolve_encoding"), "models"),
    "split_stream": "split",
    **dict.fromkeys(("count_stream", "count_stream_until", "ids_stream", "tail_stream",
                     "truncate_stream"), "stream"),
    **dict.fromkeys(("Tokenizer", "count_lines", "count_text", "decode_text", "get_tokenizer",
                     "set_cache_dir"), "tokenizer"),
}

if TYPE_CHECKING:
    from scratch.tokens.budget import Budget
    from scratch.tokens.models import (
        BASE_ENCODINGS,
        DEFAULT_CLAUDE_FACTOR,
        ENCODINGS,
        EncodingSpec,
        context_window,
        encoding_for_model,
        normalize_model,
        resolve_encoding,
    )
    from scratch.tokens.split import split_stream
    from scratch.tokens.stream import (
        count_stream,
        count_stream_until,
        ids_stream,
        tail_stream,
        truncate_stream,
    )
    from scratch.tokens.tokenizer import (
        Tokenizer,
        count_lines,
        count_text,
        decode_text,
        get_tokenizer,
        set_cache_dir,
    )


__getattr__ = lazy_exports(__name__, _HOME, globals())


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "BASE_ENCODINGS",
    "DEFAULT_CLAUDE_FACTOR",
    "ENCODINGS",
    "Budget",
    "EncodingSpec",
    "Tokenizer",
    "context_window",
    "count_lines",
    "count_stream",
    "count_stream_until",
    "count_text",
    "decode_text",
    "encoding_for_model",
    "get_tokenizer",
    "ids_stream",
    "normalize_model",
    "resolve_encoding",
    "set_cache_dir",
    "split_stream",
    "tail_stream",
    "truncate_stream",
]
