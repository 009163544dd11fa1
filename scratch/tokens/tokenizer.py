"""Tokenizers for the three base encodings, loaded lazily, offline, verified.

Invariants:
- Importing this module imports no tokenizer library; :func:`get_tokenizer` loads on first use
  and keeps one instance per encoding per process.
- Counts are exact and equal to the reference: tiktoken ``encode_ordinary`` length for
  ``o200k_base``/``cl100k_base`` (special-token text counts as ordinary text), SentencePiece
  ``encode`` length for ``gemma3``. Which engine counts is only a speed choice.
- Engines for o200k_base/cl100k_base (measured on this project's shared 2-core machine):
  - pure Python (:mod:`scratch.tokens.pybpe`): ~1 ms to start (the memory-mapped rank table
    of :mod:`scratch.tokens.ranktable` + the stdlib ``re`` twin of the pattern for ASCII
    text; ``regex`` adds ~10 ms for other text), then ~1 ms per 2 KB of new text, ~5 MB/s
    once its pieces repeat. The table is built once per cache from the verified ranks
    (~0.35 s o200k). Used for counts up to :data:`PY_MAX_CHARS` while tiktoken is not built:
    the common small answer. Without a cache it uses the rank dict (~0.05 s to load).
  - tiktoken ``Encoding`` built from the same ranks: + ~0.15-0.2 s to build; 11-30 MB/s per
    thread. Used for ids, decoding, cutting, and mid-sized counts.
  - toktok (exact, Rust; once per version it must count probe texts as the verified ranks do,
    :func:`scratch.tokens.loader.toktok_verified`; used through its public functions only):
    first use ~0.5 s (o200k) / ~0.2 s (cl100k), then 150-230 MB/s per thread, both cores.
    Used for counts once loaded or when a batch is large enough to repay its load.
  - SentencePiece for gemma3 (~0.05 s load, ~16 MB/s per thread on 64 KB pieces; long
    strings are cut at safe points first because it is 3x slower on one huge string).
- Bytes are turned into text by :func:`decode_text`: UTF-8, each invalid byte becoming U+FFFD.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from enum import Enum
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Final

from scratch.errors import UsageError
from scratch.tokens import loader
from scratch.tokens.models import BASE_ENCODINGS, EncodingSpec

if TYPE_CHECKING:
    import sentencepiece
    import tiktoken

    from scratch.tokens.pybpe import PyBpe, RankLookup

# Characters counted (in one call or in total) from which loading toktok pays for itself (its
# extra load time divided by the speed difference, rounded down).
FAST_MIN_CHARS: dict[str, int] = {"o200k_base": 4_000_000, "cl100k_base": 1_000_000}
# Below this many characters toktok counts on this thread: its parallel batch call costs
# ~70 us to set up, which a warm server would pay on every small answer (~1 us for 100
# characters, ~10 us for 2,500 counted directly); above, both cores pay for it.
FAST_BATCH_CHARS = 1 << 18
# Below this many characters (and while tiktoken is not built) the pure-Python counter is
# about as quick as building tiktoken's Encoding (~0.2 s) and counting with it, and holds
# much less: a 670 KB page of a PodList took 0.08 s and 15 MB against 0.3 s and 73 MB (the
# 64 MB bound of a paged read, P7 of tests/bench/run_bench.py); new text at 2 MB/s, 0.5 s.
PY_MAX_CHARS = 1 << 20
# SentencePiece is fastest on pieces of about this size.
_SP_PIECE = 1 << 16



class _Unset(Enum):
    """No cache directory chosen yet (None chooses none)."""

    UNSET = 0


_UNSET: Final = _Unset.UNSET
_cache_dir: Path | None | _Unset = _UNSET
_lock = threading.Lock()
_tokenizers: dict[str, Tokenizer] = {}


def set_cache_dir(path: Path | None) -> None:
    """Where derived fast-loading data goes (None: no cache).

    Default: ``$XDG_CACHE_HOME/scratch/tokens``.

    Affects tokenizers loaded afterwards.
    """
    global _cache_dir
    _cache_dir = path


def cache_dir() -> Path | None:
    if _cache_dir is _UNSET:
        return loader.default_cache_dir()
    return _cache_dir


def decode_text(data: bytes) -> str:
    """The text that counts for ``data``: UTF-8, each invalid byte replaced by U+FFFD.

    One replacement character per bad byte (not per bad sequence) keeps the text cut-stable:
    decoding pieces cut at ASCII bytes gives the same text as decoding the whole.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _unescape(data.decode("utf-8", "surrogateescape"))


_SURROGATES = dict.fromkeys(range(0xDC80, 0xDD00), "\ufffd")


def _unescape(text: str) -> str:
    return text.translate(_SURROGATES)


class Tokenizer:
    """One base encoding. Subclasses load their engine lazily on first use."""

    name: str

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        if not text:
            return 0
        return self.count_many([text])[0]

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Tokens in each text, in order, in one batch (parallel where the engine allows)."""
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``; a character split by the ids' ends shows as U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", "replace")

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        raise NotImplementedError

    def char_ends(self, ids: Sequence[int]) -> list[int]:
        """For each token, the character offset where it ends in the decoded text, or -1 when
        that end falls inside a character (so the text cannot be cut there)."""
        nchars, midstart = self.char_tables()
        ends = list(accumulate([nchars[i] for i in ids]))
        for k in [k for k, i in enumerate(ids) if midstart[i]]:
            if k:
                ends[k - 1] = -1  # token k continues the character token k-1 started
        return ends

    def char_tables(self) -> tuple[bytes, bytes]:
        """Per token id: how many characters it starts, and 1 if it begins inside one."""
        raise NotImplementedError


_CONTINUATION = bytes(range(0x80, 0xC0))


def _tables_from_pieces(pieces: Iterable[tuple[int, bytes]], size: int) -> tuple[bytes, bytes]:
    nchars = bytearray(size)
    midstart = bytearray(size)
    for token, raw in pieces:
        nchars[token] = len(raw.translate(None, _CONTINUATION))
        midstart[token] = 1 if raw and 0x80 <= raw[0] < 0xC0 else 0
    return bytes(nchars), bytes(midstart)


class FastCounter:
    """toktok's exact count for one encoding, through its public functions only.

    ``truncate`` with a limit no text reaches returns the whole text's count without cutting
    (~1 us for 100 characters: the per-text path); ``batch_count`` counts on every core
    (~50 us to start: for big batches)."""

    __slots__ = ("_batch", "_truncate", "name")

    def __init__(self, name: str) -> None:
        import toktok

        self.name = name
        self._truncate = toktok.truncate
        self._batch = toktok.batch_count
        # toktok loads a vocabulary on its first count: pay it here, where the caller decided
        # to load the fast counter, not inside the first count (a verified marker skips the
        # probe count that would otherwise have loaded it)
        self._batch([""], name, 1)

    def count(self, text: str) -> int:
        return int(self._truncate(text, _NO_LIMIT, self.name)[1])

    def count_batch(self, texts: Sequence[str], threads: int = 0) -> list[int]:
        return list(self._batch(list(texts), self.name, threads))


_NO_LIMIT = 1 << 62  # tokens: more than any text has, so truncate never cuts


class BpeTokenizer(Tokenizer):
    """o200k_base / cl100k_base: pure Python for short counts, toktok for big ones, tiktoken
    for ids and everything in between (see the module docstring for the numbers)."""

    def __init__(self, name: str, *, source: Path | None = None,
                 cache: Path | None = None) -> None:
        self.name = name
        self._source = source
        self._cache = cache
        self._ranks: dict[bytes, int] | None = None
        self._py: PyBpe | None = None
        self._encoding: tiktoken.Encoding | None = None
        self._fast: FastCounter | None = None
        self._fast_state: bool | None = None  # None: not tried; False: unusable
        self._char_tables: tuple[bytes, bytes] | None = None
        self._seen_chars = 0  # characters counted so far in this process
        self._lock = threading.RLock()

    def ranks(self) -> dict[bytes, int]:
        """The verified mergeable ranks (loaded once)."""
        if self._ranks is None:
            with self._lock:
                if self._ranks is None:
                    self._ranks = loader.load_ranks(self.name, source=self._source,
                                                    cache_dir=self._cache)
        return self._ranks

    @property
    def encoding(self) -> tiktoken.Encoding:
        """tiktoken's ``Encoding`` built from the verified ranks (never ``get_encoding``)."""
        if self._encoding is None:
            with self._lock:
                if self._encoding is None:
                    import tiktoken

                    info = loader.BPE_FILES[self.name]
                    self._encoding = tiktoken.Encoding(
                        self.name, pat_str=info.pat_str, mergeable_ranks=self.ranks(),
                        special_tokens=info.special_tokens)
        return self._encoding

    def fast_counter(self) -> FastCounter | None:
        """toktok's counter for this encoding, or None when unavailable or unverified."""
        if self._fast_state is None:
            with self._lock:
                if self._fast_state is None:
                    ok = self._source is None and loader.toktok_verified(
                        self.name, self._cache, self.reference_counts)
                    if ok:
                        self._fast = FastCounter(self.name)
                    self._fast_state = ok
        return self._fast

    def reference_counts(self, texts: list[str]) -> list[int]:
        """Counts from the verified ranks (pure Python; tiktoken for what it refuses)."""
        counts = self._count_python(texts)
        if counts is None:
            enc = self.encoding
            counts = [len(enc.encode_ordinary(t)) for t in texts]
        return counts

    def _python(self) -> PyBpe:
        if self._py is None:
            with self._lock:
                if self._py is None:
                    from scratch.tokens.pretok import ASCII_PATTERNS
                    from scratch.tokens.pybpe import PyBpe

                    self._py = PyBpe(loader.BPE_FILES[self.name].pat_str, self._rank_lookup(),
                                     ASCII_PATTERNS[self.name])
        return self._py

    def _rank_lookup(self) -> RankLookup:
        """Ranks for the pure-Python counter: the dict when it is loaded already, else the
        cached memory-mapped table (built once, from the verified ranks, when missing)."""
        if self._ranks is None and self._source is None and self._cache is not None:
            table = loader.open_rank_table(self.name, self._cache)
            if table is not None:
                return table
            loader.write_rank_table(self.name, self._cache, self.ranks())
        return self.ranks()

    def _count_python(self, texts: list[str]) -> list[int] | None:
        """Counts by the pure-Python counter, or None for a piece it refuses (too long)."""
        from scratch.tokens.pybpe import PieceTooLong
        from scratch.tokens.ranktable import TableDamaged

        for attempt in (1, 2):
            try:
                return self._python().count_many(texts)
            except PieceTooLong:
                return None
            except TableDamaged:
                if attempt == 2:
                    raise
                # Damaged cache: rebuild it for the next process; this one counts with the
                # verified rank dict (loaded by the rebuild).
                with self._lock:
                    self._py = None
                    loader.write_rank_table(self.name, self._cache, self.ranks())
        return None  # pragma: no cover - the loop always returns or raises

    def count_many(self, texts: Sequence[str]) -> list[int]:
        texts = list(texts)
        if not texts:
            return []
        try:
            return self._count_many(texts)
        except UnicodeEncodeError:  # lone surrogates: count them as tiktoken does (U+FFFD)
            return self._count_many([_fix_surrogates(t) for t in texts])

    def _count_many(self, texts: list[str]) -> list[int]:
        total = sum(map(len, texts))
        # Many mid-sized calls (an indexer's batches) add up: load toktok once their total
        # would have repaid it.
        self._seen_chars += total
        if self._fast_state or (self._fast_state is None
                                and self._seen_chars >= FAST_MIN_CHARS[self.name]
                                and self.fast_counter() is not None):
            fast = self._fast
            assert fast is not None  # _fast_state is True only once it is set
            if total < FAST_BATCH_CHARS:  # one thread: the batch call costs ~50 us to start
                count = fast.count
                return [count(t) for t in texts]
            return fast.count_batch(texts)
        if self._encoding is None and total <= PY_MAX_CHARS:
            counts = self._count_python(texts)
            if counts is not None:
                return counts
        enc = self.encoding
        if len(texts) > 1 and total > 1 << 20:
            return [len(ids) for ids in enc.encode_ordinary_batch(texts, num_threads=2)]
        return [len(enc.encode_ordinary(t)) for t in texts]

    def prefix_chars(self, text: str, limit: int) -> int | None:
        """Characters of a prefix of ``text`` that counts at most ``limit`` on its own and ends
        at a pre-token boundary: the longest such prefix but at most one pre-token short of
        the longest token-boundary one. Counted by the pure-Python counter, so cutting a
        piece of a long line costs no tiktoken build (~0.2 s) and no character tables; None
        when that counter cannot tell (a pre-token too long for it, lone surrogates: then cut
        with token ids instead). A first pre-token alone over ``limit`` is cut inside, at a
        token end of its own merges."""
        from scratch.tokens.pybpe import PieceTooLong
        from scratch.tokens.ranktable import TableDamaged

        if limit <= 0 or not text:
            return 0
        try:
            py = self._python()
            pieces = py.pieces(text)
            counts = py.count_pieces(pieces, limit + 1)
            ends = n = 0
            cut: list[int] = []  # pre-token ends whose prefix counts at most limit, summed
            for size, c in counts:
                n += c
                ends += size
                if n > limit:
                    break
                cut.append(ends)
            if not cut and pieces:  # the first pre-token alone is over limit: cut inside it
                raw = pieces[0].encode("utf-8")
                for end in py.token_ends(raw)[:limit]:
                    try:
                        cut.append(len(raw[:end].decode("utf-8")))
                    except UnicodeDecodeError:
                        continue  # a token ending inside a character
            for _ in range(8):  # the prefix counted on its own (its end may split anew)
                if not cut:
                    break
                pos = cut.pop()
                if py.count(text[:pos]) <= limit:
                    return pos
            return None
        except (PieceTooLong, TableDamaged, UnicodeEncodeError):
            return None

    def encode(self, text: str) -> list[int]:
        return list(self.encoding.encode_ordinary(text))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return bytes(self.encoding.decode_bytes(list(ids)))

    def char_tables(self) -> tuple[bytes, bytes]:
        if self._char_tables is None:
            with self._lock:
                if self._char_tables is None:
                    ranks = self.ranks()
                    info = loader.BPE_FILES[self.name]
                    size = max(info.special_tokens.values()) + 1
                    self._char_tables = _tables_from_pieces(
                        ((rank, raw) for raw, rank in ranks.items()), size)
        return self._char_tables


def _fix_surrogates(text: str) -> str:
    """What tiktoken counts for text with lone surrogates: pairs joined, the rest U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _valid_unicode(text: str) -> str:
    """``text`` with lone surrogates fixed (SentencePiece rejects them outright)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _fix_surrogates(text)
    return text


class GemmaTokenizer(Tokenizer):
    """gemma3: the Gemma 3 SentencePiece model shipped in ``scratch/tokens/data``."""

    name = "gemma3"

    def __init__(self, *, source: Path | None = None, cache: Path | None = None) -> None:
        self._source = source
        self._cache = cache
        self._sp: sentencepiece.SentencePieceProcessor | None = None
        self._char_tables: tuple[bytes, bytes] | None = None
        self._lock = threading.RLock()

    @property
    def processor(self) -> sentencepiece.SentencePieceProcessor:
        if self._sp is None:
            with self._lock:
                if self._sp is None:
                    import sentencepiece

                    model = loader.load_gemma3_model(source=self._source, cache_dir=self._cache)
                    self._sp = sentencepiece.SentencePieceProcessor(model_proto=model)
        return self._sp

    def count_many(self, texts: Sequence[str]) -> list[int]:
        texts = list(texts)
        if not texts:
            return []
        from scratch.tokens.cuts import split_text

        pieces: list[str] = []
        owner: list[int] = []
        for i, text in enumerate(texts):
            parts = split_text(text, _SP_PIECE) if len(text) > 4 * _SP_PIECE else [text]
            pieces.extend(parts)
            owner.extend([i] * len(parts))
        sp = self.processor
        pieces = [_valid_unicode(p) for p in pieces]
        if len(pieces) > 1 and sum(map(len, pieces)) > 1 << 18:
            counts = [len(ids) for ids in sp.encode(pieces, num_threads=2)]
        else:
            counts = [len(sp.encode(p)) for p in pieces]
        out = [0] * len(texts)
        for i, c in zip(owner, counts, strict=True):
            out[i] += c
        return out

    def encode(self, text: str) -> list[int]:
        return list(self.processor.encode(_valid_unicode(text)))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.processor.decode(list(ids)))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return b"".join(self._piece_bytes(i) for i in ids)

    def _piece_bytes(self, token: int) -> bytes:
        sp = self.processor
        piece: str = sp.id_to_piece(token)
        if sp.is_byte(token):  # byte fallback pieces are spelled <0xAB>
            return bytes([int(piece[3:5], 16)])
        if sp.is_control(token):
            return b""
        return piece.replace("\u2581", " ").encode("utf-8")

    def char_tables(self) -> tuple[bytes, bytes]:
        # In characters, not bytes: a literal U+2581 in the input comes back as the piece "▁"
        # like a space does, and both are one character.
        if self._char_tables is None:
            with self._lock:
                if self._char_tables is None:
                    sp = self.processor
                    size = sp.get_piece_size()
                    pieces = sp.id_to_piece(list(range(size)))
                    nchars = bytearray(len(p) for p in pieces)
                    midstart = bytearray(size)
                    for token, piece in enumerate(pieces):
                        # byte pieces are spelled <0xAB>; control and unknown pieces <...> too
                        if not piece.startswith("<"):
                            continue
                        if sp.is_byte(token):
                            b = int(piece[3:5], 16)
                            midstart[token] = 1 if 0x80 <= b < 0xC0 else 0
                            nchars[token] = 0 if midstart[token] else 1
                        elif sp.is_unknown(token):
                            nchars[token] = 1  # one character (byte fallback avoids it)
                        elif sp.is_control(token):
                            nchars[token] = 0
                    self._char_tables = (bytes(nchars), bytes(midstart))
        return self._char_tables


def build_tokenizer(base: str, *, source: Path | None = None,
                    cache: Path | None | _Unset = _UNSET) -> Tokenizer:
    """A new, uncached tokenizer; ``source`` points it at other data files (tests)."""
    if base not in BASE_ENCODINGS:
        raise UsageError(
            f"unknown base encoding {base!r}; choose one of {', '.join(BASE_ENCODINGS)}",
            code="unknown_encoding", encoding=base, choices=list(BASE_ENCODINGS))
    where = cache_dir() if cache is _UNSET else cache
    if base == "gemma3":
        return GemmaTokenizer(source=source, cache=where)
    return BpeTokenizer(base, source=source, cache=where)


def get_tokenizer(base: str) -> Tokenizer:
    """The process-wide tokenizer of a base encoding (``spec.base``); loads lazily on first use."""
    tok = _tokenizers.get(base)
    if tok is None:
        with _lock:
            tok = _tokenizers.get(base)
            if tok is None:
                tok = build_tokenizer(base)
                _tokenizers[base] = tok
    return tok


def count_text(text: str, spec: EncodingSpec) -> int:
    """Tokens in ``text`` in ``spec``'s units (Claude: the scaled estimate)."""
    if not text:
        return 0
    return spec.scale(get_tokenizer(spec.base).count(text))


def count_lines(lines: Sequence[str], base: str) -> list[int]:
    """Base-encoding counts of each line separately, in one batch call (for index builders).

    Counts are in the base encoding (``spec.base``); scale sums with ``spec.scale`` rather
    than each line, since rounding up per line would inflate the Claude estimate.
    """
    return get_tokenizer(base).count_many(lines)
