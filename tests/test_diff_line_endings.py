"""Line-ending changes through the real CLI: `scratch diff` and `read --since-version` show them,
agree with each other, and their ops rebuild the new version byte for byte."""

from __future__ import annotations

import random

import pytest

from scratch.query.diffing import apply_ops, split_lines
from tests.helpers import cli, count
from tests.test_diffing import CASES, NNL, _pair


def _write(name: str, data: bytes) -> None:
    r = cli("write", name, "--allow-empty", input=data)
    assert r.code == 0, r.err


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@pytest.mark.parametrize("case", list(CASES))
def test_diff_and_since_version_show_the_change(case: str) -> None:
    old, new, hunks, ops = CASES[case]
    _write("f", old)
    _write("f", new)
    text = "--- f@1\n+++ f@2\n" + hunks
    added = sum(len(o["lines"]) for o in ops if o["op"] == "add")
    removed = sum(len(o["lines"]) for o in ops if o["op"] == "remove")
    data = {"name": "f", "from_version": 1, "to_version": 2, "unchanged": False, "ops": ops,
            "added": added, "removed": removed, "unchanged_lines": _lines(old) - removed}
    assert added + removed > 0

    d = cli("diff", "f", "1", "2")
    assert (d.code, d.text) == (0, text)
    assert d.err.startswith(f"-- {count(text):,} tokens (o200k_base) · budget ")  # priced
    dj = cli("diff", "f", "1", "2", "--json")
    assert (dj.code, dj.json["command"], dj.json["data"]) == (0, "diff", data)

    for ref in ("f", "f@2"):
        r = cli("read", ref, "--since-version", "1")
        assert (r.code, r.text) == (0, text)
        rj = cli("read", ref, "--since-version", "1", "--json")
        assert (rj.code, rj.json["command"], rj.json["data"]) == (0, "read", data)

    v1, v2 = cli("read", "f@1").out, cli("read", "f@2").out
    assert (v1, v2) == (old, new)
    assert "".join(apply_ops(split_lines(v1), dj.json["data"]["ops"])).encode() == v2


def test_the_bug_report_cases_exactly() -> None:
    _write("n", b"x\n")
    _write("n", b"x")
    d = cli("diff", "n", "1", "2")
    assert (d.code, d.text) == (0, "--- n@1\n+++ n@2\n@@ -1 +1 @@\n-x\n+x\n" + NNL)
    r = cli("read", "n", "--since-version", "1", "--json").json["data"]
    assert (r["unchanged"], r["added"], r["removed"], r["unchanged_lines"]) == (False, 1, 1, 0)
    assert r["ops"] == [{"op": "remove", "lines": ["x"], "line": 1},
                        {"op": "add", "lines": ["x"], "line": 1, "no_newline_at_end": True}]
    _write("m", b"a\r\nb\r\n")
    _write("m", b"a\nb\n")
    d = cli("diff", "m", "1", "2")
    assert (d.code, d.text) == (0, "--- m@1\n+++ m@2\n@@ -1,2 +1,2 @@\n-a\u240d\n-b\u240d\n"
                                   "+a\n+b\n")


def test_zero_context_keeps_the_marker_with_its_line() -> None:
    old, new, _, _ = CASES["mixed endings"]
    _write("f", old)
    _write("f", new)
    text = ("--- f@1\n+++ f@2\n@@ -2 +2 @@\n-two\n+two\u240d\n@@ -4 +4 @@\n-four\n" + NNL
            + "+four\n")
    assert cli("diff", "f", "1", "2", "-U", "0").text == text
    assert cli("read", "f", "--since-version", "1", "-U", "0").text == text


def test_random_versions_round_trip_through_the_cli() -> None:
    rng = random.Random(5)
    versions = [b"start\n"] + [_pair(rng)[1] for _ in range(25)]
    stored: list[bytes] = []
    for data in versions:
        if stored and data == stored[-1]:
            continue
        _write("r", data)
        stored.append(data)
    for _ in range(30):
        a, b = rng.randrange(1, len(stored) + 1), rng.randrange(1, len(stored) + 1)
        d = cli("diff", "r", str(a), str(b), "--json")
        r = cli("read", f"r@{b}", "--since-version", str(a), "--json")
        assert d.code == r.code == 0
        assert d.json["data"] == r.json["data"]
        rebuilt = "".join(apply_ops(split_lines(stored[a - 1]), d.json["data"]["ops"]))
        assert rebuilt.encode() == stored[b - 1], (stored[a - 1], stored[b - 1])
        text = cli("diff", "r", str(a), str(b))
        assert text.text == cli("read", f"r@{b}", "--since-version", str(a)).text
        assert (text.text == "") == (stored[a - 1] == stored[b - 1])


def test_a_literal_cr_symbol_in_the_content_is_called_out() -> None:
    _write("f", "a\u240d\n".encode())
    _write("f", b"a\r\n")
    d = cli("diff", "f", "1", "2")
    assert (d.code, d.text) == (0, "--- f@1\n+++ f@2\n@@ -1 +1 @@\n-a\u240d\n+a\u240d\n")
    assert d.err.startswith("f: \u240d in this diff marks a carriage return and is also a "
                            "literal character of the content; the JSON answer shows the exact lines\n"
                            "-- ")
    assert cli("diff", "f", "1", "2", "--json").json["data"]["ops"] == [
        {"op": "remove", "lines": ["a\u240d"], "line": 1},
        {"op": "add", "lines": ["a\r"], "line": 1}]


def test_exit_codes() -> None:
    _write("f", b"x\n")
    _write("f", b"x")
    same = cli("diff", "f", "2", "2")
    assert (same.code, same.text) == (0, "")
    assert same.err.startswith("f: unchanged between versions 2 and 2\n-- 0 tokens")
    bad = cli("diff", "f", "1", "2", "-U", "-1", "--json")
    assert (bad.code, bad.json["error"]["code"]) == (2, "invalid_argument")
    missing = cli("diff", "f", "1", "9", "--json")
    assert (missing.code, missing.json["error"]["code"]) == (4, "version_not_found")


def test_invalid_utf8_past_the_sniffed_head_is_refused_not_mangled() -> None:
    # the binary sniff reads the first 64 KiB; a stray byte after it must not be decoded lossily
    head = b"line\n" * 14000
    _write("big", head + b"end\n")
    _write("big", head + b"\xff\n")
    for args in (("diff", "big", "1", "2"), ("read", "big", "--since-version", "1")):
        r = cli(*args, "--json")
        assert (r.code, r.json["error"]["code"]) == (2, "binary_content")
