"""get-in and schema: structured answers from the index, priced with the real tokenizer.

Invariants:
- A plain path (dot path, JSON Pointer, simple JSONPath chain) is answered through the index:
  only the lines of the deepest indexed ancestor are parsed. JSONPath with filters or
  wildcards evaluates over the parsed document.
- Rendered values are 2-space JSON (key order kept); strings print as their text. Paging by
  line (--offset/--limit) and --fit work on those rendered lines, and ``next`` continues exactly
  where the answer stopped.
- An NDJSON line that is not JSON: a path into its item is a ``format_error`` naming the line
  (with the ``slice`` that shows it); an answer over the whole array has null in its place and
  warns with the line numbers.
- A refused get-in suggests the children whose answers fit (sized from their stored lines,
  then priced exactly), ``--limit K`` with the most lines that fit and --fit; a refused schema
  the deepest --depth that fits. Each is priced as the refused answer was (text, or the --json
  envelope) against the cap and budget as they stand.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from typing import Any

from scratch.context import Context
from scratch.errors import FormatError, KeyPathNotFound, UsageError
from scratch.explore.lines import fit_cap, plural
from scratch.explore.paging import (
    StoredContainer,
    TextLines,
    page,
    page_suggestions,
    stored_container,
)
from scratch.explore.target import Target, open_target
from scratch.pricing import EnvelopeMeter, charge_answer
from scratch.result import Result


def render_value(value: Any) -> str:
    if isinstance(value, str):
        return value if value.endswith("\n") else value + "\n"
    import orjson

    from scratch.formats.jsonnum import dumps  # JSON numbers exactly as stored
    return dumps(value, orjson.OPT_INDENT_2).decode("utf-8", errors="backslashreplace") + "\n"


_ABSENT = object()  # a child value not read yet
CHILDREN_TRIED = 12  # keys of an object whose get-in is sized before giving up
SIZE_FIRST = 4  # a child whose stored lines cost more than this many caps is not read at all


def _get_in_data(target: Target, path: str, vtype: str, value: Any, matches: Any,
                 paging: dict[str, Any], body: str, offset: int, limit: int | None,
                 fit: bool) -> dict[str, Any]:
    """The data of a get-in answer (the one place that decides between value and text)."""
    data: dict[str, Any] = {"name": target.name, "version": target.version, "path": path,
                            "type": vtype, **paging}
    if matches is not None:
        data["matches"] = matches if not (offset or limit or fit) else None
        data["text"] = body
    elif offset or limit or (fit and "next" in paging) or isinstance(value, str):
        data["text"] = body
    else:
        data["value"] = value
    return data


def _child_cost(ctx: Context, target: Target, path: str, segments: list[Any], value: Any,
                cap: int, warnings: tuple[str, ...]) -> int | None:
    """What ``get-in REF path`` costs as this mode prices it, or None when it cannot fit (or
    cannot be told cheaply). ``value``: the child when it is already in memory."""
    from scratch.query.paths import json_type
    from scratch.tokens import count_text
    spec = ctx.encoding()
    if value is _ABSENT:
        info = target.index.node(segments)
        if info is None or not info.complete:
            return None
        stored = target.index.range_tokens(info.start_line, info.end_line, spec.base)
        if stored is None or spec.scale(stored) > SIZE_FIRST * cap:
            return None
        value = target.index.value_at(segments)
    else:
        from scratch.result import compact_json
        if len(compact_json(value)) > 16 * SIZE_FIRST * cap:  # far too big to be worth counting
            return None
    text = render_value(value)
    lines = text.count("\n")
    if lines > cap:  # refused from its line count
        return None
    cost = count_text(text, spec)
    if not ctx.json_mode or cost > cap:  # --json checks the text's count first
        return cost
    paging = {"offset": 0, "lines": lines, "total_lines": lines}
    data = _get_in_data(target, path, json_type(value), value, None, paging, text, 0, None,
                        False)
    return max(cost, EnvelopeMeter(ctx, "get-in", cap, warnings).tokens(data))


def _child_suggestions(ctx: Context, target: Target, segments: list[Any], value: Any,
                       keys: Any, length: int | None, warnings: tuple[str, ...]) -> list[str]:
    """``get-in`` of the first children whose answers fit (up to three keys of an object, one
    item of an array); for an array none of whose first items fits, ``item-schema`` when it
    fits."""
    from scratch.errors import ScratchError
    from scratch.query.paths import format_path
    cap = fit_cap(ctx)
    ref = target.ref
    out: list[str] = []
    if keys is not None:
        candidates: list[Any] = list(keys)[:CHILDREN_TRIED]
        wanted = 3
    else:
        candidates = list(range(min(length or 0, 3)))
        wanted = 1
    for key in candidates:
        child = value[key] if value is not _ABSENT else _ABSENT
        path = format_path([*segments, key])
        try:
            cost = _child_cost(ctx, target, path, [*segments, key], child, cap, warnings)
        except ScratchError:
            cost = None
        if cost is not None and cost <= cap:
            out.append(f"scratch get-in {ref} {shlex.quote(path)}")
            if len(out) >= wanted:
                break
    if keys is None and not out and length:
        schema = _fitting_item_schema(ctx, target, format_path(segments))
        if schema:
            out.append(schema)
    return out


def _fitting_item_schema(ctx: Context, target: Target, path: str) -> str | None:
    """``item-schema`` of the array at ``path`` (at depth 2 or 1 if need be) when its answer
    fits, found by working it out without charging it."""
    from scratch.errors import ScratchError
    from scratch.explore.items import item_schema
    from scratch.tokens import count_text
    cap = fit_cap(ctx)
    json_mode = ctx.json_mode
    again = f"scratch item-schema {target.ref} {shlex.quote(path)}"
    ref = target.name if target.latest else f"{target.name}@{target.version}"
    for depth in (None, 2, 1):
        ctx.json_mode = True  # --json answers are priced when printed: nothing is charged here
        try:
            result = item_schema(ctx, ref, path, depth=depth)
        except ScratchError:  # refused (over the cap), or not an answer at all
            continue
        finally:
            ctx.json_mode = json_mode
        if json_mode:
            cost = EnvelopeMeter(ctx, "item-schema", cap, result.warnings).tokens(result.data)
        else:
            cost = count_text(result.text if isinstance(result.text, str) else "",
                              ctx.encoding())
        if cost <= cap:
            return again if depth is None else f"{again} --depth {depth}"
    return None


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def get_in(ctx: Context, ref: str, path: str, *, offset: int = 0, limit: int | None = None,
           fit: bool = False) -> Result:
    from scratch.query.paths import evaluate, json_type, parse_path
    target = open_target(ctx, ref)
    if target.format in ("csv", "tsv"):  # rows (N) and cells (N.column), from the row index
        from scratch.explore.csvrows import get_in as get_in_rows
        return get_in_rows(ctx, target, path, offset=offset, limit=limit, fit=fit)
    parsed = parse_path(path)
    spec = ctx.encoding()
    segments = list(parsed.segments or ())
    if parsed.singular:  # dot paths, pointers and plain JSONPath chains: through the index
        stored = stored_container(target.index, segments, spec.base)
        if stored is not None and (offset or limit or fit or (
                len(stored) > IN_MEMORY_LINES and len(stored) > fit_cap(ctx))):
            return _get_in_stored(ctx, target, path, stored, offset=offset, limit=limit,
                                  fit=fit, spec=spec)
        try:
            value = target.index.value_at(segments)
        except KeyPathNotFound as exc:
            _suggest(exc, target)
            raise
        except FormatError as exc:
            suggest_slice(exc, target)
            raise
        matches = None
    else:
        try:
            whole = target.index.value_at([])
            found = evaluate(whole, parsed)
        except KeyPathNotFound as exc:
            _suggest(exc, target)
            raise
        except FormatError as exc:
            suggest_slice(exc, target)
            raise
        matches = [{"path": m.path, "value": m.value} for m in found]
        value = [m.value for m in found]
    text = render_value(value) if matches is None else "".join(
        f"{m['path']}: {render_value(m['value'])}" for m in matches)
    again = f"scratch get-in {target.ref} {shlex.quote(path)}"
    vtype = json_type(value) if matches is None else "matches"
    from scratch.index.structure import lines_left_out
    warnings = not_json_warning(target, lines_left_out(target.index))

    def make_data(paging: dict[str, Any], body: str, off: int, lim: int | None,
                  with_fit: bool) -> dict[str, Any]:
        return _get_in_data(target, path, vtype, value, matches, paging, body, off, lim,
                            with_fit)

    source = TextLines(text)

    def suggestions() -> list[str]:
        try:
            out: list[str] = []
            if matches is None and isinstance(value, (dict, list)):
                out = _child_suggestions(
                    ctx, target, segments, value, list(value) if isinstance(value, dict)
                    else None, len(value), warnings)
            return _dedupe(out + page_suggestions(
                ctx, source, offset=offset, limit=limit, fit=fit, again=again, spec=spec,
                make_data=make_data, warnings=warnings))
        finally:
            target.index.close()

    body, meta, paging = page(ctx, source, offset=offset, limit=limit, fit=fit,
                              code="get_in_too_large", again=again, suggestions=suggestions,
                              spec=spec, make_data=make_data, warnings=warnings)
    data = make_data(paging, body, offset, limit, fit)
    target.index.close()
    notices = (f"more: {paging['next']}",) if paging.get("next") else ()
    return Result("get-in", data=data, text=body, meta=meta, notices=notices, warnings=warnings)


IN_MEMORY_LINES = 2000  # a whole value this small is rendered in memory even when refused


def _get_in_stored(ctx: Context, target: Target, path: str, stored: StoredContainer, *,
                   offset: int, limit: int | None, fit: bool, spec: Any) -> Result:
    """get-in of a container of a canonical JSON entry, paged (or refused) from its stored
    lines: a page of a 100 MB subtree reads the page, not the subtree."""
    info = stored.info
    again = f"scratch get-in {target.ref} {shlex.quote(path)}"
    whole: list[Any] = []  # the value, read only when an answer shows all of it

    def make_data(paging: dict[str, Any], body: str, off: int, lim: int | None,
                  with_fit: bool) -> dict[str, Any]:
        data: dict[str, Any] = {"name": target.name, "version": target.version, "path": path,
                                "type": info.type, **paging}
        if off or lim or "next" in paging:
            data["text"] = body
        else:  # --fit and all of it fitted: the value itself, as without --fit
            if not whole:
                whole.append(target.index.value_at(list(info.path)))
            data["value"] = whole[0]
        return data

    def suggestions() -> list[str]:
        try:
            keys = info.keys if info.type == "object" else None
            out = _child_suggestions(ctx, target, list(info.path), _ABSENT, keys,
                                     info.length, ())
            return _dedupe(out + page_suggestions(
                ctx, stored, offset=offset, limit=limit, fit=fit, again=again, spec=spec,
                make_data=make_data))
        finally:
            target.index.close()

    body, meta, paging = page(ctx, stored, offset=offset, limit=limit, fit=fit,
                              code="get_in_too_large", again=again, suggestions=suggestions,
                              spec=spec, make_data=make_data)
    data = make_data(paging, body, offset, limit, fit)
    target.index.close()
    notices = (f"more: {paging['next']}",) if paging.get("next") else ()
    return Result("get-in", data=data, text=body, meta=meta, notices=notices)


def suggest_slice(exc: FormatError, target: Target) -> None:
    """A stored region that does not parse names its entry line: offer to read that line."""
    line = exc.details.get("line")
    if isinstance(line, int) and not exc.details.get("suggestions"):
        exc.details["suggestions"] = [f"scratch slice {target.ref} {line} {line}"]


SHOWN_LINES = 5  # line numbers a not-JSON warning lists before "and N more"


def not_json_warning(target: Target, lines: Iterable[int]) -> tuple[str, ...]:
    """The warning of an answer that left out NDJSON lines that are not JSON (as null items)."""
    shown = sorted(lines)
    n = len(shown)
    if not n:
        return ()
    listed = ", ".join(str(x) for x in shown[:SHOWN_LINES])
    if n > SHOWN_LINES:
        listed += f" and {n - SHOWN_LINES} more"
    if n == 1:
        return (f"1 line of {target.ref} is not JSON (line {listed}); left out",)
    return (f"{n} lines of {target.ref} are not JSON (lines {listed}); left out",)


def _suggest(exc: KeyPathNotFound, target: Target) -> None:
    """Make sure a missing path comes with commands the agent can run as they are."""
    import difflib

    from scratch.query.paths import format_key
    d = exc.details
    if d.get("suggestions"):
        d["suggestions"] = [s if s.startswith("scratch ") else
                            f"scratch get-in {target.ref} {shlex.quote(s)}"
                            for s in d["suggestions"]]
        return
    prefix = d.get("valid_prefix") or ""
    sep = "." if prefix not in ("", ".") else ""
    base = prefix if prefix not in ("", ".") else ""
    out = []
    keys = d.get("available_keys") or []
    close = difflib.get_close_matches(str(d.get("failed_segment", "")), keys, n=3, cutoff=0.5)
    for key in close or keys[:3]:
        out.append(f"scratch get-in {target.ref} {shlex.quote(base + sep + format_key(key))}")
    if d.get("array_length"):
        out.append(f"scratch get-in {target.ref} {shlex.quote(base + sep + '0')}")
    out.append(f"scratch schema {target.ref}")
    d["suggestions"] = out


# -- schema -----------------------------------------------------------------------------------

def _node_line(node: dict[str, Any]) -> str:
    t = node.get("type", "?")
    desc = t
    if t == "array":
        desc = f"array[{node.get('length')}]"
    elif t == "object":
        desc = f"object{{{node.get('length')}}}"
    elif t == "string" and node.get("length") is not None:
        desc = f"string({node['length']})"
    lines = node.get("lines")
    where = ""
    if lines:
        where = f" L{lines[0]}" if lines[0] == lines[1] else f" L{lines[0]}-{lines[1]}"
    return f"{node.get('path')}: {desc}{where}"


def _items_lines(node: dict[str, Any], depth_left: int, indent: str) -> list[str]:
    items = node.get("items") or {}
    total = items.get("scanned") or items.get("count") or 0
    base = node.get("path") or "."
    prefix = "" if base == "." else base + "."
    out = [f"{indent}{prefix}*: " + ", ".join(f"{k} {v}" for k, v in
                                            (items.get("types") or {}).items())]
    for k in items.get("keys") or []:
        if k["key"].count(".") + 1 > depth_left:
            continue
        types = "|".join(k.get("types") or {})
        extra = f" max {k['max_length']}" if k.get("max_length") is not None else ""
        out.append(f"{indent}  {prefix}*.{k['key']}: {types} {k['count']}/{total}{extra}")
    if items.get("more_keys"):
        out.append(f"{indent}  … {plural(items['more_keys'], 'more key')} (scratch item-schema)")
    return out


def schema_text(info: dict[str, Any], depth: int) -> str:
    schema = info.get("schema")
    out: list[str] = []
    if isinstance(schema, dict):
        def walk(node: dict[str, Any], level: int) -> None:
            indent = "  " * level
            out.append(indent + _node_line(node))
            if level >= depth:
                return
            if node.get("type") == "array" and isinstance(node.get("items"), dict):
                out.extend(_items_lines(node, depth - level, indent + "  "))
            for child in node.get("children") or []:
                walk(child, level + 1)
        walk(schema, 0)
    elif "column_info" in info or "header" in info:
        out += _csv_lines(info)
    elif "headings" in info:
        out += _heading_lines(info["headings"], depth)
    elif info.get("levels") or info.get("timestamp_format"):
        out += _log_lines(info)
    else:
        for key, value in info.items():
            if key in ("layout", "engine"):
                continue
            shown = value if isinstance(value, (str, int, float)) else json.dumps(
                value, ensure_ascii=False)
            out.append(f"{key}: {shown}")
    return "\n".join(out) + "\n"


def _csv_lines(info: dict[str, Any]) -> list[str]:
    out = [f"csv: {_count(info.get('rows'), 'row')}, {_count(info.get('columns'), 'column')}, "
           f"delimiter {info.get('delimiter', ',')!r}, header on line "
           f"{info.get('header_line', 1)}"]
    for col in info.get("column_info") or [{"name": h} for h in info.get("header") or []]:
        empty = f", {col['empty']} empty" if col.get("empty") else ""
        out.append(f"  {col.get('name')}: {col.get('type', '?')}{empty}")
    if info.get("ragged_rows"):
        out.append(f"ragged rows: {info['ragged_rows']}")
    return out


def _count(n: Any, word: str) -> str:
    """``plural`` for a count the index may lack (shown as ``?``)."""
    return plural(n, word) if isinstance(n, int) else f"? {word}s"


def _log_lines(info: dict[str, Any]) -> list[str]:
    out = []
    fmt = info.get("timestamp_format")
    span = [t for t in info.get("time_range") or [] if t]
    out.append(f"log: {fmt or 'no'} timestamps" + (f", {span[0]} .. {span[-1]}" if span else ""))
    if info.get("levels"):
        out.append("levels: " + ", ".join(f"{k} {v}" for k, v in info["levels"].items()))
    return out


def _heading_lines(headings: list[dict[str, Any]], depth: int, level: int = 0) -> list[str]:
    out = []
    for h in headings:
        out.append(f"{'  ' * level}{'#' * h.get('level', 1)} {h.get('title')} "
                   f"L{h.get('line')}-{h.get('end_line')}")
        if level + 1 < depth:
            out += _heading_lines(h.get("children") or [], depth, level + 1)
    return out


def _cut_schema(node: dict[str, Any], depth: int, level: int = 0) -> dict[str, Any]:
    """The schema tree down to ``depth`` path levels: what the text form shows, as data."""
    out = {k: v for k, v in node.items() if k not in ("children", "items")}
    items = node.get("items")
    if isinstance(items, dict) and level < depth:
        left = depth - level
        out["items"] = {**{k: v for k, v in items.items() if k not in ("keys", "samples")},
                        "keys": [k for k in items.get("keys") or []
                                 if k["key"].count(".") + 1 <= left]}
    if level < depth and node.get("children"):
        out["children"] = [_cut_schema(c, depth, level + 1) for c in node["children"]]
    return out


def _schema_answer(target: Target, depth: int) -> tuple[str, dict[str, Any]]:
    """The text and the data of ``schema REF --depth depth``."""
    info = target.index.info
    text = schema_text(info, depth)
    if not isinstance(info.get("schema"), dict):
        text = f"{target.format}: {plural(target.index.line_count, 'line', grouped=True)}\n" + text
    shown = {k: v for k, v in info.items() if k not in ("first_lines", "last_lines")}
    if isinstance(info.get("schema"), dict):
        shown["schema"] = _cut_schema(info["schema"], depth)
    data = {"name": target.name, "version": target.version, "format": target.format,
            "lines": target.index.line_count, "depth": depth, "schema": shown}
    return text, data


DEFAULT_DEPTH = 4  # schema's --depth when none is given


def fitting_schema(ctx: Context, target: Target, below: int | None = None) -> str | None:
    """``scratch schema REF`` at the deepest --depth (under ``below``, at most the default)
    whose answer fits the cap and budget as they stand, priced as this mode prices it; None
    when not even depth 1 fits."""
    from scratch.tokens import count_text
    cap = fit_cap(ctx)
    spec = ctx.encoding()
    meter = EnvelopeMeter(ctx, "schema", cap) if ctx.json_mode else None
    top = DEFAULT_DEPTH if below is None else min(DEFAULT_DEPTH, below - 1)
    for depth in range(top, 0, -1):
        text, data = _schema_answer(target, depth)
        cost = count_text(text, spec)  # --json checks it before the envelope
        if meter is not None and cost <= cap:
            cost = max(cost, meter.tokens(data))
        if cost <= cap:
            return (f"scratch schema {target.ref}" if depth == DEFAULT_DEPTH
                    else f"scratch schema {target.ref} --depth {depth}")
    return None


def schema(ctx: Context, ref: str, depth: int = DEFAULT_DEPTH) -> Result:
    from scratch.tokens import count_text
    if depth < 1:
        raise UsageError("--depth must be >= 1", code="invalid_argument")
    target = open_target(ctx, ref)
    text, data = _schema_answer(target, depth)
    cost = count_text(text, ctx.encoding())

    def suggestions() -> list[str]:
        try:
            smaller = fitting_schema(ctx, target, below=depth)
            return [smaller] if smaller else []
        finally:
            target.index.close()

    meta = charge_answer(ctx, cost, code="schema_too_large", suggestions=suggestions)
    target.index.close()
    return Result("schema", data=data, text=text, meta=meta)
