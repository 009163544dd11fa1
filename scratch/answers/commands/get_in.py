"""get-in: the value at a path, from the index, as a candidate answer.

Invariants:
- A plain path (dot path, JSON Pointer, simple JSONPath chain) is answered through the index:
  only the lines of the deepest indexed ancestor are parsed. JSONPath with filters or
  wildcards evaluates over the parsed document. A big container of a canonical JSON entry is
  paged from its stored lines (see :mod:`scratch.answers.values.lines`).
- Rendered values are 2-space JSON (key order kept); strings print as their text. Paging by
  line (offset/limit) and fit work on those rendered lines, and ``next`` continues exactly
  where the answer stopped.
- An NDJSON line that is not JSON: a path into its item is a ``format_error`` naming the line
  (with the ``slice`` that shows it); an answer over the whole array has null in its place and
  warns with the line numbers.
- A refused get-in suggests the children whose answers fit (up to three keys of an object, or
  the first item of an array, else the array's item-schema), a limit of the most lines that
  fit, and fit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, TypedDict, TypeVar

from scratch.answers.commands._args import FIT, KEY_FIELD, LIMIT, OFFSET, PATH, REF
from scratch.answers.kernel.candidate import Alternative, Candidate, Some
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.target import Target, open_target
from scratch.answers.values.lines import (
    LineSource,
    StoredContainer,
    TextLines,
    ValueLines,
    items_of_list,
    items_of_stored,
    stored_container,
    value_source,
)
from scratch.answers.values.rendered import not_json_warning, render_value, suggest_slice
from scratch.calls import Call, call
from scratch.declare import Arg, Command, Tool
from scratch.errors import FormatError, KeyPathNotFound, argument

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step
    from scratch.answers.rows.items import Item, Row

CHILDREN_TRIED = 12  # keys of an object whose get-in is sized before giving up
SIZE_FIRST = 4  # a child whose stored lines cost more than this many caps is not read at all
T = TypeVar("T")
IN_MEMORY_LINES = 2000  # a whole value this small is rendered in memory even when refused


class Match(TypedDict):
    """One value a JSONPath with wildcards or filters found, and where."""

    path: str
    value: Item


def _get_in_data(target: Target, path: str, vtype: str, value: Item,
                 matches: list[Match] | None, paging: dict[str, int], body: str,
                 windowed: bool, fit: bool, cut: bool) -> dict[str, object]:
    """The data of a get-in answer (the one place that decides between value and text):
    the value itself when all of it is shown unwindowed, else the text of the lines shown."""
    data: dict[str, object] = {"name": target.name, "version": target.version, "path": path,
                               "type": vtype, **paging}
    if matches is not None:
        data["matches"] = matches if not (windowed or fit) else None
        data["text"] = body
    elif windowed or cut or isinstance(value, str):
        data["text"] = body
    else:
        data["value"] = value
    return data


KEYS = Arg("The object's keys, with types and sizes.", flags=("--keys",))
FIELDS = Arg("Only these comma-separated fields of each item (a.b,c).", flags=("--fields",),
             metavar="A,B.C")
COUNT = Arg("Just the number of nodes path selects.", flags=("--count",))


def get_in(ctx: Context, ref: Annotated[str, REF], path: Annotated[str, PATH],
           keys: Annotated[bool, KEYS] = False, fields: Annotated[list[str] | None, FIELDS] = None,
           count: Annotated[bool, COUNT] = False, offset: Annotated[int, OFFSET] = 0,
           limit: Annotated[int | None, LIMIT] = None, fit: Annotated[bool, FIT] = False,
           key_field: Annotated[str | None, KEY_FIELD] = None, *, asked: Call) -> Candidate:
    from scratch.answers.commands.iterate_over import split_fields
    from scratch.errors import UsageError
    names = split_fields(fields)
    if sum((keys, bool(names), count)) > 1:
        raise UsageError(f"{argument('keys')}, {argument('fields')} and {argument('count')} "
                         "are three answers: give one", code="invalid_argument",
                         argument="keys")
    asked = asked.with_args(fields=names or None)  # split at commas
    target = open_target(ctx, ref)
    if keys or names or count:
        try:
            if target.format in ("csv", "tsv") or target.format == "log":
                asked_for = "keys" if keys else "fields" if names else "count"
                raise UsageError(f"{argument(asked_for)} reads JSON, YAML and NDJSON; a "
                                 f"{target.format} entry's rows are items: see schema, or "
                                 "iterate-over with path '.'", code="invalid_argument",
                                 argument=asked_for,
                                 suggestions=[call("schema", ref=target.ref),
                                              call("iterate-over", ref=target.ref, path=".",
                                                   count=True)])
            if keys:
                from scratch.answers.values.keys import keys_answer
                return keys_answer(target, path, asked, offset=offset, limit=limit, fit=fit)
            if count:
                return _count(target, path, asked)
            return _projected(target, path, names, asked, offset=offset, limit=limit, fit=fit,
                              key_field=key_field)
        except BaseException:
            target.index.close()
            raise
    return _get_in(target, path, asked, offset=offset, limit=limit, fit=fit)


def _count(target: Target, path: str, asked: Call) -> Candidate:
    """How many nodes ``path`` selects (a JSONPath query: its matches; a plain path: 1)."""
    import time
    from dataclasses import replace

    from scratch.answers.rows.counting import count_result
    from scratch.index.structure import lines_left_out
    from scratch.query.paths import evaluate, parse_path
    started = time.monotonic()
    parsed = parse_path(path)
    if parsed.singular:
        segments = list(parsed.names or ())
        info = _located(target, lambda: target.index.node(segments))
        if info is None or not info.complete:  # says precisely what is missing
            _located(target, lambda: target.index.value_at(segments))
        n = 1
    else:
        n = len(_located(target, lambda: evaluate(target.index.value_at([]), parsed)))
    seconds = time.monotonic() - started
    data = {"name": target.name, "version": target.version, "path": path,
            "seconds": round(seconds, 3)}
    answer = count_result("get-in", asked, data, n,
                          f"{n:,} {'node' if n == 1 else 'nodes'} match {path} "
                          f"({seconds:.2f} s)", "get_in_too_large",
                          on_close=target.index.close)
    answer.result = replace(answer.result,
                            warnings=not_json_warning(target, lines_left_out(target.index)))
    return answer


def _projected(target: Target, path: str, names: list[str], asked: Call, *, offset: int,
               limit: int | None, fit: bool, key_field: str | None = None) -> Candidate:
    """The items of the array at ``path`` (or the matches of a JSONPath query, or one object)
    with only ``names``: one compact JSON object per line, missing fields null. A map of
    records none of whose own fields is asked for gives its records, each with its key
    (``_key``, or ``key_field``) first; a path with ``[*]`` whose matches are all arrays gives
    their items, flattened as iterate-over reads them (``_parent`` first)."""
    from scratch.answers.kernel.result import compact_json
    from scratch.answers.rows.arrays import (
        KEY_FIELD,
        check_key_field,
        is_record_map,
        key_name,
        suggest_key_field,
    )
    from scratch.errors import UsageError
    from scratch.index.structure import lines_left_out
    from scratch.query.aggregate import field_getter
    from scratch.query.paths import evaluate, parse_path
    from scratch.valuecounts import MISSING
    parsed = parse_path(path)
    picked = check_key_field(key_field) if key_field is not None else None
    key = picked or KEY_FIELD
    if parsed.singular:
        value = _located(target, lambda: target.index.value_at(list(parsed.names or ())))
    else:
        value = [m.value for m in _located(
            target, lambda: evaluate(target.index.value_at([]), parsed))]
    getters = [(n, field_getter(n)) for n in names]
    keyed = False
    if is_record_map(value) and value and all(get(value) is MISSING for _, get in getters):
        # a map of records whose own fields are not the ones asked for: its records are
        # the rows, each with its key first
        keyed = True
        try:
            key = key_name(target, path, list(value.values()), picked)
        except UsageError as exc:
            suggest_key_field(exc, asked)
            raise
        names = [n for n in names if n != key]
        getters = [(n, g) for n, g in getters if n != key]

    def project(item: Item) -> Row:
        row: Row = {}
        for n, get in getters:
            v = get(item)
            row[n] = None if v is MISSING else v
        return row

    projected: Row | list[Row]
    nested = None
    if not parsed.singular and value and all(isinstance(v, list) for v in value):
        # items[*].status.containerStatuses: every match an array, so their items are the
        # rows, flattened as iterate-over reads them, each with its parent first
        from scratch.answers.rows.arrays import rows_at
        try:
            nested = rows_at(target, path, picked)
        except UsageError:
            nested = None
    if keyed:
        projected = [{key: k, **project(v)} for k, v in value.items()]
        names = [key, *names]
    elif nested is not None and nested.kind == "nested":
        added = [a for a in nested.added if a not in names]
        projected = [{**{a: row.get(a) for a in added}, **project(row)} for row in nested.rows]
        names = [*added, *names]
    else:
        projected = ([project(v) for v in value] if isinstance(value, list)
                     else project(value))

    def rows_text(rows: Sequence[object]) -> str:
        body = "".join(f"  {compact_json(r)}{',' if i < len(rows) - 1 else ''}\n"
                       for i, r in enumerate(rows))
        return f"[\n{body}]\n" if rows else "[]\n"

    source: LineSource
    if isinstance(projected, list):
        text = rows_text(projected)
        source = items_of_list(projected, rows_text) if projected else TextLines(text)
    else:
        text = compact_json(projected) + "\n"
        source = TextLines(text)
    vtype = "array" if isinstance(projected, list) else "object"
    warnings = not_json_warning(target, lines_left_out(target.index))

    def make_data(paging: dict[str, int], body: str, windowed: bool, fit: bool,
                  cut: bool) -> dict[str, object]:
        data = _get_in_data(target, path, vtype, projected, None, paging, body, windowed, fit,
                            cut)
        data["fields"] = names
        return data

    return ValueLines(asked, source, offset=offset, limit=limit, fit=fit,
                      make_data=make_data, warnings=warnings, on_close=target.index.close)


def get_in_of(target: Target, path: str) -> Candidate:
    """``get-in REF PATH`` of an open target, which stays open (for sizing suggestions)."""
    c = _get_in(target, path, call("get-in", ref=target.ref, path=path), offset=0,
                limit=None, fit=False, owner=False)
    return c


def _get_in(target: Target, path: str, asked: Call, *, offset: int, limit: int | None,
            fit: bool, owner: bool = True) -> Candidate:
    from scratch.jsonvalues import json_type
    from scratch.query.paths import evaluate, parse_path
    close = target.index.close if owner else None
    if target.format in ("csv", "tsv"):  # rows (N) and cells (N.column), from the row index
        from scratch.answers.rows.csv_rows import get_in as get_in_rows
        return get_in_rows(target, path, asked, offset=offset, limit=limit, fit=fit,
                           owner=owner)
    try:
        parsed = parse_path(path)
        segments = list(parsed.names or ())
        if parsed.singular:  # dot paths, pointers and plain JSONPath chains: through the index
            stored = stored_container(target.index, segments, target.spec.base)
            if stored is not None and (offset or limit or fit or len(stored) > IN_MEMORY_LINES):
                return _stored(target, path, stored, asked, offset=offset, limit=limit, fit=fit,
                               close=close)
            value = _located(target, lambda: target.index.value_at(segments))
            matches: list[Match] | None = None
        else:
            found = _located(target, lambda: evaluate(target.index.value_at([]), parsed))
            matches = [{"path": m.path, "value": m.value} for m in found]
            value = [m.value for m in found]
    except BaseException:
        if owner:
            target.index.close()
        raise
    text = render_value(value) if matches is None else "".join(
        f"{m['path']}: {render_value(m['value'])}" for m in matches)
    vtype = json_type(value) if matches is None else "matches"
    from scratch.index.structure import lines_left_out
    warnings = not_json_warning(target, lines_left_out(target.index))

    def make_data(paging: dict[str, int], body: str, windowed: bool, fit: bool,
                  cut: bool) -> dict[str, object]:
        return _get_in_data(target, path, vtype, value, matches, paging, body, windowed, fit,
                            cut)

    def children() -> list[Step]:
        if matches is None and isinstance(value, (dict, list)):
            keys = list(value) if isinstance(value, dict) else None
            return _children(target, segments, value, keys, len(value))
        return []

    lines = value_source(value) if matches is None else TextLines(text)
    return ValueLines(asked, lines, offset=offset, limit=limit, fit=fit,
                      make_data=make_data, warnings=warnings, alternatives=children,
                      on_close=close)


def _located(target: Target, find: Callable[[], T]) -> T:
    return located(target, find)


def located(target: Target, find: Callable[[], T], command: str = "get-in") -> T:
    """``find()``, with runnable suggestions on a missing path (``command`` of the paths
    that exist) or a region that does not parse."""
    try:
        return find()
    except KeyPathNotFound as exc:
        _suggest(exc, target, command)
        raise
    except FormatError as exc:
        suggest_slice(exc, target)
        raise


def _stored(target: Target, path: str, stored: StoredContainer, asked: Call, *, offset: int,
            limit: int | None, fit: bool, close: Callable[[], None] | None) -> Candidate:
    """get-in of a container of a canonical JSON entry, paged (or refused) from its stored
    lines: a page of a 100 MB subtree reads the page, not the subtree."""
    info = stored.info
    whole: list[Item] = []  # the value, read only when an answer shows all of it

    def make_data(paging: dict[str, int], body: str, windowed: bool, fit: bool,
                  cut: bool) -> dict[str, object]:
        data: dict[str, object] = {"name": target.name, "version": target.version,
                                   "path": path, "type": info.type, **paging}
        if windowed or cut:
            data["text"] = body
        else:  # all of it shown: the value itself, as without --fit
            if not whole:
                whole.append(target.index.value_at(list(info.path)))
            data["value"] = whole[0]
        return data

    def children() -> list[Step]:
        keys = info.keys if info.type == "object" else None
        return _children(target, list(info.path), None, keys, info.length)

    source: LineSource = (items_of_stored(target.index, stored, info.path)
                          if info.type == "array" else stored)
    return ValueLines(asked, source, offset=offset, limit=limit, fit=fit, make_data=make_data,
                      alternatives=children, on_close=close)


def _children(target: Target, segments: list[str | int], value: Item,
              keys: Iterable[str | int] | None, length: int | None) -> list[Step]:
    """The plan step offering ``get-in`` of the first children whose answers fit (up to three
    keys of an object, one of the first items of an array); for an array none of whose first
    items fits, its ``item-schema`` at a depth that fits."""
    from scratch.pathnames import format_path
    if keys is not None:
        candidates: list[str | int] = list(keys)[:CHILDREN_TRIED]
        most = 3
    else:
        candidates = list(range(min(length or 0, 3)))
        most = 1
    options = [Alternative(call=call("get-in", ref=target.ref, path=format_path([*segments, k])),
                           candidate=_child(target, [*segments, k], value, k))
               for k in candidates]
    otherwise: list[Alternative] = []
    if keys is None and length:
        otherwise = _item_schemas(target, format_path(segments))
    return [Some(options, most=most, otherwise=otherwise)]


def _child(target: Target, segments: list[str | int], parent: Item, key: str | int
           ) -> Callable[[int], Candidate | None]:
    """A function of the cap giving the candidate of ``get-in`` at ``segments`` (a child of a
    value in memory, or of the stored lines), or None when its stored lines are far over the
    cap (not worth reading)."""
    from scratch.jsonvalues import json_type
    from scratch.pathnames import format_path
    path = format_path(segments)

    def build(cap: int) -> Candidate | None:
        if parent is not None:
            value = parent[key]
            from scratch.answers.kernel.result import compact_json
            if len(compact_json(value)) > 16 * SIZE_FIRST * cap:  # far too big to count
                return None
        else:
            info = target.index.node(segments)
            if info is None or not info.complete:
                return None
            tokens = target.index.range_tokens(info.start_line, info.end_line, target.spec.base)
            if tokens is None or target.spec.scale(tokens) > SIZE_FIRST * cap:
                return None
            value = target.index.value_at(segments)
        asked = call("get-in", ref=target.ref, path=path)
        vtype = json_type(value)

        def make_data(paging: dict[str, int], body: str, windowed: bool, fit: bool,
                      cut: bool) -> dict[str, object]:
            return _get_in_data(target, path, vtype, value, None, paging, body, windowed, fit,
                                cut)

        return ValueLines(asked, value_source(value), offset=0, limit=None,
                          fit=False, make_data=make_data)

    return build


def _item_schemas(target: Target, path: str) -> list[Alternative]:
    """``item-schema`` of the array at ``path``, at the first of all depths, 2 and 1 that
    fits."""
    from functools import partial

    from scratch.answers.commands.item_schema import item_schema_candidate

    def at_depth(depth: int | None, cap: int) -> Candidate:
        return item_schema_candidate(target, path, depth=depth)

    return [Alternative(call=call("item-schema", ref=target.ref, path=path, depth=d),
                        candidate=partial(at_depth, d)) for d in (None, 2, 1)]


def _suggest(exc: KeyPathNotFound, target: Target, command: str = "get-in") -> None:
    """Make sure a missing path comes with calls the agent can run as they are."""
    import difflib

    from scratch.pathnames import format_key
    d = exc.details
    if d.get("suggestions"):
        d["suggestions"] = [s if isinstance(s, Call) else call(command, ref=target.ref,
                                                               path=str(s))
                            for s in exc.detail_list("suggestions")]
        return
    prefix = str(d.get("valid_prefix") or "")
    sep = "." if prefix not in ("", ".") else ""
    base = prefix if prefix not in ("", ".") else ""
    out = []
    keys = [str(k) for k in exc.detail_list("available_keys")]
    close = difflib.get_close_matches(str(d.get("failed_segment", "")), keys, n=3, cutoff=0.5)
    for key in close or keys[:3]:
        out.append(call(command, ref=target.ref, path=base + sep + format_key(key)))
    if d.get("array_length"):
        out.append(call(command, ref=target.ref, path=base + sep + "0"))
    out.append(call("schema", ref=target.ref))
    d["suggestions"] = out


COMMAND = Command(
    "get-in", "The value at PATH in REF (only that part is read). Strings page by line with "
    "--offset/--limit. A missing path says what exists instead.\n\n"
    "Negative indexes count from the end: -1, items.-1.metadata, $.items[-1]; so does a "
    "negative --offset (-20: the last 20 lines).\n\n"
    "--keys lists an object's keys with the type and size of each value (an array: its "
    "length and item types); --fields a,b.c keeps only those fields of each item of an "
    "array (of each record of a map of records, with its key in _key; of each nested item "
    "of items[*].x, with _parent); --count gives "
    "the number of nodes a JSONPath query selects.\n\n"
    "Example: scratch get-in 1a2b items.0.metadata\n\n"
    "Example: scratch get-in 1a2b '$.items[?@.status.phase==\"Failed\"]' --fields "
    "metadata.name,status.reason",
    get_in,
    tools=(Tool("get_in", "The value at path of a JSON/YAML/CSV entry (items.-1: the last).",
                names={"ref": "file"},
                args=("ref", "path", "offset", "limit", "fit", "keys", "fields", "count"),
                toolset="explore"),),
    aliases=("get_in",))
