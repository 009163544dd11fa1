"""The shape of an in-memory JSON-like value, as a deterministic list of nodes.

Output of :func:`schema_of_value`: a flat list of nodes in depth-first order, children in the
order their keys were first seen, array elements merged into one ``[*]`` node::

    {"path": ".",                 "type": "object", "keys": 4}
    {"path": "kind",              "type": "string", "length": 7}
    {"path": "items",             "type": "array",  "length": 11}
    {"path": "items[*]",          "type": "object", "count": 11, "keys": 3}
    {"path": "items[*].metadata.name", "type": "string", "count": 11, "length": [14, 46]}
    {"path": "items[*].spec.hostNetwork", "type": "boolean", "count": 4}
    {"path": "x[*]",              "type": "mixed", "types": {"string": 2, "null": 1}, "count": 3}

Fields:
* ``path`` -- dot path as ``format_path`` writes it; ``[*]`` stands for every element of an
  array (the elements are merged into one node). Every path is accepted by ``get-in``.
* ``type`` -- a JSON type (object, array, string, integer, number, boolean, null) or ``mixed``
  with ``types`` giving the count per type.
* ``count`` -- how many values were merged into the node (only below a ``[*]``).
* ``length`` -- arrays: number of elements; strings: number of characters. Under ``[*]`` it is
  ``[min, max]`` over the merged values of that type.
* ``keys`` -- objects: number of keys (under ``[*]``: of the union of their keys).
* ``truncated`` -- true when ``depth`` stopped the walk below this node.

``depth`` counts path segments below the root (a ``[*]`` is one segment); nodes deeper than
``depth`` are not listed.

This is the flat, merged view of a small in-memory value. The entry index keeps its own nested
summary for big files (``scratch.index.schema``: children lists and per-array key unions with
line ranges); both write paths with ``format_path``.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from scratch.jsonvalues import JSON, json_type
from scratch.pathnames import WILDCARD, Segment, format_path


class SchemaNode(TypedDict):
    """One node of :func:`schema_of_value` (see the module docstring for each field)."""

    path: str
    type: str  # a JSON type, or "mixed" (then ``types`` counts each)
    types: NotRequired[dict[str, int]]
    count: NotRequired[int]
    length: NotRequired[int | list[int]]
    keys: NotRequired[int]
    truncated: NotRequired[bool]


def _length_of(values: list[str] | list[list[JSON]]) -> int | list[int]:
    lengths = [len(v) for v in values]
    return lengths[0] if len(lengths) == 1 else [min(lengths), max(lengths)]


def _walk(values: list[JSON], path: list[Segment], merged: bool, depth_left: int,
          out: list[SchemaNode]) -> None:
    types: dict[str, int] = {}
    for v in values:
        t = json_type(v)
        types[t] = types.get(t, 0) + 1
    if len(types) == 1:
        (kind,) = types
        node: SchemaNode = {"path": format_path(path), "type": kind}
    else:
        kind = "mixed"
        node = {"path": format_path(path), "type": "mixed"}
        node["types"] = types
    if merged:
        node["count"] = len(values)
    arrays = [v for v in values if isinstance(v, list)]
    objects = [v for v in values if isinstance(v, dict)]
    strings = [v for v in values if isinstance(v, str)]
    if kind in ("array", "string") and (arrays or strings):
        node["length"] = _length_of(arrays or strings)
    keys: dict[str, None] = {}
    for obj in objects:
        keys.update(dict.fromkeys(obj))
    if objects:
        node["keys"] = len(keys)
    elements = [e for a in arrays for e in a]
    has_children = bool(keys) or bool(elements)
    if has_children and depth_left <= 0:
        node["truncated"] = True
    out.append(node)
    if depth_left <= 0:
        return
    for key in keys:
        child_values = [obj[key] for obj in objects if key in obj]
        _walk(child_values, [*path, key], merged, depth_left - 1, out)
    if elements:
        _walk(elements, [*path, WILDCARD], True, depth_left - 1, out)


def schema_of_value(value: JSON, depth: int = 4) -> list[SchemaNode]:
    """The schema nodes of ``value`` down to ``depth`` segments (see the module docstring)."""
    out: list[SchemaNode] = []
    _walk([value], [], False, depth, out)
    return out
