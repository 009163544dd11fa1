"""Exact re-indentation of JSON text: strict validation plus the canonical layout, tokens kept.

:func:`reindent` is how ingest stores JSON. It accepts exactly RFC 8259 JSON in UTF-8 (no
BOM, no NaN/Infinity, no comments, no trailing commas, no leading zeros, no raw control
characters or invalid UTF-8 in strings; any nesting depth) and returns the document in the
canonical layout of :mod:`scratch.formats.jsontext` with only the whitespace between tokens
changed:

- every token is copied byte for byte: numbers as written (``1e400``, ``-0``,
  ``0.10000000000000000555``), string escapes as written (``\\u00e9``, ``\\/``), duplicate keys
  in their order;
- the line structure is the one orjson's ``OPT_INDENT_2`` gives the parsed value, as long as no
  object repeats a key (a repeated key is one more member in the text than in the value): the
  structural index checks that line count (see :func:`scratch.index.analyze.analyze_json`).

It also returns the number of lines of the body and flags (:data:`BIG_INT`: an integer token of
19 or more digits, which orjson would turn into a float; :data:`TOO_BIG`: the body would pass
the ``limit`` given, so it was not written: the indentation of deeply nested text grows with
the square of the depth, a 200 KB document 100,000 deep would take 10 GB; :data:`KEY_REPEAT`:
some object may repeat a key, so the lines of its parsed value may be fewer than the body's;
:data:`SAME`: the input is the body and one final newline, byte for byte, so storing the input
is storing the body).
Invalid input raises :class:`~scratch.jsonvalues.JsonError` with the 1-based line and column
and the byte offset of the first problem. :func:`reindent_separated` and
:func:`reindent_file_separated` also return where the C pass wrote the item separators at
depths 1 and 2 (:class:`Separators`), which ingest would otherwise find by reading the body.

Two implementations give identical bytes and identical errors (a test holds them to it on the
JSONTestSuite files and on generated documents): the C extension ``scratch._reindent``,
built by ``pip install`` when a compiler is present (it runs without the GIL, ~1 GB/s), and
:func:`reindent_py` here, used when the extension is missing: a token-by-token loop about 30
times slower, except that a document of :data:`SHORTCUT_BYTES` or more is first parsed and
written back by orjson, kept when it shows the same tokens (:func:`_by_orjson`; kubectl's
output is), some 15 times faster than the loop but holding the parsed value.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Callable
from typing import NamedTuple

from scratch.errors import JsonError

BIG_INT = 1
TOO_BIG = 2  # the body would pass the limit given: not written (the input is still checked)
# some object has the same key twice (compared once their escapes are read): only then may a
# parsed value's lines differ from the body's
KEY_REPEAT = 4
SAME = 8  # the input is the body and one final "\n", byte for byte: already in the layout

_Impl = Callable[[bytes, int, int], tuple[bytes, int, int]]


class Separators(NamedTuple):
    """Where the C pass wrote the item separators of a body at depths 1 and 2: the offsets of
    their ``","`` (a line's last byte, the next line indented by exactly ``2 * depth`` spaces),
    in order. What :func:`scratch.index.textitems.separators` finds by reading the body again."""

    depth1: array[int]
    depth2: array[int]


# the body, its lines, its flags and its separators (None: not found by the pass)
Separated = tuple[bytes, int, int, Separators | None]
DEEP = "nested too deeply"  # the message of an opener past ``max_depth`` (both implementations)

try:
    # not found when unbuilt, found (untyped) when built: either way no error
    from scratch._reindent import reindent as _c_reindent  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # no compiler at install time: the pure-Python version below
    _c_reindent = None
try:
    from scratch._reindent import reindent_file as _c_reindent_file  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # unbuilt, or built from an older source
    _c_reindent_file = None

HAVE_C = _c_reindent is not None

_WS = re.compile(rb"[ \t\n\r]*")
# a string with nothing but valid escapes and no raw control characters (UTF-8 checked apart)
# possessive: a string cut short (a sniffed prefix ends inside one) fails in linear time; as
# (?:[^"...]+|...)*" the engine tried every way to split the run before failing: minutes
_STRING = re.compile(rb'"(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+"')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_INT_DIGITS = re.compile(rb"-?[0-9]+")
_HEX = frozenset(b"0123456789abcdefABCDEF")


class _Fail(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message, pos)
        self.message = message
        self.pos = pos


def _string_error(s: bytes, start: int) -> _Fail:
    """Where and why the string at ``start`` is not valid (the regular expression stopped)."""
    n = len(s)
    p = start + 1
    while True:
        if p >= n:
            return _Fail("Unterminated string", start)
        c = s[p]
        if c == 0x22:
            raise AssertionError("a valid string was refused")  # pragma: no cover
        if c == 0x5C:
            if p + 1 >= n:
                return _Fail("Unterminated string", start)
            e = s[p + 1]
            if e in b'"\\/bfnrt':
                p += 2
            elif e == 0x75:
                digits = s[p + 2:p + 6]
                if len(digits) == 4 and all(d in _HEX for d in digits):
                    p += 6
                    continue
                if len(digits) < 4 and all(d in _HEX for d in digits):
                    return _Fail("Unterminated string", start)
                return _Fail("Invalid \\uXXXX escape", p)
            else:
                return _Fail("Invalid \\escape", p)
            continue
        if c < 0x20:
            return _Fail("Invalid control character in string", p)
        if c >= 0x80:  # errors are reported in order: a bad byte before a bad escape counts
            k = _utf8_len(s, p)
            if not k:
                return _Fail("Invalid UTF-8 in string", p)
            p += k
            continue
        p += 1


def _utf8_len(s: bytes, p: int) -> int:
    """Length of the valid UTF-8 sequence at ``s[p]`` (a byte >= 0x80), 0 if invalid."""
    for k in (2, 3, 4):
        try:
            s[p:p + k].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return k
    return 0


def _scan_string(s: bytes, pos: int) -> int:
    """End of the valid string token at ``pos``, or :class:`_Fail`."""
    m = _STRING.match(s, pos)
    if m is None:
        raise _string_error(s, pos)
    end = m.end()
    token = s[pos:end]
    if not token.isascii():
        try:
            token.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Fail("Invalid UTF-8 in string", pos + exc.start) from None
    return end


def reindent_py(data: bytes, limit: int = -1, max_depth: int = 0) -> tuple[bytes, int, int]:
    """The pure-Python implementation: ``(body, lines, flags)``; raises ``ValueError(message,
    offset)`` like the C one (:func:`reindent` turns that into :class:`JsonError`). From
    :data:`SHORTCUT_BYTES` to :data:`SHORTCUT_MAX_BYTES`, :func:`_by_orjson` first."""
    data = bytes(data)
    found = _by_orjson(data, limit, max_depth) \
        if SHORTCUT_BYTES <= len(data) <= SHORTCUT_MAX_BYTES else None
    if found is not None:
        return found
    try:
        return _run(data, limit, max_depth)
    except _Fail as exc:
        raise ValueError(exc.message, exc.pos) from None


SHORTCUT_BYTES = 64 << 10  # smaller text is re-indented token by token (fast enough)
# orjson holds the whole value, some four times the text: 188 MB of PodList peaked at 1.0 GB
# (the token loop: 0.56 GB, in 2.7 times as long); past this the token loop is used
SHORTCUT_MAX_BYTES = 256 << 20
_BLANKS = b" \t\n\r"
# 19 digits after a key or at the start of a line of the canonical layout: where an integer
# token of that size would be (also a string's "\": 123..." here and there: asked anyway)
_BIG_NUMBER = re.compile(rb'(?:": |\n *)-?[0-9]{19}')
_DIGITS_AS_0 = bytes.maketrans(b"123456789", b"000000000")


def _by_orjson(s: bytes, limit: int, max_depth: int) -> tuple[bytes, int, int] | None:
    """:func:`_run`'s result for ``s``, at orjson's speed (the token-by-token loop takes some
    25 s for 188 MB), or None when this way cannot show that it is the same.

    orjson parses the text and writes the value back with ``OPT_INDENT_2``: the canonical
    layout of the value's tokens. Those are the text's own tokens, spelled as the text spells
    them, exactly when the two agree once the blanks are taken out of both
    (``bytes.translate``: no Python step per token). Outside strings blanks only separate
    tokens, and no two tokens of valid JSON meet without a ``,`` or ``:`` between them, so
    equal stripped texts have the same tokens in the same order: a key given twice (the value
    keeps one) or a number written otherwise (``1e5``, ``1.50``) makes them differ. Inside a
    string the only blank is a raw space, which orjson writes as it is; any other spelling
    orjson chooses (``\\u00e9`` and ``\\/`` become the characters) changes a non-blank byte.
    Left to :func:`_run`, which also places errors: invalid JSON, a scalar, a body past
    ``limit``, nesting that may reach ``max_depth``, and 19 digits where an integer token
    would be (the :data:`BIG_INT` flag).
    """
    import gc

    import orjson

    collecting = gc.isenabled()
    gc.disable()  # millions of new containers: else the collector walks them again and again
    try:
        try:
            value = orjson.loads(s)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(value, (dict, list)):
            return None
        body = orjson.dumps(value, option=orjson.OPT_INDENT_2)
        del value
    finally:
        if collecting:
            gc.enable()
    if 0 <= limit < len(body):
        return None
    # a line indented 2 * max_depth is inside level max_depth: its bracket, if any, opens one
    # level more (decided, and placed, by the exact path)
    if max_depth > 0 and body.find(b"\n" + b" " * (2 * max_depth)) >= 0:
        return None
    if s.translate(None, _BLANKS) != body.translate(None, _BLANKS):
        return None
    # 19 digits anywhere first (two passes in C; the pattern alone took 1.3 s on 188 MB)
    if body.translate(_DIGITS_AS_0).find(b"0" * 19) >= 0 and _BIG_NUMBER.search(body):
        return None
    return _same(s, body, body.count(b"\n") + 1, 0)


def _same(data: bytes, body: bytes, lines: int, flags: int) -> tuple[bytes, int, int]:
    """The result with :data:`SAME` set when ``data`` is ``body`` and a final newline."""
    if not flags & TOO_BIG and len(data) == len(body) + 1 and data.endswith(b"\n") \
            and data.startswith(body):
        flags |= SAME
    return body, lines, flags


class _Body:
    """The output, which stops growing (but stays callable) past ``limit`` bytes. One
    growing buffer: a list of the pieces took an object per token (ten times the text)."""

    __slots__ = ("buf", "limit", "over")

    def __init__(self, limit: int) -> None:
        self.buf = bytearray()
        self.limit = limit
        self.over = False

    def put(self, piece: bytes) -> None:
        if self.over:
            return
        self.buf += piece
        if 0 <= self.limit < len(self.buf):
            self.over = True
            self.buf = bytearray()


def _run(s: bytes, limit: int = -1, max_depth: int = 0) -> tuple[bytes, int, int]:
    n = len(s)
    body = _Body(limit)
    put = body.put
    indents = [b"\n"]
    stack: list[int] = []  # 0x7B "{" or 0x5B "["
    keys: list[set[bytes]] = []  # the keys of each open object (KEY_REPEAT)
    lines = 1
    flags = 0
    ws = _WS.match
    number = _NUMBER.match
    pos = ws(s, 0).end()  # type: ignore[union-attr]
    state = 0  # 0 value, 1 key, 2 after a value
    while True:
        if state == 0:
            if pos >= n:
                raise _Fail("Expecting value", pos)
            c = s[pos]
            if c == 0x7B or c == 0x5B:
                if max_depth > 0 and len(stack) >= max_depth:
                    raise _Fail(DEEP, pos)
                close = 0x7D if c == 0x7B else 0x5D
                pos = ws(s, pos + 1).end()  # type: ignore[union-attr]
                if pos < n and s[pos] == close:
                    put(b"{}" if c == 0x7B else b"[]")
                    pos += 1
                    state = 2
                    continue
                stack.append(c)
                if c == 0x7B:
                    keys.append(set())
                put(b"{" if c == 0x7B else b"[")
                put(_indent(indents, len(stack)))
                lines += 1
                state = 1 if c == 0x7B else 0
                continue
            if c == 0x22:
                end = _scan_string(s, pos)
            elif c == 0x2D or 0x30 <= c <= 0x39:
                m = number(s, pos)
                if m is None:
                    raise _Fail("Expecting value", pos)
                end = m.end()
                token = s[pos:end]
                if len(token) >= 19 and _INT_DIGITS.fullmatch(token) \
                        and len(token.lstrip(b"-")) >= 19:
                    flags |= BIG_INT
            elif s.startswith(b"true", pos):
                end = pos + 4
            elif s.startswith(b"false", pos):
                end = pos + 5
            elif s.startswith(b"null", pos):
                end = pos + 4
            else:
                raise _Fail("Expecting value", pos)
            put(s[pos:end])
            pos = end
            state = 2
        elif state == 1:
            if pos >= n or s[pos] != 0x22:
                raise _Fail("Expecting property name enclosed in double quotes", pos)
            end = _scan_string(s, pos)
            key = s[pos:end]
            put(key)
            if not flags & KEY_REPEAT:
                seen = keys[-1]
                text = _key_text(key)
                if text in seen:
                    flags |= KEY_REPEAT
                else:
                    seen.add(text)
            pos = ws(s, end).end()  # type: ignore[union-attr]
            if pos >= n or s[pos] != 0x3A:
                raise _Fail("Expecting ':' delimiter", pos)
            put(b": ")
            pos = ws(s, pos + 1).end()  # type: ignore[union-attr]
            state = 0
        else:
            pos = ws(s, pos).end()  # type: ignore[union-attr]
            if not stack:
                if pos < n:
                    raise _Fail("Extra data", pos)
                if body.over:
                    return b"", lines, flags | TOO_BIG
                done = bytes(body.buf)
                body.buf = bytearray()
                return _same(s, done, lines, flags)
            top = stack[-1]
            if pos < n and s[pos] == 0x2C:
                pos = ws(s, pos + 1).end()  # type: ignore[union-attr]
                put(b",")
                put(_indent(indents, len(stack)))
                lines += 1
                state = 1 if top == 0x7B else 0
            elif pos < n and s[pos] == (0x7D if top == 0x7B else 0x5D):
                pos += 1
                if stack.pop() == 0x7B:
                    keys.pop()
                put(_indent(indents, len(stack)))
                put(b"}" if top == 0x7B else b"]")
                lines += 1
            else:
                raise _Fail("Expecting ',' delimiter", pos)


def _key_text(key: bytes) -> bytes:
    """The UTF-8 text a (valid) key token stands for: its bytes inside the quotes, or the
    string its escapes spell (a surrogate pair one code point, a lone one its three bytes).
    The C twin compares an escaped key by the 64-bit hash of that text: only a hash collision
    can flag there what does not here."""
    if b"\\" not in key:
        return key[1:-1]
    import json

    text: str = json.loads(key)
    return text.encode("utf-8", "surrogatepass")


def _indent(cache: list[bytes], depth: int) -> bytes:
    """``"\\n"`` and ``2 * depth`` spaces; the shallow ones cached (deep ones are rare, and
    caching every depth of a 100,000-deep document would take gigabytes)."""
    if depth < len(cache):
        return cache[depth]
    text = b"\n" + b"  " * depth
    if depth < 256:
        while len(cache) <= depth:
            cache.append(b"\n" + b"  " * len(cache))
    return text


def _position(data: bytes, pos: int) -> tuple[int, int]:
    """1-based (line, column in characters) of byte offset ``pos``."""
    line_start = data.rfind(b"\n", 0, pos) + 1
    column = len(data[line_start:pos].decode("utf-8", "replace")) + 1
    return data.count(b"\n", 0, pos) + 1, column


def reindent(data: bytes, *, limit: int = -1, max_depth: int = 0, impl: _Impl | None = None
             ) -> tuple[bytes, int, int]:
    """``(body, lines, flags)`` of ``data`` (see the module docstring); raises
    :class:`JsonError`. A body over ``limit`` bytes (when >= 0) is not written: ``b""`` and
    the flag :data:`TOO_BIG`. ``max_depth`` > 0 bounds the nesting in the same pass: the
    ``[``/``{`` that opens level ``max_depth + 1`` raises the error of
    :func:`scratch.formats.nesting.too_deep` at its offset (a syntax error before it is the one
    raised, as there). ``impl`` picks an implementation (tests); default: C when built."""
    run: _Impl = impl or _c_reindent or reindent_py
    try:
        return run(data, limit, max_depth)
    except ValueError as exc:
        raise _json_error(exc, data, max_depth) from None


def reindent_separated(data: bytes, *, limit: int = -1, max_depth: int = 0) -> Separated:
    """:func:`reindent`, and the body's :class:`Separators` when the C pass ran (None without
    it, or when either depth holds more than a million of them: they are found by reading)."""
    if _c_reindent is None:
        return (*reindent(data, limit=limit, max_depth=max_depth), None)
    try:
        body, lines, flags, found = _c_reindent(data, limit, max_depth, True)
    except ValueError as exc:
        raise _json_error(exc, data, max_depth) from None
    return body, lines, flags, _separators(found)


def _separators(found: tuple[bytes, bytes] | None) -> Separators | None:
    """The C pass's separators (two runs of native 64-bit offsets) as arrays."""
    if found is None:
        return None
    depths = array("Q"), array("Q")
    for offsets, text in zip(depths, found, strict=True):
        offsets.frombytes(text)
    return Separators(*depths)


def _json_error(exc: ValueError, data: bytes, max_depth: int) -> JsonError:
    """The :class:`JsonError` of an implementation's ``ValueError(message, offset)``."""
    message, pos = exc.args
    if message == DEEP:
        message = f"JSON {too_deep_reason(pos, max_depth)}"
    line, column = _position(data, pos)
    return JsonError(message, line, column, pos)


def read_span(fd: int, offset: int, length: int) -> bytes:
    """``length`` bytes of the file ``fd`` from ``offset`` (fewer if it ends first)."""
    parts: list[bytes] = []
    done = 0
    while done < length:
        block = os.pread(fd, min(length - done, 1 << 30), offset + done)
        if not block:
            break
        parts.append(block)
        done += len(block)
    return b"".join(parts)


def reindent_file(fd: int, offset: int, length: int, *, limit: int = -1, max_depth: int = 0,
                  impl: _Impl | None = None) -> tuple[bytes, int, int]:
    """:func:`reindent` of the ``length`` bytes of the file ``fd`` from ``offset``, with the
    same result and errors (offsets from ``offset``). The C version reads the file through a
    map and drops the pages it has passed, so memory holds the body, not the input as well;
    without it (or with ``impl``) the bytes are read and re-indented as :func:`reindent` does.
    """
    if impl is not None:
        return reindent(read_span(fd, offset, length), limit=limit, max_depth=max_depth,
                        impl=impl)
    return reindent_file_separated(fd, offset, length, limit=limit, max_depth=max_depth)[:3]


def reindent_file_separated(fd: int, offset: int, length: int, *, limit: int = -1,
                            max_depth: int = 0) -> Separated:
    """:func:`reindent_file`, and the body's :class:`Separators` as
    :func:`reindent_separated` gives them."""
    if _c_reindent is not None and _c_reindent_file is not None and length > 0:
        try:
            body, lines, flags, found = _c_reindent_file(fd, offset, length, limit, max_depth,
                                                         True)
        except ValueError as exc:
            # the bytes are read only to place the error
            raise _json_error(exc, read_span(fd, offset, length), max_depth) from None
        except OSError:
            pass  # cannot be mapped (a pipe, a special file): read it
        else:
            return body, lines, flags, _separators(found)
    return reindent_separated(read_span(fd, offset, length), limit=limit, max_depth=max_depth)


def too_deep_reason(offset: int, depth: int) -> str:
    """Why content nested deeper than ``depth`` is refused, at byte ``offset`` (also
    :func:`scratch.formats.nesting.nested_too_deeply`)."""
    return f"nested too deeply (deeper than {depth} levels from byte {offset})"


def is_canonical(data: bytes) -> bool:
    """True if ``data`` is valid JSON already in the canonical layout (with its final newline)."""
    if not data.endswith(b"\n"):
        return False
    try:
        return bool(reindent(data, limit=len(data))[2] & SAME)
    except JsonError:
        return False


def may_be_canonical(prefix: bytes) -> bool:
    """Whether a document starting with ``prefix`` may be in the canonical layout (then
    :data:`SAME` may hold for all of it): the prefix opens a container and each of its whole
    lines is indented by two spaces a level, with nothing after its last character. A guess
    from the first lines, for work worth starting before the whole is known (kubectl's
    4-space layout and minified text fail it at their second line)."""
    lines = prefix[:prefix.rfind(b"\n")].split(b"\n")
    if len(lines) < 2 or lines[0] not in (b"{", b"["):
        return False
    depth = 1
    for line in lines[1:]:
        text = line.lstrip(b" ")
        closes = text[:1] in (b"}", b"]")
        if depth <= 0 or not text or text[-1:] in b" \t\r" \
                or len(line) - len(text) != 2 * (depth - closes):
            return False  # (after the root closed, nothing may follow)
        depth += (text[-1:] in (b"{", b"[")) - closes
    return True
