"""Which tokenizer prices a model, and how large its context window is.

Pure tables and string matching: nothing here loads a tokenizer, so resolving a model is free.

Invariants:
- Model ids match case-insensitively by the **longest** table prefix, after provider wrappers are
  removed: ``ft:`` (fine-tunes), ``namespace/`` (``openai/gpt-4o``, ``models/gemini-2.5-pro``)
  and Bedrock-style ``anthropic.`` / ``us.anthropic.`` ids.
- Every model resolves: unknown ids price with ``o200k_base`` (the encoding of current OpenAI
  models) and take the caller's default context window, and :func:`unknown_model` says so.
- ``claude`` is never exact: its count is ``ceil(cl100k_base count x factor)``.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from scratch.errors import UsageError

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base", "gemma3", "claude")
BASE_ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base", "gemma3")
DEFAULT_ENCODING = "o200k_base"
DEFAULT_CLAUDE_FACTOR = 1.1

# Model prefix -> encoding. Longest prefix wins, so "gpt-4o" and "gpt-4.1" beat "gpt-4".
_ENCODING_PREFIXES: dict[str, str] = {
    "gpt-5": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base",
    "chatgpt-4o": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4": "o200k_base",
    # gpt-oss uses o200k_harmony: the same ranks plus chat special tokens, so ordinary text
    # counts are identical to o200k_base.
    "gpt-oss": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",  # Azure deployment names drop the dot
    "text-embedding-3": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
    "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base",
    # Google's own local tokenizer maps Gemini >= 2.0 to the Gemma 3 vocabulary.
    "gemini": "gemma3",
    "gemma-3": "gemma3",
    "gemma3": "gemma3",
    "claude": "claude",
}

# Model prefix -> context window in tokens (input + output, as the vendors publish it).
# Longest prefix wins; config ``budget.windows`` entries win over all of these.
_CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-5-chat": 128_000,
    "gpt-4.5": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-1106": 128_000,
    "gpt-4-0125": 128_000,
    "gpt-4-vision": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-3.5-turbo-instruct": 4_096,
    "gpt-35-turbo": 16_385,
    "gpt-3.5": 16_385,
    "gpt-oss": 131_072,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o4": 200_000,
    "claude": 200_000,
    "claude-2.0": 100_000,
    "claude-instant": 100_000,
    "gemini": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.0": 32_760,
    "gemini-pro": 32_760,
}

# Bedrock ids: anthropic.claude-..., us.anthropic.claude-... (cross-region profiles).
_BEDROCK = re.compile(r"^(?:[a-z]{2,6}\.)?anthropic\.")
# One leading namespace such as openai/, anthropic/, google/, models/.
_NAMESPACE = re.compile(r"^[a-z0-9_.-]+/")


def normalize_model(model: str) -> str:
    """The model id as the tables see it: lower case, provider wrappers removed."""
    m = model.strip().lower()
    m = m.removeprefix("ft:")
    m = _NAMESPACE.sub("", m, count=1)
    return _BEDROCK.sub("", m, count=1)


def _longest_prefix(model: str, table: dict[str, int] | dict[str, str]) -> str | None:
    best: str | None = None
    for prefix in table:
        if model.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


class EncodingSpec(NamedTuple):
    """How counts are made for one model: which base encoding, scaled by what.

    ``base`` is the encoding whose counts are computed or stored (``o200k_base``,
    ``cl100k_base`` or ``gemma3``); ``claude`` counts are ``cl100k_base`` counts scaled by
    ``factor`` and rounded up, and are labelled estimates (``exact`` is False).
    """

    name: str
    model: str | None
    base: str
    factor: float = 1.0
    exact: bool = True

    def scale(self, base_count: int) -> int:
        """A base-encoding count in this encoding's units."""
        if self.factor == 1.0:
            return base_count
        # round() first so float noise (e.g. 10 * 1.1 = 11.000000000000002) does not add a token
        return math.ceil(round(base_count * self.factor, 9))

    def base_limit(self, limit: int) -> int:
        """The largest base count whose scaled count is at most ``limit`` (for cutting text)."""
        if self.factor == 1.0 or limit <= 0:
            return max(limit, 0)
        k = int(limit / self.factor)
        while self.scale(k + 1) <= limit:
            k += 1
        while k > 0 and self.scale(k) > limit:
            k -= 1
        return k

    def to_dict(self) -> dict[str, object]:
        return {"encoding": self.name, "model": self.model, "base": self.base,
                "factor": self.factor, "exact": self.exact}


def unknown_model(model: str | None, encoding: str | None, window: int) -> str | None:
    """What to say when ``model`` is in no table, so its answers are priced with the default
    tokenizer (and ``window``, the default window) without anyone having chosen them; None for
    a known model, no model, or a tokenizer given explicitly (``encoding``)."""
    if not model or encoding:
        return None
    if _longest_prefix(normalize_model(model), _ENCODING_PREFIXES) is not None:
        return None
    return (f"unknown model {model!r}: answers are priced with {DEFAULT_ENCODING} (the "
            f"default tokenizer) and a {window:,}-token context window; --encoding picks the "
            f"tokenizer ({', '.join(ENCODINGS)}), config budget.windows the window")


def encoding_for_model(model: str | None) -> str:
    """The encoding name (one of :data:`ENCODINGS`) for a model id; unknown -> o200k_base."""
    if not model:
        return DEFAULT_ENCODING
    m = normalize_model(model)
    prefix = _longest_prefix(m, _ENCODING_PREFIXES)
    return _ENCODING_PREFIXES[prefix] if prefix else DEFAULT_ENCODING


def resolve_encoding(model: str | None = None, encoding: str | None = None,
                     claude_factor: float = DEFAULT_CLAUDE_FACTOR) -> EncodingSpec:
    """The :class:`EncodingSpec` for ``--model``/``--encoding`` (the encoding wins).

    Raises :class:`~scratch.errors.UsageError` ``unknown_encoding`` for a name outside
    :data:`ENCODINGS`, and ``invalid_argument`` for a Claude factor that is not positive.
    """
    if encoding:
        name = encoding.strip().lower()
        if name not in ENCODINGS:
            raise UsageError(f"unknown encoding {encoding!r}; choose one of {', '.join(ENCODINGS)}",
                             code="unknown_encoding", encoding=encoding, choices=list(ENCODINGS))
    else:
        name = encoding_for_model(model)
    model = model or None
    if name == "claude":
        if not (isinstance(claude_factor, int | float) and math.isfinite(claude_factor)
                and claude_factor > 0):
            raise UsageError(
                f"tokens.claude_factor must be a positive number, not {claude_factor!r}",
                code="invalid_argument", claude_factor=str(claude_factor))
        return EncodingSpec("claude", model, "cl100k_base", float(claude_factor), exact=False)
    return EncodingSpec(name, model, name)


def context_window(model: str | None, overrides: dict[str, int] | None = None,
                   default: int = 128_000) -> int:
    """The context window of ``model`` in tokens.

    ``overrides`` (config ``budget.windows``: model prefix -> tokens) are matched first, by the
    longest prefix, case-insensitively; then the built-in table; then ``default``.
    """
    if not model:
        return default
    m = normalize_model(model)
    if overrides:
        table = {normalize_model(k): int(v) for k, v in overrides.items()}
        prefix = _longest_prefix(m, table)
        if prefix is not None:
            return table[prefix]
    prefix = _longest_prefix(m, _CONTEXT_WINDOWS)
    return _CONTEXT_WINDOWS[prefix] if prefix else default
