"""How scratch writes a location in a JSON value: canonical dot paths, JSON Pointers, JSONPath.

Foundation module (standard library only): the index names the nodes it describes, the query
engines name their matches and the answers name what they show, all with these functions, so a
path printed anywhere is the same text and reads back to the same node through
:func:`scratch.query.paths.parse_path` (which parses all three syntaxes and evaluates them).

Invariants:
* :func:`format_path` is canonical: ``parse_path(format_path(s)).segments == s`` for every list
  of ``str``/``int`` segments. An ``int`` segment is an array index and is written bare; a key
  is written bare when it cannot be read as anything else (an index, the wildcard, JSONPath or
  a JSON Pointer, or a key holding ``.``, brackets, quotes, spaces or unprintable characters),
  else JSON-quoted. The root is ``"."``.
* :data:`WILDCARD` (``[*]``) is the only segment that is neither a key nor an index.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence


class Wildcard:
    """The ``*`` segment: every child of an object or array (use the ``WILDCARD`` instance)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Wildcard)

    def __hash__(self) -> int:
        return hash("*")

    def __repr__(self) -> str:
        return "WILDCARD"


WILDCARD = Wildcard()
Segment = str | int | Wildcard

MAX_AVAILABLE_KEYS = 50  # keys listed in a key_path_not_found error; key_count tells the rest

_DIGITS_RE = re.compile(r"-?[0-9]+\Z")
# RFC 9535 member-name-shorthand: name-first = ALPHA / "_" / non-ASCII; then also DIGIT.
_SHORTHAND = r"[A-Za-z_\u0080-\U0010FFFF][A-Za-z0-9_\u0080-\U0010FFFF]*\Z"


@functools.cache
def _shorthand_re() -> re.Pattern[str]:
    # compiled on first use: the full-Unicode class costs ~10 ms, paid by every get-in otherwise
    return re.compile(_SHORTHAND)


_BARE_STOP = '.[]"\''


def _bare_ok(key: str, first: bool) -> bool:
    if not key or key == "*" or _DIGITS_RE.match(key):
        return False
    if first and key[0] in "$/":
        return False  # would be read as JSONPath or JSON Pointer
    return not any(ch in _BARE_STOP or ch.isspace() or not ch.isprintable() for ch in key)


def format_key(key: str, *, first: bool = False) -> str:
    """One object key as a dot-path segment: bare when unambiguous, else JSON-quoted."""
    return key if _bare_ok(key, first) else json.dumps(key, ensure_ascii=False)


def format_path(segments: Sequence[Segment]) -> str:
    """Canonical dot path of ``segments`` (``"."`` for the root)."""
    out: list[str] = []
    for seg in segments:
        if isinstance(seg, Wildcard):
            out.append("[*]")
            continue
        if out:
            out.append(".")
        if isinstance(seg, bool):  # bool is an int subclass; never a valid segment
            raise TypeError(f"invalid path segment {seg!r}")
        if isinstance(seg, int):
            out.append(str(seg))
        else:
            out.append(format_key(seg, first=not out))
    return "".join(out) or "."


def format_pointer(segments: Sequence[str | int]) -> str:
    """RFC 6901 JSON Pointer of concrete ``segments``."""
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


def _jsonpath_name(key: str) -> str:
    if _shorthand_re().match(key):
        return "." + key
    inner = json.dumps(key, ensure_ascii=False)[1:-1].replace('\\"', '"').replace("'", "\\'")
    return f"['{inner}']"


def format_jsonpath(segments: Sequence[Segment]) -> str:
    """RFC 9535 JSONPath of ``segments`` (shorthand names where allowed)."""
    parts = ["$"]
    for seg in segments:
        if isinstance(seg, Wildcard):
            parts.append("[*]")
        elif isinstance(seg, int):
            parts.append(f"[{seg}]")
        else:
            parts.append(_jsonpath_name(seg))
    return "".join(parts)
