"""JSON values as every layer of scratch holds them in Python: exact numbers, type names,
exact parsing and rendering.

Foundation module (standard library at import time; orjson and :mod:`scratch.reindent` are
imported by the functions that use them), so the store (log entries), the index (stored
regions), the query engines and the answers all mean the same thing by a JSON value.

Stored JSON keeps every number as it was written (:mod:`scratch.reindent`). Values read
back keep them too:

- :func:`parse_exact` parses stored JSON text. A number that a Python ``float``/``int`` would
  not print back the same way (``0.10000000000000000555``, ``1e400``, ``1.0E+2``, ``-0``, an
  integer of more than 4,300 digits) becomes a :class:`JsonNumber`: a ``float`` (so comparisons,
  sorting and arithmetic work as on any number; ``1e400`` compares as infinity) that remembers
  its text. Integers up to 4,300 digits are exact Python ``int``. Every other value is what
  orjson gives; orjson parses first, and the exact parser runs only when the region does not
  render back to its own text.
- :func:`dumps` renders values (orjson options as given) with every :class:`JsonNumber` written
  as its text, integers beyond 64 bits exact and strings with lone surrogates escaped, so a
  ``--json`` answer shows numbers exactly as the entry holds them. Unknown objects are written
  as ``str(obj)`` (what the renderers did with ``default=str``).
- :func:`json_type` names a value's JSON type (a :class:`JsonNumber` written as an integer is
  an ``integer``).

:func:`default` is the orjson ``default=`` hook on its own, for callers that call orjson;
:func:`exact_int` / :func:`exact_float` are the ``parse_int`` / ``parse_float`` hooks of the
standard library's parser. Every parser here raises :class:`scratch.errors.JsonError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TypeAlias

from scratch.errors import JsonError

# A JSON value as Python holds it (orjson's and the exact parser's output, what ``--json``
# prints): the one type every layer means by "JSON". Readers of the containers read them as
# Mapping/Sequence, so a list of str is a JSON value too (lists and dicts are invariant).
JSON: TypeAlias = "Mapping[str, JSON] | Sequence[JSON] | str | int | float | bool | None"
# a JSON object and a JSON array as read (their containers' element types are JSON); a value
# built here to be printed is a ``dict[str, JSON]`` / ``list[JSON]``, which both are
JsonObject: TypeAlias = "Mapping[str, JSON]"
JsonArray: TypeAlias = "Sequence[JSON]"
# JSON as it enters from outside, before it is checked (a hook's payload, a client's config
# file, a peer's metadata): its shape is what the sender made it, read with isinstance where
# it is read. The one name for that edge, so an ``Any`` anywhere else is a defect.
Incoming: TypeAlias = Any

# Python refuses to convert longer digit strings to int (quadratic time): such integers stay text
MAX_INT_DIGITS = 4300
_I64_MIN = -(1 << 63)
_U64_MAX = (1 << 64) - 1


class JsonNumber(float):
    """A JSON number whose written form a float or int would not reproduce; ``text`` is it."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> JsonNumber:
        try:
            value = float(text)
        except (OverflowError, ValueError):  # pragma: no cover - float() saturates to inf
            value = float("-inf") if text.startswith("-") else float("inf")
        self = super().__new__(cls, value)
        self.text = text
        return self

    @property
    def integer(self) -> bool:
        """Written as an integer (no fraction, no exponent)."""
        return not any(c in self.text for c in ".eE")

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __reduce__(self) -> tuple[type[JsonNumber], tuple[str]]:
        return (JsonNumber, (self.text,))


def exact_float(text: str) -> float:
    """``parse_float`` hook: a float when it prints as written, else a :class:`JsonNumber`."""
    import orjson

    value = float(text)
    if value - value == 0 and orjson.dumps(value) == text.encode():  # finite, prints as written
        return value
    return JsonNumber(text)


def exact_int(text: str) -> int | float:
    """``parse_int`` hook: an exact int, or a :class:`JsonNumber` for ``-0`` and integers of
    more than :data:`MAX_INT_DIGITS` digits."""
    if len(text) > MAX_INT_DIGITS or text == "-0":
        return JsonNumber(text)
    return int(text)


class _NotJson(ValueError):
    pass


def _constant(name: str) -> NoReturn:
    raise _NotJson(name)  # NaN, Infinity, -Infinity: the stdlib reads them, JSON has none


def loads_exact(data: bytes | str) -> Any:
    """Parse JSON keeping every number as written (see the module docstring).

    Raises :class:`JsonError` (position included) on invalid text.
    """
    try:
        return json.loads(data, parse_float=exact_float, parse_int=exact_int,
                          parse_constant=_constant)
    except _NotJson as exc:
        raise JsonError(f"{exc.args[0]} is not JSON") from None
    except json.JSONDecodeError as exc:
        raise JsonError(exc.msg, exc.lineno, exc.colno, exc.pos) from None
    except UnicodeDecodeError as exc:
        raise JsonError(f"invalid UTF-8 at byte {exc.start}", None, None, exc.start) from None
    except RecursionError:
        raise JsonError("JSON nested too deeply to parse") from None


def parse_exact(data: bytes) -> Any:
    """The value of stored JSON text ``data``, numbers exact (orjson when that is exact)."""
    import orjson

    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return loads_exact(data)  # what only the stdlib reads (1e400, lone surrogates), or errors
    if _renders_as(value, data):
        return value
    return loads_exact(data)


def _renders_as(value: object, data: bytes) -> bool:
    """True if orjson writes ``value`` back as exactly ``data`` (up to layout), so no number
    in it was changed by parsing. False positives are impossible; false negatives (a string
    escaped another way, another layout) only cost the exact parse."""
    import orjson

    t = type(value)
    if t is str or t is bool or value is None:
        return True
    if t is not dict and t is not list:
        return orjson.dumps(value) == data.strip()
    text = data.strip()
    nl = text.rfind(b"\n")
    try:
        if nl < 0:
            return orjson.dumps(value) == text
        rendered = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        return False
    from scratch.reindent import HAVE_C, reindent

    if HAVE_C:  # any layout: compare in the canonical one (C: about 1 GB/s)
        try:
            return reindent(text)[0] == rendered
        except ValueError:
            return False
    # the canonical layout, indented as a member at some depth: the last line is the closing
    # bracket, indented like every line after the first is (plus 2 per level)
    indent = len(text) - nl - 2
    if indent > 0:
        text = text.replace(b"\n" + b" " * indent, b"\n")
    return rendered == text


def default(obj: object) -> object:
    """orjson ``default=``: a :class:`JsonNumber` as its text, anything else as ``str``."""
    if isinstance(obj, JsonNumber):
        import orjson

        return orjson.Fragment(obj.text.encode())
    return str(obj)


def dumps(value: object, option: int = 0) -> bytes:
    """orjson bytes of ``value`` with numbers exact (see the module docstring)."""
    import orjson

    try:
        return orjson.dumps(value, option=option, default=default)
    except TypeError:  # an integer beyond 64 bits, a lone surrogate
        pass
    try:
        return orjson.dumps(_fixed(value), option=option, default=default)
    except (TypeError, RecursionError):  # in a key, or too deep: the stdlib (floats as floats)
        text = json.dumps(value, ensure_ascii=False, default=str,
                          indent=2 if option & orjson.OPT_INDENT_2 else None,
                          separators=None if option & orjson.OPT_INDENT_2 else (",", ":"))
        return text.encode("utf-8", errors="backslashreplace")


def _fixed(value: object) -> object:
    """``value`` with what orjson refuses written as fragments of JSON text."""
    import orjson

    t = type(value)
    if isinstance(value, dict):
        return {k: _fixed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_fixed(v) for v in value]
    if t is int and isinstance(value, int) and not _I64_MIN <= value <= _U64_MAX:
        return orjson.Fragment(str(value).encode())
    if isinstance(value, str) and t is str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return orjson.Fragment(json.dumps(value).encode())
    return value


def json_type(value: object) -> str:
    """JSON type name: object, array, string, integer, number, boolean, null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if isinstance(value, JsonNumber) and value.integer else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__  # e.g. a YAML timestamp (datetime)
