"""Documents embedded in JSON string values (MCP results carry JSON inside ``content[].text``).

A string value is an embedded document when it is

- ``json``: a JSON object or array whose canonical rendering has >= :data:`MIN_LINES` lines
  (a minified JSON string qualifies: that is when it is least readable inline), or
- ``markdown``: text of >= :data:`MIN_LINES` lines that the sniffer calls markdown.

The search visits at most :data:`MAX_NODES` nodes down to :data:`MAX_DEPTH` (tool results
put their payload near the top) and reports at most :data:`MAX_EMBEDDED` documents, in
document order. Only the first :data:`ARRAY_ITEMS` items of each array are searched, and
values under :data:`SKIP_KEYS` (copies of their own object) are skipped. Companions are
named ``NAME.<slug>`` with :func:`slug` of the path; slugs are
unique within one document.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from scratch.jsonvalues import JSON

MIN_LINES = 10
MIN_CHARS = 40
MAX_DEPTH = 8
MAX_NODES = 200_000
MAX_EMBEDDED = 16
ARRAY_ITEMS = 4  # only the first items of an array are searched (MCP content lists are short)
# Keys whose embedded JSON is a copy of the enclosing object, not a document of its own.
SKIP_KEYS = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})
SLUG_MAX = 60
_SLUG_BAD = re.compile(r"[^A-Za-z0-9_]+")


@dataclass(frozen=True)
class Embedded:
    path: tuple[str | int, ...]
    slug: str
    kind: str  # "json" | "markdown"
    text: str  # the decoded string value, as it is in the document
    lines: int  # lines of the stored companion (canonical JSON, or the text)


def slug(path: Sequence[str | int]) -> str:
    """A name-safe slug of a path: ``("content", 0, "text")`` -> ``content-0-text``.

    Only ``[A-Za-z0-9_-]``; at most :data:`SLUG_MAX` characters (a long one ends in 8 hex
    digits of a hash of the full path so different paths stay different); ``root`` for ``()``.
    """
    parts = [_SLUG_BAD.sub("-", str(p)).strip("-") for p in path]
    out = "-".join(p for p in parts if p) or "root"
    if len(out) > SLUG_MAX:
        digest = hashlib.sha1(repr(list(path)).encode("utf-8", "surrogatepass")).hexdigest()[:8]
        out = out[: SLUG_MAX - 9].rstrip("-") + "-" + digest
    return out


def _classify(s: str) -> tuple[str, int] | None:
    head = s.lstrip()[:1]
    if head in ("{", "["):
        from scratch.errors import JsonError
        from scratch.formats.jsontext import parse_json, render_line_count

        try:
            value, engine = parse_json(s.encode("utf-8", "surrogatepass"))
        except (JsonError, UnicodeEncodeError):
            value = None
        if isinstance(value, (dict, list)):
            n = render_line_count(value, engine)
            return ("json", n) if n >= MIN_LINES else None
    n = s.count("\n") + (0 if s.endswith("\n") else 1)
    if n >= MIN_LINES:
        from scratch.formats.sniffer import sniff

        if sniff(s.encode("utf-8", "surrogatepass"), complete=True) == "markdown":
            return "markdown", n
    return None


def find_embedded(value: JSON) -> tuple[list[Embedded], bool]:
    """(documents found, whether the search stopped early at a limit)."""
    found: list[Embedded] = []
    seen: set[str] = set()
    stack: list[tuple[JSON, tuple[str | int, ...]]] = [(value, ())]
    visited = 0
    limited = False
    while stack:
        v, path = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            limited = True
            break
        if isinstance(v, str):
            if len(v) >= MIN_CHARS and (v.count("\n") >= MIN_LINES - 1 or v.lstrip()[:1] in "{["):
                kind = _classify(v)
                if kind is not None:
                    if len(found) >= MAX_EMBEDDED:
                        limited = True
                        break
                    s = slug(path)
                    base, n = s, 2
                    while s in seen:
                        s = f"{base}-{n}"
                        n += 1
                    seen.add(s)
                    found.append(Embedded(path, s, kind[0], v, kind[1]))
            continue
        if len(path) >= MAX_DEPTH:
            continue
        if isinstance(v, dict):
            stack.extend((cv, path + (str(k),)) for k, cv in reversed(list(v.items()))
                         if k not in SKIP_KEYS)
        elif isinstance(v, list):
            stack.extend((cv, path + (i,)) for i, cv in reversed(list(enumerate(v[:ARRAY_ITEMS]))))
    return found, limited
