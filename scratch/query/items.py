"""Arrays of records: the union schema of their items, and rows of chosen fields.

* :func:`item_schema` -- every key seen across the items (nested object keys dotted, written by
  ``format_path`` so they can be passed to ``get-in`` and ``--fields``), each with the JSON types
  seen (with counts) and its presence ``k/n``. Keys of objects inside arrays are listed under
  ``<array>[*].<key>`` with presence counted over those array elements (``k/m``, m = elements
  seen). Order is deterministic: a tree walk in which the children of a key appear in the order
  they were first seen, an array's element keys right after the array's own entry. Items known
  not to be JSON (NDJSON lines left out, passed as ``not_json``) keep their place in the window
  but count nowhere else: not in the types, not in ``n``.
* :func:`iterate_rows` -- one row per item with ``_index`` and the requested fields (missing ->
  ``None``), long values previewed with the full path to fetch them whole, optionally filtered
  by an RFC 9535 filter expression (``@.status.phase == 'Failed' && @.spec.nodeName``), which
  may also call ``number()``, ``lower()`` and ``upper()`` (:func:`where_env`).
* :func:`absent_field` / :func:`where_paths` -- a field (or a ``--where`` key) that no item of
  the window has, with the deepest prefix some item has, the keys found there and close matches:
  what a "did you mean" warning needs. A field absent from a window is not an error.

Windows: ``offset``/``limit`` select array items (``_index`` is always the position in the
whole array). Callers holding only the window's items pass ``pre_windowed=True`` and the
array's ``total``. A partial window is reported as ``{"offset", "limit", "total"}``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, NotRequired, TypedDict, TypeVar

from scratch.errors import InvalidPattern, KeyPathNotFound, UsageError, argument
from scratch.jsonvalues import JSON, JsonObject, json_type
from scratch.pathnames import WILDCARD, Segment, Wildcard, format_path
from scratch.query.paths import (
    ParsedPath,
    compile_jsonpath,
    iter_matches,
    parse_path,
    quoted_end,
)

if TYPE_CHECKING:
    from jsonpath_rfc9535 import JSONPathEnvironment, JSONPathQuery

ELLIPSIS = "…"
T = TypeVar("T")


class Window(TypedDict):
    """The part of an array an answer covers (``total``: its length when known)."""

    offset: int
    limit: int | None
    total: int | None


class FieldSchema(TypedDict):
    """One key path of :func:`item_schema`."""

    path: str
    types: dict[str, int]
    present: int
    presence: str
    element_types: NotRequired[dict[str, int]]


class ItemSchema(TypedDict):
    """What :func:`item_schema` answers."""

    items: int
    item_types: dict[str, int]
    not_json: int
    fields: list[FieldSchema]
    window: Window | None


def _window(items: Iterable[T], offset: int, limit: int | None, pre_windowed: bool
            ) -> Iterator[tuple[int, T]]:
    """(array index, item) pairs of the window."""
    if offset < 0 or (limit is not None and limit < 0):
        raise UsageError("offset and limit must not be negative", offset=offset, limit=limit)
    if pre_windowed:
        source: Iterable[T] = items if limit is None else itertools.islice(items, limit)
    elif isinstance(items, Sequence) and not isinstance(items, (str, bytes)):
        source = items[offset:] if limit is None else items[offset : offset + limit]
    else:
        stop = None if limit is None else offset + limit
        source = itertools.islice(items, offset, stop)
    return zip(itertools.count(offset), source)


def _known_total(items: Iterable[object], total: int | None, offset: int, limit: int | None,
                 seen: int, pre_windowed: bool, stopped: bool = False) -> int | None:
    """The array length when it is known (given, a sequence, or we ran off its end)."""
    if total is not None:
        return total
    if pre_windowed:
        return None
    if isinstance(items, Sequence) and not isinstance(items, (str, bytes)):
        return len(items)
    if not stopped and (limit is None or seen < limit):
        return offset + seen
    return None


def _window_info(offset: int, limit: int | None, seen: int, total: int | None
                 ) -> Window | None:
    """The window, when it is not the whole array."""
    if offset == 0 and total is not None and seen >= total:
        return None
    return {"offset": offset, "limit": limit, "total": total}


# --------------------------------------------------------------------------------- item schema


@dataclass
class _Node:
    types: dict[str, int] = field(default_factory=dict)
    present: int = 0
    children: dict[str, _Node] = field(default_factory=dict)
    element_types: dict[str, int] = field(default_factory=dict)
    elements: _Node | None = None  # keys of the object elements, when this is an array


def _count(types: dict[str, int], t: str) -> None:
    types[t] = types.get(t, 0) + 1


def _add(node: _Node, value: JsonObject, depth_left: int | None) -> None:
    """Record the keys of one object ``value`` under ``node``."""
    deeper = depth_left is None or depth_left > 1
    below = None if depth_left is None else depth_left - 1
    for key, child_value in value.items():
        child = node.children.get(key)
        if child is None:
            child = node.children[key] = _Node()
        child.present += 1
        t = json_type(child_value)
        _count(child.types, t)
        if t == "object" and deeper and isinstance(child_value, dict):
            _add(child, child_value, below)
        elif t == "array" and isinstance(child_value, (list, tuple)):
            for element in child_value:
                et = json_type(element)
                _count(child.element_types, et)
                if et == "object" and deeper and isinstance(element, dict):
                    if child.elements is None:
                        child.elements = _Node()
                    _add(child.elements, element, below)


def _flatten(node: _Node, prefix: list[Segment], n: int, out: list[FieldSchema]) -> None:
    for key, child in node.children.items():
        path = [*prefix, key]
        entry: FieldSchema = {
            "path": format_path(path),
            "types": dict(child.types),
            "present": child.present,
            "presence": f"{child.present}/{n}",
        }
        if child.element_types:
            entry["element_types"] = dict(child.element_types)
        out.append(entry)
        _flatten(child, path, n, out)
        if child.elements is not None:
            # Keys inside array elements: presence counts elements, not items.
            _flatten(child.elements, [*path, WILDCARD], sum(child.element_types.values()), out)


def item_schema(items: Iterable[JSON], *, offset: int = 0, limit: int | None = None,
                total: int | None = None, depth: int | None = None,
                pre_windowed: bool = False, not_json: Collection[int] = ()) -> ItemSchema:
    """Union of the keys of the items in the window.

    Returns ``{"items": n, "item_types": {type: count}, "not_json": m, "fields": [...],
    "window": ...}`` where each field is ``{"path", "types": {type: count}, "present": k,
    "presence": "k/n"}`` plus ``element_types`` for arrays. ``depth`` limits how many key levels
    are listed (None: all).

    ``not_json``: array indexes of items whose stored text is not JSON (their value here is a
    stand-in). They count in ``items`` (the window's size) and in ``m``, and nowhere else: the
    presence denominator is the number of items that are JSON, so ``k/n`` reads like the
    index-time schema of an NDJSON entry (which counts only the lines that parse), and a key
    present in every readable item shows as ``n/n``.
    """
    root = _Node()
    item_types: dict[str, int] = {}
    seen = 0
    bad = 0
    for index, item in _window(items, offset, limit, pre_windowed):
        seen += 1
        if index in not_json:
            bad += 1
            continue
        t = json_type(item)
        item_types[t] = item_types.get(t, 0) + 1
        if t == "object" and isinstance(item, dict):
            _add(root, item, depth)
    total = _known_total(items, total, offset, limit, seen, pre_windowed)
    fields: list[FieldSchema] = []
    _flatten(root, [], seen - bad, fields)
    return {
        "items": seen,
        "item_types": item_types,
        "not_json": bad,
        "fields": fields,
        "window": _window_info(offset, limit, seen, total),
    }


# ------------------------------------------------------------------------------------- where


@dataclass(frozen=True)
class Where:
    """A compiled ``--where`` filter: an RFC 9535 filter expression applied to each item.

    ``pairs``: the field-to-field comparisons that RFC 9535 makes true when both sides are null
    (or both missing): ``@.home_score == @.away_score`` (also ``<=``, ``>=``), as the two
    paths relative to the item. ``nulls[0]`` counts the matches in which, for one of them,
    both sides were null or missing (what the answer warns about)."""

    text: str
    _query: JSONPathQuery
    _test: Callable[[JSON], object] | None = field(default=None, compare=False)
    pairs: tuple[tuple[str, ParsedPath, str, ParsedPath], ...] = field(default=(),
                                                                          compare=False)
    nulls: list[int] = field(default_factory=lambda: [0], compare=False)

    def __call__(self, item: JSON) -> bool:
        if self._test is not None:
            matched = bool(self._test(item))
        else:
            # The filter selector runs over the children of its input, so wrap the item.
            try:
                matched = bool(self._query.find([item]))
            except RecursionError:  # a descendant query (@..x) into a very deep item
                raise InvalidPattern(f"{argument('where')} {self.text!r} went deeper into an "
                                     "item than it can follow", code="invalid_path",
                                     path=self.text, position=0, argument="where") from None
        if matched and self.pairs and self.both_null(item):
            self.nulls[0] += 1
        return matched

    def both_null(self, item: JSON) -> bool:
        """Whether, for one of :attr:`pairs`, both sides are null or missing in ``item``."""
        return any(_field_value(item, a)[0] is None and _field_value(item, b)[0] is None
                   for _, a, _, b in self.pairs)

    def null_warning(self, matches: int) -> str | None:
        """The warning that ``nulls`` of ``matches`` matched only because both sides of a
        field-to-field comparison were null (None when none did)."""
        n = self.nulls[0]
        if not n or not self.pairs:
            return None
        left, _, right, _ = self.pairs[0]
        return (f"{n:,} of the {matches:,} matches have both {left} and {right} null or "
                f"missing, which RFC 9535 counts as equal; add && {left} != null to leave "
                "them out")


class WhereError(InvalidPattern):
    """A ``--where`` refused for a mistake with a likely fix: ``fix`` is the expression
    the user probably meant (None when there is no one guess), for a suggestion."""

    code = "invalid_path"

    def __init__(self, message: str, *, fix: str | None, **details: object) -> None:
        super().__init__(message, code="invalid_path", argument="where", **details)
        self.fix = fix


# The function extensions a --where may call besides RFC 9535's own (length, count, match,
# search, value): documented in iterate-over's where argument and the man page.
NUMBER_CHARS = 100  # of a string number() reads as a number; longer: not a number
_NUMBER_RE = None


def _number(value: object) -> object:
    """``number(@.x)``: a number as it is, a number-like string (``"3"``, ``" 2.5e3 "``) as
    that number; anything else (bools, other strings, null, missing) is Nothing, which
    compares equal only to Nothing and is neither < nor > anything."""
    import re

    from jsonpath_rfc9535 import NOTHING
    global _NUMBER_RE
    if isinstance(value, bool):
        return NOTHING
    if isinstance(value, (int, float)):
        return value
    if not isinstance(value, str) or len(value) > NUMBER_CHARS:
        return NOTHING
    if _NUMBER_RE is None:
        _NUMBER_RE = re.compile(r"[+-]?(?:(\d+)|\d+\.\d*|\.\d+|\d+(?:\.\d*)?[eE][+-]?\d+|"
                                r"\.\d+[eE][+-]?\d+)")
    m = _NUMBER_RE.fullmatch(value.strip())
    if m is None:
        return NOTHING
    text = m.group(0)
    return int(text) if m.group(1) is not None else float(text)


def _case(convert: str) -> Callable[[object], object]:
    def apply(value: object) -> object:
        from jsonpath_rfc9535 import NOTHING
        return getattr(value, convert)() if isinstance(value, str) else NOTHING
    return apply


_WHERE_ENV: JSONPathEnvironment | None = None


def where_env() -> JSONPathEnvironment:
    """The JSONPath environment of ``--where``: the library's, plus ``number``, ``lower`` and
    ``upper`` registered as the library registers its own (JSONPath queries elsewhere stay
    plain RFC 9535)."""
    global _WHERE_ENV
    if _WHERE_ENV is None:
        from jsonpath_rfc9535 import JSONPathEnvironment
        from jsonpath_rfc9535.function_extensions import ExpressionType, FilterFunction

        class ValueFunction(FilterFunction):
            arg_types = [ExpressionType.VALUE]
            return_type = ExpressionType.VALUE

            def __init__(self, apply: Callable[[object], object]) -> None:
                self.apply = apply

            def __call__(self, value: object) -> object:
                return self.apply(value)

        class WhereEnvironment(JSONPathEnvironment):
            def setup_function_extensions(self) -> None:
                super().setup_function_extensions()
                self.function_extensions["number"] = ValueFunction(_number)
                self.function_extensions["lower"] = ValueFunction(_case("lower"))
                self.function_extensions["upper"] = ValueFunction(_case("upper"))

        _WHERE_ENV = WhereEnvironment()
    return _WHERE_ENV


def _direct_test(query: JSONPathQuery) -> Callable[[JSON], object] | None:
    """The filter of ``$[?expr]`` as a function of one item: the expression evaluated the way
    the library's filter selector evaluates it for each element of ``[item]`` (same context:
    the element, and that list as the root), without building a node list per item -- 2.5x
    faster over a whole array. None when the query is not that one selector."""
    try:
        from jsonpath_rfc9535.filter_expressions import FilterContext
        from jsonpath_rfc9535.selectors import FilterSelector
        (segment,) = query.segments
        (selector,) = segment.selectors
    except (ImportError, ValueError, AttributeError):
        return None
    if not isinstance(selector, FilterSelector):
        return None
    expression, env = selector.expression, selector.env

    def test(item: JSON) -> object:
        return expression.evaluate(FilterContext(env=env, current=item,
                                                 root=[item]))

    return test


def _unquoted(text: str) -> Iterator[tuple[int, str]]:
    """(position, character) of ``text`` outside its quoted strings."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            i = quoted_end(text, i)
            continue
        yield i, c
        i += 1


def _lone_equals(text: str) -> int | None:
    """The position of the first ``=`` that is not part of ``==``, ``!=``, ``<=``, ``>=``."""
    for i, c in _unquoted(text):
        if c == "=" and (i == 0 or text[i - 1] not in "=!<>") and text[i + 1:i + 2] != "=":
            return i
    return None


def _nodes(expression: object) -> Iterator[object]:
    """Every node of a filter expression tree, parents first."""
    stack = [expression]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        yield node
        stack.extend(getattr(node, attr, None) for attr in ("right", "left", "expression"))
        stack.extend(reversed(list(getattr(node, "args", None) or ())))


def _quote(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return json.dumps(value)


def _item_path(name: str) -> str:
    from scratch.pathnames import format_jsonpath
    return "@" + format_jsonpath([name])[1:]


def _check_reads_item(text: str, query: JSONPathQuery) -> None:
    """Refuse a filter that reads no field of the item: ``$.status.phase == 'Running'`` (the
    whole document, here the array holding the item) or ``"genre" == "Comedy"`` (two
    strings): both are the same for every item, so they match all or none, silently."""
    from jsonpath_rfc9535.filter_expressions import (
        ComparisonExpression,
        RelativeFilterQuery,
        RootFilterQuery,
        StringLiteral,
    )
    nodes = [node for segment in query.segments for selector in segment.selectors
             for node in _nodes(getattr(selector, "expression", None))]
    roots = [node for node in nodes if isinstance(node, RootFilterQuery)]
    items = [node for node in roots if str(node).startswith("$[0]")]  # $[0] is the item
    roots = [node for node in roots if node not in items]
    if roots:
        example = "@.status.phase"
        try:
            segments = parse_path(str(roots[0])).segments
        except InvalidPattern:
            segments = None
        if segments:
            from scratch.pathnames import format_jsonpath
            example = "@" + format_jsonpath(segments)[1:]
        dollars = {i for i, c in _unquoted(text) if c == "$"}
        fixed = "".join("@" if i in dollars else c for i, c in enumerate(text))
        raise WhereError(f"{argument('where')} {text!r} reads $: use @ for the item "
                         f"({example}), $ is the whole document", fix=_checked(fixed),
                         path=text, position=text.find("$"))
    if items or any(isinstance(node, RelativeFilterQuery) for node in nodes):
        return
    fix: str | None = None
    example = "@.status.phase == 'Failed'"
    for node in nodes:
        if isinstance(node, ComparisonExpression) and isinstance(node.left, StringLiteral):
            right = node.right
            shown = _quote(right.value) if hasattr(right, "value") else str(right)
            example = fix = f"{_item_path(node.left.value)} {node.operator} {shown}"
            break
    raise WhereError(f"{argument('where')} {text!r} reads no field of the item (@): a filter "
                     f"compares fields of the item: {example}", fix=fix, path=text, position=0)


def _at(segments: Sequence[Segment]) -> str:
    from scratch.pathnames import format_jsonpath
    return "@" + format_jsonpath(segments)[1:]


def _field_pairs(query: JSONPathQuery) -> tuple[tuple[str, ParsedPath, str, ParsedPath], ...]:
    """The comparisons of two item fields that null == null makes true (see :class:`Where`)."""
    from jsonpath_rfc9535.filter_expressions import ComparisonExpression, RelativeFilterQuery
    out = []
    for segment in query.segments:
        for selector in segment.selectors:
            for node in _nodes(getattr(selector, "expression", None)):
                if not (isinstance(node, ComparisonExpression)
                        and node.operator in ("==", "<=", ">=")
                        and isinstance(node.left, RelativeFilterQuery)
                        and isinstance(node.right, RelativeFilterQuery)):
                    continue
                try:
                    left = parse_path("$" + str(node.left)[1:])
                    right = parse_path("$" + str(node.right)[1:])
                except InvalidPattern:
                    continue
                if left.singular and right.singular and left.segments and right.segments:
                    out.append((_at(left.segments), left, _at(right.segments), right))
    return tuple(out)


def _checked(fixed: str) -> str | None:
    """``fixed`` when it is a filter that compiles (a fix worth suggesting), else None."""
    try:
        compile_where(fixed)
    except InvalidPattern:
        return None
    return fixed


_BARE_NAME = None  # a name standing alone in a filter (compiled on first use)


def _bare_names(text: str) -> list[tuple[int, str]]:
    """(position, name) of the names in ``text`` outside its strings that stand alone: not
    after ``@``/``$``/``.``/``[``, not a function called, not ``true``/``false``/``null``
    (``deprecated`` meant as ``@.deprecated``)."""
    import re
    global _BARE_NAME
    if _BARE_NAME is None:
        _BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    kept = set(_unquoted(text))  # once: built per character, a long filter took minutes
    outside = "".join(c if (i, c) in kept else " " for i, c in enumerate(text))
    found = []
    for m in _BARE_NAME.finditer(outside):
        before = outside[:m.start()].rstrip()[-1:]
        after = outside[m.end():].lstrip()[:1]
        if before in ("@", "$", ".", "[") or (m.start() and outside[m.start() - 1] in "@$."):
            continue
        if after == "(" or m.group(0) in ("true", "false", "null"):
            continue
        found.append((m.start(), m.group(0)))
    return found


def _bare_name_error(text: str) -> WhereError | None:
    """The refusal of a filter naming a field without ``@.``, when adding it compiles."""
    names = _bare_names(text)
    if not names:
        return None
    fixed = text
    for at, name in reversed(names):
        fixed = fixed[:at] + _item_path(name) + fixed[at + len(name):]
    fix = _checked(fixed)
    if fix is None:
        return None
    at, name = names[0]
    also = "" if fix == _item_path(name) else f", as in {fix}"
    return WhereError(f"{argument('where')} {text!r} names {name} at position {at} without "
                      f"@: a field of the item is {_item_path(name)}{also}", fix=fix,
                      path=text, position=at)


def _check_patterns(text: str, query: JSONPathQuery, offset: int) -> None:
    """Refuse a ``match()``/``search()`` whose pattern is no valid I-Regexp (RFC 9485): RFC
    9535 makes such a test false for every item, so a typo would answer "0 match" without a
    word. The position is the pattern's in ``text``, plus where in the pattern it fails."""
    from jsonpath_rfc9535.filter_expressions import FunctionExtension, StringLiteral
    for segment in query.segments:
        for selector in segment.selectors:
            for node in _nodes(getattr(selector, "expression", None)):
                if not (isinstance(node, FunctionExtension) and node.name in ("match", "search")
                        and len(node.args) == 2 and isinstance(node.args[1], StringLiteral)):
                    continue
                literal = node.args[1]
                problem = _regex_problem(literal.value)
                if problem is None:
                    continue
                reason, inside = problem
                at = max(0, min(len(text), literal.token.index - offset))
                where_in = f" (at position {inside} of the pattern)" if inside is not None else ""
                raise InvalidPattern(
                    f"{argument('where')} {text!r}: the pattern {literal.value!r} of "
                    f"{node.name}() at position {at} is not a valid regular expression: "
                    f"{reason}{where_in}", code="invalid_pattern", path=text, position=at,
                    pattern=literal.value, argument="where")


def _regex_problem(pattern: str) -> tuple[str, int | None] | None:
    """Why ``pattern`` is no I-Regexp match()/search() can use (and where in it), or None."""
    import regex
    from iregexp_check import check
    try:  # the engine match() and search() run the pattern on, for the reason and position
        regex.compile(pattern, regex.VERSION1)
    except regex.error as exc:
        return str(exc.msg), exc.pos
    if not check(pattern):
        return "it uses syntax I-Regexp (RFC 9485) does not have", None
    return None


def compile_where(text: str) -> Where:
    """Compile ``@.a == 1 && @.b`` (also accepted: ``?@.a == 1``, ``[?@.a == 1]``).

    Besides RFC 9535's functions, ``number(@.x)``, ``lower(@.x)`` and ``upper(@.x)`` (see
    :func:`where_env`). Errors: ``invalid_path`` with the 0-based position in ``text``; a
    :class:`WhereError` (with the likely fix) for ``=`` meant as ``==``, ``$`` meant as ``@``,
    a field named without ``@.`` and a filter that reads no field of the item;
    ``invalid_pattern`` for a ``match()``/``search()`` pattern that is no regular expression.
    """
    body = text.strip()
    lead = len(text) - len(text.lstrip())
    if body.startswith("[?") and body.endswith("]"):
        body, lead = body[2:-1], lead + 2
    elif body.startswith("?"):
        body, lead = body[1:], lead + 1
    if not body.strip():
        raise InvalidPattern(f"empty {argument('where')} expression", code="invalid_path",
                             path=text, position=0, argument="where")
    try:
        query = compile_jsonpath(f"$[?{body}]", offset=3 - lead, shown=text, env=where_env())
    except InvalidPattern:
        at = _lone_equals(text)
        if at is None:
            bare = _bare_name_error(text)
            if bare is not None:
                raise bare from None
            raise
        fixed = text[:at] + "==" + text[at + 1:]
        raise WhereError(f"{argument('where')} {text!r} has = at position {at}: use == to "
                         "compare", fix=_checked(fixed),
                         path=text, position=at) from None
    _check_reads_item(text, query)
    _check_patterns(text, query, 3 - lead)
    return Where(text, query, _direct_test(query), _field_pairs(query))


# -------------------------------------------------------------------------------------- rows

MAX_FIELDS = 100  # --fields of one iterate-over: a row of more is not something to read


def split_fields(text: str) -> list[str]:
    """The fields of a ``--fields a,b.c`` option: comma-separated, blanks dropped.

    More than :data:`MAX_FIELDS` (or none) is refused at once (``too_many_fields`` /
    ``invalid_argument``), before any item is read: each field costs work per item.
    """
    fields = [f.strip() for f in text.split(",") if f.strip()]
    if not fields:
        raise UsageError(f"{argument('fields')} needs at least one field, e.g. metadata.name",
                         code="invalid_argument", argument="fields")
    check_field_count(len(fields))
    return fields


def check_field_count(n: int) -> None:
    """Refuse more than :data:`MAX_FIELDS` fields at once (``too_many_fields``)."""
    if n > MAX_FIELDS:
        raise UsageError(f"{n:,} fields asked for; {argument('fields')} takes at most "
                         f"{MAX_FIELDS}", code="too_many_fields", fields=n, limit=MAX_FIELDS,
                         argument="fields")



@dataclass
class Rows:
    """The answer of :func:`iterate_rows`.

    ``rows``: ``{"_index": i, <field>: value, ...}``; a previewed value has an entry in
    ``row["_truncated"][field] = {"path": full dot path, "length": full length}``.
    ``next_offset`` is the array index to continue from, None when the array is exhausted.
    """

    fields: list[str]
    rows: list[dict[str, JSON]]
    scanned: int
    window: Window | None
    next_offset: int | None
    where: str | None = None


def _field_value(item: JSON, parsed: ParsedPath) -> tuple[JSON, tuple[str | int, ...] | None]:
    """(value, concrete location) of one field in one item; (None, None) when missing."""
    try:
        matches = list(iter_matches(item, parsed, explain_missing=False))
    except KeyPathNotFound:
        return None, None  # a missing field is just null in a row
    if parsed.function is not None:  # len(PATH): a number, never cut
        from scratch.query.paths import apply_function
        found = (matches[0].value if matches else None) if parsed.singular else \
            [m.value for m in matches]
        return apply_function(parsed, found), None
    if parsed.singular:
        return (matches[0].value, matches[0].location) if matches else (None, None)
    return [m.value for m in matches] or None, None


def _preview(value: JSON, limit: int) -> tuple[JSON, int | None]:
    """(shown value, full length if cut)."""
    if isinstance(value, str):
        return (value, None) if len(value) <= limit else (value[:limit] + ELLIPSIS, len(value))
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return (value, None) if len(text) <= limit else (text[:limit] + ELLIPSIS, len(text))
    return value, None


def iterate_rows(items: Iterable[JSON], fields: Sequence[str], *, offset: int = 0,
                 limit: int | None = None, where: str | Where | None = None,
                 preview_chars: int = 200, array_location: Sequence[str | int] = (),
                 max_rows: int | None = None, total: int | None = None,
                 pre_windowed: bool = False, paths: Sequence[ParsedPath] | None = None) -> Rows:
    """One row per item of the window (that passes ``where``), with the chosen fields.

    ``fields`` are paths relative to an item (dot path, pointer or JSONPath; ``.`` is the item
    itself; a path with ``*`` gives a list). ``paths``, when given, are the parsed fields (one
    per field; a caller may read a field name differently, e.g. a CSV column named ``a.b``).
    ``array_location`` is the array's concrete location in the document, used to write the
    full path of previewed values. ``max_rows`` stops early (then ``next_offset`` is the index
    after the last item looked at).
    """
    check_field_count(len(fields))
    parsed = list(paths) if paths is not None else [parse_path(f) for f in fields]
    flt = compile_where(where) if isinstance(where, str) else where
    rows: list[dict[str, JSON]] = []
    scanned = 0
    stopped = False
    for index, item in _window(items, offset, limit, pre_windowed):
        if max_rows is not None and len(rows) >= max_rows:
            stopped = True
            break
        scanned += 1
        if flt is not None and not flt(item):
            continue
        row: dict[str, JSON] = {"_index": index}
        cut: dict[str, JSON] = {}
        for name, p in zip(fields, parsed, strict=True):
            value, location = _field_value(item, p)
            shown, full = _preview(value, preview_chars)
            row[name] = shown
            if full is not None:
                loc = location if location is not None else tuple(p.segments or ())
                where_path = (format_path([*array_location, index, *loc]) if p.singular
                              else format_path([*array_location, index]))
                cut[name] = {"path": where_path, "length": full}
        if cut:
            row["_truncated"] = cut
        rows.append(row)
    total = _known_total(items, total, offset, limit, scanned, pre_windowed, stopped)
    end = offset + scanned
    next_offset: int | None = end
    if total is not None and end >= total:
        next_offset = None
    elif not stopped and limit is None and total is None:
        next_offset = None  # pre-windowed items without a total: we saw all we were given
    window = _window_info(offset, limit, scanned, total)
    if stopped and window is None:
        window = {"offset": offset, "limit": limit, "total": total}
    return Rows(list(fields), rows, scanned, window, next_offset,
                None if flt is None else flt.text)


# ----------------------------------------------------------------------------- absent fields

SHOWN_KEYS = 8  # keys an absent-field warning lists before "... N more"


class Absent(NamedTuple):
    """A field that no item of a window has, and what the items have instead.

    ``at``: the deepest prefix of the field that some item has (``()``: the items themselves);
    ``rest``: the segments after the one no value at ``at`` has (``None``: no prefix to
    explain, e.g. a JSONPath with filters); ``keys``: the object keys seen at ``at`` (first
    seen first); ``types``: the JSON types of the values at ``at``; ``near``: keys at ``at``
    that look like the missing segment (best first).
    """

    field: str
    at: tuple[Segment, ...]
    rest: tuple[Segment, ...] | None
    keys: list[str]
    types: list[str]
    near: list[str]


def _present(item: JSON, parsed: ParsedPath) -> bool:
    try:
        return next(iter_matches(item, parsed, explain_missing=False), None) is not None
    except KeyPathNotFound:
        return False


def _down(nodes: list[JSON], seg: Segment) -> list[JSON]:
    """The values one step below ``nodes`` (dot-path semantics; ``*`` takes every child)."""
    out: list[JSON] = []
    for node in nodes:
        if isinstance(seg, Wildcard):
            if isinstance(node, dict):
                out.extend(node.values())
            elif isinstance(node, list):
                out.extend(node)
        elif isinstance(node, dict):
            key = seg if isinstance(seg, str) else str(seg)
            if key in node:
                out.append(node[key])
        elif isinstance(node, list) and isinstance(seg, int) and not isinstance(seg, bool):
            i = seg + len(node) if seg < 0 else seg
            if 0 <= i < len(node):
                out.append(node[i])
    return out


def close_keys(want: str, keys: Sequence[str]) -> list[str]:
    """Keys that look like ``want``: a case-insensitive equal first, then difflib's picks."""
    import difflib
    lower = {k.lower(): k for k in reversed(keys)}
    close = [lower[want.lower()]] if want.lower() in lower and want not in keys else []
    close += difflib.get_close_matches(want, keys, n=3, cutoff=0.6)
    return list(dict.fromkeys(k for k in close if k != want))[:3]


def absent_field(items: Iterable[JSON], field_text: str, parsed: ParsedPath | None = None,
                 *, skip: Collection[int] = (), offset: int = 0) -> Absent | None:
    """``None`` when some item of ``items`` (array indexes from ``offset``; those in ``skip``
    are not JSON and do not count) has ``field_text``; else what the items have instead.

    Presence is what ``iterate_rows`` finds (a field holding null is present). With no item to
    look at there is nothing to say (None)."""
    p = parsed if parsed is not None else parse_path(field_text)
    pool = [item for i, item in enumerate(items, offset) if i not in skip]
    if not pool or any(_present(item, p) for item in pool):
        return None
    if p.segments is None:  # a JSONPath with filters: no prefix to explain
        return Absent(field_text, (), None, [], [], [])
    segments = p.segments
    nodes = pool
    depth = 0
    while depth < len(segments):
        below = _down(nodes, segments[depth])
        if not below:
            break
        nodes = below
        depth += 1
    if depth == len(segments):  # found by plain steps but not by the query (JSONPath rules)
        return Absent(field_text, tuple(segments), None, [], [], [])
    keys: dict[str, None] = {}
    types: dict[str, None] = {}
    for node in nodes:
        types[json_type(node)] = None
        if isinstance(node, dict):
            keys.update(dict.fromkeys(node))
    failed = segments[depth]
    if depth == 0 and len(segments) > 1 and all(isinstance(x, str) for x in segments):
        joined = ".".join(str(x) for x in segments)
        if joined in keys:  # one key with dots in its name (Zeek's id.orig_h, a CSV column)
            return Absent(field_text, (), (), list(keys), list(types), [joined])
    near = close_keys(str(failed), list(keys)) if isinstance(failed, (str, int)) else []
    return Absent(field_text, tuple(segments[:depth]), tuple(segments[depth + 1:]), list(keys),
                  list(types), near)


def where_paths(where: Where) -> list[tuple[str, ParsedPath]]:
    """The plain relative paths (``@.a.b``, ``@['x y']``) a ``--where`` expression compares or
    passes to a function, as (``@.a.b``, the path relative to the item). Left out: existence
    tests (``!@.deletionTimestamp`` is about absence) and queries with their own filters or
    wildcards (what they select is not one key)."""
    from scratch.pathnames import format_jsonpath
    out: dict[str, ParsedPath] = {}

    def walk(node: object, valued: bool) -> None:
        kind = type(node).__name__
        if kind == "RelativeFilterQuery":
            if not valued:
                return
            try:
                parsed = parse_path("$" + str(node)[1:])
            except InvalidPattern:
                return
            if parsed.segments and parsed.singular:
                out.setdefault("@" + format_jsonpath(parsed.segments)[1:], parsed)
            return
        valued = kind in ("ComparisonExpression", "FunctionExtension")
        for attr in ("expression", "left", "right"):
            child = getattr(node, attr, None)
            if child is not None:
                walk(child, valued)
        for arg in getattr(node, "args", None) or ():
            walk(arg, valued)

    for segment in where._query.segments:
        for selector in segment.selectors:
            walk(getattr(selector, "expression", None), False)
    return list(out.items())


def _compared(where: Where) -> list[tuple[str, ParsedPath, str, object, str]]:
    """The comparisons of one item field with a literal in ``where``, as (the field as
    written, its path, the operator, the literal's value, the comparison as written)."""
    from jsonpath_rfc9535.filter_expressions import (
        ComparisonExpression,
        FilterExpressionLiteral,
        RelativeFilterQuery,
    )

    from scratch.pathnames import format_jsonpath
    out = []
    for segment in where._query.segments:
        for selector in segment.selectors:
            for node in _nodes(getattr(selector, "expression", None)):
                if not isinstance(node, ComparisonExpression):
                    continue
                sides = [(node.left, node.right), (node.right, node.left)]
                for field_side, literal in sides:
                    if not (isinstance(field_side, RelativeFilterQuery)
                            and isinstance(literal, FilterExpressionLiteral)):
                        continue
                    try:
                        parsed = parse_path("$" + str(field_side)[1:])
                    except InvalidPattern:
                        continue
                    if not (parsed.singular and parsed.segments):
                        continue
                    name = "@" + format_jsonpath(parsed.segments)[1:]
                    shown = _quote(literal.value) if literal.value is not None else "null"
                    text = (f"{name} {node.operator} {shown}" if field_side is node.left
                            else f"{shown} {node.operator} {name}")
                    out.append((name, parsed, node.operator, literal.value, text))
    return out


def _number_like(value: object) -> bool:
    return _number(value) is not _nothing()


def _nothing() -> object:
    from jsonpath_rfc9535 import NOTHING
    return NOTHING


def comparison_warnings(where: Where, items: Iterable[JSON]) -> list[str]:
    """Warnings for a ``--where`` comparison that meets only values of another type than its
    literal in ``items`` (a sample of the array): ``@.PRIORITY <= 3`` where PRIORITY holds
    strings (journald's) is false for every item, as RFC 9535 has it, so the answer would be
    0 without a word. Says what the field holds and the comparison that reads it
    (``number(@.PRIORITY) <= 3``, or the literal unquoted)."""
    pool = list(items)
    out: list[str] = []
    seen: set[str] = set()
    for name, parsed, _operator, literal, text in _compared(where):
        if text in seen or literal is None or isinstance(literal, bool):
            continue
        values = [v for item in pool for v in _values(item, parsed) if v is not None]
        if not values:
            continue
        if isinstance(literal, (int, float)) and all(isinstance(v, str) for v in values):
            seen.add(text)
            numbers = sum(1 for v in values if _number_like(v))
            shown = ", ".join(_quote(v) for v in list(dict.fromkeys(values))[:3])
            if numbers:
                fixed = text.replace(name, f"number({name})", 1)
                out.append(f"{text} met only strings in {name} (e.g. {shown}), and a string "
                           f"never compares with a number; {fixed} reads them as numbers")
            else:
                out.append(f"{text} met only strings in {name} (e.g. {shown}), and a string "
                           "never compares with a number")
        elif isinstance(literal, str) and all(isinstance(v, (int, float)) and
                                              not isinstance(v, bool) for v in values):
            seen.add(text)
            shown = ", ".join(json.dumps(v) for v in list(dict.fromkeys(values))[:3])
            hint = (f"; {text.replace(_quote(literal), literal, 1)} compares numbers"
                    if _number_like(literal) else "")
            out.append(f"{text} met only numbers in {name} (e.g. {shown}), and a number "
                       f"never equals a string{hint}")
    return out


def _values(item: JSON, parsed: ParsedPath) -> list[JSON]:
    try:
        return [m.value for m in iter_matches(item, parsed, explain_missing=False)]
    except (InvalidPattern, KeyPathNotFound, RecursionError):
        return []


def _either(options: list[str]) -> str:
    return options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]


def absent_warning(a: Absent, first: int, last: int, *, noun: str = "item",
                   where: bool = False, columns: bool = False) -> str:
    """The warning for a field (``where``: a ``--where`` key) that items ``first..last`` lack:
    ``field metadata.nme is in none of items 0..2; did you mean metadata.name? (keys at
    metadata: name, namespace, ...)``. ``columns``: the items are CSV rows, whose keys are
    columns (written as they are: ``--fields`` takes a column name verbatim)."""
    from scratch.pathnames import format_jsonpath, format_key

    def path(segments: Sequence[Segment]) -> str:
        if where:
            return "@" + format_jsonpath(segments)[1:]
        if columns and len(segments) == 1 and isinstance(segments[0], str):
            return segments[0]
        return format_path(segments)

    span = f"{noun} {first}" if first == last else f"{noun}s {first}..{last}"
    name = f"where key {a.field}" if where else f"field {a.field}"
    text = f"{name} is not in {span}" if first == last else f"{name} is in none of {span}"
    if a.rest is not None and a.near:
        text += f"; did you mean {_either([path([*a.at, k, *a.rest]) for k in a.near])}?"
    if a.rest is None:
        return text
    if a.keys:
        label = ("columns" if columns and not a.at else
                 f"keys at {format_path(a.at)}" if a.at else f"keys of the {noun}s")
        fmt = (lambda k: k) if columns and not a.at else format_key
        shown = ", ".join(fmt(k) for k in a.keys[:SHOWN_KEYS])
        if len(a.keys) > SHOWN_KEYS:
            shown += f", ... {len(a.keys) - SHOWN_KEYS} more"
        return f"{text} ({label}: {shown})"
    types = "|".join(a.types)
    if a.at:
        return f"{text} ({format_path(a.at)} is {types})"
    return f"{text} (the {noun}s are {types})"
