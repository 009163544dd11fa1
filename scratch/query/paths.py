"""Paths into JSON-like values: dot paths, JSON Pointers and RFC 9535 JSONPath.

Syntax accepted by :func:`parse_path` (one string, the kind is detected from its first character):

* Root: ``""``, ``"."`` or ``"$"``.
* **Dot path** (the canonical syntax; :func:`format_path` writes it): segments separated by ``.``.
  A bare segment is any run of characters without ``.``, ``[``, ``]`` or quotes. A bare
  integer (``0``, ``-1``; no leading zeros) is an *index* on arrays and the key ``"0"`` on
  objects; negative indices count from the end. A quoted segment (``"kubectl.kubernetes.io/x"``,
  JSON escapes; ``'...'`` also accepted) is always an object key, so ``data."0"`` is the key
  ``"0"``. Brackets work too: ``items[0].name``, ``a["b.c"]``. ``*`` or ``[*]`` means every
  child (the path is then evaluated as JSONPath). A leading ``.`` (jq style) is allowed.
* **JSON Pointer** (RFC 6901), starting with ``/``: ``/items/0/metadata/name``; ``~1`` is ``/``
  and ``~0`` is ``~``; ``/`` alone is the key ``""`` (as the RFC says), ``""`` the root.
* **JSONPath** (RFC 9535), starting with ``$``: evaluated by the ``jsonpath_rfc9535`` library.
  A plain chain of names and indices (``$.items[0].metadata.name``) also yields ``segments`` so
  an index can fast-path it. ``$.items.0`` is not valid JSONPath; it is read as a dot path.

Invariants:
* ``parse_path(format_path(s)).segments == s`` for every list of ``str``/``int`` segments, and
  ``format_path(parse_path(x).segments)`` is a fixed point (stable after one step).
* Locations reported by :func:`evaluate` are concrete: ``int`` only for array indices
  (non-negative), ``str`` for object keys, so ``format_path`` of a location names exactly
  one node.
* Errors: invalid syntax raises :class:`InvalidPattern` with code ``invalid_path`` and a 0-based
  character ``position``; a path that does not exist raises :class:`KeyPathNotFound`
  (``key_path_not_found``) with ``valid_prefix``, ``failed_segment`` and ``available_keys`` /
  ``array_length`` / ``value_type`` and ``suggestions`` (full paths usable verbatim).

Writing paths (:func:`~scratch.pathnames.format_path` and the other two syntaxes, segments and
the wildcard) is :mod:`scratch.pathnames`, below every layer; this module parses and evaluates.
It depends only on the standard library at import time; ``jsonpath_rfc9535`` is imported when
a JSONPath is compiled.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple, cast

from scratch.errors import InvalidPattern, KeyPathNotFound
from scratch.jsonvalues import JSON, json_type
from scratch.pathnames import (
    MAX_AVAILABLE_KEYS,
    WILDCARD,
    Segment,
    Wildcard,
    format_jsonpath,
    format_path,
)

if TYPE_CHECKING:
    from jsonpath_rfc9535 import JSONPathEnvironment, JSONPathQuery, JSONValue

_INT_RE = re.compile(r"(?:0|-?[1-9][0-9]*)\Z")
_POINTER_INDEX_RE = re.compile(r"(?:0|[1-9][0-9]*)\Z")


SHOWN_PATH_CHARS = 200  # of a path quoted in an error (a 10,000-character one is cut)
MAX_NESTING = 64  # brackets, parentheses and "!" in a row in a JSONPath or --where expression
MAX_NUMBER_CHARS = 100  # characters of a number literal in a JSONPath or --where expression


def _shown(text: str) -> str:
    return text if len(text) <= SHOWN_PATH_CHARS else text[:SHOWN_PATH_CHARS] + "…"


def _invalid(message: str, text: str, position: int, **details: object) -> InvalidPattern:
    if len(text) > SHOWN_PATH_CHARS:
        details.setdefault("path_length", len(text))
    return InvalidPattern(
        f"{message} at position {position} in path {_shown(text)!r}",
        code="invalid_path",
        path=_shown(text),
        position=position,
        **details,
    )


def quoted_end(text: str, i: int) -> int:
    """Where the string quoted at ``text[i]`` (``'`` or ``"``, backslash escapes honoured)
    ends: the index after its closing quote, or the end of ``text``."""
    quote, n = text[i], len(text)
    j = i + 1
    while j < n and text[j] != quote:
        j += 2 if text[j] == "\\" else 1
    return j + 1


def _check_bounds(text: str) -> tuple[str, int] | None:
    """(problem, position) if ``text`` nests deeper than :data:`MAX_NESTING` or holds a number
    longer than :data:`MAX_NUMBER_CHARS`: the JSONPath parser recurses per level and converts
    numbers through floats, so such input would exhaust the stack or overflow, not answer.
    Quoted strings are skipped."""
    depth = 0
    nots = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            i = quoted_end(text, i)
            nots = 0
            continue
        if c in "([":
            depth += 1
            if depth > MAX_NESTING:
                return f"nested more than {MAX_NESTING} levels deep", i
        elif c in ")]":
            depth = max(0, depth - 1)
        if c == "!":
            nots += 1
            if nots > MAX_NESTING:
                return f"more than {MAX_NESTING} '!' in a row", i
        elif not c.isspace():
            nots = 0
        if c.isdigit() and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            j = i
            while j < n and (text[j].isalnum() or text[j] in ".+-"):
                j += 1
            if j - i > MAX_NUMBER_CHARS:
                return f"a number longer than {MAX_NUMBER_CHARS} characters", i
            i = j
            continue
        i += 1
    return None


# --------------------------------------------------------------------------------------------
# Parsing


class ParsedPath(NamedTuple):
    """A parsed path.

    ``segments`` is set for dot paths, pointers and plain JSONPath chains (no filters, slices,
    wildcards or descendants) -- the fast path for an index. ``jsonpath`` is the query the
    library evaluates when ``segments`` alone cannot (JSONPath, or a dot path with ``*``).
    ``singular`` is true when the path names at most one node.
    """

    text: str
    kind: str  # "dot" | "pointer" | "jsonpath"
    segments: tuple[Segment, ...] | None
    jsonpath: str | None = None
    compiled: JSONPathQuery | None = None  # the library's compiled query, when one was built
    # a field's function of the value the path names (parse_field): "length", or None
    function: str | None = None

    @property
    def singular(self) -> bool:
        return self.segments is not None and not any(
            isinstance(s, Wildcard) for s in self.segments
        )

    @property
    def names(self) -> tuple[str | int, ...] | None:
        """``segments`` when the path is :attr:`singular` (names and indices only: what an
        index resolves), else None."""
        segs = self.segments
        if segs is None:
            return None
        plain = tuple(s for s in segs if not isinstance(s, Wildcard))
        return plain if len(plain) == len(segs) else None

    @property
    def is_root(self) -> bool:
        return self.segments == ()


def _single_to_json(body: str) -> str:
    """The body of a '...' key re-escaped as the body of a JSON string."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append("'" if nxt == "'" else ch + nxt)
            i += 2
            continue
        out.append('\\"' if ch == '"' else ch)
        i += 1
    return "".join(out)


def _read_quoted(text: str, i: int) -> tuple[str, int]:
    """Read a quoted key starting at ``text[i]`` (``"`` or ``'``); return (key, index after)."""
    quote = text[i]
    j = i + 1
    n = len(text)
    while j < n:
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == quote:
            break
        j += 1
    else:
        raise _invalid(f"unclosed quote {quote}", text, i)
    body = text[i + 1 : j]
    if quote == "'":
        body = _single_to_json(body)
    try:
        key = json.loads('"' + body + '"', strict=False)
    except json.JSONDecodeError as exc:
        raise _invalid(f"invalid escape in quoted key ({exc.msg})", text, i) from None
    return key, j + 1


def _parse_dot(text: str, start: int = 0) -> tuple[Segment, ...]:
    """Parse ``text[start:]`` as a dot path; positions in errors refer to ``text``."""
    n = len(text)
    i = start
    if i < n and text[i] == "." and (i + 1 == n or text[i + 1] != "."):
        i += 1  # jq-style leading dot; "." alone is the root
    segs: list[Segment] = []
    while i < n:
        ch = text[i]
        if ch == "[":
            j = text.find("]", i + 1)
            if i + 1 < n and text[i + 1] in "\"'":
                key, j = _read_quoted(text, i + 1)
                if j >= n or text[j] != "]":
                    raise _invalid("expected ] after quoted key", text, j)
                segs.append(key)
            elif j < 0:
                raise _invalid("unclosed [", text, i)
            else:
                inner = text[i + 1 : j].strip()
                if inner == "*":
                    segs.append(WILDCARD)
                elif _INT_RE.match(inner):
                    segs.append(int(inner))
                else:
                    raise _invalid("expected an integer, * or a quoted key inside [ ]", text, i + 1)
            i = j + 1
        elif ch in "\"'":
            key, i = _read_quoted(text, i)
            segs.append(key)
        elif ch == ".":
            raise _invalid("empty path segment", text, i)
        elif ch == "]":
            raise _invalid("unexpected ]", text, i)
        else:
            j = i
            while j < n and text[j] not in ".[]":
                j += 1
            token = text[i:j]
            bad = next((k for k, c in enumerate(token) if c in "\"'"), None)
            if bad is not None:
                raise _invalid("quote inside a bare key (quote the whole key)", text, i + bad)
            if token == "*":
                segs.append(WILDCARD)
            elif _INT_RE.match(token):
                segs.append(int(token))
            else:
                segs.append(token)
            i = j
        # separator
        if i < n:
            if text[i] == ".":
                if i + 1 >= n:
                    raise _invalid("path ends with .", text, i)
                i += 1
            elif text[i] != "[":
                raise _invalid("expected . or [ after a segment", text, i)
    return tuple(segs)


def parse_dot_path(text: str) -> tuple[Segment, ...]:
    if text in ("", ".", "$"):
        return ()
    return _parse_dot(text)


def parse_pointer(text: str) -> tuple[str | int, ...]:
    """RFC 6901: ``""`` is the root, ``"/"`` the key ``""``; digits are indices on arrays."""
    if text == "":
        return ()
    if not text.startswith("/"):
        raise _invalid("a JSON Pointer starts with /", text, 0)
    segs: list[str | int] = []
    pos = 1
    for raw in text[1:].split("/"):
        for m in re.finditer(r"~(.|$)", raw):
            if m.group(1) not in ("0", "1"):
                raise _invalid("~ must be followed by 0 or 1 in a JSON Pointer", text,
                               pos + m.start())
        token = raw.replace("~1", "/").replace("~0", "~")
        segs.append(int(token) if _POINTER_INDEX_RE.match(token) else token)
        pos += len(raw) + 1
    return tuple(segs)


_ENV: JSONPathEnvironment | None = None


def _env() -> JSONPathEnvironment:
    global _ENV
    if _ENV is None:
        import jsonpath_rfc9535

        _ENV = jsonpath_rfc9535.JSONPathEnvironment()
    return _ENV


def compile_jsonpath(text: str, *, offset: int = 0, shown: str | None = None,
                     env: JSONPathEnvironment | None = None) -> JSONPathQuery:
    """Compile an RFC 9535 query; errors become ``invalid_path`` with a position.

    ``offset`` is subtracted from library positions and ``shown`` is the text reported, for
    callers that wrap a user's fragment (e.g. a filter expression) in a larger query.
    ``env``: the library environment to compile in (default: plain RFC 9535).
    """
    import jsonpath_rfc9535 as jp

    shown_text = text if shown is None else shown
    bad = _check_bounds(text)
    if bad is not None:
        problem, raw_pos = bad
        pos = max(0, min(raw_pos - offset, len(shown_text)))
        raise _invalid(f"invalid JSONPath: {problem}", shown_text, pos)
    try:
        return (env if env is not None else _env()).compile(text)
    except jp.JSONPathError as exc:
        tok = getattr(exc, "token", None)
        raw_pos = tok.index if tok is not None and tok.index >= 0 else 0
        shown_text = text if shown is None else shown
        pos = max(0, min(raw_pos - offset, len(shown_text)))
        reason = exc.args[0] if exc.args else str(exc)
        raise _invalid(f"invalid JSONPath: {reason}", shown_text, pos) from None
    except (RecursionError, OverflowError, ValueError) as exc:  # bounded above; to be sure
        raise _invalid(f"invalid JSONPath: {type(exc).__name__}", shown_text, 0) from None


def _plain_chain(query: JSONPathQuery) -> tuple[str | int, ...] | None:
    from jsonpath_rfc9535.segments import JSONPathChildSegment
    from jsonpath_rfc9535.selectors import IndexSelector, NameSelector

    out: list[str | int] = []
    for seg in query.segments:
        if type(seg) is not JSONPathChildSegment or len(seg.selectors) != 1:
            return None
        sel = seg.selectors[0]
        if isinstance(sel, NameSelector):
            out.append(sel.name)
        elif isinstance(sel, IndexSelector):
            out.append(sel.index)
        else:
            return None
    return tuple(out)


def parse_path(text: str, *, syntax: str = "auto") -> ParsedPath:
    """Parse a dot path, JSON Pointer or JSONPath (see the module docstring).

    ``syntax`` forces one reading: ``"jsonpath"`` (strict RFC 9535, no dot-path leniency),
    ``"pointer"`` or ``"dot"``; ``"auto"`` detects it from the first character.
    """
    if syntax == "jsonpath":
        query = compile_jsonpath(text)
        return ParsedPath(text, "jsonpath", _plain_chain(query), text, query)
    if syntax == "pointer":
        return ParsedPath(text, "pointer", parse_pointer(text))
    if syntax == "dot":
        return _dot(text, parse_dot_path(text))
    if syntax != "auto":
        raise ValueError(f"unknown path syntax {syntax!r}")
    if text in ("", ".", "$"):
        return ParsedPath(text, "dot", ())
    if text.startswith("/"):
        return ParsedPath(text, "pointer", parse_pointer(text))
    if text.startswith("$"):
        try:
            query = compile_jsonpath(text)
        except InvalidPattern as jp_error:
            # Not valid JSONPath: "$.items.0.name" and keys like "$ref" read as dot paths.
            try:
                segs = _parse_dot(text, 1 if text[1] in ".[" else 0)
            except InvalidPattern:
                raise jp_error from None
            return _dot(text, segs)
        return ParsedPath(text, "jsonpath", _plain_chain(query), text, query)
    return _dot(text, _parse_dot(text))


# ``len(PATH)`` or ``length(PATH)`` as a field: the size of what PATH names (RFC 9535's
# length(): an array's items, an object's members, a string's characters; null otherwise)
_FIELD_FUNCTION = re.compile(r"(len|length)\((.+)\)\Z", re.DOTALL)


def parse_field(text: str, columns: Sequence[str] = ()) -> ParsedPath:
    """A field of ``--fields``, ``--sort`` or ``--count-by``: a path (``columns``: names taken
    as they are, a CSV column ``a.b``), or ``len(PATH)`` / ``length(PATH)``, the size of the
    map, array or string at PATH (``--fields _key,len(members)``)."""
    m = _FIELD_FUNCTION.match(text.strip())
    if m is None:
        return ParsedPath(text, "dot", (text,)) if text in columns else parse_path(text)
    inner = m.group(2).strip()
    parsed = ParsedPath(inner, "dot", (inner,)) if inner in columns else parse_path(inner)
    return parsed._replace(text=text, function="length")


def apply_function(parsed: ParsedPath, value: JSON) -> JSON:
    """``value`` through the field's function (:func:`parse_field`); as it is without one."""
    if parsed.function != "length":
        return value
    return len(value) if isinstance(value, (list, dict, str)) else None


def _dot(text: str, segs: tuple[Segment, ...]) -> ParsedPath:
    if any(isinstance(s, Wildcard) for s in segs):
        jp_text = format_jsonpath(segs)
        return ParsedPath(text, "dot", segs, jp_text, compile_jsonpath(jp_text))
    return ParsedPath(text, "dot", segs)


# --------------------------------------------------------------------------------------------
# Resolution


class PathMatch(NamedTuple):
    """One node: its concrete location and value."""

    location: tuple[str | int, ...]
    value: JSON

    @property
    def path(self) -> str:
        return format_path(self.location)


def _step(node: JSON, seg: Segment, strict: bool) -> tuple[bool, str | int, JSON]:
    """One step down: (found, concrete segment, child)."""
    if isinstance(node, dict):
        if isinstance(seg, int) and strict:
            return False, seg, None
        key = seg if isinstance(seg, str) else str(seg)
        if key in node:
            return True, key, node[key]
        return False, key, None
    if isinstance(node, list):
        if isinstance(seg, int) and not isinstance(seg, bool):
            idx = seg + len(node) if seg < 0 else seg
            if 0 <= idx < len(node):
                return True, idx, node[idx]
        return False, seg if isinstance(seg, (str, int)) else 0, None
    return False, seg if isinstance(seg, (str, int)) else 0, None


def _locate(value: JSON, segments: Sequence[Segment], strict: bool = False
            ) -> tuple[int, list[str | int], JSON]:
    """Walk as far as possible: (number of segments consumed, concrete location, node)."""
    node = value
    loc: list[str | int] = []
    for i, seg in enumerate(segments):
        if isinstance(seg, Wildcard):
            return i, loc, node
        found, concrete, child = _step(node, seg, strict)
        if not found:
            return i, loc, node
        loc.append(concrete)
        node = child
    return len(segments), loc, node


def locate(value: JSON, segments: Sequence[Segment], *, path_text: str | None = None,
           strict: bool = False) -> PathMatch:
    """The node at ``segments`` with its concrete location, or :class:`KeyPathNotFound`."""
    done, loc, node = _locate(value, segments, strict)
    if done == len(segments):
        return PathMatch(tuple(loc), node)
    raise _not_found(value, segments, done, loc, node, path_text, strict)


def resolve(value: JSON, segments: Sequence[Segment]) -> JSON:
    """The value at ``segments`` (see :func:`locate` for the errors)."""
    return locate(value, segments).value


def _try_rest(node: JSON, prefix: list[str | int], rest: Sequence[Segment]) -> list[str | int]:
    """``prefix`` + as much of ``rest`` as resolves under ``node`` (all of it, or nothing)."""
    done, loc, _ = _locate(node, rest)
    return prefix + loc if done == len(rest) else prefix


def _not_found(root: JSON, segments: Sequence[Segment], i: int, loc: list[str | int], node: JSON,
               path_text: str | None, strict: bool) -> KeyPathNotFound:
    seg = segments[i]
    rest = segments[i + 1 :]
    text = path_text if path_text is not None else format_path(segments)
    prefix = format_path(loc)
    details: dict[str, object] = {
        "path": text,
        "valid_prefix": prefix,
        "failed_segment": seg,
        "segment_index": i,
    }
    suggestions: list[str] = []
    if isinstance(node, dict):
        keys = [k for k in node]
        details["available_keys"] = keys[:MAX_AVAILABLE_KEYS]
        details["key_count"] = len(keys)
        want = str(seg)
        if isinstance(seg, int) and strict and want in node:
            close = [want]  # $.a[0] on an object: the key "0" exists
        else:
            lower = {k.lower(): k for k in reversed(keys)}
            close = [lower[want.lower()]] if want.lower() in lower else []
            close += difflib.get_close_matches(want, keys, n=3, cutoff=0.6)
        for key in dict.fromkeys(close):
            suggestions.append(format_path(_try_rest(node[key], loc + [key], rest)))
        where = f"object at {prefix}" if loc else "root object"
        message = f"key {want!r} not found in the {where} ({len(keys)} keys)"
        if close:
            message += "; did you mean " + " or ".join(repr(k) for k in dict.fromkeys(close)) + "?"
    elif isinstance(node, list):
        details["array_length"] = len(node)
        if isinstance(seg, int):
            message = (f"index {seg} out of range: the array at {prefix} has {len(node)} items"
                       + (f" (0..{len(node) - 1})" if len(node) > 1 else ""))
            if node:
                last = len(node) - 1
                suggestions.append(format_path(_try_rest(node[last], loc + [last], rest)))
        else:
            message = f"the value at {prefix} is an array ({len(node)} items), not an object"
            if isinstance(seg, str) and _INT_RE.match(seg):
                idx = int(seg)
                found, concrete, child = _step(node, idx, False)
                if found:
                    suggestions.append(format_path(_try_rest(child, loc + [concrete], rest)))
            elif node and isinstance(seg, str):
                # Probably meant "in each item": offer the first item and the JSONPath over all.
                first = node[0]
                cands: list[str] = []
                if isinstance(first, dict):
                    cands = [seg] if seg in first else difflib.get_close_matches(
                        seg, list(first), n=2, cutoff=0.6)
                for key in cands:
                    suggestions.append(format_path(_try_rest(first[key], loc + [0, key], rest)))
                    suggestions.append(format_jsonpath([*loc, WILDCARD, key, *rest]))
                if not cands:
                    suggestions.append(format_path(loc + [0]))
    else:
        vtype = json_type(node)
        details["value_type"] = vtype
        message = f"the value at {prefix} is a {vtype}, it has no {seg!r}"
        suggestions.append(prefix)
        if isinstance(node, str) and node.lstrip()[:1] in ("{", "["):
            details["hint"] = "the value is a string that holds JSON text"
    details["suggestions"] = list(dict.fromkeys(suggestions))
    error = KeyPathNotFound(message)
    error.details.update(details)
    return error


def iter_matches(value: JSON, path: str | ParsedPath, *, explain_missing: bool = True
                 ) -> Iterator[PathMatch]:
    """Every node ``path`` selects, in document order (JSONPath: the library's node order).

    A dot path or pointer that selects nothing raises :class:`KeyPathNotFound`. So does a plain
    JSONPath chain (``$.a[0].b``) when ``explain_missing`` is true -- an agent learns more from
    the diagnostics than from ``[]``; with ``explain_missing=False`` JSONPath keeps the RFC
    semantics (an empty node list). Queries with wildcards, filters or slices yield nothing.
    """
    import jsonpath_rfc9535 as jp

    parsed = parse_path(path) if isinstance(path, str) else path
    if parsed.kind != "jsonpath" and parsed.singular:
        assert parsed.segments is not None
        yield locate(value, parsed.segments, path_text=parsed.text)
        return
    query = parsed.compiled
    if query is None:
        query = compile_jsonpath(parsed.jsonpath or "$")
    found = False
    try:
        # the library reads plain dicts and lists (what parsing JSON gives) and types its
        # nodes' values as object: they are parts of ``value``
        for node in query.finditer(cast("JSONValue", value)):
            found = True
            yield PathMatch(tuple(node.location), cast(JSON, node.value))
    except jp.JSONPathError as exc:
        raise InvalidPattern(f"JSONPath evaluation failed: {exc.args[0] if exc.args else exc}",
                             code="invalid_path", path=parsed.text) from None
    if not found and parsed.singular and explain_missing:
        assert parsed.segments is not None
        # Explain why the plain chain selects nothing (JSONPath semantics: names only on objects).
        locate(value, parsed.segments, path_text=parsed.text, strict=True)


def evaluate(value: JSON, path: str | ParsedPath, *, explain_missing: bool = True
             ) -> list[PathMatch]:
    """All matches of ``path`` as a list (see :func:`iter_matches`)."""
    return list(iter_matches(value, path, explain_missing=explain_missing))
