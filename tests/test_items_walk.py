"""The items of a big array walked in C from their text (``scan_items`` of ``scratch._union``,
:meth:`TextItems._walk`) give what parsing each item with orjson gave (:meth:`TextItems._parse`):
the same start lines, item union (keys, counts, types, lengths, order, samples, the visit
budget's stride) and Kubernetes counts, on generated documents that reach every rule of the
walk and on the corpus; what the walk does not decide is left to orjson; the Kubernetes
tally reads nothing but the members it declares."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from scratch.index import schema, textitems
from scratch.index.jsonskel import BIG_ARRAY
from scratch.index.kube import KubeTally
from scratch.index.schema import Union
from scratch.index.textitems import NotLazy, Readers, TextItems, prepare_lazily
from scratch.reindent import BIG_INT, KEY_REPEAT, TOO_BIG, reindent

pytestmark = pytest.mark.skipif(textitems._c_scan_items is None,
                                reason="scratch._union is not built")


def _kept(value: Any) -> list[TextItems]:
    return [v for v in (value.values() if isinstance(value, dict) else [value])
            if isinstance(v, TextItems)]


def _scan(items: TextItems, walk: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...] | None:
    """What a scan leaves on ``items``, walked in C or parsed; None when the walk left the
    text to orjson."""
    parsed: list[bool] = []
    with monkeypatch.context() as m:
        if walk:  # the parse the walk falls back to only notes that it was asked
            m.setattr(TextItems, "_parse", lambda *a: parsed.append(True))
        else:
            m.setattr(textitems, "_c_scan_items", None)
        items.scan("orjson", Readers(Union, KubeTally, BIG_ARRAY), True)
    if parsed:
        return None
    tally = items.kube
    return (bytes(items.starts or b""), items.lines, orjson.dumps(items.union),
            repr(vars(tally)) if tally is not None else None)


def _both_ways(body: bytes, monkeypatch: pytest.MonkeyPatch, lazy_bytes: int = 300,
               batch: int = 200) -> list[tuple[bool, bool]]:
    """Each array of ``body`` kept as text, scanned both ways: (walked, the same results; an
    array left to orjson is (False, True))."""
    value = prepare_lazily(body, BIG_ARRAY, lazy_bytes, batch)
    out = []
    for items in _kept(value) if value is not None else []:
        try:
            got = _scan(items, True, monkeypatch)
        except NotLazy:
            got = ()
        try:
            want = _scan(items, False, monkeypatch)
        except NotLazy:
            want = ()
        out.append((True, got == want) if got is not None else (False, True))
    return out


_WORDS = ["a", "kind", "metadata", "name", "status", "spec", "x y", "ключ", "日本", "é",
          "replicas", "phase", "items", "", "k, [x", "tab in"]
_DEEP_WORDS = [*_WORDS, "esc\"aped", "new\nline"]  # escaped keys below the walked depth


def _string(rng: random.Random) -> str:
    pool = ["plain", "é", "ü", "日本語", "😀", "\U0001f600x", "\n", "\"", "\\", "/", "\t",
            "\x01", "\u2028", ",\n  ", "{", "]", " ", "x" * 70]
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 6)))


def _number(rng: random.Random) -> Any:
    return rng.choice([0, -0, 1, -17, 2**53, -(2**59), 123456789012345678, 0.5, -2.25, 1e300,
                       1e-300, 5e-324, 9.99e307, 0.1, -0.0, 1e21, 3.14159])


def _value(rng: random.Random, depth: int) -> Any:
    r = rng.random()
    if depth > 5 or r < 0.45:
        return rng.choice([_string(rng), _number(rng), True, False, None])
    if r < 0.75:
        keys = rng.sample(_WORDS if depth < 4 else _DEEP_WORDS, rng.randint(0, 6))
        return {k: _value(rng, depth + 1) for k in keys}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def _pod(rng: random.Random, i: int) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": rng.choice(["Running", "Pending", "Failed"])}
    if rng.random() < 0.8:
        status["containerStatuses"] = [
            {"restartCount": rng.randint(0, 5),
             "state": {"waiting": {"reason": "CrashLoopBackOff"}} if rng.random() < 0.3 else {},
             "lastState": {"terminated": {"exitCode": rng.choice([0, 1, 137]),
                                          "reason": rng.choice(["Error", "OOMKilled"])}}}]
    if rng.random() < 0.5:
        status["conditions"] = [{"type": "Ready", "status": rng.choice(["True", "False"])}]
    if rng.random() < 0.2:
        status["replicas"] = rng.randint(1, 3)
        status["readyReplicas"] = rng.randint(0, 3)
    pod: dict[str, Any] = {"kind": rng.choice(["Pod", "Pod", "Deployment", "Event", None]),
                           "metadata": {"name": f"p-{i}", "labels": {"app": _string(rng)}},
                           "spec": {"replicas": rng.randint(0, 4)} if rng.random() < 0.3 else {},
                           "status": status}
    if pod["kind"] == "Event" or rng.random() < 0.1:
        pod["involvedObject"] = {"kind": "Pod", "name": f"p-{i}"}
        pod["type"] = rng.choice(["Normal", "Warning"])
        pod["reason"] = rng.choice(["BackOff", "Failed", "Pulled"])
    if rng.random() < 0.1:
        pod["metadata"] = rng.choice(["not an object", None, {"labels": {}}])
    if rng.random() < 0.3:
        pod["extra"] = _value(rng, 1)
    return pod


def _document(seed: int) -> Any:
    rng = random.Random(seed)
    n = rng.randint(BIG_ARRAY + 1, BIG_ARRAY + 60)
    if seed % 3 == 0:  # a list of pods (and now and then something else)
        items = [_pod(rng, i) if rng.random() < 0.9 else _value(rng, 1) for i in range(n)]
        return {"apiVersion": "v1", "kind": "PodList", "items": items}
    items = [_value(rng, 1) for _ in range(n)]
    return items if seed % 2 else {"head": _value(rng, 2), "rows": items}


def test_generated_documents_walk_as_they_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    walked = 0
    for seed in range(150):
        body, _, flags = reindent(json.dumps(_document(seed), ensure_ascii=seed % 2 == 0)
                                  .encode())
        assert not flags & (BIG_INT | KEY_REPEAT)
        for did_walk, same in _both_ways(body, monkeypatch):
            assert same, seed
            walked += did_walk
    assert walked > 100  # the walk did them, not the parse it falls back to


def test_past_the_visit_budget_every_stride_th_item(monkeypatch: pytest.MonkeyPatch) -> None:
    # a small budget: the union looks at every stride-th item once past it, in both ways
    monkeypatch.setattr(schema, "UNION_BUDGET", 50)
    monkeypatch.setattr(Union, "text_limits", (schema.UNION_DEPTH, schema.MAX_UNION_KEYS, 50))
    rng = random.Random(7)
    body, _, _ = reindent(json.dumps([_pod(rng, i) for i in range(400)]).encode())
    got = _both_ways(body, monkeypatch)
    assert got == [(True, True)]
    value = prepare_lazily(body, BIG_ARRAY, 300, 200)
    (items,) = _kept(value)
    _scan(items, True, monkeypatch)
    assert items.union is not None and 0 < items.union["scanned"] < 400


def test_past_the_key_cap_keys_are_counted_not_added(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [{f"k{i % 20}{j}": {"deep": {f"d{i}": [i]}} for j in range(30)} for i in range(80)]
    body, _, _ = reindent(json.dumps(items).encode())
    assert _both_ways(body, monkeypatch) == [(True, True)]
    value = prepare_lazily(body, BIG_ARRAY, 300, 200)
    (kept,) = _kept(value)
    _scan(kept, True, monkeypatch)
    assert kept.union is not None and kept.union["more_keys"] > 0
    assert len(kept.union["keys"]) == schema.MAX_UNION_KEYS  # type: ignore[arg-type]


@pytest.mark.parametrize("odd", [
    '"\\ud800"',  # a lone high surrogate: orjson refuses it
    '"\\udc00x"',  # a lone low one
    "1e400",  # not a double: orjson refuses it
    "1" + "0" * 308 + ".5",  # may not fit a double (1e308 does; the walk does not decide)
    "1.7e308",
])
def test_what_the_walk_does_not_decide_is_left_to_orjson(
        odd: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = ", ".join(['{"a": 1}'] * 150 + [odd] + ['{"b": [2]}'] * 150)
    body, _, _ = reindent(f"[{text}]".encode())
    assert _both_ways(body, monkeypatch) == [(False, True)]
    assert textitems._c_scan_items is not None
    u = Union(301)
    limits = Union.text_limits
    assert textitems._c_scan_items(body[1:-1], 0, 0, u, limits, (), (), orjson.loads) is None


def test_what_is_decided_is_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    # near misses of the above: a surrogate pair, big doubles, a tiny one, keys with escapes
    # (read, where keys are compared), an escape in a value
    for near in ['"\\ud83d\\ude00"', "9.99e307", "1" + "0" * 307 + ".5", "0.00001e310", "1e-400", '{"a": {"b": {"c": {"\\u0065": 1}}}}', '{"k\\u0065y": {"\\ud83d\\ude00\\n": 1}}',
                 '{"kin\\u0064": "Pod", "metadata": {"n\\u0061me": "x"}}',
                 '{"a": "x\\u0065\\n"}', "123456789012345678", "-0"]:
        text = ", ".join(['{"a": 1}'] * 150 + [near] + ['{"b": [2]}'] * 150)
        body, _, flags = reindent(f"[{text}]".encode())
        assert _both_ways(body, monkeypatch) == [(True, True)], near


def test_string_lengths_are_code_points(monkeypatch: pytest.MonkeyPatch) -> None:
    values = ["", "a", "é" * 9, "日本語" * 5, "😀" * 7, "a\\nb", "\\u00e9\\ud83d\\ude00", "x" * 300]
    rows = [{"s": json.loads(f'"{v}"')} for v in values] * 40
    for ascii_only in (True, False):
        body, _, _ = reindent(json.dumps(rows, ensure_ascii=ascii_only).encode())
        value = prepare_lazily(body, BIG_ARRAY, 300, 200)
        (items,) = _kept(value)
        assert _scan(items, True, monkeypatch) == _scan(items, False, monkeypatch)
        assert items.union is not None
        assert items.union["keys"] == [{"key": "s", "count": 320, "types": {"string": 320},
                                        "max_length": 300}]


def test_member_paths_are_checked() -> None:
    scan = textitems._c_scan_items
    assert scan is not None
    limits = Union.text_limits
    with pytest.raises(ValueError, match="one or two keys"):
        scan(b"{}", 0, 0, Union(1), limits, (("a", "b", "c"),), (), orjson.loads)
    with pytest.raises(ValueError, match="too many"):
        scan(b"{}", 0, 0, Union(1), limits, (("a",),) * 17, (), orjson.loads)
    u = Union(1)
    u.tree = []  # type: ignore[assignment]
    with pytest.raises(TypeError, match="dicts"):
        scan(b"{}", 0, 0, u, limits, (), (), orjson.loads)


def test_projections_hold_only_the_members_asked() -> None:
    scan = textitems._c_scan_items
    assert scan is not None
    text = (b'{"kind": "Pod", "metadata": {"name": "a", "uid": 1}, "status": {"x": [1]}},\n'
            b'"scalar",\n{"metadata": "flat", "spec": {"replicas": 2, "other": {}}},\n{},\n'
            b'{"kin\\u0064": "Job", "metadata": {"n\\u0061me": "b"}, "st\\u0061tus": 1}')
    got = scan(text, 0, 0, Union(5), Union.text_limits, KubeTally.members, (0, 3), orjson.loads)
    assert got is not None
    starts, after, count, projections, samples = got
    assert (count, after) == (5, 5)
    assert projections == [{"kind": "Pod", "metadata": {"name": "a"}, "status": {"x": [1]}},
                           None, {"spec": {"replicas": 2}}, {},
                           {"kind": "Job", "metadata": {"name": "b"}, "status": 1}]
    assert samples == [(0, orjson.loads(text.split(b",\n")[0])), (3, {})]


def _kube_documents(corpus: Path) -> list[Any]:
    found = []
    for path in sorted(corpus.rglob("*.json")):
        try:
            value = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError:
            continue
        items = value.get("items") if isinstance(value, dict) else value
        if isinstance(items, list) and any(isinstance(i, dict) and "metadata" in i
                                           for i in items[:20]):
            found.append(items)
    return found


def _project(item: Any, members: tuple[tuple[str, ...], ...]) -> Any:
    if not isinstance(item, dict):
        return None
    out: dict[str, Any] = {}
    for path in members:
        if path[0] not in item:
            continue
        if len(path) == 1:
            out[path[0]] = item[path[0]]
        elif isinstance(item[path[0]], dict):
            inner = out.setdefault(path[0], {})
            if path[1] in item[path[0]]:
                inner[path[1]] = item[path[0]][path[1]]
    return out


def test_the_tally_reads_only_its_members(corpus_dir: Path) -> None:
    # an item cut down to KubeTally.members counts as the whole item: a member add() reads
    # and does not declare makes this fail
    members = KubeTally.members
    assert members is not None
    docs = _kube_documents(corpus_dir)
    rng = random.Random(3)
    docs.append([_pod(rng, i) for i in range(500)])
    assert len(docs) > 3
    for items in docs:
        whole, cut = KubeTally(), KubeTally()
        for i, item in enumerate(items):
            whole.add(i, item)
            cut.add(i, _project(item, members))
        assert vars(whole) == vars(cut)


def test_the_corpus_arrays_walk_as_they_parse(corpus_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    walked = 0
    for path in sorted(corpus_dir.rglob("*.json")):
        try:
            body, _, flags = reindent(path.read_bytes(), limit=64 << 20)
        except ValueError:
            continue
        if flags & (BIG_INT | KEY_REPEAT | TOO_BIG):  # (TOO_BIG: the syntax suites' nesting)
            continue
        for did_walk, same in _both_ways(body, monkeypatch, 4096, 64 << 10):
            assert same, path
            walked += did_walk
    assert walked > 20


def test_text_orjson_refuses_in_a_member_is_left_to_the_parse() -> None:
    # the walk reads only what the re-indent pass validated; should a member it hands to
    # orjson be refused anyway (here: not UTF-8), the parse decides: NotLazy, as before
    body = b'[\n  {\n    "kind": "\xff"\n  },\n  {\n    "kind": "Pod"\n  }\n]'
    items = TextItems(body, 2, len(body) - 2, 1, 2, [], tally=True)
    assert textitems._c_scan_items is not None
    with pytest.raises(ValueError):
        textitems._c_scan_items(body[2:-2], 0, 0, Union(2), Union.text_limits,
                                KubeTally.members, (), orjson.loads)
    with pytest.raises(NotLazy):
        items.scan("orjson", Readers(Union, KubeTally, BIG_ARRAY), True)
