"""Parsing and canonical rendering of JSON documents.

Canonical layout (what ingest stores unless ``--raw``): 2-space indentation, ``": "`` after
keys, one scalar or bracket per line, ``[]``/``{}`` for empty containers, key order kept, and a
final newline. Ingest writes it with :mod:`scratch.reindent`, which keeps every token
as written; orjson's ``OPT_INDENT_2`` output and ``json.dumps(indent=2, ensure_ascii=False)``
have the same line structure (they differ only in how some strings and numbers are spelled),
so the structural index computes line numbers from the parsed value alone (:func:`render`,
:func:`render_line_count`), provided no object repeats a key.

Parsing (:func:`parse_value` for stored documents, :func:`parse_json` for scratch's own files):

- orjson parses first (fast). It turns integers outside 64 bits into floats and rejects
  lone surrogates and numbers that overflow a double, so those documents go through the
  standard library instead, which keeps integers exact.
- Duplicate keys keep the last value at the first key's position in both parsers, like
  ``json.loads``.
- Values read back from a stored entry go through :func:`scratch.jsonvalues.parse_exact`,
  which keeps every number as written.

Garbage collection: parsing builds millions of containers, which makes the cyclic GC run over
and over (3-4x slower) and, once re-enabled, walk them all again. Parsing runs with the GC
off and a document of :data:`FREEZE_BYTES` or more is then ``gc.freeze()``-d: objects alive
at that point are left out of cyclic collection for the rest of the process (they are still
freed by reference counting; parsed JSON has no cycles). scratch processes are short-lived.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scratch.errors import JsonError
from scratch.jsonvalues import JSON, exact_int

_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_RUN = b"0" * 19
FREEZE_BYTES = 1 << 20
_I64_MIN = -(1 << 63)
_U64_MAX = (1 << 64) - 1


@contextmanager
def no_gc() -> Iterator[None]:
    """Building millions of containers triggers the cyclic GC over and over (3-4x slower)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def has_big_int(data: bytes) -> bool:
    """True if ``data`` may hold an integer literal outside 64 bits (false positives are fine)."""
    marks = data.translate(_DIGITS)  # digits -> "0", the rest -> " ": runs become findable
    pos = marks.find(_RUN)
    n = len(data)
    while pos >= 0:
        end = pos
        while end < n and 0x30 <= data[end] <= 0x39:
            end += 1
        before = data[pos - 1:pos]
        after = data[end:end + 1]
        if before not in (b".", b"e", b"E", b"+") and after not in (b".", b"e", b"E"):
            value = int(data[pos:end])
            if before == b"-":
                value = -value
            if value < _I64_MIN or value > _U64_MAX:
                return True
        pos = marks.find(_RUN, end)
    return False


def parse_json(data: bytes, *, check_big_ints: bool = True) -> tuple[Any, str]:
    """(value, engine) where engine is ``"orjson"`` or ``"json"``; raises :class:`JsonError`.

    ``check_big_ints=False`` skips the scan for integers beyond 64 bits (orjson would turn
    them into floats): only for callers that check afterwards.
    """
    import orjson

    with no_gc():
        if not check_big_ints or not has_big_int(data):
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                pass  # maybe something only the stdlib accepts; it also words the error
            else:
                _freeze(len(data))
                return value, "orjson"
        try:
            value = json.loads(data)
            _freeze(len(data))
            return value, "json"
        except json.JSONDecodeError as exc:
            raise JsonError(exc.msg, exc.lineno, exc.colno, exc.pos) from None
        except RecursionError:
            pass
    # Nested deeper than the stdlib parser goes; orjson (limit 1024) says where.
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise JsonError(f"JSON nested too deeply to parse ({exc.msg})", exc.lineno, exc.colno,
                        exc.pos) from None
    raise JsonError("JSON nested too deeply to parse")


def parse_value(data: bytes, *, big_ints: bool = False) -> tuple[Any, str]:
    """(value, engine) of ``data``, which :func:`scratch.reindent.reindent` accepted.

    orjson first, unless ``big_ints`` (an integer token may not fit 64 bits: orjson would make
    it a float); the standard library for what orjson refuses (numbers beyond a double, lone
    surrogates, nesting deeper than 1024), with integers exact (beyond 4,300 digits a
    :class:`scratch.jsonvalues.JsonNumber`). Raises :class:`JsonError` only for nesting
    too deep for both parsers.
    """
    import orjson

    with no_gc():
        if not big_ints:
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                pass
            else:
                _freeze(len(data))
                return value, "orjson"
        try:
            value = json.loads(data, parse_int=exact_int)
            _freeze(len(data))
            return value, "json"
        except RecursionError:
            pass
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise JsonError(f"JSON nested too deeply to parse ({exc.msg})", exc.lineno, exc.colno,
                        exc.pos) from None
    raise JsonError("JSON nested too deeply to parse")  # pragma: no cover


def freeze_if_big(size: int) -> None:
    """``gc.freeze()`` after parsing a document of ``size`` bytes (see the module docstring)."""
    _freeze(size)


def _freeze(size: int) -> None:
    if size >= FREEZE_BYTES:
        gc.freeze()


def render(value: JSON, engine: str = "orjson") -> bytes:
    """Canonical bytes of ``value`` (see module docstring), ending in a newline.

    ``engine`` is what :func:`parse_json` used: a value the stdlib parsed may hold NaN, which
    orjson would silently write as null, so it is rendered by the stdlib too.
    """
    return render_body(value, engine) + b"\n"


def render_body(value: JSON, engine: str = "orjson") -> bytes:
    """:func:`render` without the final newline (saves copying a big document once more)."""
    if engine == "orjson":
        import orjson

        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2)
        except (TypeError, orjson.JSONEncodeError):
            pass  # depth over 255
    return _render_stdlib(value)


def _render_stdlib(value: JSON) -> bytes:
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False)
    except RecursionError:
        raise JsonError("JSON nested too deeply to pretty-print") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escape them so the file stays UTF-8
        return json.dumps(value, indent=2, ensure_ascii=True).encode("ascii")


def render_line_count(value: JSON, engine: str = "orjson") -> int:
    """Lines ``render(value)`` takes, without its final newline (1 for scalars and ``[]``)."""
    t = type(value)
    if (t is dict or t is list) and value:
        if engine == "orjson":
            import orjson

            try:
                return orjson.dumps(value, option=orjson.OPT_INDENT_2).count(b"\n") + 1
            except (TypeError, orjson.JSONEncodeError):
                pass
        return _count_lines(value)
    return 1


def _count_lines(value: JSON) -> int:
    n = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict) and v:
            n += 2
            stack.extend(v.values())
        elif isinstance(v, list) and v:
            n += 2
            stack.extend(v)
        else:
            n += 1
    return n
