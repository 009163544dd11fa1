"""Per-format analysis of stored content: validation, skeleton, schema summary, info.

:func:`analyze` reads the stored file (streaming, except a single JSON or a YAML document
small enough to summarise from values) and returns an :class:`Analysis`. ``normalize`` runs it
to confirm a sniffed/declared format (``ok`` false means "store as text"), then hands it to
``build_index`` so nothing is parsed twice; ``build_index`` runs it itself when rebuilding.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, cast

from scratch.index.skeleton import ITEMS, LAZY, NONE, T_ARR, TYPES, Builder

if TYPE_CHECKING:
    from collections.abc import Sized

    from scratch.index.schema import SummaryNode
    from scratch.jsonvalues import JSON

YAML_VALUE_SUMMARY_MAX = 32 << 20  # summarise YAML from loaded values below this size


class _Unset(Enum):
    """No value given: the stored file is read (:func:`analyze_json`)."""

    UNSET = "unset"


_MISSING = _Unset.UNSET


@dataclass
class Analysis:
    format: str
    ok: bool = True
    error: dict[str, JSON] | None = None  # {"message", "line", "column", "offset"} when not ok
    warnings: list[str] = field(default_factory=list)
    info: dict[str, object] = field(default_factory=dict)
    builder: Builder | None = None
    sections: dict[str, array[int]] = field(default_factory=dict)  # named u32 arrays
    value: JSON = field(default=None, repr=False)
    engine: str = "orjson"
    layout: str | None = None


def analyze(path: Path, fmt: str, *, value: JSON | _Unset = _MISSING, engine: str = "orjson",
            layout: str | None = None, lines: int | None = None) -> Analysis:
    if fmt == "json":
        return analyze_json(path, value, engine, layout, lines)
    if fmt == "ndjson":
        return analyze_ndjson(path)
    if fmt == "yaml":
        return analyze_yaml(path)
    from scratch.index import textinfo

    if fmt in ("csv", "tsv"):
        info, sections, warnings = textinfo.analyze_csv(path, "\t" if fmt == "tsv" else None)
    elif fmt == "markdown":
        info, sections, warnings = textinfo.analyze_markdown(path)
    elif fmt in ("log", "text"):
        info, sections, warnings = textinfo.analyze_log(path, levels=fmt == "log")
    else:  # binary
        info, sections, warnings = {}, {}, []
    return Analysis(fmt, info={**info}, sections=sections, warnings=warnings)


# ----------------------------------------------------------------------------------------------
# Paths of records (for schema line ranges)


def record_paths(b: Builder, max_depth: int) -> dict[tuple[str | int, ...], tuple[int, int]]:
    """{path: (start_line, end_line)} for records up to ``max_depth``."""
    keys = bytes(b.keys)
    paths: list[tuple[str | int, ...] | None] = []
    out: dict[tuple[str | int, ...], tuple[int, int]] = {}
    for r in b.recs:
        parent = r[0]
        if parent == NONE:
            path: tuple[str | int, ...] | None = ()
        else:
            pp = paths[parent]
            if pp is None or len(pp) >= max_depth:
                path = None
            else:
                key: str | int = r[4] if r[5] == NONE else keys[r[4]:r[4] + r[5]].decode(
                    "utf-8", "surrogatepass")
                path = pp + (key,)
        paths.append(path)
        if path is not None:
            out[path] = (r[7], r[8])
    return out


def summarize_records(b: Builder, max_depth: int = 4) -> SummaryNode:
    """A schema tree from records alone (no values: no samples, no item unions)."""
    from scratch.pathnames import format_path

    keys = bytes(b.keys)
    nodes: list[SummaryNode | None] = []
    depths: list[int] = []
    root = cast("SummaryNode", {})  # stays empty when there are no records
    paths: list[tuple[str | int, ...]] = []
    for r in b.recs:
        parent = r[0]
        if parent == NONE:
            path: tuple[str | int, ...] = ()
            depth = 0
        else:
            if nodes[parent] is None:
                nodes.append(None)
                depths.append(0)
                paths.append(())
                continue
            depth = depths[parent] + 1
            key: str | int = r[4] if r[5] == NONE else keys[r[4]:r[4] + r[5]].decode(
                "utf-8", "surrogatepass")
            path = paths[parent] + (key,)
        node: SummaryNode = {"path": format_path(list(path)), "type": TYPES[r[2]],
                             "lines": [r[7], r[8]]}
        if r[2] in (4, 5, 6):
            node["length"] = r[6]
        if parent == NONE:
            root = node
        else:
            parent_node = nodes[parent]
            assert parent_node is not None
            parent_node.setdefault("children", []).append(node)
        keep = depth < max_depth and not r[3] & LAZY
        if not keep and r[2] in (5, 6) and r[6]:
            node["truncated"] = True
        nodes.append(node if keep else None)
        depths.append(depth)
        paths.append(path)
    return root


# ----------------------------------------------------------------------------------------------
# JSON


def analyze_json(path: Path, value: JSON | _Unset = _MISSING, engine: str = "orjson",
                 layout: str | None = None, lines: int | None = None) -> Analysis:
    """The analysis of the JSON document stored at ``path``.

    ``value``/``engine``/``layout``/``lines`` come from ingest (which parsed the input and wrote
    it); without them the stored file is read again. The canonical layout's line numbers follow
    from the value, unless an object repeats a key: the text then has more members than the
    value, so the record lines would drift. ``lines`` (the stored text's line count, from the
    re-indenter) reveals that; such a document is indexed from its text (layout ``raw``), which
    is exact for any layout.
    """
    from scratch.errors import JsonError
    from scratch.formats.jsontext import parse_value
    from scratch.index.jsonskel import canonical_skeleton, raw_skeleton
    from scratch.index.schema import SUMMARY_DEPTH, summarize_value
    from scratch.reindent import BIG_INT, SAME, reindent

    data: bytes | None = None
    if isinstance(value, _Unset):  # none given
        from scratch.formats.nesting import MAX_DEPTH

        data = path.read_bytes()
        try:
            # canonical only if the body is the stored text: no need to write a longer one;
            # nested deeper than MAX_DEPTH is refused in the same pass
            body, text_lines, flags = reindent(data, limit=len(data), max_depth=MAX_DEPTH)
            parsed, engine = parse_value(data, big_ints=bool(flags & BIG_INT))
        except JsonError as exc:
            return Analysis("json", ok=False, error=_err(exc.reason, exc.line, exc.column,
                                                         exc.offset))
        canonical = bool(flags & SAME)
        del body
        layout = "canonical" if canonical else "raw"
        lines = text_lines if canonical else None
        doc: JSON = parsed
    else:
        doc = value
        if layout is None:
            from scratch.reindent import is_canonical

            data = path.read_bytes()
            layout = "canonical" if is_canonical(data) else "raw"
    warnings: list[str] = []
    b: Builder | None = None
    if layout == "canonical":
        b = canonical_skeleton(doc, engine)
        if lines is not None and b.recs and b.recs[0][8] != lines:
            # a repeated key: the value has fewer members than the text
            warnings.append("an object in this JSON repeats a key; stored as written (every "
                            "member kept), and reading it gives the last value of a repeated "
                            "key, as JSON parsers do")
            layout = "raw"
            b = None
    if b is None:
        if data is None:
            data = path.read_bytes()
        try:
            b = raw_skeleton(data)
        except (ValueError, RecursionError, IndexError) as exc:
            # Too deep for the scanner: one lazy root; readers parse the whole document.
            warnings.append(f"structural index limited to the root ({type(exc).__name__})")
            b = Builder()
            idx = b.open(NONE, None, 5 if isinstance(doc, dict) else 6, 1, 1, 0, 0)
            b.close(idx, max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1)),
                    len(cast("Sized", doc)),  # nested too deep: a container
                    flags=LAZY, end_byte=len(data.rstrip()))
    b.finish()
    spans = record_paths(b, SUMMARY_DEPTH)
    schema = summarize_value(doc, lines_of=spans.get)
    info: dict[str, object] = {"schema": schema, "layout": layout, "engine": engine}
    _add_kubernetes(info, doc)
    return Analysis("json", info=info, builder=b, value=doc, engine=engine, layout=layout,
                    warnings=warnings)


def _add_kubernetes(info: dict[str, object], value: JSON) -> None:
    """``info["kubernetes"]``: what stands out in Kubernetes objects (:mod:`scratch.index.kube`);
    ``info["openapi"]``: an API description's operations (:mod:`scratch.index.openapi`)."""
    from scratch.index.kube import kube_signals
    from scratch.index.openapi import openapi_signals

    kube = kube_signals(value)
    if kube is not None:
        info["kubernetes"] = kube
    api = openapi_signals(value)
    if api is not None:
        info["openapi"] = api


def _too_deep(data: bytes, what: str, line_no: int | None = None,
              start: int = 0) -> dict[str, JSON] | None:
    """The error of ``data`` nesting deeper than :data:`scratch.formats.nesting.MAX_DEPTH`
    (checked before any recursive parse), else None; ``data`` may be the line ``line_no``
    of a file, from its byte ``start``."""
    from scratch.formats.nesting import nested_too_deeply, position, too_deep

    offset = too_deep(data)
    if offset is None:
        return None
    line, column = position(data, offset)
    if line_no is not None:
        line = line_no
    return _err(f"{what} {nested_too_deeply(start + offset)}", line, column, start + offset)


def _err(message: str, line: int | None, column: int | None,
         offset: int | None = None) -> dict[str, JSON]:
    return {"message": message, "line": line, "column": column, "offset": offset}


# ----------------------------------------------------------------------------------------------
# NDJSON


def analyze_ndjson(path: Path) -> Analysis:
    import orjson

    from scratch.index.schema import Union, preview
    from scratch.jsonvalues import loads_exact

    u = Union()
    items: array[int] | None = None
    n_items = 0
    invalid = 0
    examples: list[dict[str, JSON]] = []
    first_error: dict[str, JSON] | None = None
    first_invalid = False
    last_raw: bytes | None = None
    line_no = 0
    line_start = 0  # byte offset of the line in the file
    with open(path, "rb") as f:
        for raw in f:
            line_no += 1
            at, line_start = line_start, line_start + len(raw)
            s = raw.strip()
            if not s:
                if items is None:
                    items = array("I", range(1, line_no))
                continue
            if items is not None:
                items.append(line_no)
            n_items += 1
            deep = _too_deep(raw, "JSON", line_no, at)
            if deep is not None:  # not parsed at all: it is a line that is not JSON
                invalid += 1
                if n_items == 1:
                    first_invalid = True
                if first_error is None:
                    first_error = deep
                if len(examples) < 5:
                    examples.append(deep)
                continue
            try:
                v = orjson.loads(s)
            except orjson.JSONDecodeError as exc:
                try:
                    v = loads_exact(s)  # JSON orjson refuses: 1e400, lone surrogates, depth
                except ValueError:  # JsonError: not JSON (NaN and Infinity included)
                    invalid += 1
                    if n_items == 1:
                        first_invalid = True
                    col = getattr(exc, "colno", None)
                    err = _err(exc.msg if hasattr(exc, "msg") else str(exc), line_no, col)
                    if first_error is None:
                        first_error = err
                    if len(examples) < 5:
                        examples.append(err)
                    continue
            if n_items == 1:
                u.samples.append((0, preview(v)))
            u.add(v)
            last_raw = s
    if n_items == 0 or first_invalid or invalid * 10 > n_items:
        err = first_error or _err("no JSON lines", None, None)
        return Analysis("ndjson", ok=False, error=err)
    warnings = []
    if invalid:
        assert first_error is not None
        warnings.append(f"{invalid} of {n_items} lines are not JSON (first: line "
                        f"{first_error['line']}: {first_error['message']})")
    if last_raw is not None and n_items > 1:
        u.samples.append((n_items - 1, preview(orjson.loads(last_raw)
                                               if _safe(last_raw) else loads_exact(last_raw))))
    u.count = n_items
    b = Builder()
    root = b.open(NONE, None, T_ARR, 1)
    b.close(root, max(line_no, 1), n_items)
    if items is not None:
        b.set_items(root, items)
    else:
        b.recs[root][3] |= ITEMS | LAZY  # dense: item i is line i + 1
    schema = {"path": ".", "type": "array", "lines": [1, max(line_no, 1)], "length": n_items,
              "items": u.to_dict()}
    info = {"schema": schema, "layout": "ndjson", "dense": items is None,
            "invalid_lines": invalid, "invalid_examples": examples}
    return Analysis("ndjson", info=info, builder=b, layout="ndjson", warnings=warnings)


def _safe(raw: bytes) -> bool:
    import orjson

    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


# ----------------------------------------------------------------------------------------------
# YAML


def analyze_yaml(path: Path) -> Analysis:
    import yaml

    from scratch.index.schema import SUMMARY_DEPTH, summarize_value
    from scratch.index.yamlskel import yaml_skeleton

    small = path.stat().st_size <= YAML_VALUE_SUMMARY_MAX
    from scratch.formats.jsontext import no_gc

    # libyaml's flow parsing slows with the depth, and the composer recurses: too deep is text
    # (checked in memory up to the size whose values are loaded anyway)
    deep = _too_deep(path.read_bytes(), "YAML flow collections") if small else None
    if deep is not None:
        return Analysis("yaml", ok=False, error=deep)

    try:
        with no_gc():
            b, docs, values = yaml_skeleton(path, values=small)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        return Analysis("yaml", ok=False, error=_err(str(problem), line, col))
    from scratch.index.kube import kube_signals
    schema: SummaryNode | None = None
    kube = None
    api = None
    warnings: list[str] = []
    if values is not None:
        with no_gc():  # the values are dropped before the GC comes back
            value = values if docs != 1 else values[0]
            spans = record_paths(b, SUMMARY_DEPTH)
            schema = summarize_value(value, lines_of=spans.get)
            kube = kube_signals(value)
            from scratch.index.openapi import openapi_signals
            api = openapi_signals(value)
            del values, value
    else:
        schema = summarize_records(b)
    info = {"schema": schema, "layout": "yaml", "documents": docs}
    if kube is not None:
        info["kubernetes"] = kube
    if api is not None:
        info["openapi"] = api
    return Analysis("yaml", info=info, builder=b, layout="yaml", warnings=warnings)
