"""The pointer: what an agent sees instead of a big output.

Built from the index only (no re-reading of the content). It carries name, version, format,
size in bytes/lines/tokens, a schema outline (depth <= 3, types, array lengths, line ranges),
for arrays of objects the key set with presence counts and 3 samples, for text the first and last
lines and level counts, for a parsed log the counts that matter (status classes, levels, top
components: :mod:`scratch.answers.pointer.counts`), companions, and exact next commands.

Size invariant (checked by :func:`fit_pointer` with the real tokenizer): the rendered pointer is
smaller than the output, and for outputs of 50k tokens or more at most 1% of their tokens and at
most 800 tokens. Detail is dropped level by level until it fits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, TypedDict

from scratch.answers.pointer.counts import (
    breakdown,
    category_field,
    csv_category,
    csv_sql,
    flat_table_sql,
    kube_calls,
    kube_lines,
    log_calls,
    records_sql,
)
from scratch.calls import Call, call
from scratch.index.schema import record_map_size
from scratch.words import plural

if TYPE_CHECKING:
    from scratch.answers.kernel.rendering import Rendering
    from scratch.answers.kernel.result import Speller
    from scratch.answers.pointer.sizing import EntrySizer
    from scratch.answers.rows.items import Info
    from scratch.tokens import EncodingSpec

MAX_POINTER_TOKENS = 800
BIG_OUTPUT_TOKENS = 50_000
NAME_HINTS = ("name", "id", "phase", "status", "state", "level", "reason", "message", "type",
              "namespace", "code", "time", "key", "kind")


class Pointer(TypedDict, total=False):
    """The pointer's data (what ``--json`` shows of a stored output): the entry's figures
    always; the rest as the output has them. The parts taken from the index (``array``,
    ``text``, ``records`` and the outline rows) keep its stored JSON's shape (:data:`Info`).
    :func:`shape_pointer` cuts them and counts what it left out (``schema_more``)."""

    stored: bool
    name: str
    version: int
    format: str
    bytes: int
    lines: int
    tokens: int
    encoding: str
    exact: bool
    already_stored: bool
    partial: bool
    partial_reason: str
    redacted: dict[str, object]  # values redacted at capture: count and count per rule
    schema: list[Info]  # outline rows: path, type, length, lines, value, records, depth
    schema_more: int
    array: Info
    text: Info
    records: Info
    kubernetes: Info  # what stands out in Kubernetes objects (scratch.index.kube)
    snapshot: Info  # the last of NDJSON snapshots (scratch.answers.pointer.snapshot)
    openapi: Info  # an API description's operations (scratch.index.openapi)
    binary: Info  # what binary content is, its first bytes (scratch.answers.pointer.binary)
    error_lines: Info  # the checked error grep: pattern, lines, in_values
    companions: list[str]
    next: list[Call]
    warnings: list[str]
    pointer_tokens: int  # what the pointer as shown costs (set by ingest)


def _json(value: object) -> str:
    from scratch.jsonvalues import dumps  # JSON numbers exactly as stored
    return dumps(value).decode("utf-8", errors="backslashreplace")


def _cut(value: object, width: int) -> str:
    text = value if isinstance(value, str) else _json(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _lines(node: Info) -> str:
    lines = node.get("lines")
    return f" L{lines[0]}-{lines[1]}" if lines else ""


def _type(node: Info) -> str:
    t: str = node.get("type", "?")
    if t == "array":
        return f"array[{node.get('length', '?')}]"
    records = record_map_size(node)
    if records is not None:
        return f"map of {records:,} records"
    if t == "object":
        return f"object{{{node.get('length', '?')}}}"
    if "value" in node:
        return f"{t} " + _cut(_json(node["value"]), 42)
    return t


def array_nodes(schema: Info) -> list[Info]:
    """Arrays with item info, the likely 'list of things' of an output first: arrays of
    objects before others, then the most items, then the most lines (a tie on count goes to
    the array whose items say more)."""
    found: list[Info] = []

    def walk(node: Info) -> None:
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            found.append(node)
        for child in node.get("children", []) or []:
            walk(child)

    def span(node: Info) -> int:
        lines = node.get("lines") or [0, 0]
        return int(lines[1]) - int(lines[0]) if len(lines) == 2 else 0

    def of_objects(node: Info) -> bool:
        types = (node["items"].get("types") or {})
        return bool(types) and max(types, key=lambda t: types[t]) == "object"

    walk(schema)
    found.sort(key=lambda n: (not of_objects(n), -(n.get("length") or 0), -span(n)))
    return found


def record_maps(schema: Info) -> list[Info]:
    """The maps of records of the outline (objects whose values are alike objects), the most
    records first."""
    found: list[Info] = []

    def walk(node: Info) -> None:
        if record_map_size(node) is not None:
            found.append(node)
        for child in node.get("children", []) or []:
            walk(child)

    walk(schema)
    found.sort(key=lambda n: -(record_map_size(n) or 0))
    return found


def record_fields(node: Info, limit: int = 2) -> list[str]:
    """Scalar keys of a map's first record, as the outline has them (names first, then the
    order they come in)."""
    children = node.get("children") or []
    if not children:
        return []
    first = children[0]
    prefix = str(first.get("path") or "") + "."
    scalar = [str(c.get("path") or "")[len(prefix):] for c in first.get("children") or []
              if c.get("type") not in ("object", "array")
              and not (c.get("type") == "string" and (c.get("length") or 0) > 40)  # prose
              and str(c.get("path") or "").startswith(prefix)]
    scalar = [k for k in scalar if k and "." not in k]
    named = [k for k in scalar if k.lower() in ("name", "id", "title", "type", "kind")]
    return (named + [k for k in scalar if k not in named])[:limit]


def pick_fields(items: Info, limit: int = 3) -> list[str]:
    """Scalar keys present in (almost) every item that read like identifiers or states."""
    keys = items.get("keys") or []
    count = items.get("scanned") or items.get("count") or 1
    scored = []
    for pos, k in enumerate(keys):
        types = set((k.get("types") or {}).keys())
        if not types or types - {"string", "integer", "number", "boolean", "null"}:
            continue
        if (k.get("max_length") or 0) > 80:
            continue
        last = k["key"].rsplit(".", 1)[-1].strip('"').lower()
        # an exact field name beats one that merely contains a hint ("namespace" has "name")
        exact = NAME_HINTS.index(last) if last in NAME_HINTS else None
        partial = next((i for i, h in enumerate(NAME_HINTS) if h in last), len(NAME_HINTS))
        hint = exact if exact is not None else len(NAME_HINTS) + partial
        scored.append((k.get("count", 0) < count * 0.9, hint, pos, k["key"]))
    scored.sort()
    return [s[3] for s in scored[:limit]]


def nested_keys(items: Info, keys: list[Info]) -> dict[str, list[str]]:
    """The child keys of each object-valued top-level key of an item union, in order."""
    from scratch.answers.pointer.counts import children_of
    out = {}
    for k in keys:
        if set(k.get("types") or {}) - {"null"} == {"object"}:
            children = children_of(items, str(k["key"]))
            if children:
                out[str(k["key"])] = children
    return out


NESTED_SHOWN = {3: 8, 2: 8}  # an object key's child keys the items line names, by detail


def _with_nested(key: str, shown: str, nested: dict[str, list[str]], detail: int) -> str:
    children = nested.get(key)
    limit = NESTED_SHOWN.get(min(detail, 3), 0)
    if not children or not limit:
        return shown
    names = children[:limit]
    more = f", … {len(children) - len(names)} more" if len(children) > len(names) else ""
    return f"{shown} {{{', '.join(names)}{more}}}"


def presence(key: Info, total: int) -> str:
    """``k/n`` of one key of an item union, and how many of its values are null."""
    nulls = (key.get("types") or {}).get("null") or 0
    return f"{key['count']}/{total}" + (f" ({nulls:,} null)" if nulls else "")


def sample_label(index: object, length: object) -> str:
    """``item 3``; the last item says so (``item 499, the last``)."""
    if not isinstance(index, int):
        return "sample"
    if isinstance(length, int) and index == length - 1:
        return f"item {index}, the only one" if index == 0 else f"item {index}, the last"
    return f"item {index}"


def parsed_records(fmt: str, info: Info) -> Info | None:
    """A parsed log's records info, None for anything else."""
    rec = info.get("records")
    return rec if fmt == "log" and isinstance(rec, dict) and rec.get("format") else None


def suggests_grep(fmt: str, info: Info) -> bool:
    """Whether the pointer of this entry would suggest an error grep (so it is checked): not
    a parsed log, whose errors are counted from its records, nor binary content, nor an API
    model, whose error words name shapes (:func:`scratch.answers.pointer.api.api_model`)."""
    from scratch.answers.pointer.api import api_model
    return fmt != "binary" and parsed_records(fmt, info) is None and api_model(info) is None


def build_pointer(*, name: str, version: int, fmt: str, size: int, lines: int, tokens: int,
                  encoding: str, exact: bool, info: Info, companions: list[str],
                  warnings: list[str], partial: bool, existing: bool = False,
                  sizer: EntrySizer | None = None, error_lines: Info | None = None,
                  snapshot: Info | None = None, binary: Info | None = None) -> Pointer:
    """The pointer's data. With ``sizer`` (the new version's costs) every next call is one
    that fits the per-call cap: windows shrink, a value too big to print whole is asked for
    with ``fit``, and a call that cannot fit at all is left out.

    ``error_lines``: the error grep as checked over the content
    (:func:`scratch.answers.pointer.grep.check_error_grep`); the grep is suggested only when
    its words were found in values, not only in key names (None: not checked, not
    suggested). ``snapshot``: the last item of NDJSON whose lines are snapshots of one state
    (:func:`scratch.answers.pointer.snapshot.snapshot_for`), summarized and read first.
    ``binary``: what a binary content is (:func:`scratch.answers.pointer.binary.binary_for`):
    shown, with its strings as the next call instead of any range of its lines."""
    ref = name

    def schema_cmd() -> Call | None:  # sized only for the formats that suggest it
        return call("schema", ref=ref) if sizer is None else sizer.schema_call()

    def get_in(path: str) -> Call:
        c = call("get-in", ref=ref, path=path)
        return c if sizer is None or sizer.fits(path) else c.with_args(fit=True)
    pointer: Pointer = {
        "stored": True, "name": name, "version": version, "format": fmt, "bytes": size,
        "lines": lines, "tokens": tokens, "encoding": encoding, "exact": exact,
    }
    if existing:
        pointer["already_stored"] = True
    if partial:
        pointer["partial"] = True
    nxt: list[Call | None] = []
    schema = info.get("schema")
    api = info.get("openapi")
    if isinstance(schema, dict) and isinstance(api, dict):
        # an API description: its operations, under paths, before anything its size points at
        from scratch.answers.pointer.api import openapi_calls
        pointer["schema"] = _outline(schema, depth=3)
        pointer["openapi"] = api
        nxt += [*openapi_calls(ref, api), schema_cmd()]
        if api.get("schemas"):
            nxt.append(call("iterate-over", ref=ref, path=str(api.get("schemas_path")),
                            fields=["_key", "type"], limit=20))
    elif isinstance(schema, dict):
        pointer["schema"] = _outline(schema, depth=3)
        arrays = array_nodes(schema)
        maps = record_maps(schema)
        if maps and (record_map_size(maps[0]) or 0) > (arrays[0].get("length") or 0
                                                        if arrays else 1):
            # a map of records holding more rows than any array: its rows come first
            where = str(maps[0].get("path") or ".")
            nxt += [call("item-schema", ref=ref, path=where, depth=1),
                    call("iterate-over", ref=ref, path=where,
                         fields=["_key", *record_fields(maps[0])], limit=20)]
        if arrays:
            arr = arrays[0]
            items = arr["items"]
            path = arr.get("path") or "."
            keys = [k for k in items.get("keys", []) if "." not in k["key"]]
            total = items.get("scanned") or items.get("count") or arr.get("length") or 0
            pointer["array"] = {
                "path": path, "length": arr.get("length"), "lines": arr.get("lines"),
                "keys": {k["key"]: presence(k, total) for k in keys},
                "samples": [{"index": s.get("index"), "value": s.get("value")}
                            for s in (items.get("samples") or [])[:3]],
            }
            nested = nested_keys(items, keys)
            if nested:  # an object's own fields (GeoJSON's properties.mag), outlined
                pointer["array"]["nested"] = nested
            fields = pick_fields(items)
            nxt += [schema_cmd(), call("item-schema", ref=ref, path=path, depth=2)]
            kube = info.get("kubernetes")
            standing: list[Call] = []
            if isinstance(kube, dict):  # the objects that stand out, before any other list
                pointer["kubernetes"] = kube
                standing = kube_calls(ref, kube)
            listing = call("iterate-over", ref=ref, path=path, fields=fields, limit=20) \
                if fields else None
            category = category_field(items)
            counts = call("iterate-over", ref=ref, path=path, count_by=[category]) \
                if category is not None else None  # value counts: the commonest question
            sep = "" if path == "." else "."
            first = get_in(f"{path}{sep}0" if path != "." else "0")
            table = records_sql(ref, path, items, category)
            flat = None if table else flat_table_sql(ref, path, items, category, size)
            if snapshot is not None:  # a state per line: the last one is the question
                pointer["snapshot"] = snapshot
                nxt.insert(len(nxt) - 1, get_in("-1"))
                nxt += [listing, counts, table, flat]
            elif standing:  # the rows that stand out list items better than the first fields
                nxt += [standing[0], counts, first, *standing[1:], listing, table, flat]
            else:
                nxt += [listing, counts, table, first, flat]
        else:
            kube = info.get("kubernetes")
            if isinstance(kube, dict):  # one object (a Pod)
                pointer["kubernetes"] = kube
            nxt += [schema_cmd(), get_in(".")]
    for key in ("timestamp_format", "time_range", "levels", "first_lines", "last_lines",
                "last_lines_start", "columns", "header", "rows", "delimiter", "headings"):
        if key in info and info[key] not in (None, {}, []):
            pointer.setdefault("text", {})[key] = info[key]
    rec = parsed_records(fmt, info)
    if rec is not None:
        pointer["records"] = {k: rec.get(k) for k in ("format", "records", "parsed",
                                                      "unparsed")}
        if rec.get("directives"):  # Zeek and W3C header lines: no records, not unparsed
            pointer["records"]["header_lines"] = rec["directives"]
        counted = info.get("levels")  # level words counted already: not twice
        pointer["records"]["breakdown"] = [[label, [list(vc) for vc in values], more]
                                           for label, values, more in breakdown(rec)
                                           if not (counted and label in ("level", "levelname"))]
    if any(info.get(k) for k in ("columns", "headings", "timestamp_format")) or rec:
        nxt.append(schema_cmd())  # CSV columns, the markdown outline, log levels and times
    header = info.get("header")
    if fmt in ("csv", "tsv") and isinstance(header, list):
        names = [h for h in header if isinstance(h, str) and h and "," not in h]
        cols = [h for h in dict.fromkeys(names) if names.count(h) == 1][:3]  # as rows key them
        if cols:
            nxt.append(call("iterate-over", ref=ref, path=".", fields=cols, limit=20))
        category = csv_category([h for h in names if names.count(h) == 1],
                                info.get("column_info") or [])
        if category is not None:
            nxt.append(call("iterate-over", ref=ref, path=".", count_by=[category]))
        rows = info.get("rows")
        nxt.append(csv_sql(ref, [h for h in names if names.count(h) == 1],
                           info.get("column_info") or [], rows if isinstance(rows, int) else 0,
                           category))
    if rec is not None:  # a parsed log: counts, its errors' rows and SQL, not a word grep
        nxt += log_calls(ref, rec)
    elif error_lines is not None and error_lines.get("in_values"):
        pointer["error_lines"] = error_lines
        # matching lines can be far longer than the average: --fit takes what fits, with next
        nxt.append(call("grep", ref=ref, pattern=error_lines["pattern"], ignore_case=True,
                        max_count=20, fit=True))
    if binary is not None:  # its strings, never a range of its lines (raw bytes, NUL too)
        from scratch.answers.pointer.binary import binary_calls
        pointer["binary"] = binary
        nxt += binary_calls(ref)
    else:
        nxt.append(call("slice", ref=ref, start=1, end=min(40, lines)) if sizer is None
                   else sizer.first_lines(40))
        if lines > 40:
            nxt.append(call("tail", ref=ref, lines=40) if sizer is None
                       else sizer.last_lines(40))
    if companions:
        pointer["companions"] = companions
        nxt.append(call("head", ref=companions[0]))
    from scratch.calls import unique
    pointer["next"] = unique([c for c in nxt if c is not None])
    if warnings:
        pointer["warnings"] = warnings
    return pointer


def _outline(node: Info, depth: int, level: int = 0) -> list[Info]:
    first: Info = {k: node[k] for k in ("path", "type", "length", "lines", "value", "records")
                   if k in node}
    first["depth"] = level
    out = [first]
    if level >= depth:
        return out
    children = node.get("children", []) or []
    if record_map_size(node) is not None:
        children = children[:1]  # a map of alike records: the first stands for them
    for child in children:
        out.extend(_outline(child, depth, level + 1))
    return out


def outline_rows(schema: list[Info], detail: int) -> tuple[list[Info],
                                                                      int]:
    """The schema rows a pointer of ``detail`` shows, and how many it leaves out. Rows are
    chosen breadth first (every key of one level before any deeper one, so a long first
    subtree never hides the other top-level keys) and shown in document order, each under its
    parent."""
    max_depth = 3 if detail >= 3 else (2 if detail == 2 else 1)
    limit = {3: 40, 2: 20, 1: 8}.get(detail, 8)
    rows = [(n["depth"], i) for i, n in enumerate(schema) if n["depth"] <= max_depth]
    chosen = sorted(i for _, i in sorted(rows)[:limit])
    return [schema[i] for i in chosen], max(0, len(rows) - limit)


def render_pointer(p: Pointer, spell: Speller, *, detail: int = 3,
                   calls: int | None = None) -> str:
    """Plain text for the agent, its calls spelled by ``spell``. ``detail`` 3 is everything,
    0 the bare minimum; ``calls``: how many next calls (default: as many as the detail has)."""
    head = (f"stored {p['name']} (version {p['version']}): {p['format']}, {p['bytes']:,} bytes, "
            f"{p['lines']:,} lines, {p['tokens']:,} tokens ({p['encoding']}"
            f"{'' if p['exact'] else ', estimate'})")
    out = [head]
    if p.get("already_stored"):
        out.append("already stored: identical content was ingested before under this name")
    if p.get("partial"):
        out.append("PARTIAL: " + str(p.get("partial_reason") or (
            "the command failed, was killed or was interrupted mid-output; this is what "
            "arrived")))
    if p.get("redacted"):
        from scratch.answers.capture.redaction import sentence
        out.append(sentence(p["redacted"]))
    for w in p.get("warnings", [])[:3]:
        out.append(f"warning: {w}")
    schema = p.get("schema")
    if schema and detail >= 1:
        rows, hidden = outline_rows(schema, detail)
        out.append("schema:")
        for n in rows:
            out.append(f"  {'  ' * n['depth']}{n['path']}: {_type(n)}{_lines(n)}")
        if hidden:
            out.append(f"  … {hidden} more paths "
                       f"({spell(call('schema', ref=p['name']))})")
    arr = p.get("array")
    if arr and detail >= 1:
        keys = list(arr["keys"].items())
        shown = keys[: (30 if detail >= 2 else 12)]
        nested = arr.get("nested") or {}
        out.append(f"items of {arr['path']} ({arr['length']}): keys "
                   + ", ".join(_with_nested(k, f"{k} {v}", nested, detail) for k, v in shown)
                   + (f", … {len(keys) - len(shown)} more" if len(keys) > len(shown) else ""))
        samples = arr["samples"][: (3 if detail >= 3 else 1 if detail >= 2 else 0)]
        width = 300 if detail >= 3 else 160
        for s in samples:
            out.append(f"  {sample_label(s.get('index'), arr['length'])}: "
                       f"{_cut(s.get('value'), width)}")
    if p.get("snapshot") and detail >= 1:
        from scratch.answers.pointer.snapshot import snapshot_lines
        out += snapshot_lines(p["snapshot"], int(arr["length"] if arr else 0), detail)
    if p.get("kubernetes") and detail >= 1:
        out += kube_lines(p["kubernetes"], detail)
    if p.get("openapi") and detail >= 1:
        from scratch.answers.pointer.api import openapi_lines
        out += openapi_lines(p["openapi"], detail)
    text = p.get("text")
    if text and detail >= 1:
        if text.get("timestamp_format"):
            tr = [t for t in (text.get("time_range") or []) if t]
            span = f", {tr[0]} .. {tr[-1]}" if tr else ""
            out.append(f"log: {text['timestamp_format']} timestamps{span}")
        if text.get("levels"):
            out.append("levels: " + ", ".join(f"{k} {v}" for k, v in text["levels"].items()))
        out += records_lines(p, detail)
        if text.get("columns"):
            # the CSV index gives a column count and the field names under "header"
            cols = text.get("header") or []
            if not isinstance(text["columns"], int):
                cols = text["columns"]
            names = [c.get("name", str(c)) if isinstance(c, dict) else str(c) for c in cols]
            shown = names[: (30 if detail >= 2 else 12)]
            more = f", … {len(names) - len(shown)} more" if len(names) > len(shown) else ""
            n_rows = f", {text['rows']:,} rows" if isinstance(text.get("rows"), int) else ""
            out.append(f"columns ({len(names)}{n_rows}): "
                       + ", ".join(_cut(n, 40) for n in shown) + more)
        if text.get("headings"):
            rows = flat_headings(text["headings"], detail)
            out.append("headings:")
            out += [f"  {'  ' * (h['depth'] - 1)}{'#' * h['level']} {_cut(h['title'], 80)} "
                    f"L{h['line']}-{h['end_line']}" for h in rows]
            hidden = count_headings(text["headings"]) - len(rows)
            if hidden > 0:
                out.append(f"  … {hidden} more headings "
                           f"({spell(call('schema', ref=p['name']))})")
        n_first = {3: 5, 2: 3, 1: 1}.get(detail, 1)
        width = {3: 200, 2: 140, 1: 100}.get(detail, 100)
        if text.get("first_lines"):
            out.append("first lines:")
            out += [f"  {_cut(line, width)}" for line in text["first_lines"][:n_first]]
        if text.get("last_lines"):
            last = text["last_lines"][-n_first:]
            start = (text.get("last_lines_start") or 0) + len(text["last_lines"]) - len(last)
            out.append(f"last lines (from line {start}):" if start else "last lines:")
            out += [f"  {_cut(line, width)}" for line in last]
    if p.get("binary"):  # at every detail: it is all a binary pointer says
        from scratch.answers.pointer.binary import binary_lines
        out += binary_lines(p["binary"])
    if p.get("companions"):
        out.append("embedded documents stored as: " + ", ".join(p["companions"][:5]))
    found = p.get("error_lines")
    if found:
        out.append(error_lines_text(found))
    out.append("next:")
    shown = p["next"][: default_calls(detail) if calls is None else calls]
    out += [f"  {spell(c)}" for c in shown]
    return "\n".join(out) + "\n"


def error_lines_text(found: Info) -> str:
    """The checked error grep's count (see :func:`build_pointer`): ``error words in 6 lines``,
    how many of them have the words in values when not all, and the prefix read when the
    check stopped early."""
    lines, in_values = int(found.get("lines") or 0), int(found.get("in_values") or 0)
    where = "" if in_values == lines else f", {in_values:,} of them in values"
    read = found.get("scanned_bytes")
    cut = f" of the first {read / (1 << 20):,.0f} MiB" if isinstance(read, int) else ""
    return f"error words in {plural(lines, 'line', grouped=True)}{cut}{where}"


def records_lines(p: Pointer, detail: int) -> list[str]:
    """A parsed log's format, parsed share and breakdown (``detail`` 0: none of it)."""
    rec = p.get("records")
    if not rec or detail < 1:
        return []
    unparsed = f", {rec['unparsed']:,} not" if rec.get("unparsed") else ""
    headers = rec.get("header_lines")
    unparsed += f", {plural(int(headers), 'header line', grouped=True)}" if headers else ""
    out = [f"records ({rec['format']}): {rec.get('parsed', 0):,} of "
           f"{rec.get('records', 0):,} lines parsed{unparsed}"]
    top = 5 if detail >= 2 else 3
    for label, values, more in rec.get("breakdown") or []:
        shown = values[:top]
        left = more + len(values) - len(shown)
        if label == "templates":  # one a line: "#3 ×428 install <*> <none> <*>"
            out.append(f"  {plural(len(values) + more, 'line template', grouped=True)} "
                       "(Drain), the commonest:")
            out += [f"    #{v.get('id')} ×{n:,} {_cut(str(v.get('text')), 100)}"
                    for v, n in shown if isinstance(v, dict)]
            if left:
                out.append(f"    … {left:,} more")
            continue
        out.append(f"  {label}: " + ", ".join(f"{_cut(v, 40)} {n:,}" for v, n in shown)
                   + (f", … {left} more" if left else ""))
    return out


def flat_headings(tree: list[Info], detail: int) -> list[Info]:
    """A markdown heading tree in document order, as deep and as long as ``detail`` allows
    (``depth`` is the nesting in the tree; ``level`` stays the number of ``#``)."""
    max_level = {3: 3, 2: 2}.get(detail, 1)
    limit = {3: 30, 2: 15}.get(detail, 6)
    out: list[Info] = []

    def walk(nodes: list[Info], depth: int) -> None:
        for h in nodes:
            if len(out) >= limit:
                return
            if depth <= max_level:
                out.append({**h, "depth": depth})
            walk(h.get("children") or [], depth + 1)

    walk(tree, 1)
    return out


def count_headings(tree: list[Info]) -> int:
    return sum(1 + count_headings(h.get("children") or []) for h in tree)


def pointer_cap(raw_tokens: int) -> int:
    """The most tokens a pointer may take for an output of ``raw_tokens``."""
    cap = MAX_POINTER_TOKENS
    if raw_tokens >= BIG_OUTPUT_TOKENS:
        cap = min(cap, raw_tokens // 100)
    return min(cap, max(raw_tokens - 1, 1))


def shape_pointer(p: Pointer, detail: int, calls: int | None = None) -> Pointer:
    """The pointer's data cut to what ``render_pointer(p, detail=detail, calls=calls)`` shows,
    for ``--json``: same keys, fewer entries; ``*_more`` counts say what was left out."""
    out: Pointer = {**p}  # the figures as they are; the parts below cut to the detail
    out.pop("schema", None)
    out.pop("array", None)
    out.pop("text", None)
    out.pop("next", None)
    out.pop("records", None)
    if p.get("error_lines") and detail < 2:  # the grep call, when shown, has the pattern
        out["error_lines"] = {k: v for k, v in p["error_lines"].items() if k != "pattern"}
    kube = p.get("kubernetes")
    if kube and detail < 2:  # the counts that stand out, fewer of each
        out.pop("kubernetes", None)
        if detail == 1:
            out["kubernetes"] = {k: (v[:3] if isinstance(v, list) and k != "short" else v)
                                 for k, v in kube.items() if k not in ("kinds", "path")}
    snap = p.get("snapshot")
    if snap and detail < 1:
        out.pop("snapshot", None)
    elif snap:  # as snapshot_lines shows it
        from scratch.answers.pointer.snapshot import ROWS
        out["snapshot"] = {**snap, "outline": snap["outline"][:ROWS if detail >= 3 else
                                                               8 if detail == 2 else 4]}
    api = p.get("openapi")
    if api and detail < 1:
        out.pop("openapi", None)
    elif api and detail == 1:  # as openapi_lines shows it
        out["openapi"] = {**api, "methods": api.get("methods", [])[:4],
                          "tags": api.get("tags", [])[:4], "deprecated_examples": []}
    if p.get("records") and detail >= 1:
        top = 5 if detail >= 2 else 3
        rec = dict(p["records"])
        rec["breakdown"] = [[label, values[:top], more + len(values) - len(values[:top])]
                            for label, values, more in rec.get("breakdown") or []]
        out["records"] = rec
    if p.get("warnings"):
        out["warnings"] = p["warnings"][:3]
    schema = p.get("schema")
    if schema and detail >= 1:
        rows, hidden = outline_rows(schema, detail)
        out["schema"] = rows
        if hidden:
            out["schema_more"] = hidden
    arr = p.get("array")
    if arr and detail >= 1:
        keys = list(arr["keys"].items())
        shown = keys[: (30 if detail >= 2 else 12)]
        out["array"] = {**arr, "keys": dict(shown),
                        "samples": arr["samples"][: (3 if detail >= 3 else 1 if detail >= 2
                                                     else 0)]}
        limit = NESTED_SHOWN.get(min(detail, 3), 0)
        if arr.get("nested") and limit:
            out["array"]["nested"] = {k: v[:limit] for k, v in arr["nested"].items()
                                      if k in out["array"]["keys"]}
        else:
            out["array"].pop("nested", None)
        if len(keys) > len(shown):
            out["array"]["keys_more"] = len(keys) - len(shown)
    text = p.get("text")
    if text and detail >= 1:
        n_first = {3: 5, 2: 3, 1: 1}.get(detail, 1)
        width = {3: 200, 2: 140, 1: 100}.get(detail, 100)
        t = dict(text)
        if "first_lines" in t:
            t["first_lines"] = [_cut(line, width) for line in t["first_lines"][:n_first]]
        if "last_lines" in t:
            last = t["last_lines"][-n_first:]
            t["last_lines_start"] = ((t.get("last_lines_start") or 0) + len(t["last_lines"])
                                     - len(last))
            t["last_lines"] = [_cut(line, width) for line in last]
        if isinstance(t.get("header"), list):
            t["header"] = [_cut(h, 40) for h in t["header"][: (30 if detail >= 2 else 12)]]
        if t.get("headings"):
            rows = flat_headings(t["headings"], detail)
            more = count_headings(t["headings"]) - len(rows)
            t["headings"] = [{k: h[k] for k in ("level", "title", "line", "end_line")}
                             for h in rows]
            if more > 0:
                t["headings_more"] = more
        out["text"] = t
    out["next"] = p["next"][: default_calls(detail) if calls is None else calls]
    return out


class Level(NamedTuple):
    """How much of a pointer is shown: the detail of its content (3 everything, 0 the bare
    minimum) and how many of its next calls."""

    detail: int
    calls: int


# The levels a pointer steps down, most first. Its next calls are cut to the first five
# before its content is: a call's spelling differs by interface and name (a tool call's JSON
# with an automatic name costs twice a shell line with a short one), and cutting content first
# gave the same output a thinner pointer on one interface than on another.
LADDER = (Level(3, 8), Level(2, 8), Level(2, 5), Level(1, 5), Level(0, 5))


def default_calls(detail: int) -> int:
    return 8 if detail >= 2 else 5


def fit_data(p: Pointer, raw_tokens: int, count: Callable[[Pointer], int],
             overhead: int = 0) -> tuple[Pointer, int, Level]:
    """The most detailed :func:`shape_pointer` whose JSON as printed (``count`` measures it,
    its calls spelled), plus ``overhead`` tokens (the envelope around it), meets the size
    invariant; that JSON's token count, and the level (:data:`LADDER`)."""
    cap = pointer_cap(raw_tokens) - overhead
    data: Pointer = {}
    n = 0
    level = LADDER[0]
    for level in LADDER:
        data = shape_pointer(p, level.detail, calls=level.calls)
        n = count(data)
        if n <= cap:
            break
    return data, n, level


def fit_pointer(p: Pointer, raw_tokens: int, count: Callable[[str], int],
                spell: Speller) -> tuple[str, int, Level]:
    """The most detailed rendering that meets the size invariant, its token count and its
    level (:data:`LADDER`; the last when none does)."""
    cap = pointer_cap(raw_tokens)
    text = ""
    n = 0
    level = LADDER[0]
    for level in LADDER:
        text = render_pointer(p, spell, detail=level.detail, calls=level.calls)
        n = count(text)
        if n <= cap:
            break
    return text, n, level


def pointer_json(data: Pointer, call_data: Callable[[Call], object]) -> str:
    """The pointer's data as compact JSON, its calls as ``call_data`` writes them (a call it
    writes as None, a tool the server does not offer, is left out)."""
    shown = {k: ([w for w in (call_data(c) if isinstance(c, Call) else c for c in v)
                  if w is not None] if isinstance(v, list) else v) for k, v in data.items()}
    return _json(shown)


class Fitted(NamedTuple):
    """A pointer as one rendering shows it, fitted to the size invariant: its data (cut to the
    level, what ``--json`` and structured results show), its text (what plain renderings
    show), what the shown one costs, and the level (:data:`LADDER`)."""

    data: Pointer
    text: str
    tokens: int
    level: Level


def fit_shown(p: Pointer, raw_tokens: int, rendering: Rendering, spec: EncodingSpec, *,
              head: str = "", overhead: int = 0) -> Fitted:
    """``p`` fitted as ``rendering`` shows it: the rendering that shows the data
    (``shows_data``) gets the most detailed data whose JSON, its calls as that rendering
    writes them, meets the invariant with ``overhead`` tokens reserved (:func:`fit_data`);
    any other gets the most detailed text that does, ``head`` (a line said before it)
    included (:func:`fit_pointer`). Sizing what a rendering never shows cut its pointer to
    the bare minimum; ingest and ``artifact read`` fit their pointers here."""
    from scratch.tokens import count_text
    if rendering.shows_data:
        data, tokens, level = fit_data(
            p, raw_tokens, lambda d: count_text(pointer_json(d, rendering.call_data), spec),
            overhead)
        body = render_pointer(p, rendering.spell, detail=level.detail, calls=level.calls)
    else:
        body, tokens, level = fit_pointer(p, raw_tokens, lambda t: count_text(head + t, spec),
                                          rendering.spell)
        data = shape_pointer(p, level.detail, calls=level.calls)
    return Fitted(data, head + body, tokens, level)
