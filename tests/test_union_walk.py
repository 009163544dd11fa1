"""The item union's key walk in C (``scratch._union``) builds the same key tree, counts and
order as its pure-Python twin (``Union._walk_py``): on hand-made items that reach every rule
(the key cap, keys that are not strings, types only ``json_type`` names, the depth bound) and
on every JSON array of the corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from scratch.index import schema
from scratch.index.schema import Union
from scratch.jsonvalues import JsonNumber

pytestmark = pytest.mark.skipif(schema._c_walk is None, reason="scratch._union is not built")


def _union(items: list[Any], c: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    with monkeypatch.context() as m:
        if not c:
            m.setattr(schema, "_c_walk", None)
        u = Union(len(items))
        for i, item in enumerate(items):
            u.add(item)
            u.offer_sample(i, item, len(items))
        return (orjson.dumps(u.to_dict(), default=repr), u.visits, u.nkeys, u.more_keys, u.scanned,
                repr(u.tree))


def test_a_small_walk_gives_the_exact_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [{"a": 1, "b": {"c": "xyz", "d": {"e": {"f": 1}}}},
             {"a": "long string", "b": {"c": None}, "g": [1, 2, 3]}]
    got = _union(items, True, monkeypatch)
    assert got == _union(items, False, monkeypatch)
    u = orjson.loads(got[0])
    assert u["keys"] == [
        {"key": "a", "count": 2, "types": {"integer": 1, "string": 1}, "max_length": 11},
        {"key": "b", "count": 2, "types": {"object": 2}, "max_length": 2},
        {"key": "b.c", "count": 2, "types": {"null": 1, "string": 1}, "max_length": 3},
        {"key": "b.d", "count": 1, "types": {"object": 1}, "max_length": 1},
        {"key": "b.d.e", "count": 1, "types": {"object": 1}, "max_length": 1},  # not walked
        {"key": "g", "count": 1, "types": {"array": 1}, "max_length": 3},
    ]
    assert got[1:5] == (2 + 2 + 1 + 3 + 1, 6, 0, 2)  # visits, keys, more keys, scanned


def test_every_rule_agrees(monkeypatch: pytest.MonkeyPatch) -> None:
    many = {f"k{i}": i for i in range(schema.MAX_UNION_KEYS + 40)}  # past the key cap
    odd: dict[Any, Any] = {1: "int key", None: "null key", "n": JsonNumber("1e400"),
                           "i": JsonNumber("10"), "t": True, "f": 2.5, "e": {}, "l": []}
    items: list[Any] = [odd, many, {"k0": {"deep": many}}, "scalar", [1], None, odd]
    got = _union(items, True, monkeypatch)
    assert got == _union(items, False, monkeypatch)
    assert got[3] > 0  # keys past the cap were counted, not added
    u = orjson.loads(got[0])
    # a key that is not a string is counted under its text, in every item (not anew)
    assert {"key": '"1"', "count": 2, "types": {"string": 2}, "max_length": 7} in u["keys"]
    assert {"key": "n", "count": 2, "types": {"number": 2}} in u["keys"]  # json_type names it


def test_a_broken_tree_is_an_error_not_a_crash() -> None:
    assert schema._c_walk is not None
    with pytest.raises(TypeError, match="key tree entry"):
        schema._c_walk({"a": 1}, {"a": [0, {}]}, 1, 0, schema.UNION_DEPTH, 10, {}, str)
    with pytest.raises(TypeError):
        schema._c_walk([], {}, 1, 0, schema.UNION_DEPTH, 10, {}, str)  # not a dict


def _arrays(value: Any) -> list[list[Any]]:
    """The arrays of a document whose items a union would walk: the root's and its members'."""
    found = [value] if isinstance(value, list) else []
    if isinstance(value, dict):
        found += [v for v in value.values() if isinstance(v, list)]
    return [a for a in found if a]


def test_the_corpus_arrays_agree(corpus_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walked = 0
    for path in sorted(corpus_dir.rglob("*.json")):
        if "suites" in path.parts or path.stat().st_size > 8 << 20:
            continue
        try:
            value = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError:
            continue
        for items in _arrays(value):
            assert _union(items, True, monkeypatch) == _union(items, False, monkeypatch), path
            walked += 1
    assert walked > 50
