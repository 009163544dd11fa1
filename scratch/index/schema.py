"""Schema summaries stored with the index, so ``schema`` and the pointer need not rescan.

Shape (JSON-serialisable, deterministic; paths in the dot-path syntax of
:func:`scratch.query.paths.format_path`):

``node``::

    {"path": "items", "type": "array", "lines": [5, 4930], "length": 11,
     "items": <union>}                        # arrays
    {"path": "metadata", "type": "object", "lines": [2, 9], "length": 4,
     "children": [<node>, ...], "more_children": 3}   # objects (first MAX_CHILDREN keys)
    {"path": "definitions", "type": "object", "length": 312, "records": true, ...}
                                 # a map of records (:func:`is_record_map`)
    {"path": "kind", "type": "string", "lines": [3, 3], "length": 7, "value": "PodList"}

``lines`` is absent where the skeleton has no record (inside big arrays); ``children`` stop at
the summary depth (``"truncated": true`` marks a container whose children were not listed).

``union`` (the items of an array, or NDJSON lines, or YAML documents)::

    {"count": 11, "scanned": 11, "types": {"object": 11},
     "keys": [{"key": "metadata.name", "count": 11, "types": {"string": 11},
               "max_length": 63}, ...],          # nested keys dotted, up to UNION_DEPTH
     "more_keys": 0, "samples": [<abbreviated item>, ...]}

``count`` is the number of items, ``scanned`` how many were looked at (all of them unless the
work budget ran out: then the first ones and an even spread of the rest). ``samples`` are up to
3 items (first, middle, last) with long strings cut and deep containers shown as
``"{…N keys}"`` / ``"[…N items]"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict, cast

from scratch.jsonvalues import JSON, JsonNumber, json_type
from scratch.pathnames import format_path


class UnionKey(TypedDict):
    """One key of an item union: its dot path, items holding it, their JSON types, and the
    longest string/array/object seen there (absent when no value had a length)."""

    key: str
    count: int
    types: dict[str, int]
    max_length: NotRequired[int]


class UnionSample(TypedDict):
    index: int
    value: JSON  # an abbreviated item (see preview)


class ItemUnion(TypedDict):
    """What the items of one array have in common (:func:`union_of`; see the module
    docstring)."""

    count: int
    scanned: int
    types: dict[str, int]
    keys: list[UnionKey]
    more_keys: int
    samples: list[UnionSample]


class SummaryNode(TypedDict):
    """One node of :func:`summarize_value`: path and type always; the rest as they apply."""

    path: str
    type: str
    lines: NotRequired[list[int]]
    length: NotRequired[int]
    items: NotRequired[ItemUnion]
    truncated: NotRequired[bool]
    more_children: NotRequired[int]
    records: NotRequired[bool]
    children: NotRequired[list[SummaryNode]]
    value: NotRequired[JSON]

SUMMARY_DEPTH = 4
MAX_CHILDREN = 60
UNION_DEPTH = 3
MAX_UNION_KEYS = 200
UNION_BUDGET = 2_000_000  # key visits per union before sampling kicks in
STRING_PREVIEW = 60
SAMPLE_KEYS = 12


def preview(value: JSON, depth: int = 2) -> JSON:
    """A small JSON-serialisable stand-in for ``value``."""
    if isinstance(value, str):
        return value if len(value) <= STRING_PREVIEW else value[:STRING_PREVIEW] + "…"
    if isinstance(value, dict):
        if depth <= 0:
            return f"{{…{len(value)} keys}}"
        out: dict[str, JSON] = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= SAMPLE_KEYS:
                out["…"] = f"+{len(value) - SAMPLE_KEYS} keys"
                break
            out[str(k)] = preview(v, depth - 1)
        return out
    if isinstance(value, list):
        if depth <= 0:
            return f"[…{len(value)} items]"
        items = [preview(v, depth - 1) for v in value[:3]]
        if len(value) > 3:
            items.append(f"…+{len(value) - 3} items")
        return items
    if isinstance(value, JsonNumber) or (type(value) is int and not -10**18 < value < 10**18):
        text = value.text if isinstance(value, JsonNumber) else str(value)
        if len(text) > STRING_PREVIEW:  # a 100,000-digit number is shown cut, as a string is
            return f"{text[:STRING_PREVIEW]}… ({len(text):,} characters)"
        return value
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)


_TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean",
               type(None): "null", dict: "object", list: "array"}


class Union:
    """Accumulates the key union of a stream of items.

    Keys are kept as a tree (key -> [count, {type: count}, max length, children]) so a visit
    costs a dict lookup, not a tuple of the whole path. ``scan_items`` of ``scratch._union``
    carries a union on from the items' text (its attributes, as ``add`` carries them).
    """

    text_limits: tuple[int, int, int] | None = (UNION_DEPTH, MAX_UNION_KEYS, UNION_BUDGET)

    def __init__(self, count_hint: int | None = None) -> None:
        self.count = 0
        self.scanned = 0
        self.types: dict[str, int] = {}
        self.tree: dict[str, list[Any]] = {}
        self.nkeys = 0
        self.more_keys = 0
        self.samples: list[tuple[int, JSON]] = []
        self.visits = 0
        self.stride = 1
        self.count_hint = count_hint

    def add(self, item: JSON) -> None:
        i = self.count
        self.count += 1
        if self.visits >= UNION_BUDGET:
            # Past the budget: look at every stride-th item only (deterministic spread).
            if self.stride == 1:
                self.stride = max(2, (self.count_hint or 10 * i) // max(i, 1))
            if i % self.stride:
                return
        self.scanned += 1
        t = _TYPE_NAMES.get(type(item)) or json_type(item)
        self.types[t] = self.types.get(t, 0) + 1
        if type(item) is dict or isinstance(item, dict):
            if _c_walk is not None:
                visits, self.nkeys, more = _c_walk(item, self.tree, 1, self.nkeys, UNION_DEPTH,
                                                   MAX_UNION_KEYS, _TYPE_NAMES, json_type)
                self.visits += visits
                self.more_keys += more
            else:
                self._walk_py(item, self.tree, 1)

    def _walk_py(self, obj: dict[Any, Any], level: dict[str, list[Any]], depth: int) -> None:
        """The key walk (the twin of the C ``walk`` of ``scratch._union``, used when it was not
        built: same tree, counts and order)."""
        self.visits += len(obj)
        names = _TYPE_NAMES
        deeper = depth < UNION_DEPTH
        for k, v in obj.items():
            if type(k) is not str:  # a YAML key (1, null): counted under its text
                k = str(k)
            e = level.get(k)
            if e is None:
                if self.nkeys >= MAX_UNION_KEYS:
                    self.more_keys += 1
                    continue
                self.nkeys += 1
                e = level[k] = [0, {}, -1, {}]
            e[0] += 1
            tv = type(v)
            t = names.get(tv) or json_type(v)
            types = e[1]
            types[t] = types.get(t, 0) + 1
            if tv is str or tv is list or tv is dict:
                n = len(v)
                if n > e[2]:
                    e[2] = n
                if tv is dict and deeper and n:
                    self._walk_py(v, e[3], depth + 1)

    @staticmethod
    def sample_indexes(total: int) -> tuple[int, ...]:
        """The items kept as samples: the first, the middle one, the last."""
        return tuple(sorted({0, total // 2, total - 1}))

    def offer_sample(self, index: int, item: JSON, total: int) -> None:
        if index in self.sample_indexes(total) and all(i != index for i, _ in self.samples):
            self.samples.append((index, preview(item)))

    def to_dict(self) -> ItemUnion:
        keys: list[UnionKey] = []

        def flatten(level: dict[str, list[Any]], prefix: tuple[str, ...]) -> None:
            for k, (count, types, maxlen, children) in level.items():
                path = prefix + (k,)
                entry: UnionKey = {"key": format_path(list(path)), "count": count,
                                   "types": dict(sorted(types.items()))}
                if maxlen >= 0:
                    entry["max_length"] = maxlen
                keys.append(entry)
                flatten(children, path)

        flatten(self.tree, ())
        return {
            "count": self.count,
            "scanned": self.scanned,
            "types": dict(sorted(self.types.items())),
            "keys": keys,
            "more_keys": self.more_keys,
            "samples": [{"index": i, "value": v} for i, v in sorted(self.samples)],
        }


try:
    # not found when unbuilt, found (untyped) when built: either way no error
    from scratch._union import walk as _c_walk  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # no compiler at install time: Union._walk_py
    _c_walk = None


def union_of(items: Sequence[JSON]) -> ItemUnion:
    from scratch.index.textitems import TextItems

    if isinstance(items, TextItems) and items.union is not None:
        # made as its items were parsed, the same way (by Union.to_dict below)
        return cast(ItemUnion, items.union)
    u = Union(len(items))
    n = len(items)
    for i, item in enumerate(items):
        u.add(item)
        u.offer_sample(i, item, n)
    return u.to_dict()


def is_record_map(value: Mapping[str, JSON]) -> bool:
    """Whether an object reads as a map of records: 2 or more values, every one an object, and
    alike (some key is in two of them and at least half: an OpenAPI ``definitions``,
    per-server counters; not a Pod's ``metadata``/``spec``/``status``, which share no key)."""
    if len(value) < 2 or not all(isinstance(v, dict) for v in value.values()):
        return False
    seen: dict[str, int] = {}
    for v in value.values():
        for k in v if isinstance(v, dict) else ():  # each is (checked above)
            seen[k] = seen.get(k, 0) + 1
    most = max(seen.values(), default=0)
    return most >= 2 and 2 * most >= len(value)


def summarize_value(value: JSON, path: tuple[str | int, ...] = (), depth: int = SUMMARY_DEPTH,
                    lines_of: Callable[[tuple[str | int, ...]], tuple[int, int] | None]
                    | None = None) -> SummaryNode:
    """Summary node of ``value`` at ``path``; ``lines_of(path)`` gives (start, end) or None."""
    node: SummaryNode = {"path": format_path(list(path)), "type": json_type(value)}
    if lines_of is not None:
        span = lines_of(path)
        if span is not None:
            node["lines"] = [span[0], span[1]]
    if isinstance(value, (str, list, dict)):
        node["length"] = len(value)
    if isinstance(value, list):
        if value:
            node["items"] = union_of(value)
    elif isinstance(value, dict):
        if is_record_map(value):
            node["records"] = True  # a map of records: its values are rows
        if depth <= 0:
            if value:
                node["truncated"] = True
            return node
        children = []
        for i, (k, v) in enumerate(value.items()):
            if i >= MAX_CHILDREN:
                node["more_children"] = len(value) - MAX_CHILDREN
                break
            children.append(summarize_value(v, path + (str(k),), depth - 1, lines_of))
        node["children"] = children
    else:
        node["value"] = preview(value)
    return node


def record_map_size(node: Mapping[str, object]) -> int | None:
    """The number of records of an outline node marked as a map of records (alike objects,
    rows for iterate-over, item-schema and sql: :func:`is_record_map`), else None."""
    n = node.get("length")
    if node.get("type") != "object" or not node.get("records") or not isinstance(n, int):
        return None
    return n
