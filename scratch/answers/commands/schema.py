"""schema: the shape of an entry, from its index, as a candidate answer.

Invariants:
- The answer is read from the index only (the skeleton's info), never from the content.
- An object whose values are all objects (2 or more) is named a map of records (``definitions:
  map of 312 records``): iterate-over, item-schema and sql read its records as rows.
- A parsed log's schema lists its records' fields (types, presence, distinct values of the
  facets) as the index analysed them.
- ``depth`` cuts the outline to that many path levels; a refused schema offers the deepest
  depth that fits (a schema's shrink units are depth levels).
- ``path`` outlines one sub-tree of a JSON/YAML/NDJSON entry, its depth counted from there:
  the stored outline's node when the index kept it, else a summary of the value at the path
  (only that value is read). A missing path says what exists, with the schemas to ask.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import REF
from scratch.answers.kernel.candidate import SHRINK, Alternative, Candidate, Step
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Payload, Result
from scratch.answers.kernel.target import Target, open_target
from scratch.calls import Call, call
from scratch.declare import Arg, Command, Tool
from scratch.errors import UsageError, argument
from scratch.words import plural

if TYPE_CHECKING:
    from scratch.answers.rows.items import Info


def _node_line(node: Info) -> str:
    from scratch.index.schema import record_map_size
    t = node.get("type", "?")
    desc = t
    if t == "array":
        desc = f"array[{node.get('length')}]"
    elif record_map_size(node) is not None:
        desc = f"map of {record_map_size(node):,} records"
    elif t == "object":
        desc = f"object{{{node.get('length')}}}"
    elif t == "string" and node.get("length") is not None:
        desc = f"string({node['length']})"
    lines = node.get("lines")
    where = ""
    if lines:
        where = f" L{lines[0]}" if lines[0] == lines[1] else f" L{lines[0]}-{lines[1]}"
    return f"{node.get('path')}: {desc}{where}"


def _items_lines(node: Info, depth_left: int, indent: str) -> list[str]:
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
        nulls = (k.get("types") or {}).get("null") or 0
        null_text = f", {nulls:,} null" if nulls else ""
        out.append(f"{indent}  {prefix}*.{k['key']}: {types} {k['count']}/{total}{extra}"
                   f"{null_text}")
    if items.get("more_keys"):
        out.append(f"{indent}  … {plural(items['more_keys'], 'more key')} (item-schema lists them)")
    return out


def schema_text(info: Info, depth: int) -> str:
    from scratch.index.schema import record_map_size
    schema = info.get("schema")
    out: list[str] = []
    if isinstance(schema, dict):
        def walk(node: Info, level: int) -> None:
            indent = "  " * level
            out.append(indent + _node_line(node))
            if level >= depth:
                return
            if node.get("type") == "array" and isinstance(node.get("items"), dict):
                out.extend(_items_lines(node, depth - level, indent + "  "))
            children = node.get("children") or []
            n = record_map_size(node)
            if n is not None and len(children) > 1:
                # a map of alike records: the first stands for them (item-schema has all keys)
                walk(children[0], level + 1)
                out.append(f"{indent}  … {plural(n - 1, 'more record')} alike (item-schema "
                           f"{node.get('path')} lists their keys)")
                return
            for child in children:
                walk(child, level + 1)
        walk(schema, 0)
    elif "column_info" in info or "header" in info:
        out += _csv_lines(info)
    elif "headings" in info:
        out += _heading_lines(info["headings"], depth)
    elif info.get("levels") or info.get("timestamp_format") or _records(info):
        out += _log_lines(info)
    else:
        for key, value in info.items():
            if key in ("layout", "engine"):
                continue
            shown = value if isinstance(value, (str, int, float)) else json.dumps(
                value, ensure_ascii=False)
            out.append(f"{key}: {shown}")
    return "\n".join(out) + "\n"


def _csv_lines(info: Info) -> list[str]:
    out = [f"csv: {_count(info.get('rows'), 'row')}, {_count(info.get('columns'), 'column')}, "
           f"delimiter {info.get('delimiter', ',')!r}, header on line "
           f"{info.get('header_line', 1)}"]
    for col in info.get("column_info") or [{"name": h} for h in info.get("header") or []]:
        empty = f", {col['empty']} empty" if col.get("empty") else ""
        out.append(f"  {col.get('name')}: {col.get('type', '?')}{empty}")
    if info.get("ragged_rows"):
        out.append(f"ragged rows: {info['ragged_rows']}")
    return out


def _count(n: object, word: str) -> str:
    """``plural`` for a count the index may lack (shown as ``?``)."""
    return plural(n, word) if isinstance(n, int) else f"? {word}s"


def _records(info: Info) -> Info | None:
    rec = info.get("records")
    return rec if isinstance(rec, dict) and rec.get("format") else None


def _log_lines(info: Info) -> list[str]:
    out = []
    fmt = info.get("timestamp_format")
    span = [t for t in info.get("time_range") or [] if t]
    out.append(f"log: {fmt or 'no'} timestamps" + (f", {span[0]} .. {span[-1]}" if span else ""))
    if info.get("levels"):
        out.append("levels: " + ", ".join(f"{k} {v}" for k, v in info["levels"].items()))
    rec = _records(info)
    if rec is not None:
        out += _record_lines(rec)
    else:  # in no known format, and the miner found no templates: say why
        mined = (info.get("records") or {}).get("templates")
        if isinstance(mined, dict) and mined.get("reason"):
            out.append(f"line templates: none ({mined['reason']})")
    return out


def _record_lines(rec: Info) -> list[str]:
    """A parsed log's records: the format, how many lines parsed, and each field with its
    types, presence and (for a facet) its number of distinct values."""
    from scratch.answers.rows.log_records import field_rows
    n = int(rec.get("records") or 0)
    parts = [f"{rec.get('parsed', 0):,} parsed"]
    if rec.get("unparsed"):
        first = rec.get("unparsed_examples") or []
        at = f" (line {', '.join(str(x) for x in first[:3])}{', ...' if len(first) > 3 else ''})"
        parts.append(f"{rec['unparsed']:,} unparsed{at if first else ''}")
    if rec.get("blank"):
        parts.append(f"{rec['blank']:,} blank")
    if rec.get("directives"):
        parts.append(f"{plural(int(rec['directives']), 'header line', grouped=True)}")
    out = [f"records: {rec.get('format')} ({rec.get('title')}), "
           f"{plural(n, 'line', grouped=True)}: " + ", ".join(parts)]
    if rec.get("header_changes"):
        at = ", ".join(str(x) for x in rec["header_changes"])
        out.append(f"headers: the fields change at line {at} (each part is read with the "
                   "header above it)")
    from scratch.answers.rows.log_records import nulls_of
    nulls = nulls_of(rec)
    if nulls:  # a '-' that reads as null surprises whoever expected the text
        out.append(f"nulls: {nulls}")
    out.append("fields (records at .; lines that do not parse have _line and _raw only):")
    for f in field_rows(rec):
        types = "|".join(f["types"]) or f["type"]
        distinct = (f", {plural(f['distinct'], 'value', grouped=True)}"
                    if isinstance(f.get("distinct"), int) else "")
        out.append(f"  {f['name']}: {types} {f['present']}/{n}{distinct}")
    return out


def _heading_lines(headings: list[Info], depth: int, level: int = 0) -> list[str]:
    out = []
    for h in headings:
        out.append(f"{'  ' * level}{'#' * h.get('level', 1)} {h.get('title')} "
                   f"L{h.get('line')}-{h.get('end_line')}")
        if level + 1 < depth:
            out += _heading_lines(h.get("children") or [], depth, level + 1)
    return out


def _cut_schema(node: Info, depth: int, level: int = 0) -> Info:
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


def _stored_node(node: Info, path: str) -> Info | None:
    """The node of the stored outline at ``path`` (a canonical dot path), None when the
    outline stops above it or cut its children there."""
    if node.get("path") == path:
        return None if node.get("truncated") else node
    for child in node.get("children") or []:
        cp = child.get("path") or ""
        if path == cp or path.startswith(cp + "."):
            return _stored_node(child, path)
    return None


def subtree_info(target: Target, path: str) -> Info:
    """The index info of ``target`` with its outline cut to the sub-tree at ``path``."""
    from scratch.answers.commands.get_in import located
    from scratch.index.schema import summarize_value
    from scratch.pathnames import format_path
    from scratch.query.paths import parse_path
    info = target.index.info
    if not isinstance(info.get("schema"), dict):
        raise UsageError(f"{argument('path')} outlines a part of a JSON, YAML or NDJSON entry; "
                         f"a {target.format} entry has no paths: see its whole schema",
                         code="invalid_argument", argument="path",
                         suggestions=[call("schema", ref=target.ref)])
    parsed = parse_path(path)
    if not parsed.singular:
        raise UsageError(f"{argument('path')} must name one value (a dot path, JSON Pointer or "
                         f"plain JSONPath chain), not a query: {path!r}",
                         code="invalid_argument", argument="path",
                         suggestions=[call("schema", ref=target.ref)])
    segments = list(parsed.names or ())
    canonical = format_path(segments)
    node = _stored_node(info["schema"], canonical)
    if node is None:
        value = located(target, lambda: target.index.value_at(segments), command="schema")

        def lines_of(p: tuple[str | int, ...]) -> tuple[int, int] | None:
            n = target.index.node(list(p))
            return (n.start_line, n.end_line) if n is not None and n.complete else None

        node = dict(summarize_value(value, tuple(segments), lines_of=lines_of))
    return {**info, "schema": node}


def schema_answer(target: Target, depth: int, path: str | None = None) -> tuple[str, Info]:
    """The text and the data of a schema of ``depth`` levels (of the sub-tree at ``path``)."""
    info = target.index.info if path is None else subtree_info(target, path)
    text = schema_text(info, depth)
    if not isinstance(info.get("schema"), dict):
        text = f"{target.format}: {plural(target.index.line_count, 'line', grouped=True)}\n" + text
    shown = {k: v for k, v in info.items()  # the shape: not the lines, not what stands out
             if k not in ("first_lines", "last_lines", "kubernetes")}
    if isinstance(info.get("schema"), dict):
        shown["schema"] = _cut_schema(info["schema"], depth)
    data = {"name": target.name, "version": target.version, "format": target.format,
            "lines": target.index.line_count, "depth": depth, "schema": shown}
    if path is not None:
        data["path"] = path
    return text, data


DEFAULT_DEPTH = 4  # schema's depth when none is given


class SchemaAnswer(Candidate):
    """The schema of an open target to ``depth`` levels; shrinks to smaller depths."""

    command = "schema"
    code = "schema_too_large"

    def __init__(self, target: Target, depth: int, asked: Call | None = None,
                 owner: bool = True, path: str | None = None) -> None:
        self.target = target
        self.depth = depth
        self.path = path
        self.shrink_units = depth  # the schema of depth k for k < depth
        self._owner = owner
        super().__init__(asked or _schema_call(target, depth, path))

    def page(self, k: int) -> Result[Payload]:
        text, data = schema_answer(self.target, self.depth, self.path)
        return Result("schema", data=data, text=text)

    def estimate(self, k: int) -> int | None:
        return None

    def shrunk(self, k: int) -> Candidate | None:
        return SchemaAnswer(self.target, k, owner=False, path=self.path)

    def plan(self) -> list[Step]:
        # a shape too wide for any depth (hundreds of keys at the top) still has a way in:
        # the entry's first lines that fit, so a refusal never ends without a call that runs
        total = self.target.index.line_count
        steps: list[Step] = [SHRINK]
        if total:
            steps.append(Alternative(call=call("head", ref=self.target.ref, lines=total),
                                     shrink=True, last_resort=True))
        return steps

    def close(self) -> None:
        if self._owner:
            self.target.index.close()


def _schema_call(target: Target, depth: int, path: str | None = None) -> Call:
    return call("schema", ref=target.ref, path=path,
                depth=None if depth == DEFAULT_DEPTH else depth)


def schema_candidate(target: Target, depth: int = DEFAULT_DEPTH) -> SchemaAnswer:
    """The schema of an open target (the caller keeps the target open), for suggestions: the
    pipeline offers it, or the deepest depth below it that fits."""
    return SchemaAnswer(target, depth, owner=False)


DEPTH = Arg("How deep to list paths.", flags=("--depth",), metavar="N", minimum=1)
SUB_PATH = Arg("Outline only this sub-tree.",
               metavar="PATH", max_length=1 << 16)


def schema(ctx: Context, ref: Annotated[str, REF], path: Annotated[str | None, SUB_PATH] = None,
           depth: Annotated[int, DEPTH] = DEFAULT_DEPTH, *, asked: Call) -> Candidate:
    if depth < 1:
        raise UsageError(f"{argument('depth')} must be >= 1, not {depth}",
                         code="invalid_argument", argument="depth")
    target = open_target(ctx, ref)
    try:
        if path is not None:
            subtree_info(target, path)  # a missing path is refused before any answer
    except BaseException:
        target.index.close()
        raise
    return SchemaAnswer(target, depth, path=path,
                        asked=asked)


COMMAND = Command(
    "schema", "The shape of REF: JSON/YAML/NDJSON paths with types, lengths and line ranges; "
    "CSV columns; log format, levels and time range; markdown headings.\n\n"
    "PATH outlines one sub-tree (depth counted from there).\n\n"
    "Example: scratch schema 1a2b --depth 3\n\n"
    "Example: scratch schema 1a2b items.0.status",
    schema,
    tools=(Tool("schema", "An entry's shape: paths with types and sizes, CSV columns, log levels, "
                "headings.",
                names={"ref": "file", "depth": "max_depth"}, toolset="explore"),))
