"""The compact diff ops rebuild the new version exactly from the old one, line endings included,
and the unified text shows every change (a ``\\ No newline`` marker, ``␍`` for CR)."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scratch.query.diffing import (
    CR_SYMBOL,
    NO_NEWLINE,
    apply_ops,
    compare,
    diff_ops,
    split_lines,
    summarize_ops,
    unified,
)

NNL = NO_NEWLINE + "\n"

# (old, new, hunks after the ---/+++ header, ops)
CASES: dict[str, tuple[bytes, bytes, str, list[dict[str, Any]]]] = {
    "final newline removed": (
        b"x\n", b"x",
        "@@ -1 +1 @@\n-x\n+x\n" + NNL,
        [{"op": "remove", "lines": ["x"], "line": 1},
         {"op": "add", "lines": ["x"], "line": 1, "no_newline_at_end": True}]),
    "final newline added": (
        b"x", b"x\n",
        "@@ -1 +1 @@\n-x\n" + NNL + "+x\n",
        [{"op": "remove", "lines": ["x"], "line": 1, "no_newline_at_end": True},
         {"op": "add", "lines": ["x"], "line": 1}]),
    "final newline added after kept lines": (
        b"a\nb\nc", b"a\nb\nc\n",
        "@@ -1,3 +1,3 @@\n a\n b\n-c\n" + NNL + "+c\n",
        [{"op": "equal", "count": 2},
         {"op": "remove", "lines": ["c"], "line": 3, "no_newline_at_end": True},
         {"op": "add", "lines": ["c"], "line": 3}]),
    "CRLF to LF": (
        b"a\r\nb\r\n", b"a\nb\n",
        "@@ -1,2 +1,2 @@\n-a\u240d\n-b\u240d\n+a\n+b\n",
        [{"op": "remove", "lines": ["a\r", "b\r"], "line": 1},
         {"op": "add", "lines": ["a", "b"], "line": 1}]),
    "LF to CRLF": (
        b"a\nb\n", b"a\r\nb\r\n",
        "@@ -1,2 +1,2 @@\n-a\n-b\n+a\u240d\n+b\u240d\n",
        [{"op": "remove", "lines": ["a", "b"], "line": 1},
         {"op": "add", "lines": ["a\r", "b\r"], "line": 1}]),
    "mixed endings": (
        b"one\r\ntwo\nthree\r\nfour", b"one\r\ntwo\r\nthree\r\nfour\n",
        "@@ -1,4 +1,4 @@\n one\u240d\n-two\n+two\u240d\n three\u240d\n-four\n" + NNL
        + "+four\n",
        [{"op": "equal", "count": 1},
         {"op": "remove", "lines": ["two"], "line": 2},
         {"op": "add", "lines": ["two\r"], "line": 2},
         {"op": "equal", "count": 1},
         {"op": "remove", "lines": ["four"], "line": 4, "no_newline_at_end": True},
         {"op": "add", "lines": ["four"], "line": 4}]),
    "bare CR inside a line": (
        b"a\rb\n", b"a\nb\n",
        "@@ -1 +1,2 @@\n-a\u240db\n+a\n+b\n",
        [{"op": "remove", "lines": ["a\rb"], "line": 1},
         {"op": "add", "lines": ["a", "b"], "line": 1}]),
    "last line CR without LF": (
        b"a\r", b"a\r\n",
        "@@ -1 +1 @@\n-a\u240d\n" + NNL + "+a\u240d\n",
        [{"op": "remove", "lines": ["a\r"], "line": 1, "no_newline_at_end": True},
         {"op": "add", "lines": ["a\r"], "line": 1}]),
    "empty to lines": (
        b"", b"a\nb\n",
        "@@ -0,0 +1,2 @@\n+a\n+b\n",
        [{"op": "add", "lines": ["a", "b"], "line": 1}]),
    "lines to empty": (
        b"a\nb\n", b"",
        "@@ -1,2 +0,0 @@\n-a\n-b\n",
        [{"op": "remove", "lines": ["a", "b"], "line": 1}]),
    "empty to a line without newline": (
        b"", b"a",
        "@@ -0,0 +1 @@\n+a\n" + NNL,
        [{"op": "add", "lines": ["a"], "line": 1, "no_newline_at_end": True}]),
    "a line without newline to empty": (
        b"a", b"",
        "@@ -1 +0,0 @@\n-a\n" + NNL,
        [{"op": "remove", "lines": ["a"], "line": 1, "no_newline_at_end": True}]),
    "only a newline to empty": (
        b"\n", b"",
        "@@ -1 +0,0 @@\n-\n",
        [{"op": "remove", "lines": [""], "line": 1}]),
    "empty to only a newline": (
        b"", b"\n",
        "@@ -0,0 +1 @@\n+\n",
        [{"op": "add", "lines": [""], "line": 1}]),
    "only a newline to CRLF": (
        b"\n", b"\r\n",
        "@@ -1 +1 @@\n-\n+\u240d\n",
        [{"op": "remove", "lines": [""], "line": 1},
         {"op": "add", "lines": ["\r"], "line": 1}]),
    "only a newline to two": (
        b"\n", b"\n\n",
        "@@ -1 +1,2 @@\n \n+\n",
        [{"op": "equal", "count": 1}, {"op": "add", "lines": [""], "line": 2}]),
    "kept last line without newline shown as context": (
        b"a\nz", b"b\nz",
        "@@ -1,2 +1,2 @@\n-a\n+b\n z\n" + NNL,
        [{"op": "remove", "lines": ["a"], "line": 1},
         {"op": "add", "lines": ["b"], "line": 1},
         {"op": "equal", "count": 1}]),
}


def _lines_of(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@pytest.mark.parametrize("case", list(CASES))
def test_line_ending_changes_are_shown_and_round_trip(case: str) -> None:
    old, new, hunks, ops = CASES[case]
    diff = compare(old, new, old_label="f@1", new_label="f@2")
    assert diff.text == "--- f@1\n+++ f@2\n" + hunks
    assert diff.ops == ops
    assert diff.literal_cr_symbol is False
    assert "".join(apply_ops(split_lines(old), diff.ops)).encode() == new
    assert _patch(old, diff.text) == new
    summary = summarize_ops(diff.ops)
    assert summary["added"] + summary["removed"] > 0
    assert summary["removed"] + summary["unchanged_lines"] == _lines_of(old)
    assert summary["added"] + summary["unchanged_lines"] == _lines_of(new)


@pytest.mark.skipif(shutil.which("diff") is None, reason="GNU diff is not installed")
@pytest.mark.parametrize("case", list(CASES))
def test_hunks_match_gnu_diff(case: str, tmp_path: Path) -> None:
    old, new, hunks, _ = CASES[case]
    (tmp_path / "a").write_bytes(old)
    (tmp_path / "b").write_bytes(new)
    run = subprocess.run(["diff", "-u", "--label", "f@1", "--label", "f@2", "a", "b"],
                         cwd=tmp_path, capture_output=True, check=False)
    assert run.returncode == 1
    assert run.stdout.decode().replace("\r", CR_SYMBOL) == "--- f@1\n+++ f@2\n" + hunks


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
def test_gnu_patch_applies_the_text_byte_for_byte(tmp_path: Path) -> None:
    """The human text, with ␍ read back as CR, is a patch the real tool applies exactly."""
    rng = random.Random(11)
    pairs = [(old, new) for old, new, _, _ in CASES.values()]
    pairs += [_pair(rng) for _ in range(40)]
    target = tmp_path / "f"
    for old, new in pairs:
        text = compare(old, new, old_label="f", new_label="f").text
        if not text:
            continue
        target.write_bytes(old)
        run = subprocess.run(["patch", "--binary", "--quiet", "--force", "f"], cwd=tmp_path,
                             input=text.replace(CR_SYMBOL, "\r").encode(), capture_output=True,
                             check=False)
        assert run.returncode == 0, (old, new, run.stdout, run.stderr)
        assert target.read_bytes() == new, (old, new)


def test_a_literal_cr_symbol_is_flagged_not_confused() -> None:
    diff = compare("a\u240d\n".encode(), b"a\r\n", old_label="f@1", new_label="f@2")
    assert diff.text == "--- f@1\n+++ f@2\n@@ -1 +1 @@\n-a\u240d\n+a\u240d\n"
    assert diff.literal_cr_symbol is True
    assert diff.ops == [{"op": "remove", "lines": ["a\u240d"], "line": 1},
                        {"op": "add", "lines": ["a\r"], "line": 1}]
    # only shown lines count: a literal far from the change leaves the notation unambiguous
    far = "\u240d\n" + "k\n" * 10 + "x\n"
    diff = compare(far.encode(), far.replace("x", "y").encode(), old_label="a", new_label="b")
    assert diff.literal_cr_symbol is False


def test_content_that_is_not_utf8_is_refused_not_mangled() -> None:
    with pytest.raises(UnicodeDecodeError):
        split_lines(b"ok\n\xff\n")


def test_split_lines_keeps_every_byte() -> None:
    assert split_lines(b"") == []
    assert split_lines(b"\n") == ["\n"]
    assert split_lines(b"a\r\nb\rc\x0bd\x0ce\xe2\x80\xa8f") == ["a\r\n", "b\rc\x0bd\x0ce\u2028f"]


ALPHABET = [b"a", b"b", b"c", b"\r", b"\n", b"\n", b"\r\n", "\u00e9".encode()]


def _random_pieces(rng: random.Random, most: int = 12) -> list[bytes]:
    return [rng.choice(ALPHABET) for _ in range(rng.randrange(0, most))]


def _pair(rng: random.Random) -> tuple[bytes, bytes]:
    """Two small versions: unrelated, or the second an edit of the first (whole characters)."""
    old = _random_pieces(rng)
    if rng.random() < 0.3:
        return b"".join(old), b"".join(_random_pieces(rng))
    new = list(old)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(0, len(new) + 1)
        roll = rng.random()
        if roll < 0.3 and new:
            del new[min(at, len(new) - 1)]
        elif roll < 0.5 and new:  # drop or add the final newline
            if new[-1] == b"\n":
                new.pop()
            else:
                new.append(b"\n")
        else:
            new.insert(at, rng.choice(ALPHABET))
    return b"".join(old), b"".join(new)


def test_random_line_endings_round_trip() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        old, new = _pair(rng)
        a, b = split_lines(old), split_lines(new)
        assert "".join(a).encode() == old
        diff = compare(old, new, old_label="o", new_label="n", context=rng.randrange(0, 4))
        assert "".join(apply_ops(a, diff.ops)).encode() == new, (old, new, diff.ops)
        assert _patch(old, diff.text) == new, (old, new, diff.text)
        # every change is visible, in both forms
        assert (diff.text == "") == (old == new)
        assert all(o["op"] == "equal" for o in diff.ops) == (old == new)
        summary = summarize_ops(diff.ops)
        assert summary["removed"] + summary["unchanged_lines"] == len(a)
        assert summary["added"] + summary["unchanged_lines"] == len(b)
        # only the op holding a version's last line may say it has no newline
        for o in diff.ops:
            if o.get("no_newline_at_end"):
                side = a if o["op"] == "remove" else b
                assert o["line"] + len(o["lines"]) - 1 == len(side)
                assert not side[-1].endswith("\n")


def test_ops_and_text_agree_for_every_context() -> None:
    """The text and the ops come from one matcher; neither may disturb the other."""
    rng = random.Random(3)
    for _ in range(300):
        old, new = _pair(rng)
        a, b = split_lines(old), split_lines(new)
        for context in (0, 1, 3):
            diff = compare(old, new, old_label="o", new_label="n", context=context)
            assert diff.ops == diff_ops(a, b)
            assert diff.text == unified(a, b, old_label="o", new_label="n", context=context)


HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _patch(old: bytes, text: str) -> bytes:
    """Apply unified ``text`` to ``old`` the way a reader would, checking every line it claims."""
    src = split_lines(old)
    if not text:
        return old
    rows = text.split("\n")
    assert rows.pop() == ""
    assert rows[0].startswith("--- ") and rows[1].startswith("+++ ")
    out: list[str] = []
    pos = 0
    i = 2
    while i < len(rows):
        m = HUNK.fullmatch(rows[i])
        assert m, rows[i]
        o_start, o_len = int(m[1]), int(m[2] or 1)
        n_len = int(m[4] or 1)
        start = o_start - 1 if o_len else o_start
        out += src[pos:start]
        pos = start
        i += 1
        seen_old = seen_new = 0
        while i < len(rows) and not rows[i].startswith("@@"):
            row = rows[i]
            nxt = rows[i + 1] if i + 1 < len(rows) else ""
            ends = nxt != NO_NEWLINE
            line = row[1:].replace(CR_SYMBOL, "\r") + ("\n" if ends else "")
            if row[0] in " -":
                assert src[pos] == line, (src[pos], line)
                pos += 1
                seen_old += 1
            if row[0] in " +":
                out.append(line)
                seen_new += 1
            assert row[0] in " -+", row
            i += 1 if ends else 2
        assert (seen_old, seen_new) == (o_len, n_len)
    out += src[pos:]
    return "".join(out).encode()


def test_ops_applied_to_old_lines_give_the_new_lines() -> None:
    rng = random.Random(7)
    for _ in range(200):
        old = [rng.choice("abcde") + "\n" for _ in range(rng.randrange(0, 30))]
        new = list(old)
        for _ in range(rng.randrange(0, 6)):
            at = rng.randrange(0, len(new) + 1)
            if new and rng.random() < 0.5:
                del new[min(at, len(new) - 1)]
            else:
                new.insert(at, rng.choice("xyz") + "\n")
        ops = diff_ops(old, new)
        assert apply_ops(old, ops) == new
        assert sum(o["count"] for o in ops if o["op"] == "equal") + sum(
            len(o["lines"]) for o in ops if o["op"] == "remove") == len(old)
