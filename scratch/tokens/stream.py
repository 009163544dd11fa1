"""Counting, truncating and tailing byte streams of any size in bounded memory.

All functions take an iterable of ``bytes`` chunks (any sizes, e.g. ``iter(lambda:
f.read(1 << 20), b"")``) and an :class:`~scratch.tokens.models.EncodingSpec`.

Invariants:
- Counts are exact (the count of :func:`~scratch.tokens.tokenizer.decode_text` of the whole
  input) because the input is only ever cut at safe points (:mod:`scratch.tokens.cuts`), where
  counts add up. Claude limits are applied in base units via ``spec.base_limit``.
- Output is byte slices of the input, never re-encoded: :func:`truncate_stream` yields a
  prefix and :func:`tail_stream` a suffix (:mod:`scratch.tokens.split` splits). Cuts never
  split a UTF-8 character.
- What is produced under a limit N counts at most N when counted on its own (a character
  that needs more than N tokens alone is left out rather than broken).
- Memory: a few segments plus, for tail, the window holding the last N tokens.
- :func:`truncate_window` cuts the first N tokens of a byte range read at random (a piece of
  one long line): it reads and tokenizes a window a few times the size N tokens can take,
  never the range, so a piece of a 50 MB line with no safe cut costs what the piece costs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator

from scratch.errors import UsageError
from scratch.tokens.cuts import iter_segments
from scratch.tokens.models import EncodingSpec
from scratch.tokens.tokenizer import Tokenizer, decode_text, get_tokenizer

_COUNT_SEGMENT = 1 << 20  # toktok and tiktoken: big segments, few calls
_COUNT_SEGMENT_SP = 1 << 16  # SentencePiece is fastest on small pieces
_BATCH_BYTES = 8 << 20  # bytes counted per batch call (both cores busy, memory bounded)
_UNTIL_SEGMENT = 1 << 16  # count_stream_until: counted by the pure-Python counter
_CUT_SEGMENT = 1 << 16  # truncate/tail: cheap to re-encode the one segment that is cut
_CUT_LIMIT = 1 << 18  # ... and long lines are cut in-line early so that segment stays small
# truncate_window: the first window holds ~8 bytes a token (text averages ~4), grown 4x while
# the tokens asked for do not end inside it; a cut closer than the margin to the window's end
# is not settled (the bytes after it could still change its last token), so it grows then too
_WINDOW_BYTES_PER_TOKEN = 8
_WINDOW_MIN = 4096
_WINDOW_GROWTH = 4
_WINDOW_MARGIN = 256


def _tokenizer(spec: EncodingSpec) -> Tokenizer:
    return get_tokenizer(spec.base)


def _check_limit(n: int, what: str, minimum: int = 0) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < minimum:
        raise UsageError(f"{what} must be an integer >= {minimum}, not {n!r}",
                         code="invalid_argument", value=str(n))


def _counted(chunks: Iterable[bytes], tok: Tokenizer, target: int,
             batch_bytes: int = _BATCH_BYTES, limit: int | None = None,
             inline_target: int | None = None) -> Iterator[tuple[bytes, str, int]]:
    """Segments with their text and base count, counted in batches of ~``batch_bytes``."""
    segs: list[bytes] = []
    texts: list[str] = []
    size = 0
    for seg in iter_segments(chunks, target, limit, inline_target):
        segs.append(seg)
        texts.append(decode_text(seg))
        size += len(seg)
        if size >= batch_bytes:
            yield from zip(segs, texts, tok.count_many(texts), strict=True)
            segs, texts, size = [], [], 0
    if segs:
        yield from zip(segs, texts, tok.count_many(texts), strict=True)


def count_stream(chunks: Iterable[bytes], spec: EncodingSpec) -> int:
    """Exact token count of the whole stream, in ``spec``'s units."""
    tok = _tokenizer(spec)
    target = _COUNT_SEGMENT_SP if spec.base == "gemma3" else _COUNT_SEGMENT
    total = 0
    batch: list[str] = []
    size = 0
    for seg in iter_segments(chunks, target):
        batch.append(decode_text(seg))
        size += len(seg)
        if size >= _BATCH_BYTES:
            total += sum(tok.count_many(batch))
            batch, size = [], 0
    if batch:
        total += sum(tok.count_many(batch))
    return spec.scale(total)


def count_stream_until(chunks: Iterable[bytes], spec: EncodingSpec, enough: int) -> int | None:
    """:func:`count_stream`, or None as soon as the segments counted reach ``enough`` (in
    ``spec``'s units): a stream is found to hold at least that many after reading only as much
    of it, counted :data:`_UNTIL_SEGMENT` bytes at a time (the pure-Python counter's size: no
    tokenizer engine is built, ~10 MB of memory instead of ~80 MB). Each segment ends at a
    safe cut, so the running count is that of a prefix of the whole; a stream cut short by
    the caller may count a few tokens more at its end than within the whole."""
    tok = _tokenizer(spec)
    total = 0
    for _, _, n in _counted(chunks, tok, _UNTIL_SEGMENT, batch_bytes=_UNTIL_SEGMENT):
        total += n
        if spec.scale(total) >= enough:
            return None
    return spec.scale(total)


def ids_stream(chunks: Iterable[bytes], spec: EncodingSpec) -> Iterator[list[int]]:
    """Token ids of the stream, one list per segment; concatenated they are exactly the ids
    of the whole input (Claude: the cl100k_base ids its estimate is based on)."""
    tok = _tokenizer(spec)
    for seg in iter_segments(chunks, _CUT_SEGMENT, _CUT_LIMIT):
        yield tok.encode(decode_text(seg))


def _offsets(seg: bytes, text: str, chars: list[int]) -> list[int]:
    """Byte offsets of increasing character offsets (handles invalid UTF-8 in ``seg``)."""
    if len(text) == len(seg):
        return list(chars)
    try:
        seg.decode("utf-8")
        raw_text = text
        errors = "strict"
    except UnicodeDecodeError:
        # decode_text maps each bad byte to one character: the surrogateescape text has the
        # same length and re-encodes to the exact original bytes.
        raw_text = seg.decode("utf-8", "surrogateescape")
        errors = "surrogateescape"
    out: list[int] = []
    pos_c = pos_b = 0
    for c in chars:
        pos_b += len(raw_text[pos_c:c].encode("utf-8", errors))
        pos_c = c
        out.append(pos_b)
    return out


def _prefix_chars(tok: Tokenizer, text: str, limit: int, anchored: bool) -> int:
    """Characters of the longest token-boundary prefix of ``text`` counting <= ``limit``.

    ``anchored``: the prefix follows earlier output at a safe cut, so it must include the first
    character after the cut's indentation for counts to add up (else it is dropped).
    """
    if limit <= 0 or not text:
        return 0
    ids = tok.encode(text)
    if len(ids) <= limit:
        return len(text)
    ends = tok.char_ends(ids)
    anchor = len(text) - len(text.lstrip(" \t")) + 1 if anchored else 0
    i = limit - 1
    while i >= 0:
        c = ends[i]
        if c == -1:
            i -= 1
            continue
        if c < anchor:
            return 0
        if tok.count(text[:c]) <= limit:
            return c
        i -= 1
    return 0


def _suffix_chars(tok: Tokenizer, text: str, limit: int) -> int:
    """Start (in characters) of the longest token-boundary suffix of ``text`` counting at
    most ``limit``."""
    if limit <= 0 or not text:
        return len(text)
    ids = tok.encode(text)
    if len(ids) <= limit:
        return 0
    ends = tok.char_ends(ids)
    for i in range(len(ids) - limit, len(ids)):
        c = ends[i - 1]
        if c == -1:
            continue
        if tok.count(text[c:]) <= limit:
            return c
    return len(text)


def truncate_stream(chunks: Iterable[bytes], n: int, spec: EncodingSpec) -> Iterator[bytes]:
    """The bytes of the first ``n`` tokens (a prefix of the input counting <= ``n``).

    Stops reading as soon as the limit is reached, so a multi-GB input costs only its prefix.
    """
    _check_limit(n, "the token limit")
    tok = _tokenizer(spec)
    left = spec.base_limit(n)
    if left <= 0:
        return
    anchored = False
    # Count ahead only about as much input as the limit can take (~4 bytes a token).
    batch = min(_BATCH_BYTES, max(_CUT_SEGMENT, 8 * left))
    for seg, text, c in _counted(chunks, tok, _CUT_SEGMENT, batch, _CUT_LIMIT):
        if c <= left:
            yield seg
            left -= c
            anchored = True
            if left == 0:
                return
            continue
        chars = _prefix_chars(tok, text, left, anchored)
        if chars:
            yield seg[:_offsets(seg, text, [chars])[0]]
        return


def utf8_complete(data: bytes) -> bytes:
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


def _pretoken_prefix(tok: Tokenizer, window: bytes, limit: int) -> bytes | None:
    """The prefix of ``window`` that :meth:`BpeTokenizer.prefix_chars` cuts (pure Python, no
    tiktoken), or None where it cannot (another engine, or it cannot tell)."""
    prefix_chars = getattr(tok, "prefix_chars", None)
    if prefix_chars is None:
        return None
    text = decode_text(window)
    chars = prefix_chars(text, limit)
    if chars is None:
        return None
    return window if chars == len(text) else window[:_offsets(window, text, [chars])[0]]


def truncate_window(read: Callable[[int], bytes], size: int, n: int,
                    spec: EncodingSpec) -> bytes:
    """The bytes of the first ``n`` tokens of a byte range of ``size`` bytes, of which
    ``read(m)`` returns the first ``m``: a prefix counting at most ``n`` on its own, without
    an incomplete UTF-8 character at its end.

    Only a window is read and tokenized: ~8 bytes a token to start with, grown 4x until the
    cut falls more than a margin before the window's end (or the window is the whole range).
    o200k/cl100k cut at a pre-token boundary with the pure-Python counter (a piece is then at
    most one pre-token shorter than the longest); gemma3, or a pre-token too long for that
    counter, cut at a token boundary as :func:`truncate_stream` does.
    Every try costs its window, so the whole call costs a small multiple of the bytes ``n``
    tokens take, whatever ``size`` is; a range with no safe cut (one 50 MB line of words) is
    never scanned whole.
    """
    _check_limit(n, "the token limit")
    base = spec.base_limit(n)
    if base <= 0 or size <= 0:
        return b""
    want = min(size, _WINDOW_MIN + _WINDOW_BYTES_PER_TOKEN * base)
    tok = _tokenizer(spec)
    while True:
        data = read(want)
        whole = want >= size or len(data) < want
        window = data if whole else utf8_complete(data)
        out = _pretoken_prefix(tok, window, base)
        if out is None:
            out = b"".join(truncate_stream(iter((window,)), n, spec))
        if whole or len(out) + _WINDOW_MARGIN <= len(window):
            return utf8_complete(out)
        want = min(size, want * _WINDOW_GROWTH)


def tail_stream(chunks: Iterable[bytes], n: int, spec: EncodingSpec) -> Iterator[bytes]:
    """The bytes of the last ``n`` tokens (a suffix of the input counting <= ``n``).

    Reads the whole input; keeps only the segments that can still be part of the tail.
    """
    _check_limit(n, "the token limit")
    tok = _tokenizer(spec)
    limit = spec.base_limit(n)
    if limit <= 0:
        for _ in chunks:  # still consume the input, as a pipe writer expects
            pass
        return
    window: deque[tuple[bytes, str, int]] = deque()
    total = 0
    for item in _counted(chunks, tok, _CUT_SEGMENT, limit=_CUT_LIMIT):
        window.append(item)
        total += item[2]
        while len(window) > 1 and total - window[0][2] >= limit:
            total -= window.popleft()[2]
    if not window:
        return
    if total > limit:
        seg, text, c = window.popleft()
        keep = limit - (total - c)
        start = _suffix_chars(tok, text, keep)
        if start < len(text):
            yield seg[_offsets(seg, text, [start])[0]:]
    for seg, _text, _c in window:
        yield seg


__all__ = ["count_stream", "ids_stream", "tail_stream", "truncate_stream", "truncate_window",
           "utf8_complete"]
