"""get-in --keys: what an object holds (each key with its value's type and size) or what an
array holds (its length and item types), without the values.

Invariants:
- An object's answer is one row per key, in the object's order: ``key``, ``type``, ``length``
  (keys of an object, items of an array, characters of a string; empty for other scalars) and
  ``tokens``, about what ``get-in`` of that key costs: the index's price of its stored lines
  when the entry is stored as get-in prints it (canonical JSON), else the rendered value
  counted (values too big to render are priced from their stored lines). Rows page like any
  list (``--offset``/``--limit``/``--fit``).
- An array's answer is one line: its length and the count of each item type.
- Keys are read through the index; only the values whose size it cannot tell are parsed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from scratch.answers.kernel.candidate import Candidate, Fixed
from scratch.answers.kernel.result import Result
from scratch.answers.kernel.target import Target
from scratch.answers.rows.lists import RowList, cell_text
from scratch.calls import Call, call
from scratch.errors import UsageError, argument
from scratch.words import plural

if TYPE_CHECKING:
    from scratch.answers.rows.items import Item

RENDER_LIMIT_TOKENS = 200_000  # a value whose stored lines cost more is not rendered to count


class KeyRow(TypedDict):
    """One key of an object: its value's JSON type, length and get-in price."""

    key: str
    type: str
    length: int | None
    tokens: int | None


def _length(value: object) -> int | None:
    if isinstance(value, (dict, list, str)):
        return len(value)
    return None


def _tokens(target: Target, segments: list[str | int], value: Item) -> int | None:
    """About what ``get-in`` of the value at ``segments`` prints (see the module docstring)."""
    from scratch.errors import ScratchError
    index, spec = target.index, target.spec
    info = None
    try:
        info = index.node(segments)
    except (ScratchError, OSError):
        info = None
    if info is not None and info.complete:
        span = index.range_tokens(info.start_line, info.end_line, spec.base)
        if span is not None and (getattr(index, "layout", None) == "canonical"
                                 or span > RENDER_LIMIT_TOKENS):
            return int(spec.scale(span))
    from scratch.answers.values.rendered import render_value
    from scratch.tokens import count_text
    return count_text(render_value(value), spec)


def _indexed_rows(target: Target, segments: list[str | int]) -> list[KeyRow] | None:
    """The rows of an object of a canonical JSON entry from the index alone (no value
    parsed), or None when the index does not hold them all."""
    from scratch.errors import ScratchError
    index, spec = target.index, target.spec
    if getattr(index, "layout", None) != "canonical":
        return None
    try:
        info = index.node(segments)
        if (info is None or not info.complete or info.type != "object" or info.keys is None
                or len(info.keys) != info.length):
            return None
        rows: list[KeyRow] = []
        for key in info.keys:
            child = index.node([*segments, key])
            if child is None or not child.complete:
                return None
            span = index.range_tokens(child.start_line, child.end_line, spec.base)
            length = child.length if child.type in ("object", "array", "string") else None
            rows.append({"key": key, "type": child.type, "length": length,
                         "tokens": None if span is None else int(spec.scale(span))})
        return rows
    except (ScratchError, OSError):
        return None


def keys_answer(target: Target, path: str, asked: Call, *, offset: int, limit: int | None,
                fit: bool, owner: bool = True) -> Candidate:
    from scratch.jsonvalues import json_type
    from scratch.pathnames import format_path
    from scratch.query.paths import parse_path
    parsed = parse_path(path)
    if not parsed.singular:
        raise UsageError(f"{argument('keys')} describes one value: give a path that names one "
                         "(no wildcards or filters)", code="invalid_path", path=path,
                         argument="keys")
    segments = list(parsed.names or ())
    rows = _indexed_rows(target, segments)
    value = {} if rows is not None else target.index.value_at(segments)
    close = target.index.close if owner else None
    ref = target.ref
    base = {"name": target.name, "version": target.version, "path": path,
            "type": "object" if rows is not None else json_type(value)}
    if isinstance(value, list):
        types: dict[str, int] = {}
        for item in value:
            t = json_type(item)
            types[t] = types.get(t, 0) + 1
        kinds = ", ".join(f"{t} {n:,}" for t, n in types.items()) or "empty"
        text = f"array of {plural(len(value), 'item', grouped=True)}: {kinds}\n"
        result = Result("get-in", data={**base, "length": len(value), "item_types": types},
                        text=text)
        if types.get("object"):
            from dataclasses import replace

            from scratch.answers.kernel.result import Words
            result = replace(result, notices=(Words(("the keys of its items: ",
                                              call("item-schema", ref=ref, path=path))),))
        return Fixed(asked, result, code="get_in_too_large", on_close=close)
    if not isinstance(value, dict):
        raise UsageError(f"{format_path(segments)} is {json_type(value)}: only an object has "
                         "keys (an array: its length and item types)", code="not_a_container",
                         path=path, value_type=json_type(value),
                         suggestions=[call("get-in", ref=ref, path=path)])
    if rows is None:
        rows = [{"key": k, "type": json_type(v), "length": _length(v),
                 "tokens": _tokens(target, [*segments, k], v)} for k, v in value.items()]

    def cells(r: KeyRow) -> list[str]:
        return [cell_text(r["key"]), r["type"], "" if r["length"] is None else str(r["length"]),
                "" if r["tokens"] is None else str(r["tokens"])]

    def make_data(shown: list[KeyRow], start: int, k: int) -> dict[str, object]:
        return {**base, "length": len(rows), "offset": start, "keys": shown}

    def notices(start: int, k: int) -> tuple[str, ...]:
        where = "the root" if not segments else format_path(segments)
        shown = f"; keys {start}..{start + k - 1} shown" if k < len(rows) else ""
        return (f"object at {where}: {plural(len(rows), 'key', grouped=True)}{shown}",)

    return RowList(asked, command="get-in", code="get_in_too_large",
                   columns=["key", "type", "length", "tokens"], rows=rows, offset=offset,
                   limit=limit, fit=fit, cells=cells, make_data=make_data, notices=notices,
                   on_close=close)
