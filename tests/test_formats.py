"""Format sniffing and normalisation: synthetic cases (no corpus needed)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from scratch.errors import JsonError, UsageError
from scratch.formats import canonical_format, slug, sniff
from scratch.formats.embedded import find_embedded
from scratch.formats.jsontext import has_big_int, parse_json, render, render_line_count
from scratch.index.normalizer import Normalized, normalize
from tests.helpers import json_tokens

KUBECTL_YAML = b"""apiVersion: v1
kind: Pod
metadata:
  name: web-0
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.25
---
apiVersion: v1
kind: Service
metadata:
  name: web
"""

SNIFF_CASES = [
    (b"", "text"),
    (b"\x00\x01\x02binary", "binary"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    (b"hello \xff\xfe world\n", "text"),  # invalid UTF-8 is still text
    (b'{"a": 1, "b": [1, 2]}', "json"),
    (b'[1, 2, 3]\n', "json"),
    (b'{"a": 1}\n{"a": 2}\n{"a": 3}\n', "ndjson"),
    (b'[1, "x"]\n[2, "y"]\n', "ndjson"),
    (b'{"items": [{"name": "a"}, {"name": "b"', "json"),  # truncated
    (b"[" * 10_000, "json"),  # too deep for the stdlib: still JSON-shaped
    (b"[INFO] starting\n[WARN] slow\n[ERROR] failed\n", "log"),
    (KUBECTL_YAML, "yaml"),
    (b"---\nkey: value\nlist:\n  - 1\n  - 2\n", "yaml"),
    (b"name,age,city\nann,31,Oslo\nbob,27,Lima\n", "csv"),
    (b"name\tage\nann\t31\nbob\t27\n", "tsv"),
    (b"# Title\n\nSome text with a [link](http://x.y).\n\n- one\n- two\n\n```sh\nls\n```\n",
     "markdown"),
    (b"2024-01-02T03:04:05Z INFO started\n2024-01-02T03:04:06Z ERROR boom\n", "log"),
    (b"Jun 14 15:16:01 host sshd[1]: ok\nJun 14 15:16:02 host sshd[1]: ok\n", "log"),
    (b"just some words\nand more words\n", "text"),
    (b"42\n", "text"),
    (b"# a shell comment\n# another\necho hi\n", "text"),
]


@pytest.mark.parametrize(("data", "expected"), SNIFF_CASES)
def test_sniff(data: bytes, expected: str) -> None:
    assert sniff(data) == expected


def test_sniff_prefix_cut_mid_character_is_not_invalid_utf8() -> None:
    data = ("é" * 40_000).encode()
    assert sniff(data[: 64 * 1024 - 1], complete=False) == "text"


def run(data: bytes, tmp_path: Path, **kw: object) -> tuple[Normalized, bytes]:
    dest = tmp_path / "stored"
    n = normalize(io.BytesIO(data), dest, **kw)  # type: ignore[arg-type]
    return n, dest.read_bytes()


def test_minified_json_becomes_canonical_lines(tmp_path: Path) -> None:
    data = b'{"kind":"List","items":[{"a":1,"b":[]},{"a":2,"b":{}}],"s":"x\\ny"}'
    n, out = run(data, tmp_path)
    assert (n.format, n.layout, n.bytes_in, n.bytes_out) == ("json", "canonical", len(data),
                                                             len(out))
    assert out == (b'{\n  "kind": "List",\n  "items": [\n    {\n      "a": 1,\n      "b": []\n'
                   b'    },\n    {\n      "a": 2,\n      "b": {}\n    }\n  ],\n'
                   b'  "s": "x\\ny"\n}\n')
    assert json.loads(out) == json.loads(data)


def test_raw_keeps_bytes(tmp_path: Path) -> None:
    data = b'{"b":1,   "a":[1,2]}'
    n, out = run(data, tmp_path, raw=True)
    assert (n.format, n.layout, out) == ("json", "raw", data)


AWKWARD = (b'{"big": 123456789012345678901234567890, "neg": -98765432109876543210,'
           b' "u64": 18446744073709551615, "f": 1.7976931348623157e308, "tiny": 5e-324,'
           b' "pi": 3.141592653589793238462643383279, "exp": 1E+2, "inf": 1e400,'
           b' "esc": "\\u00e9\\ud83d\\ude00", "lone": "\\ud800", "ctl": "\\u0000\\t",'
           b' "dup": 1, "dup": 2, "nested": [[[{}]], []], "zero": -0, "slash": "\\/"}')


def test_awkward_json_keeps_every_token(tmp_path: Path) -> None:
    n, out = run(AWKWARD, tmp_path)
    assert n.format == "json"
    assert json_tokens(out) == json_tokens(AWKWARD)  # only whitespace changed
    assert b'"exp": 1E+2,' in out and b'"inf": 1e400,' in out and b'"dup": 1,\n  "dup": 2' in out
    want = json.loads(AWKWARD)
    got = json.loads(out)
    assert json.dumps(got) == json.dumps(want)  # same values, same key order
    assert list(got) == list(want)
    out.decode("utf-8")  # still valid UTF-8 (the lone surrogate stays an escape)
    # the repeated key makes the index read the text itself, and says so
    assert n.layout == "raw" and any("repeats a key" in w for w in n.warnings)


@pytest.mark.parametrize("bad", [b'{"nan": NaN}', b'[Infinity]', b'[-Infinity]',
                                 b'\xef\xbb\xbf{"a": 1}', b'[1,]', b'{"a": 01}',
                                 b'["tab\there"]'])
def test_what_is_not_json_is_stored_as_text(tmp_path: Path, bad: bytes) -> None:
    n, out = run(bad, tmp_path)
    assert (n.format, out) == ("text", bad)
    if n.detected == "json":  # sniffed as JSON (or declared): the reason is given
        assert n.parse_error is not None and "does not parse as JSON" in n.warnings[0]
    n, out = run(bad, tmp_path, declared="json")
    assert (n.format, n.detected, out) == ("text", "json", bad)
    assert n.parse_error is not None and "does not parse as JSON" in n.warnings[0]


def test_bom_and_big_int_detection() -> None:
    assert parse_json(b'\xef\xbb\xbf{"a": 1}') == ({"a": 1}, "json")
    assert has_big_int(b"[18446744073709551616]")
    assert not has_big_int(b"[18446744073709551615, -9223372036854775808, 1.0000000000000000001]")
    for exponent in (b"e", b"E", b"e+", b".5e"):  # exponent digits are no integer literal
        assert not has_big_int(b"[1" + exponent + b"12345678901234567890]"), exponent
    # after "e-" the digits read as a negative integer: a false positive (allowed), which only
    # sends the document to the exact parser; the value is the same
    assert has_big_int(b"[1e-12345678901234567890]")
    assert parse_json(b"[1e-12345678901234567890]")[0] == [0.0]
    assert parse_json(b"[18446744073709551616]")[0] == [18446744073709551616]


def test_render_line_count_matches_render() -> None:
    for value in ({}, [], {"a": [1, {"b": []}, "x"]}, [[[]]], "s", 1, None,
                  [10**30, {"k": float("nan")}]):
        engine = "json" if value == [10**30, {"k": float("nan")}] or value != value else "orjson"
        text = render(value, engine)
        assert render_line_count(value, engine) == text.count(b"\n"), value


def test_truncated_json_is_text_with_position(tmp_path: Path) -> None:
    data = b'{\n  "items": [\n    {"name": "a"},\n    {"name": "b"'
    n, out = run(data, tmp_path)
    assert n.format == "text" and out == data
    assert n.parse_error is not None
    assert (n.parse_error["line"], n.parse_error["column"]) == (4, 17)
    assert "does not parse as JSON at line 4, column 17" in n.warnings[0]


def test_declared_json_that_is_not(tmp_path: Path) -> None:
    data = b"this is not json\n"
    n, out = run(data, tmp_path, declared="json")
    assert (n.format, n.detected, out) == ("text", "json", data)
    assert n.parse_error is not None and n.parse_error["line"] == 1
    assert "at line 1, column 1" in n.warnings[0]


def test_deep_nesting_does_not_crash(tmp_path: Path) -> None:
    data = b"[" * 10_000 + b"]" * 10_000
    n, out = run(data, tmp_path)
    assert n.format == "text" and out == data
    assert n.parse_error is not None and "nested too deeply" in n.parse_error["message"]
    assert "nested too deeply" in n.warnings[0]


def test_json_parse_error_fields() -> None:
    with pytest.raises(JsonError) as exc:
        parse_json(b'{"a": [1, 2,, 3]}')
    assert (exc.value.line, exc.value.column, exc.value.offset) == (1, 13, 12)


def test_text_formats_are_byte_exact(tmp_path: Path) -> None:
    crlf = b"2024-01-01 00:00:00 INFO a\r\n2024-01-01 00:00:01 WARN b\r\n"
    n, out = run(crlf, tmp_path)
    assert (n.format, out) == ("log", crlf)
    bad = b"caf\xe9 \xff\n\xc3\x28 mixed\n"
    n, out = run(bad, tmp_path)
    assert (n.format, out) == ("text", bad)
    binary = bytes(range(256)) * 10
    n, out = run(binary, tmp_path)
    assert (n.format, out, n.analysis) == ("binary", binary, None)


def test_empty_input(tmp_path: Path) -> None:
    n, out = run(b"", tmp_path)
    assert (n.format, n.bytes_in, n.bytes_out, out) == ("text", 0, 0, b"")


def test_ndjson_with_a_bad_line_stays_ndjson(tmp_path: Path) -> None:
    lines = [json.dumps({"i": i}).encode() for i in range(30)]
    lines[17] = b'{"i": 17, "oops"'
    data = b"\n".join(lines) + b"\n"
    n, out = run(data, tmp_path)
    assert (n.format, out) == ("ndjson", data)
    assert n.warnings == ["1 of 30 lines are not JSON (first: line 18: "
                          "unexpected end of data)"]


def test_ndjson_mostly_broken_is_text(tmp_path: Path) -> None:
    data = b'{"a": 1}\n{"a": 2}\nnot json\nnot json\nnot json\n'
    n, _ = run(data, tmp_path, declared="jsonl")
    assert n.format == "text" and n.parse_error is not None
    assert n.parse_error["line"] == 3


def test_declared_yaml_with_syntax_error(tmp_path: Path) -> None:
    data = b"a: 1\nb: [1, 2\nc: 3\n"
    n, out = run(data, tmp_path, declared="yml")
    assert (n.format, out) == ("text", data)
    assert n.parse_error is not None and n.parse_error["line"] == 3
    assert "does not parse as yaml at line 3" in n.warnings[0]


def test_unknown_declared_format() -> None:
    with pytest.raises(UsageError) as exc:
        canonical_format("xml")
    assert exc.value.code == "invalid_argument"
    assert canonical_format("JSONL") == "ndjson"


def test_embedded_documents(tmp_path: Path) -> None:
    payload = {"items": [{"name": f"pod-{i}", "phase": "Running"} for i in range(5)]}
    readme = "# Title\n\nIntro text.\n\n" + "\n".join(f"- item {i}" for i in range(10)) + "\n"
    result = {"jsonrpc": "2.0", "id": 1, "result": {"content": [
        {"type": "text", "text": json.dumps(payload)},
        {"type": "text", "text": readme},
        {"type": "text", "text": "short"},
    ]}}
    n, _ = run(json.dumps(result).encode(), tmp_path)
    got = [(e.path, e.slug, e.kind, e.lines) for e in n.embedded]
    assert got == [(("result", "content", 0, "text"), "result-content-0-text", "json", 24),
                   (("result", "content", 1, "text"), "result-content-1-text", "markdown", 14)]
    assert json.loads(n.embedded[0].text) == payload
    assert n.embedded[1].text == readme


def test_embedded_skips_last_applied_copies() -> None:
    inner = json.dumps({"a": list(range(20))})
    doc = {"metadata": {"annotations": {
        "kubectl.kubernetes.io/last-applied-configuration": inner, "other": inner}}}
    found, limited = find_embedded(doc)
    assert [e.path for e in found] == [("metadata", "annotations", "other")]
    assert not limited


def test_slug() -> None:
    assert slug(("content", 0, "text")) == "content-0-text"
    assert slug(()) == "root"
    assert slug(("kubectl.kubernetes.io/x", "a b")) == "kubectl-kubernetes-io-x-a-b"
    long_a = slug(("x" * 100, 1))
    long_b = slug(("x" * 100, 2))
    assert len(long_a) == 60 and long_a != long_b
    assert all(c.isalnum() or c in "-_" for c in long_a)
