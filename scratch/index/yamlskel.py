"""YAML: a lenient safe loader and a skeleton built from parser events (constant memory).

Value semantics (:class:`Loader`, used wherever scratch turns YAML into values):

- safe tags only; any other tag (``!Ref``, ``!!python/...``) loads as the plain
  scalar/sequence/mapping under it;
- timestamps and binary stay strings (as written), so values are JSON-compatible;
- mapping keys are the key's text (``on:`` is the key ``"on"``, ``1:`` the key ``"1"``);
- aliases are bounded: a document whose aliases would expand it by more than
  :data:`MAX_ALIAS_NODES` nodes (a "billion laughs" bomb), an alias of its own ancestor, or an
  alias with no anchor raises :class:`AliasError` (a ``yaml.YAMLError``), at ingest (the
  content is then stored as text, saying why) and on every later load. Aliased values are
  shared objects, never copies, so memory stays that of the text.

Skeleton: a stream with several documents is an array of documents (record 0, one child per
document); a single document is its own root. Records carry the member's line range (a
mapping member starts at its key's line), the value's start (line, column) for slicing, and
the usual lengths. Block containers end at their last child's last line; flow ones at their
closing bracket.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol, cast

import yaml
from yaml import events as ev

from scratch.index.jsonskel import BIG_ARRAY, DEPTH, EXPAND_BYTES, MAX_DEPTH, MAX_RECORDS
from scratch.index.skeleton import (
    NONE,
    T_ARR,
    T_BOOL,
    T_INT,
    T_NULL,
    T_NUM,
    T_OBJ,
    T_STR,
    Builder,
)
from scratch.jsonvalues import JSON

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's when built in
MAX_ALIAS_NODES = 1_000_000  # nodes aliases may add to a document's expanded tree


class AliasError(yaml.YAMLError):  # type: ignore[misc]  # PyYAML is untyped here
    """An alias that cannot be followed safely (see the module docstring)."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.problem = message
        self.problem_mark = _Mark(line, column) if line is not None else None

    def __str__(self) -> str:
        return str(self.problem)


class _Mark:
    """What ``yaml.Mark`` offers readers of an error: 0-based line and column."""

    def __init__(self, line: int, column: int | None) -> None:
        self.line = line
        self.column = column or 0


def _too_big(extra: int) -> str:
    return (f"YAML aliases expand this document by more than {MAX_ALIAS_NODES:,} nodes "
            f"({extra:,}): refused, as a billion-laughs bomb would be")


class _Position(Protocol):
    """A position in the YAML text, as PyYAML's events and nodes carry it (0-based)."""

    line: int
    column: int
    index: int


class YamlNode(Protocol):
    """What scratch reads of a composed PyYAML node: a scalar's ``value`` is its text, a
    sequence's its child nodes, a mapping's its (key node, value node) pairs; ``flow_style``
    is a collection's."""

    value: object
    start_mark: _Position
    end_mark: _Position
    flow_style: bool | None


_Node = YamlNode


class _Event(Protocol):
    """What scratch reads of a PyYAML parser event (each kind has the attributes it uses)."""

    value: str
    tag: str | None
    implicit: tuple[bool, bool]
    style: str | None
    anchor: str
    flow_style: bool | None
    start_mark: _Position
    end_mark: _Position


class _Constructor(Protocol):
    """The part of a PyYAML loader that the constructors below call."""

    def flatten_mapping(self, node: _Node) -> None: ...

    def construct_object(self, node: _Node, deep: bool = False) -> JSON: ...


def check_aliases(root: _Node) -> None:
    """Raise :class:`AliasError` if the node graph under ``root`` (composed YAML, where an
    alias is the same node object again) is cyclic or expands by more than
    :data:`MAX_ALIAS_NODES` nodes. Linear in the distinct nodes."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    distinct = 0
    stack: list[tuple[_Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            total = 1
            for child in _children(node):
                total += sizes[id(child)]
            sizes[key] = total
            if total - distinct > MAX_ALIAS_NODES:
                raise AliasError(_too_big(total - distinct), node.start_mark.line,
                                 node.start_mark.column)
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise AliasError("a YAML alias refers to a node that contains it (a recursive "
                             "structure): refused", node.start_mark.line, node.start_mark.column)
        distinct += 1
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise AliasError("a YAML alias refers to a node that contains it (a recursive "
                                 "structure): refused", child.start_mark.line,
                                 child.start_mark.column)
            if id(child) not in sizes:
                stack.append((child, False))


def _children(node: _Node) -> list[_Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(cast("list[_Node]", node.value))
    if isinstance(node, yaml.MappingNode):
        return [n for pair in cast("list[tuple[_Node, _Node]]", node.value) for n in pair]
    return []


_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def _filtered_resolvers() -> dict[str | None, list[tuple[str, object]]]:
    """PyYAML's implicit resolvers (first character -> [(tag, regexp)]) but the timestamp's."""
    out: dict[str | None, list[tuple[str, object]]] = {}
    for first, entries in yaml.resolver.Resolver.yaml_implicit_resolvers.items():
        kept = [(tag, rx) for tag, rx in entries if tag != _TIMESTAMP]
        if kept:
            out[first] = kept
    return out


class Loader(_BaseLoader):  # type: ignore[misc]  # PyYAML is untyped here
    """Safe loader with JSON-friendly values and bounded aliases (see module docstring)."""

    yaml_implicit_resolvers = _filtered_resolvers()

    def construct_document(self, node: _Node) -> JSON:
        check_aliases(node)
        return cast(JSON, super().construct_document(node))


def _construct_map(loader: _Constructor, node: _Node) -> Iterator[dict[str, JSON]]:
    loader.flatten_mapping(node)
    data: dict[str, JSON] = {}
    yield data
    for key_node, value_node in cast("list[tuple[_Node, _Node]]", node.value):
        if isinstance(key_node, yaml.ScalarNode):
            key = cast(str, key_node.value)
        else:
            key = str(loader.construct_object(key_node, deep=True))
        data[key] = loader.construct_object(value_node, deep=True)


def _construct_any(loader: _Constructor, *args: str | _Node) -> JSON:
    node = cast(_Node, args[-1])  # (node) or (tag suffix, node)
    if isinstance(node, yaml.ScalarNode):
        return cast(str, node.value)
    if isinstance(node, yaml.SequenceNode):
        return [loader.construct_object(n, deep=True) for n in cast("list[_Node]", node.value)]
    out: dict[str, JSON] = {}
    for k, v in cast("list[tuple[_Node, _Node]]", node.value):
        if isinstance(k, yaml.ScalarNode):
            key = cast(str, k.value)
        else:
            key = str(loader.construct_object(k, deep=True))
        out[key] = loader.construct_object(v, deep=True)
    return out


def _construct_text(loader: _Constructor, node: _Node) -> str:
    return cast(str, node.value)


Loader.add_constructor("tag:yaml.org,2002:map", _construct_map)
Loader.add_constructor(_TIMESTAMP, _construct_text)
Loader.add_constructor("tag:yaml.org,2002:binary", _construct_text)
Loader.add_constructor(None, _construct_any)
Loader.add_multi_constructor("!", _construct_any)
Loader.add_multi_constructor("tag:", _construct_any)


class _Resolver(yaml.resolver.BaseResolver):  # type: ignore[misc]  # untyped, as above
    yaml_implicit_resolvers = _filtered_resolvers()


_RESOLVER = _Resolver()
_TAG_TYPE = {
    "tag:yaml.org,2002:null": T_NULL,
    "tag:yaml.org,2002:bool": T_BOOL,
    "tag:yaml.org,2002:int": T_INT,
    "tag:yaml.org,2002:float": T_NUM,
}


def scalar_tag(e: _Event) -> str:
    tag = e.tag
    if tag is None or tag == "!":
        return cast(str, _RESOLVER.resolve(yaml.ScalarNode, e.value, e.implicit))
    return tag


def scalar_type(e: _Event) -> int:
    return _TAG_TYPE.get(scalar_tag(e), T_STR)


_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_SCALAR_BUILDERS: dict[str, Callable[[_Node], JSON]] = {
    "tag:yaml.org,2002:null": _CONSTRUCTOR.construct_yaml_null,
    "tag:yaml.org,2002:bool": _CONSTRUCTOR.construct_yaml_bool,
    "tag:yaml.org,2002:int": _CONSTRUCTOR.construct_yaml_int,
    "tag:yaml.org,2002:float": _CONSTRUCTOR.construct_yaml_float,
}


def scalar_value(e: _Event, tag: str) -> JSON:
    """The value :class:`Loader` gives a scalar event (strings for every other tag)."""
    build = _SCALAR_BUILDERS.get(tag)
    if build is None:
        return e.value
    return build(yaml.ScalarNode(tag, e.value, style=e.style))


def load_all(data: bytes | str) -> list[JSON]:
    return list(yaml.load_all(data, Loader=Loader))


def _end_line(mark: _Position) -> int:
    """1-based line of the last character before ``mark``."""
    return mark.line if mark.column == 0 and mark.line > 0 else mark.line + 1


class _Frame:
    __slots__ = ("idx", "kind", "depth", "n", "key", "key_line", "last_end", "starts", "flow",
                 "recorded", "start_index", "value", "pkey", "anchor", "size")

    def __init__(self, idx: int | None, kind: str, depth: int, flow: bool, recorded: bool) -> None:
        self.idx = idx
        self.kind = kind  # "map" | "seq" | "docs"
        self.depth = depth
        self.n = 0
        self.key: tuple[str, int] | None = None  # pending key (maps): (text, line), or None
        self.key_line = 0
        self.last_end = 0
        self.starts: array[int] | None = None
        self.flow = flow
        self.recorded = recorded  # children get records
        self.start_index = 0
        self.value: dict[str, JSON] | list[JSON] | None = None  # being built (values=True)
        self.pkey: str | int = 0  # this container's key in its parent
        self.anchor: str | None = None
        self.size = 1  # nodes of the expanded subtree (aliases counted as what they stand for)


def yaml_skeleton(path: Path, depth: int = DEPTH, big_array: int = BIG_ARRAY,
                  max_records: int = MAX_RECORDS, expand_bytes: int = EXPAND_BYTES,
                  values: bool = False) -> tuple[Builder, int, list[JSON] | None]:
    """(records, number of documents, the documents' values if ``values``). Raises
    ``yaml.YAMLError`` on a syntax error.

    Same expansion rules as :mod:`scratch.index.jsonskel`: containers deeper than ``depth``
    keep their children's records only when their text exceeds ``expand_bytes`` (known when
    they close; smaller ones are truncated back to one LAZY record). With ``values`` the same
    events also build the documents' values (as :class:`Loader` would, merge keys aside:
    merged keys come after the mapping's own), which saves parsing the stream twice.
    """
    b = Builder()
    root = b.open(NONE, None, T_ARR, 1)
    stack: list[_Frame] = [_Frame(root, "docs", -1, False, True)]
    if values:
        stack[0].value = []
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (type, length) of its node
    sizes: dict[str, int] = {}  # anchor -> nodes of its expanded subtree
    open_anchors: set[str] = set()  # anchors of containers not closed yet
    written = expanded = 0  # nodes in the text; nodes once aliases are expanded
    anchored: dict[str, JSON] = {}
    skip_key_depth = 0  # inside a complex (non-scalar) mapping key
    ckey: list[_KeyPart] = []  # its value being built
    docs = 0
    v: JSON
    key: str | int
    with open(path, "rb") as f:
        # Class identity tests instead of isinstance: this loop runs once per event.
        scalar_cls, alias_cls = ev.ScalarEvent, ev.AliasEvent
        starts_cls = (ev.MappingStartEvent, ev.SequenceStartEvent)
        ends_cls = (ev.MappingEndEvent, ev.SequenceEndEvent)
        for e in yaml.parse(f, Loader=_BaseLoader):
            cls = e.__class__
            if skip_key_depth:
                # A mapping key that is itself a mapping or sequence: build its value so the
                # key text is str(value), as Loader makes it.
                if cls in starts_cls:
                    skip_key_depth += 1
                    ckey.append(_KeyPart({} if cls is ev.MappingStartEvent else []))
                    continue
                if cls in ends_cls:
                    skip_key_depth -= 1
                    done = ckey.pop().container
                    if not skip_key_depth:
                        stack[-1].key = (str(done), stack[-1].key_line)
                        continue
                    v = done
                elif cls is scalar_cls:
                    v = scalar_value(e, scalar_tag(e))
                elif cls is alias_cls:
                    v = anchored.get(e.anchor)
                else:
                    continue
                holder = ckey[-1]
                if isinstance(holder.container, list):
                    holder.container.append(v)
                elif holder.key is None:
                    holder.key = str(v)
                else:
                    holder.container[holder.key] = v
                    holder.key = None
                continue
            top = stack[-1]
            is_scalar = cls is scalar_cls
            if not is_scalar and cls is not alias_cls and cls not in starts_cls:
                if cls is ev.DocumentStartEvent:
                    docs += 1
                if cls not in ends_cls:
                    continue
                frame = stack.pop()
                if frame.anchor:
                    anchors[frame.anchor] = (T_OBJ if frame.kind == "map" else T_ARR, frame.n)
                    sizes[frame.anchor] = frame.size + 1
                    open_anchors.discard(frame.anchor)
                stack[-1].size += frame.size
                end = _end_line(e.end_mark) if frame.flow else max(frame.last_end,
                                                                   frame.key_line)
                if frame.idx is not None:
                    lazy = 0 if frame.recorded or frame.n == 0 else 1
                    if (frame.depth >= depth and frame.n and frame.starts is None and not lazy
                            and e.end_mark.index - frame.start_index <= expand_bytes):
                        b.truncate_children(frame.idx)
                        lazy = 1
                    if frame.starts is not None:
                        b.set_items(frame.idx, frame.starts)
                    start = b.recs[frame.idx][7]
                    b.close(frame.idx, max(end, start), frame.n, flags=lazy)
                if values:
                    _attach(stack[-1], frame.pkey, frame.value)
                _child_done(stack[-1], max(end, 1))
                _maybe_big(b, stack[-1], big_array)
                continue
            # a node: scalar, alias, mapping or sequence start
            if top.kind == "map" and top.key is None:
                if is_scalar:
                    top.key = (e.value, e.start_mark.line + 1)
                    top.key_line = e.start_mark.line + 1
                elif cls is alias_cls:
                    _alias_size(e, sizes, open_anchors)
                    top.key = ("*" + e.anchor, e.start_mark.line + 1)
                    top.key_line = e.start_mark.line + 1
                else:
                    skip_key_depth = 1
                    ckey.append(_KeyPart({} if cls is ev.MappingStartEvent else []))
                    top.key_line = e.start_mark.line + 1
                continue
            if top.kind == "map":
                key, member_line = cast("tuple[str, int]", top.key)  # set: see above
            elif top.kind == "seq":
                key, member_line = top.n, e.start_mark.line + 1
            else:
                key, member_line = docs - 1, e.start_mark.line + 1
            vline, vcol = e.start_mark.line + 1, e.start_mark.column
            record = top.recorded and top.starts is None and len(b) < max_records
            if top.kind == "seq" and top.starts is not None:
                top.starts.append(vline)
            written += 1
            expanded += 1
            top.size += 1
            if is_scalar or cls is alias_cls:
                if is_scalar:
                    tag = scalar_tag(e)
                    code = _TAG_TYPE.get(tag, T_STR)
                    length = len(e.value) if code == T_STR else 0
                    if e.anchor:
                        anchors[e.anchor] = (code, length)
                        sizes[e.anchor] = 1
                    if values:
                        v = scalar_value(e, tag)
                        if e.anchor:
                            anchored[e.anchor] = v
                        _attach(top, key, v)
                else:
                    grown = _alias_size(e, sizes, open_anchors)
                    expanded += grown - 1
                    top.size += grown - 1
                    if expanded > MAX_ALIAS_NODES:
                        raise AliasError(_too_big(expanded), e.start_mark.line,
                                         e.start_mark.column)
                    code, length = anchors[e.anchor]
                    if values:
                        _attach(top, key, anchored.get(e.anchor))
                end = _end_line(e.end_mark)
                if record:
                    leaf = b.open(top.idx if top.idx is not None else NONE, key, code,
                                  member_line, vline, vcol)
                    # an alias of a container: its children live at the anchor, so readers
                    # must parse (LAZY) rather than look for child records here
                    lazy = 1 if code in (T_OBJ, T_ARR) and length else 0
                    b.close(leaf, max(end, member_line), length, flags=lazy)
                _child_done(top, max(end, member_line))
                _maybe_big(b, top, big_array)
                continue
            code = T_OBJ if cls is ev.MappingStartEvent else T_ARR
            idx: int | None = None
            if record:
                idx = b.open(top.idx if top.idx is not None else NONE, key, code, member_line,
                             vline, vcol)
            child_depth = top.depth + 1
            frame = _Frame(idx, "map" if code == T_OBJ else "seq", child_depth,
                           bool(e.flow_style), idx is not None and child_depth < MAX_DEPTH)
            frame.start_index = e.start_mark.index
            frame.anchor = e.anchor
            frame.size = 0  # the node itself was counted in the parent above
            if e.anchor:
                open_anchors.add(e.anchor)
            if values:
                frame.value = {} if code == T_OBJ else []
                frame.pkey = key
                if e.anchor:
                    anchored[e.anchor] = frame.value
            frame.last_end = member_line
            frame.key_line = member_line
            stack.append(frame)
    # close the documents array
    b.close(root, max(stack[0].last_end, 1), docs)
    _maybe_big_final(b, stack[0], big_array)
    if docs == 1 and len(b) > 1:
        _reroot(b)
    b.finish()
    return b, docs, cast("list[JSON] | None", stack[0].value)


def _alias_size(e: _Event, sizes: dict[str, int], open_anchors: set[str]) -> int:
    """Nodes the alias event ``e`` stands for; :class:`AliasError` if it cannot be followed."""
    line, column = e.start_mark.line, e.start_mark.column
    if e.anchor in open_anchors:
        raise AliasError(f"the YAML alias *{e.anchor} refers to a node that contains it (a "
                         "recursive structure): refused", line, column)
    size = sizes.get(e.anchor)
    if size is None:
        raise AliasError(f"found undefined alias *{e.anchor}", line, column)
    return size


def _attach(frame: _Frame, key: str | int, value: JSON) -> None:
    # casts, not checks: a "map" frame builds a dict (keyed by text), the others a list
    if frame.kind == "map":
        obj = cast("dict[str, JSON]", frame.value)
        if key == "<<" and isinstance(value, (dict, list)):  # merge key
            for merged in (value if isinstance(value, list) else [value]):
                if isinstance(merged, dict):
                    for k, v in merged.items():
                        obj.setdefault(k, v)
            return
        obj[cast(str, key)] = value
    else:
        cast("list[JSON]", frame.value).append(value)


class _KeyPart:
    """A container being built as (part of) a complex mapping key; ``key`` is a mapping's
    pending key (None when the next scalar is a key)."""

    __slots__ = ("container", "key")

    def __init__(self, container: dict[str, JSON] | list[JSON]) -> None:
        self.container = container
        self.key: str | None = None


def _child_done(frame: _Frame, end: int) -> None:
    frame.n += 1
    if end > frame.last_end:
        frame.last_end = end
    if frame.kind == "map":
        frame.key = None


def _maybe_big(b: Builder, frame: _Frame, big_array: int) -> None:
    """After a sequence child: switch to item start lines once the sequence is big."""
    if frame.kind not in ("seq", "docs") or frame.starts is not None or frame.idx is None:
        return
    if frame.n > big_array and frame.recorded:
        starts = array("I", (b.recs[j][11] for j in b.children_of(frame.idx)))
        b.truncate_children(frame.idx)
        frame.starts = starts


def _maybe_big_final(b: Builder, frame: _Frame, big_array: int) -> None:
    if frame.starts is not None:
        b.set_items(frame.idx or 0, frame.starts)


def _reroot(b: Builder) -> None:
    """Make the only document the root (drop the documents array, record 0)."""
    recs = b.recs[1:]
    for r in recs:
        r[0] = NONE if r[0] == 0 else r[0] - 1
        r[1] -= 1
    recs[0][4], recs[0][5] = 0, 0
    b.recs = recs
