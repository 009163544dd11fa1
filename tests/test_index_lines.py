"""The line pass (scratch.index.lines): the C scanner and its pure-Python twin agree, line
counts and totals are exact with repeated lines counted once, and lines starting with a
Unicode space are joined for the total."""

from __future__ import annotations

import io
import random
from collections.abc import Sequence
from pathlib import Path

import pytest
import toktok

from scratch.index import lines as L
from scratch.index.files import TOKENS_HEADER
from scratch.index.lines import run_line_pass
from tests.test_index import token_lines  # the lines as the token counter sees them

BASE = "o200k_base"
PIECES = [b"a", b"\n", b" ", b"\t", b"/", b"\r", b"\xc2\x85", b"\xc2\xa0", b"\xe2\x80\xa8",
          b"\xe2\x80\x83", b"\xff", b"\xe2\x82", b"\xe3\x80\x80", b"\xe1\x9a\x80",
          b"\xe2\x81\x9f", b"\x0b", b"\x1c", b"\x1f", b"x", b"{", b"\xc3\xa9", b"\xed\xa0\x80",
          b"\xe2\x80\xaf", b"\xe2\x80\x8b", b'  "k": 1,\n']


def count_lines(lines: Sequence[str], base: str) -> list[int]:
    return toktok.batch_count(list(lines), base)  # type: ignore[no-any-return]


def line_pass(tmp_path: Path, data: bytes) -> tuple[list[int], list[int], int]:
    """(line ends, token prefix sums without the leading 0, exact total) of ``data``."""
    content = tmp_path / "content"
    content.write_bytes(data)
    lines_out, tokens_out = io.BytesIO(), io.BytesIO()
    run_line_pass(content, lines_out, {BASE: tokens_out}, count_lines)
    from array import array

    ends = array("Q")
    ends.frombytes(lines_out.getvalue())
    raw = tokens_out.getvalue()
    _, n, total, _ = TOKENS_HEADER.unpack_from(raw)
    sums = array("Q")
    sums.frombytes(raw[TOKENS_HEADER.size:])
    assert ends[0] == 0 and sums[0] == 0 and len(ends) == len(sums) == n + 1
    return list(ends[1:]), list(sums[1:]), total


@pytest.mark.skipif(L._c_scan_lines is None, reason="C extension not built")
def test_c_scanner_matches_python_twin() -> None:
    rng = random.Random(7)
    for _ in range(5000):
        chunk = b"".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40)))
        base = rng.randint(0, 1 << 40)
        for texts in (True, False):
            c = L.scan_chunk(chunk, base, texts)
            py = L._scan_chunk_py(chunk, base, texts)
            assert (list(c[0]), c[1], list(c[2]), c[3]) == \
                (list(py[0]), py[1], list(py[2]), py[3]), chunk


def test_scan_chunk_shares_repeated_lines() -> None:
    ends, uniq, ids, groups = L.scan_chunk(b"},\n\xffx\n},\n\n  /y\nlast", 100, True)
    assert list(ends) == [103, 106, 109, 110, 115, 119]
    assert uniq == ["},\n", "\ufffdx\n", "\n", "  /y\n", "last"]
    assert list(ids) == [0, 1, 0, 2, 3, 4]
    assert groups == [(2, 4)]  # the blank line and the "/" line are not safe cuts


def test_repeated_lines_counted_exactly_across_chunks(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(L, "CHUNK", 4096)  # many chunks: the remembered counts carry over
    rng = random.Random(3)
    pool = [f'    "key{i}": "{"é" * (i % 3)}value {i}",\n' for i in range(40)]
    data = "".join(rng.choice(pool) if rng.random() < 0.8 else f"  unique line {k} ✓\n"
                   for k in range(5000)).encode()
    seen: list[str] = []

    def counting(lines: Sequence[str], base: str) -> list[int]:
        seen.extend(lines)
        return count_lines(lines, base)

    content = tmp_path / "content"
    content.write_bytes(data)
    out = io.BytesIO()
    with open(content, "rb") as f:
        pieces = _pieces(L.iter_file_chunks(f, 4096))
    assert len(pieces) > 20
    lp = L.LinePass(None, {BASE: out}, counting)
    for piece, safe in pieces:
        lp.feed(piece, safe)
    lp.finish()
    assert len(seen) == len(set(seen)) < 5000  # each distinct line counted once
    _, sums, total = line_pass(tmp_path, data)
    per_line = count_lines(token_lines(data), BASE)
    running = 0
    for i, c in enumerate(per_line):
        running += c
        assert sums[i] == running
    assert total == count_lines([data.decode()], BASE)[0]


@pytest.mark.parametrize("text", [
    "ab\nx\n\n\u3000\nend\n",  # the sum of its lines is one token more than the whole
    *(f"alpha beta\n{sp} \n\nend\n{sp}{sp}x\n" for sp in "\u00a0\u2003\u2028\u205f"),
])
def test_lines_starting_with_unicode_space_keep_the_total_exact(tmp_path: Path,
                                                                text: str) -> None:
    data = text.encode()
    ends, sums, total = line_pass(tmp_path, data)
    assert ends[-1] == len(data)
    assert sums[-1] == sum(count_lines(token_lines(data), BASE))
    assert total == count_lines([text], BASE)[0]


def _pieces(chunks: object) -> list[tuple[bytes, bool]]:
    return [(bytes(c), safe) for c, safe in chunks]  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", range(6))
def test_chunks_are_whole_lines_cut_where_they_say(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, seed: int) -> None:
    """The pieces the line pass reads join to the file; each is whole lines; one cut by force
    holds no safe cut; a file on disk and one in memory give the same pieces (their reads
    fill the reused buffer differently)."""
    rng = random.Random(seed)
    monkeypatch.setattr(L, "FORCE_CUT", 3000)  # forced cuts happen too
    pool = [*PIECES, b"  /x\n" * 30, b"\n" * 50, b"y" * 700]
    safe_cut = L._safe_cut_re()
    forced = 0
    for k in range(60):
        data = b"".join(rng.choice(pool) for _ in range(rng.randint(0, 400)))
        chunk = rng.choice([64, 257, 1024, 4096])
        got = _pieces(L.iter_file_chunks(io.BytesIO(data), chunk))
        path = tmp_path / f"data{k}"
        path.write_bytes(data)
        with open(path, "rb") as f:
            assert _pieces(L.iter_file_chunks(f, chunk)) == got, chunk
        assert b"".join(p for p, _ in got) == data
        for i, (piece, safe) in enumerate(got):
            assert piece.endswith(b"\n") or i == len(got) - 1  # the input's last line may not
            if not safe:
                forced += 1
                assert safe_cut.search(piece[:-1]) is None
    assert forced > 0


def test_line_pass_ahead_in_a_thread_writes_what_the_file_gives(tmp_path: Path) -> None:
    """With a counter of the caller's, the line pass ahead runs in a thread: the same
    offsets, prefix sums and total as the pass over the stored file; its files are taken
    once, and what is not taken is removed."""
    data = b"".join(random.Random(11).choice(PIECES) for _ in range(30_000)) + b"\n"
    content = tmp_path / "content"
    content.write_bytes(data)
    lines_out, tokens_out = io.BytesIO(), io.BytesIO()
    want = run_line_pass(content, lines_out, {BASE: tokens_out}, count_lines)
    ahead = L.LinesAhead(content, [BASE], tmp_path, count_lines)
    done = ahead.take()
    assert ahead.answered_by == "thread"
    assert done is not None and ahead.take() is None
    lp, lines_path, token_paths = done
    assert lines_path.read_bytes() == lines_out.getvalue()
    assert token_paths[BASE].read_bytes() == tokens_out.getvalue()
    assert (lp.line_count, lp.exact) == (want.line_count, want.exact) == (data.count(b"\n"), True)
    ahead.discard()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["content"]
    unused = L.LinesAhead(content, [BASE], tmp_path, count_lines)
    unused.discard()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["content"]


def test_line_pass_ahead_of_a_file_runs_in_a_child(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored file's pass runs in a child process (not a thread taking the GIL from the
    parse): the same files as the pass here; a child that fails is replaced by the pass here,
    and one given up is ended with its files removed."""
    data = b"".join(random.Random(12).choice(PIECES) for _ in range(30_000)) + b"\n"
    content = tmp_path / "content"
    content.write_bytes(data)
    lines_out, tokens_out = io.BytesIO(), io.BytesIO()
    want = run_line_pass(content, lines_out, {BASE: tokens_out}, count_lines)
    work = tmp_path / "work"
    work.mkdir()

    def check(ahead: L.LinesAhead, by: str) -> None:
        done = ahead.take()
        assert ahead.answered_by == by
        assert done is not None and ahead.take() is None
        lp, lines_path, token_paths = done
        assert lines_path.read_bytes() == lines_out.getvalue()
        assert token_paths[BASE].read_bytes() == tokens_out.getvalue()
        assert lp.line_count == want.line_count == data.count(b"\n")
        ahead.discard()
        assert list(work.iterdir()) == []

    ahead = L.LinesAhead(content, [BASE], work, chunk=4096)
    assert ahead._child is not None and ahead._thread is None
    check(ahead, "child")

    failing: list[object] = []

    def start_failing(source: Path, paths: object, chunk: int) -> object:
        from scratch.children import start_child
        nowhere = str(tmp_path / "missing" / "file")  # in no directory: the child fails
        failing.append(start_child("scratch.index.lines", [nowhere, "1", nowhere]))
        return failing[-1]

    monkeypatch.setattr(L, "_start_pass", start_failing)
    check(L.LinesAhead(content, [BASE], work, chunk=4096), "here")
    assert len(failing) == 1
    monkeypatch.undo()
    given_up = L.LinesAhead(content, [BASE], work, chunk=4096)
    child = given_up._child
    given_up.discard()
    assert child is not None and child.returncode is not None
    assert list(work.iterdir()) == []


def test_line_pass_ahead_hands_on_its_error(tmp_path: Path) -> None:
    def broken(lines: Sequence[str], base: str) -> list[int]:
        raise RuntimeError("no counter")

    content = tmp_path / "content"
    content.write_bytes(b"a\nb\n")
    work = tmp_path / "work"
    work.mkdir()
    ahead = L.LinesAhead(content, [BASE], work, broken)
    with pytest.raises(RuntimeError, match="no counter"):
        ahead.take()
    ahead.discard()
    assert list(work.iterdir()) == []
