"""Big arrays kept as text (scratch.index.textitems): the analysis made batch by batch is the
one made from the whole value, and the C and Python separator finders agree."""

from __future__ import annotations

import json
import re
from array import array
from pathlib import Path
from typing import Any

import orjson
import pytest

from scratch.formats.embedded import find_embedded
from scratch.index import textitems
from scratch.index.analyze import analyze_json
from scratch.index.jsonskel import BIG_ARRAY
from scratch.index.kube import KubeTally
from scratch.index.schema import Union
from scratch.index.textitems import (
    NotLazy,
    Readers,
    TextItems,
    prepare_lazily,
    scan_lazily,
    separators_py,
)
from scratch.reindent import KEY_REPEAT, SAME, reindent


def parse_lazily(body: bytes, lazy_bytes: int, batch: int, text_lines: bool = False) -> Any:
    """The normalizer's two steps on ``body`` held in memory: its value with the big arrays
    kept as text and scanned, or None where it parses the whole text instead."""
    value = prepare_lazily(body, BIG_ARRAY, lazy_bytes, batch)
    if value is None:
        return None
    try:
        scan_lazily(value, Readers(Union, KubeTally, BIG_ARRAY), text_lines)
    except NotLazy:
        return None
    return value


def _pod(i: int) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": f"web-{i}", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Running" if i % 3 else "Pending",
                       "containerStatuses": [{"restartCount": i % 4, "lastState": {
                           "terminated": {"exitCode": 137 if i % 5 == 0 else 0,
                                          "reason": "OOMKilled"}}}]}}


def _documents() -> dict[str, Any]:
    pods = [_pod(i) for i in range(300)]
    mixed: list[Any] = [1, "two", None, [], {}, [1, [2, {"a": "x,\n"}]], {"b": {"c": [1, 2]}},
                        "\"quoted\", and more", 3.5, True] * 30
    return {
        "podlist": {"apiVersion": "v1", "items": pods, "kind": "PodList",
                    "metadata": {"resourceVersion": "1"}},
        "root list": pods,
        "mixed items": mixed,
        "two big members": {"a": mixed, "items": pods, "z": {"k": 1}},
        "big member last": {"meta": {}, "rows": list(range(500))},
        "escaped key": {"k\": [": 1, "it\"ems": pods},
    }


def _analyses(body: bytes, value: Any, tmp_path: Path) -> tuple[bytes, list[Any], bytes]:
    dest = tmp_path / "doc.json"
    dest.write_bytes(body + b"\n")
    lines = body.count(b"\n") + 1
    a = analyze_json(dest, value, "orjson", "canonical", lines)
    assert a.builder is not None
    return (orjson.dumps([a.info, a.layout, a.warnings]),
            [a.builder.pack(), bytes(a.builder.keys), [list(x) for x in a.builder.u32]],
            repr(find_embedded(value)).encode())


@pytest.mark.parametrize("name", sorted(_documents()))
def test_lazy_analysis_is_the_whole_values(name: str, tmp_path: Path) -> None:
    doc = _documents()[name]
    body, _, _ = reindent(json.dumps(doc).encode())
    lazy = parse_lazily(body, lazy_bytes=2000, batch=700)
    assert lazy is not None
    kept = [v for v in (lazy.values() if isinstance(lazy, dict) else [lazy])
            if isinstance(v, TextItems)]
    assert kept and all(v.starts is not None for v in kept)
    assert _analyses(body, lazy, tmp_path) == _analyses(body, orjson.loads(body), tmp_path)
    assert list(kept[0]) == (doc if isinstance(doc, list) else doc[
        next(k for k, v in lazy.items() if v is kept[0])])


def test_lazy_items_index_and_slice() -> None:
    items = [{"i": i, "s": "x" * (i % 7)} for i in range(200)]
    body, _, _ = reindent(json.dumps(items).encode())
    lazy = parse_lazily(body, lazy_bytes=100, batch=300)
    assert isinstance(lazy, TextItems)
    assert len(lazy) == 200 and bool(lazy)
    assert lazy[0] == items[0] and lazy[-1] == items[-1] and lazy[117] == items[117]
    assert lazy[:5] == items[:5] and lazy[3:9] == items[3:9]
    with pytest.raises(IndexError):
        lazy[200]


@pytest.mark.parametrize("batch", [1, 300, 700, 5000, 1 << 20])
def test_count_and_cuts_come_from_one_pass(batch: int) -> None:
    """prepare_lazily counts an array's items and finds its batch cuts in one pass: the same
    count and cuts as the separate finders give."""
    for name, doc in _documents().items():
        body, _, _ = reindent(json.dumps(doc).encode())
        value = prepare_lazily(body, BIG_ARRAY, 2000, batch)
        for part in textitems.lazy_parts(value):
            assert part.cuts == textitems.separators(body, part.start + batch, part.end,
                                                     part.depth, batch)[1], (name, batch)
            want = separators_py(body, part.start, part.end, part.depth, 0)[0] + 1
            assert len(part) == want, (name, batch)


def test_items_are_cut_from_memory_until_the_file_is_whole(tmp_path: Path) -> None:
    """Ingest parses the items while a thread still writes the body to its file: batches come
    from the body in memory until the write says the file is whole, then from the file, and
    the body is let go for every array that shares it."""
    doc = _documents()["two big members"]
    body, _, _ = reindent(json.dumps(doc).encode())
    whole = parse_lazily(body, lazy_bytes=2000, batch=700)
    value = prepare_lazily(body, BIG_ARRAY, 2000, 700)
    parts = textitems.lazy_parts(value)
    assert len(parts) == 2
    dest = tmp_path / "doc.json"  # not there yet: nothing may be read from it
    asked: list[bool] = []

    def written() -> bool:
        if len(asked) == 2:  # the write ends while the first array's batches are cut
            dest.write_bytes(body + b"\n")
        asked.append(dest.exists())
        return asked[-1]

    unwritten = textitems.Unwritten(body, written)
    for part in parts:
        part.detach(dest, unwritten)
    scan_lazily(value, Readers(Union, KubeTally, BIG_ARRAY))
    assert asked == [False, False, True]  # asked per batch until it said yes, then never
    assert unwritten.body is None and unwritten.take() is None
    for part, want in zip(parts, textitems.lazy_parts(whole), strict=True):
        assert (part.starts, part.union, part.lines) == (want.starts, want.union, want.lines)
        assert vars(part.kube or want) == vars(want.kube or want)
    assert list(parts[1]) == doc["items"]  # read again: from the file alone


def test_a_failed_write_stops_the_items(tmp_path: Path) -> None:
    doc = _documents()["podlist"]
    body, _, _ = reindent(json.dumps(doc).encode())
    value = prepare_lazily(body, BIG_ARRAY, 2000, 700)

    def written() -> bool:
        raise OSError(28, "No space left on device")

    for part in textitems.lazy_parts(value):
        part.detach(tmp_path / "doc.json", textitems.Unwritten(body, written))
    with pytest.raises(OSError, match="No space left"):
        scan_lazily(value, Readers(Union, KubeTally, BIG_ARRAY))


@pytest.mark.parametrize(("doc", "kept"), [
    ({"a": list(range(10))}, False),  # smaller than lazy_bytes
    ({"a": list(range(64)), "b": "x" * 300}, False),  # the skeleton expands it item by item
    ("just a string" * 300, False),
    (list(range(65)), True),
    ({"a": 1, "b": list(range(65))}, True),
])
def test_what_is_kept_as_text(doc: Any, kept: bool) -> None:
    body, _, _ = reindent(json.dumps(doc).encode())
    got = parse_lazily(body, lazy_bytes=200, batch=50)
    assert (got is not None) == kept
    if kept:
        lazy = got if isinstance(got, TextItems) else got["b"]
        assert isinstance(lazy, TextItems) and list(lazy) == list(range(65))


def test_repeated_root_key_is_parsed_whole() -> None:
    items = json.dumps(list(range(300)))
    body, _, _ = reindent(f'{{"a": {items}, "a": {items}}}'.encode())
    assert parse_lazily(body, lazy_bytes=100, batch=50) is None


def test_what_orjson_refuses_is_parsed_whole() -> None:
    body, _, _ = reindent(("[" + ", ".join(["1"] * 200 + ["1e400"]) + "]").encode())
    assert parse_lazily(body, lazy_bytes=100, batch=50) is None


def _canonical_corpus(corpus: Path) -> list[bytes]:
    out = []
    for path in sorted(corpus.rglob("*.json"))[:60]:
        try:
            body, _, flags = reindent(path.read_bytes())
        except Exception:
            continue
        if not flags & ~SAME:  # (a file already laid out is as good)
            out.append(body)
    return out


def test_separators_twins_agree(corpus_dir: Path) -> None:
    if textitems._c_separators is None:
        pytest.skip("the C accelerator is not built")
    bodies = _canonical_corpus(corpus_dir)
    bodies.append(reindent(json.dumps(_documents()).encode())[0])
    bodies += [b"", b"[]", b"[\n  1,\n  2\n]", b",\n  x", b"[\n  1,\n  ", b",\n"]
    assert len(bodies) > 5
    for body in bodies:
        n = len(body)
        for start, end in ((0, n), (1, n - 2), (n // 3, 2 * n // 3), (5, 3)):
            for depth in (0, 1, 2, 3):
                for step in (0, 1, 64, n):
                    assert textitems._c_separators(body, start, end, depth, step) == \
                        separators_py(body, start, end, depth, step), (start, end, depth, step)


def test_item_starts_twins_agree(corpus_dir: Path) -> None:
    # the start lines of the items of a batch, as ingest cuts batches (a batch after the first
    # starts on the "\n" after the previous one's ","), and in odd pieces of text
    if textitems._c_item_starts is None:
        pytest.skip("the C accelerator is not built")
    bodies = _canonical_corpus(corpus_dir)
    bodies.append(reindent(json.dumps(_documents()).encode())[0])
    pieces = [b"", b"\n", b"1", b"1,\n  2", b"\n  1,\n  2,\n", b",\n  x", b",\n", b"x,\n   y",
              b"  {\n    \"a\": 1,\n    \"b\": [\n      1\n    ]\n  },\n  {}"]
    checked = 0
    for body in bodies:
        n = len(body)
        for a, b in ((2, n - 2), (0, n), (n // 3, 2 * n // 3)):
            pieces.append(body[a:b])
    for text in pieces:
        for depth in (0, 1, 2, 3):
            for cur in (0, 7, 1_000_000):
                c_starts, py_starts = array("I"), array("I")
                c_after = textitems._text_starts(text, depth, cur, c_starts)
                py_after = textitems._text_starts_py(text, depth, cur, py_starts)
                assert (c_starts, c_after) == (py_starts, py_after), (text[:80], depth, cur)
                checked += 1
    assert checked > 100


def test_corpus_analysis_kept_as_text_is_the_same(corpus_dir: Path, tmp_path: Path) -> None:
    checked = 0
    for body in _canonical_corpus(corpus_dir):
        lazy = parse_lazily(body, lazy_bytes=4096, batch=2048)
        if lazy is None:
            continue
        checked += 1
        assert _analyses(body, lazy, tmp_path) == _analyses(body, orjson.loads(body), tmp_path)
    assert checked > 0


def _kept(value: Any) -> list[TextItems]:
    return [v for v in (value.values() if isinstance(value, dict) else [value])
            if isinstance(v, TextItems)]


def _lines_both_ways(body: bytes) -> tuple[list[Any], list[Any]] | None:
    """(start lines, lines) of each array kept as text: counted on the text, and rendered."""
    got = []
    for text_lines in (True, False):
        value = parse_lazily(body, 2000, 700, text_lines=text_lines)
        if value is None:
            return None
        got.append([(list(v.starts or ()), v.lines) for v in _kept(value)])
    return got[0], got[1]


@pytest.mark.parametrize("name", sorted(_documents()))
def test_item_lines_from_the_text_are_the_rendered_ones(name: str) -> None:
    body, _, flags = reindent(json.dumps(_documents()[name]).encode())
    assert not flags & KEY_REPEAT
    both = _lines_both_ways(body)
    assert both is not None and both[0] == both[1] and both[0]


def test_corpus_item_lines_from_the_text_are_the_rendered_ones(corpus_dir: Path) -> None:
    checked = 0
    for body in _canonical_corpus(corpus_dir):  # KEY_REPEAT clear in each
        both = _lines_both_ways(body)
        if both is not None:
            checked += 1
            assert both[0] == both[1]
    assert checked > 0


def test_a_repeated_key_is_flagged_and_its_lines_rendered() -> None:
    # the text has a line the parsed item has not: the flag sends ingest to rendering
    items = ",".join(['{"a": 1, "b": %d, "a": 2}' % i for i in range(300)])
    body, _, flags = reindent(f"[{items}]".encode())
    assert flags & KEY_REPEAT
    text, rendered = _lines_both_ways(body) or ([], [])
    assert text != rendered and rendered[0][1] == 300 * 4 and text[0][1] == 300 * 5


@pytest.mark.parametrize(("doc", "flagged"), [
    (b'{"a": 1, "a": 2}', True),
    (b'{"a": {"b": 1}, "b": 2}', False),  # the same key in two objects
    (b'[{"a": 1}, {"a": 1}]', False),
    (b'{"a\\u0062": 1, "ab": 2}', True),  # one key spelled two ways
    (b'{"\\n": 1, "\\u000a": 2}', True),
    (b'{"\\n": 1, "\\u000b": 2}', False),
    (b'{"\\ud83d\\ude00": 1, "\xf0\x9f\x98\x80": 2}', True),  # a surrogate pair is one
    (b'{"\\ud83d\\ude00": 1, "\\ud83d": 2}', False),
    (b'{"a": "\\n", "b": "a"}', False),  # in a value: no matter
    (b"{" + b",".join(b'"k%d": 1' % i for i in range(40)) + b', "k17": 0}', True),
    (b"{" + b",".join(b'"k%d": 1' % i for i in range(40)) + b"}", False),
    (b'{"x": {"a": 1, "b": {"a": 1}, "a": 2}}', True),  # after a nested object closed
    (b'{"' + b"a" * 300 + b'": 1, "\\u0061' + b"a" * 299 + b'": 2}', True),  # long, escaped
    (b'{"' + b"a" * 300 + b'": 1, "\\u0062' + b"a" * 299 + b'": 2}', False),
])
def test_key_repeat_flag(doc: bytes, flagged: bool) -> None:
    from scratch.reindent import HAVE_C, _c_reindent, reindent_py

    impls = [reindent_py, *([_c_reindent] if HAVE_C else [])]
    for impl in impls:
        assert bool(impl(doc)[2] & KEY_REPEAT) == flagged, impl


def test_key_repeat_flag_is_a_repeat_on_generated_keys() -> None:
    import random

    from scratch.reindent import HAVE_C, _c_reindent, reindent_py

    rng = random.Random(3)
    spellings = ["a", "b", "\\n", "\\u0061", "\\u0062", '\\"', "\\u0022", "\\ud83d\\ude00",
                 "\U0001F600", "\\ud83d", "\u00e9", "\\u00E9", "/", "\\/"]
    impls = [reindent_py, *([_c_reindent] if HAVE_C else [])]
    for _ in range(1500):
        # short keys (which repeat) and long ones (hashed a word at a time), up to objects
        # of 40 keys (compared pair by pair up to 32, sorted past that)
        keys = ["".join(rng.choice(spellings)
                        for _ in range(rng.choice([rng.randrange(3), rng.randrange(14)])))
                for _ in range(rng.choice([rng.randrange(1, 14), rng.randrange(1, 41)]))]
        doc = ("{" + ",".join(f'"{k}": {i}' for i, k in enumerate(keys)) + "}").encode()
        repeats = len(json.loads(doc)) != len(keys)
        for impl in impls:
            assert bool(impl(doc)[2] & KEY_REPEAT) == repeats, (doc, impl)


def _separated(data: bytes) -> tuple[bytes, Any]:
    """The C pass's body and separators (skips without the accelerator)."""
    from scratch.reindent import HAVE_C, reindent_separated

    if not HAVE_C:
        pytest.skip("the C accelerator is not built")
    body, _, _, found = reindent_separated(data)
    return body, found


def _known_bodies(corpus_dir: Path | None) -> list[bytes]:
    docs = [json.dumps(d).encode() for d in _documents().values()]
    docs += [b"[]", b"{}", b"1", b"[1]", b'{"a": [1, 2], "b": {"c": [3, {"d": [4, 5]}]}}',
             b'["a,\\n  b", ",\\n    c", {"k": "x,\\n  y"}]']
    if corpus_dir is not None:
        docs += [path.read_bytes() for path in sorted(corpus_dir.rglob("*.json"))[:60]]
    return docs


@pytest.mark.parametrize("corpus", [False, True])
def test_the_reindent_pass_finds_the_separators_reading_finds(corpus: bool,
                                                               request: pytest.FixtureRequest
                                                               ) -> None:
    """The offsets the C re-indent pass writes down at depths 1 and 2 are exactly the
    separators that reading the body finds there, on generated documents and the corpus."""
    corpus_dir = request.getfixturevalue("corpus_dir") if corpus else None
    checked = 0
    for data in _known_bodies(corpus_dir):
        try:
            body, found = _separated(data)
        except Exception as exc:  # not JSON: nothing to compare
            assert type(exc).__name__ == "JsonError"
            continue
        assert found is not None
        for depth in (1, 2):
            want = [m.start() for m in re.finditer(rb",\n" + b"  " * depth + rb"(?=[^ ])",
                                                   body)]
            assert found[depth - 1].tolist() == want, depth
            checked += len(want)
    assert checked > 1000


def test_known_separators_answer_as_reading_does() -> None:
    """known_separators answers every question separators() is asked (any range, depth and
    step, ranges past either end) the same, without reading at depths 1 and 2."""
    for data in _known_bodies(None):
        body, found = _separated(data)
        find = textitems.known_separators(found)
        n = len(body)
        for start, end in ((0, n), (1, n - 2), (n // 3, 2 * n // 3), (5, 3), (-4, n + 10),
                           (n, n)):
            for depth in (0, 1, 2, 3):
                for step in (0, 1, 64, 700, n):
                    assert find(body, start, end, depth, step) == \
                        separators_py(body, start, end, depth, step), (start, end, depth, step)


@pytest.mark.parametrize("batch", [1, 300, 700, 5000])
def test_prepare_lazily_with_known_separators_reads_no_separators(
        batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Given the pass's separators, prepare_lazily cuts the same arrays into the same batches
    and never reads the body for separators (both readers fail if asked)."""
    for name, doc in _documents().items():
        body, found = _separated(json.dumps(doc).encode())
        want = prepare_lazily(body, BIG_ARRAY, 2000, batch)
        with monkeypatch.context() as m:
            def refuse(*args: object) -> tuple[int, list[int]]:
                raise AssertionError("read the body for separators")

            m.setattr(textitems, "_c_separators", refuse)
            m.setattr(textitems, "separators_py", refuse)
            got = prepare_lazily(body, BIG_ARRAY, 2000, batch, known=found)
        assert [(p.start, p.end, p.depth, p.n, p.cuts) for p in textitems.lazy_parts(got)] == \
            [(p.start, p.end, p.depth, p.n, p.cuts) for p in textitems.lazy_parts(want)], name
        assert textitems.lazy_parts(want), name


def test_too_many_separators_are_not_written_down() -> None:
    """Past SEPS_MAX (2**20) separators at a depth the pass answers None (ingest then reads
    them, as before): its memory stays at 8 MB a depth; a body over the limit has none."""
    from scratch.reindent import TOO_BIG, reindent_separated

    many = b"[" + b"0," * (1 << 20) + b"0]"  # 2**20 + 1 items: 2**20 separators
    body, found = _separated(many)
    assert found is not None and len(found.depth1) == 1 << 20 and not found.depth2
    _, found = _separated(b"[" + b"0," * ((1 << 20) + 1) + b"0]")
    assert found is None
    assert reindent_separated(b"[[1, 2], 3]", limit=5)[2:] == (TOO_BIG, None)


def test_without_the_accelerator_no_separators_are_known(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    import scratch.reindent as R

    monkeypatch.setattr(R, "_c_reindent", None)
    body, lines, flags, found = R.reindent_separated(b'{"a": [1, 2]}')
    assert (body, lines, flags, found) == (*R.reindent_py(b'{"a": [1, 2]}', -1, 0), None)
