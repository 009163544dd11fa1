"""JSON is stored with every token as written and read back with numbers exact.

- The re-indenter (scratch.reindent) in C and in pure Python give identical bytes and
  identical errors, on generated documents and on the JSONTestSuite files.
- Ingest keeps numbers, string escapes and repeated keys; only whitespace changes. NaN,
  Infinity and other non-JSON are text.
- get-in / iterate-over / schema show big integers and long decimals exactly as written.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest

from scratch import reindent as R
from scratch.errors import JsonError
from scratch.formats.jsontext import has_big_int
from scratch.index.normalizer import normalize
from scratch.jsonvalues import JsonNumber, dumps, parse_exact
from tests.helpers import cli, json_tokens

IMPLS = [pytest.param(R.reindent_py, id="python")]
if R.HAVE_C:
    IMPLS.insert(0, pytest.param(R._c_reindent, id="c"))
SUITE = "suites/jsontestsuite/test_parsing"


def _run(impl, data: bytes):  # type: ignore[no-untyped-def]
    try:
        return ("ok", *impl(data))
    except ValueError as exc:
        return ("error", *exc.args)


def _random_doc(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(9 if depth < 5 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randrange(-10**30, 10**30)
    if kind == 2:
        return rng.uniform(-1e10, 1e10)
    if kind in (3, 4):
        return "".join(rng.choice('ab "\\\n\t/é€😀\x01') for _ in range(rng.randrange(8)))
    if kind in (5, 6):
        return [_random_doc(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {f"k{rng.randrange(4)}": _random_doc(rng, depth + 1) for _ in range(rng.randrange(5))}


def _spellings(rng: random.Random, value: object) -> bytes:
    """``value`` as JSON text in one of several spellings (whitespace, escapes)."""
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5,
                      indent=rng.choice([None, 0, 1, 4, "\t"]),
                      separators=rng.choice([(",", ":"), (", ", ": "), (" ,", " : ")]))
    return text.encode()


@pytest.mark.skipif(not R.HAVE_C, reason="the C extension is not built here")
def test_c_and_python_give_identical_bytes_on_generated_documents() -> None:
    rng = random.Random(5)
    for _ in range(400):
        data = _spellings(rng, _random_doc(rng))
        if rng.random() < 0.3:  # damage it somewhere: both must refuse it at the same byte
            pos = rng.randrange(len(data))
            data = data[:pos] + rng.choice([b"", b",", b"]", b"\x00", b"\xff", b"'"]) + \
                data[pos + 1:]
        assert _run(R._c_reindent, data) == _run(R.reindent_py, data), data


def _big(doc: object, spell: int) -> bytes:
    """``doc`` repeated past the shortcut's size, spelled minified, indented or loosely."""
    items = [doc] * (2 * R.SHORTCUT_BYTES // len(json.dumps(doc).encode()) + 2)
    if spell == 0:
        return json.dumps(items, separators=(",", ":"), ensure_ascii=False).encode()
    if spell == 1:
        return json.dumps({"items": items}, indent=4, ensure_ascii=False).encode()
    return json.dumps(items, separators=(" , ", " :\t"), ensure_ascii=False).encode()


SHORTCUT_TAKES = [{"name": "web-1", "ports": [80, 443], "ok": True, "x": None, "f": 1.5,
                   "s": "a b  c, d: [e] {f} é 😀", "n": -12, "e": {}, "l": [], "z": 0.001},
                  {"k:{\"uid\":\"da80\"}": "a\\b\n\t\r\b\f\x01\x1f", "\"": "\\\"",
                   "id": "1234567890123456789", "n": 123456789012345678}]
SHORTCUT_REFUSES = [
    b'{"s": "\\u00e9"}', b'{"s": "\\/"}', b'{"s": "\\u001F"}',  # escapes orjson spells anew
    b'{"s": "\\u0020"}',  # an escaped blank
    b'{"f": 1e5}', b'{"f": 1.50}', b'{"f": -0.0e0}', b'{"f": 1E2}',  # numbers orjson rewrites
    b'{"k": 1, "k": 2}', b'{"k": 1, "k": 1}',  # a key twice
    b'{"i": 1234567890123456789}', b'[12345678901234567890]',  # 19 digits: BIG_INT's business
    b'{"s": "\\": 1234567890123456789"}',  # looks like one in the layout: asked anyway
]
@pytest.mark.parametrize("spell", [0, 1, 2])
def test_the_orjson_shortcut_gives_the_exact_bytes(spell: int) -> None:
    # the pure-Python path's shortcut is taken for these and gives the token loop's bytes
    for doc in SHORTCUT_TAKES:
        data = _big(doc, spell)
        assert len(data) >= R.SHORTCUT_BYTES
        found = R._by_orjson(data, -1, 0)
        assert found is not None
        assert found == R._run(data)
        if R.HAVE_C:
            assert found == R._c_reindent(data, -1, 0)


@pytest.mark.parametrize("piece", SHORTCUT_REFUSES)
def test_the_orjson_shortcut_leaves_what_it_cannot_show_to_the_token_loop(piece: bytes) -> None:
    data = b"[" + b",".join([piece] * (R.SHORTCUT_BYTES // len(piece) + 2)) + b"]"
    assert R._by_orjson(data, -1, 0) is None
    got = R.reindent_py(data)
    assert got == R._run(data)
    if R.HAVE_C:
        assert got == R._c_reindent(data, -1, 0)


def test_the_orjson_shortcut_leaves_limits_and_depth_to_the_token_loop() -> None:
    data = _big({"a": [[1]]}, 0)
    body = R._run(data)[0]
    assert R._by_orjson(data, len(body) - 1, 0) is None  # TOO_BIG, decided exactly
    assert R._by_orjson(data, len(body), 0) is not None
    assert R._by_orjson(data, -1, 4) is None  # a line at depth 4: it may open a fifth level
    assert R._by_orjson(data, -1, 5) is not None
    with pytest.raises(ValueError, match=R.DEEP):
        R.reindent_py(data, -1, 3)


def _small_ints(value: object) -> object:
    if isinstance(value, bool) or not isinstance(value, (int, list, dict)):
        return value
    if isinstance(value, int):
        return value % 1000
    if isinstance(value, list):
        return [_small_ints(v) for v in value]
    return {k: _small_ints(v) for k, v in value.items()}


@pytest.mark.skipif(not R.HAVE_C, reason="the C extension is not built here")
def test_c_and_python_give_identical_bytes_on_big_generated_documents() -> None:
    # past SHORTCUT_BYTES: the pure-Python path tries orjson first, on every spelling
    rng = random.Random(7)
    taken = 0
    for _ in range(30):
        parts: list[bytes] = []
        size = 0
        plain = rng.random() < 0.5  # spelled as orjson would, but for the blanks
        while size < R.SHORTCUT_BYTES:
            doc = _random_doc(rng)
            parts.append(json.dumps(_small_ints(doc), ensure_ascii=False,
                                    indent=rng.choice([None, 2, 4])).encode()
                         if plain else _spellings(rng, doc))
            size += len(parts[-1]) + 2
        data = b"[" + rng.choice([b",", b", ", b",\n "]).join(parts) + b"]"
        if rng.random() < 0.2:
            pos = rng.randrange(len(data))
            data = data[:pos] + rng.choice([b"", b",", b"]", b"\x00", b"\xff"]) + data[pos + 1:]
        taken += R._by_orjson(data, -1, 0) is not None
        assert _run(R._c_reindent, data) == _run(R.reindent_py, data)
    assert taken > 0


def test_the_orjson_shortcut_is_tried_only_between_its_bounds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[int] = []
    real = R._by_orjson

    def spy(s: bytes, limit: int, max_depth: int) -> tuple[bytes, int, int] | None:
        tried.append(len(s))
        return real(s, limit, max_depth)

    monkeypatch.setattr(R, "_by_orjson", spy)
    monkeypatch.setattr(R, "SHORTCUT_MAX_BYTES", 4 * R.SHORTCUT_BYTES)
    small = _big({"a": 1}, 0)
    big = json.dumps([{"a": "x" * 1000}] * 300).encode()  # past the upper bound
    assert len(small) < 4 * R.SHORTCUT_BYTES < len(big)
    for data in (b"[1]", small, big):
        assert R.reindent_py(data) == R._run(data)
    assert tried == [len(small)]


def test_the_orjson_shortcut_on_the_corpus(corpus_dir: Path) -> None:
    taken = 0
    for path in sorted(corpus_dir.rglob("*.json")):
        if "suites" in path.parts or not R.SHORTCUT_BYTES <= path.stat().st_size <= 8 << 20:
            continue
        data = path.read_bytes()
        found = R._by_orjson(data, -1, 900)
        if found is None:
            continue
        taken += 1
        want = R._c_reindent(data, -1, 900) if R.HAVE_C else R._run(data, -1, 900)
        assert found == want, path
    assert taken > 5


@pytest.mark.parametrize("impl", IMPLS)
def test_layout_is_orjson_indent_2_with_tokens_as_written(impl) -> None:  # type: ignore[no-untyped-def]
    import orjson

    rng = random.Random(9)
    for _ in range(200):
        value = _random_doc(rng)
        data = _spellings(rng, value)
        body, lines, _ = impl(data)
        assert json_tokens(body) == json_tokens(data)
        assert lines == body.count(b"\n") + 1
        # the same line structure as orjson gives the parsed value (no repeated keys here)
        expected = json.dumps(json.loads(data), indent=2).count("\n")  # stdlib: big ints too
        assert body.count(b"\n") == expected
        if not has_big_int(data):
            assert orjson.dumps(json.loads(data), option=orjson.OPT_INDENT_2).count(b"\n") \
                == expected


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("data,message,offset", [
    (b"", "Expecting value", 0),
    (b"[1,]", "Expecting value", 3),
    (b'{"a":1,}', "Expecting property name enclosed in double quotes", 7),
    (b'{"a" 1}', "Expecting ':' delimiter", 5),
    (b"[1 2]", "Expecting ',' delimiter", 3),
    (b"[NaN]", "Expecting value", 1),
    (b"[01]", "Expecting ',' delimiter", 2),
    (b'["a\\x"]', "Invalid \\escape", 3),
    (b'["\\u12G4"]', "Invalid \\uXXXX escape", 2),
    (b'["tab\there"]', "Invalid control character in string", 5),
    (b'["\xc3\x28"]', "Invalid UTF-8 in string", 2),
    (b'["\xed\xa0\x80"]', "Invalid UTF-8 in string", 2),
    (b'["abc', "Unterminated string", 1),
    (b"\xef\xbb\xbf{}", "Expecting value", 0),
    (b"{} {}", "Extra data", 3),
])
def test_errors_name_the_problem_and_its_byte(impl, data: bytes, message: str,  # type: ignore[no-untyped-def]
                                              offset: int) -> None:
    with pytest.raises(JsonError) as exc:
        R.reindent(data, impl=impl)
    assert (exc.value.reason, exc.value.offset) == (message, offset)


@pytest.mark.parametrize("impl", IMPLS)
def test_any_depth_with_a_bound_on_the_layout(impl) -> None:  # type: ignore[no-untyped-def]
    data = b"[" * 3000 + b"]" * 3000
    body, lines, flags = impl(data)
    assert lines == 5999 and json_tokens(body) == json_tokens(data) and flags == 0
    # 100,000 deep: the layout would take 10 GB; it is not written, the input still checked
    deep = b"[" * 100_000 + b"]" * 100_000
    assert impl(deep, 1 << 20) == (b"", 199_999, R.TOO_BIG)
    with pytest.raises(ValueError):
        impl(deep[:-1] + b"}", 1 << 20)


def test_json_too_deep_to_lay_out_is_kept_as_received(tmp_path: Path) -> None:
    from scratch.formats.nesting import MAX_DEPTH

    # as deep as is stored as JSON (one level more is text: tests/test_nesting.py)
    data = b'{"a": ' + b"[" * (MAX_DEPTH - 1) + b"1" + b"]" * (MAX_DEPTH - 1) + b"}"
    n = normalize(io.BytesIO(data), tmp_path / "stored")
    assert (n.format, n.layout) == ("json", "raw")
    assert (tmp_path / "stored").read_bytes() == data
    assert n.warnings[0].startswith("kept as received: nested so deeply")


def test_ingest_without_the_extension_stores_the_same_bytes(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_formats import AWKWARD

    data = AWKWARD + b" "  # also: over the size where the re-indenting runs in a thread
    big = b'{"items": [' + b",".join(b'{"n": %d.50, "s": "\\u00e9"}' % i
                                     for i in range(60_000)) + b"]}"
    outs = []
    for have_c in ([True, False] if R.HAVE_C else [False]):
        if not have_c:
            monkeypatch.setattr(R, "_c_reindent", None)
            monkeypatch.setattr(R, "HAVE_C", False)
        for i, doc in enumerate((data, big)):
            dest = tmp_path / f"{have_c}-{i}"
            n = normalize(io.BytesIO(doc), dest)
            assert n.format == "json"
            outs.append(dest.read_bytes())
            assert json_tokens(outs[-1]) == json_tokens(doc)
    if R.HAVE_C:
        assert outs[:2] == outs[2:]


# ---------------------------------------------------------------------------------------------
# reading numbers back


def test_parse_exact_keeps_what_a_float_would_lose() -> None:
    v = parse_exact(b'[0.10000000000000000555111512312578270211815834045, 1e400, 123e-10000000,'
                    b' -0, 1E5, 1.0, 0.5, 18446744073709551616, 12]')
    assert [type(x).__name__ for x in v] == ["JsonNumber"] * 5 + ["float", "float", "int", "int"]
    assert dumps(v) == (b"[0.10000000000000000555111512312578270211815834045,1e400,"
                        b"123e-10000000,-0,1E5,1.0,0.5,18446744073709551616,12]")
    assert v[1] > 10**300 and v[2] == 0 and v[4] == 100000
    huge = parse_exact(b"9" * 100_000)
    assert isinstance(huge, JsonNumber) and huge.integer and dumps(huge) == b"9" * 100_000
    with pytest.raises(JsonError):
        parse_exact(b"[NaN]")


@pytest.fixture
def exact(scratch_home: Path) -> str:
    doc = (b'{"big": 123456789012345678901234567890123, "dec": 0.100000000000000005551115123125'
           b'78270211815834045, "inf": 1e400, "tiny": 123e-10000000, "exp": 1E+2, "zero": -0,'
           b' "items": [{"n": 1.10}, {"n": 18446744073709551616}, {"n": 2.5e-7}],'
           b' "dup": {"a": "b", "a": "c"}, "huge": ' + b"7" * 100_000 + b"}")
    r = cli("ingest", "exact", "--store-always", "--json", input=doc)
    assert r.code == 0 and r.json["data"]["format"] == "json", r.out
    return "exact"


ENV = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": "1000000",
       "SCRATCH_BUDGET_CONTEXT_WINDOW": "100000000000"}


@pytest.mark.parametrize("path,text", [
    ("big", b"123456789012345678901234567890123"),
    ("dec", b"0.10000000000000000555111512312578270211815834045"),
    ("inf", b"1e400"), ("tiny", b"123e-10000000"), ("exp", b"1E+2"), ("zero", b"-0"),
    ("items.0.n", b"1.10"), ("items.1.n", b"18446744073709551616"), ("items.2.n", b"2.5e-7"),
    ("huge", b"7" * 100_000),
])
def test_get_in_shows_numbers_as_written(exact: str, path: str, text: bytes) -> None:
    r = cli("get-in", exact, path, "--json", env=ENV)
    assert r.code == 0, r.out
    assert b'"value":' + text + b"}" in r.out
    human = cli("get-in", exact, path, env=ENV)
    assert human.code == 0 and human.out.rstrip(b"\n") == text.strip(b'"')


def test_iterate_over_and_where_use_exact_numbers(exact: str) -> None:
    r = cli("iterate-over", exact, "items", "--fields", "n", "--json", env=ENV)
    assert b'"n":1.10}' in r.out and b'"n":18446744073709551616}' in r.out
    assert b'"n":2.5e-7}' in r.out
    r = cli("iterate-over", exact, "items", "--fields", "n", "--where",
            "@.n > 1e19", "--json", env=ENV)  # filter literals are doubles (RFC 9535)
    assert [row["_index"] for row in r.json["data"]["rows"]] == [1]


def test_the_stored_text_keeps_every_token(exact: str, scratch_home: Path) -> None:
    stored = (scratch_home / "agents/default/files/exact").read_bytes()
    assert b'    "a": "b",\n    "a": "c"\n' in stored  # both members, in order
    r = cli("get-in", exact, "dup", "--json", env=ENV)  # read as JSON parsers do: the last
    assert r.json["data"]["value"] == {"a": "c"}
    r = cli("read", exact, "--json", env=ENV)
    assert r.code == 0 and r.json["data"]["content"].encode() == stored
    r = cli("schema", exact, "--json", env=ENV)
    assert r.code == 0


# ---------------------------------------------------------------------------------------------
# the JSONTestSuite (https://github.com/nst/JSONTestSuite), from the shared corpus


@pytest.mark.corpus
def test_jsontestsuite_through_ingest_and_read(corpus_dir: Path, scratch_home: Path) -> None:
    """``y_`` and ``i_`` files round-trip token for token (stored as JSON when scratch reads
    them as JSON, else as the bytes received); ``n_`` files are never stored as JSON."""
    files = sorted((corpus_dir / SUITE).glob("*.json"))
    assert len(files) == 318
    seen = {"y": 0, "i": 0, "n": 0}
    bad = []
    for i, path in enumerate(files):
        data = path.read_bytes()
        kind = path.name[0]
        seen[kind] += 1
        r = cli("ingest", f"jts/{i}", "--store-always", "--format", "json", "--json",
                input=data, env=ENV)
        if r.code != 0:
            bad.append((path.name, "ingest", r.out[:200]))
            continue
        if not data:  # n_structure_no_data.json: empty input is not stored at all
            assert r.json["data"] == {"stored": False, "empty": True, "bytes": 0}
            continue
        meta = json.loads((scratch_home / f"agents/default/meta/jts/{i}.json").read_bytes())
        fmt = meta["versions"][-1]["info"]["format"]
        stored = (scratch_home / "agents/default/files/jts" / str(i)).read_bytes()
        if kind == "n" and fmt == "json":
            bad.append((path.name, "n_ stored as JSON"))
        if kind == "y" and fmt != "json" and data.strip()[:1] in (b"{", b"["):
            bad.append((path.name, f"y_ stored as {fmt}"))
        if fmt == "json":
            if json_tokens(stored) != json_tokens(data):
                bad.append((path.name, "tokens changed"))
        elif stored != data:
            bad.append((path.name, "bytes changed"))
        shown = cli("read", f"jts/{i}", "--raw", env=ENV)
        if shown.code != 0 or shown.out != stored:
            bad.append((path.name, "read", shown.out[:200]))
    assert bad == []
    assert seen == {"y": 95, "i": 35, "n": 188}


def test_log_entries_keep_numbers_as_written(scratch_home: Path) -> None:
    lines = ["0.10000000000000000555111512312578270211815834045",
             '{"n": 18446744073709551616, "d": 1.50}', "NaN", "[1e400]"]
    r = cli("log", "append", "lg", "--lines", input="\n".join(lines))
    assert r.code == 0
    stored = (scratch_home / "agents/default/logs/lg.jsonl").read_bytes()
    assert b'"entry":0.10000000000000000555111512312578270211815834045}' in stored
    assert b'"entry":{"n":18446744073709551616,"d":1.50}}' in stored
    assert b'"entry":"NaN"}' in stored  # not JSON: kept as the text it is
    r = cli("log", "read", "lg", "--json")
    assert b'"entry":[1e400]' in r.out and b'"entry":0.10000000000000000555111512312578270211815834045' in r.out


def test_a_big_document_too_deep_to_parse_is_kept_as_received(tmp_path: Path) -> None:
    """A big container is parsed from its canonical text; nested too deeply for both parsers,
    the input is read again and stored as text, the error placed in it as received."""
    doc = (b'{"pad": "' + b"p" * 1_200_000 + b'", "d": ' + b"[" * 3000 + b"1" + b"]" * 3000
           + b"}")
    dest = tmp_path / "stored"
    n = normalize(io.BytesIO(doc), dest)
    assert (n.format, n.layout, dest.read_bytes() == doc) == ("text", "raw", True)
    assert n.parse_error is not None and n.parse_error["line"] == 1  # the input is one line
    assert 1_200_000 < n.parse_error["offset"] < len(doc)
    assert "nested too deeply" in n.warnings[0]


def test_a_string_cut_short_fails_in_linear_time_without_the_c_code() -> None:
    """The sniffer validates a 64 KB prefix, which often ends inside a string: the pure-Python
    string pattern backtracked over every split of its words before failing (an OpenAPI
    document of 1.4 MB took minutes to ingest without a compiler). Possessive now; in a
    child process, so a regression stops at the timeout instead of hanging the run."""
    import subprocess
    import sys
    code = ("from scratch.reindent import reindent_py\n"
            "doc = b'{\"d\": \"' + b'words and more words, ' * 400\n"
            "try:\n    reindent_py(doc, 0)\nexcept ValueError as e:\n    print(e.args[0])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert done.stdout.strip() == "Unterminated string"


@pytest.mark.parametrize("impl", IMPLS)
def test_input_already_in_the_layout_is_flagged_same(impl) -> None:  # type: ignore[no-untyped-def]
    """SAME: the input is the body and one final newline, byte for byte (ingest then stores
    the input's file itself); any other whitespace, anywhere, clears it."""
    rng = random.Random(3)
    for _ in range(100):
        data = json.dumps(_random_doc(rng)).encode()
        body = impl(data)[0]
        laid_out = body + b"\n"
        assert impl(laid_out)[2] & R.SAME, laid_out[:80]
        assert impl(laid_out) == (body, *impl(data)[1:2], impl(data)[2] | R.SAME)
        if body != data:
            assert not impl(data)[2] & R.SAME
        for other in (body, body + b"\n\n", body + b" \n", b" " + laid_out, body + b"\r\n",
                      laid_out.replace(b"\n", b"\n ", 1) if b"\n" in body else b"[ ]\n"):
            assert not impl(other)[2] & R.SAME, other[:80]
    assert impl(b"1\n")[2] == R.SAME and impl(b"[]\n")[2] == R.SAME
    assert impl(b"[\n" + b"  1,\n" * 5 + b"  1\n]\n", 7)[2] == R.TOO_BIG  # not written: not same


def test_same_is_found_reading_a_big_file_once(tmp_path: Path) -> None:
    """From a file the C pass compares the body with the input a step at a time, before it
    hands the input's pages back: a 20 MB document in the layout is SAME, and one space
    more 15 MB in (past the first pages handed back) is not."""
    if not R.HAVE_C:
        pytest.skip("the C accelerator is not built")
    items = [{"name": f"item-{i}", "tags": ["a", "b"], "n": i} for i in range(200_000)]
    body = R.reindent(json.dumps({"items": items}).encode())[0]
    assert len(body) > 20 << 20
    same = tmp_path / "same.json"
    same.write_bytes(body + b"\n")
    at = body.index(b"\n", 15 << 20)
    near = tmp_path / "near.json"
    near.write_bytes(body[:at] + b" " + body[at:] + b"\n")  # a line's blank at its end
    for path, flagged in ((same, True), (near, False)):
        with open(path, "rb") as fh:
            got = R.reindent_file(fh.fileno(), 0, path.stat().st_size)
        assert (got[0] == body, bool(got[2] & R.SAME)) == (True, flagged), path.name


def test_may_be_canonical_guesses_from_the_first_lines() -> None:
    """Every prefix of a body in the layout passes; kubectl's 4 spaces, minified text, a
    blank at a line's end and text after the root fail."""
    rng = random.Random(5)
    checked = 0
    for _ in range(60):
        value = _random_doc(rng)
        if not isinstance(value, (dict, list)) or not value:
            continue
        body = R.reindent(json.dumps(value).encode())[0] + b"\n"
        for cut in range(0, len(body), max(1, len(body) // 7)):
            prefix = body[:cut]
            assert R.may_be_canonical(prefix) == (prefix.count(b"\n") >= 2), prefix
            checked += 1
        spaced = json.dumps(value, indent=4).encode()
        assert not R.may_be_canonical(spaced) or b"\n    " not in spaced
        assert not R.may_be_canonical(json.dumps(value).encode())
        line_end = body.index(b"\n", 2)
        assert not R.may_be_canonical(body[:line_end] + b" " + body[line_end:])
        assert not R.may_be_canonical(body + b"[\n]\n")
    assert checked > 100
