"""Every answer on a long line costs what it shows (issue 21, point 1).

One entry is a single ~6 MB line of words and spaces (no safe cut anywhere in it: the worst
case for cutting), another a JSON document holding one ~6 MB string, a third a 300 KB line
read in pieces to its end. Behaviour is asserted, not timing: refusals come from the index's
counts with a suggestion that runs, --fit pieces cover a line exactly once within the cap and
count what the real tokenizer counts, grep shows a bounded window around its match, and the
fitting probes read a small multiple of the cap's bytes, never the line (spied on in-process).
"""

from __future__ import annotations

import json
import random
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli, shell_of

CAP = 2000
ENV = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": str(CAP),
       "SCRATCH_BUDGET_CONTEXT_WINDOW": "1000000000"}
SYLLABLES = ["lo", "rem", "ip", "sum", "do", "lor", "sit", "am", "et", "con", "sec", "te",
             "tur", "ad", "pi", "sc", "ing", "el", "it", "wö", "☕"]
BIG = 6_000_000


def words(size: int, seed: int) -> str:
    rng = random.Random(seed)
    vocab = ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4)))
             for _ in range(3000)]
    out: list[str] = []
    n = 0
    needle = int(size * 0.9)
    while n < size:
        w = rng.choice(vocab)
        if needle and n >= needle:
            w, needle = "NEEDLE", 0
        out.append(w)
        n += len(w.encode()) + 1
    return " ".join(out)


TEXT = words(BIG, 1)
STRING = words(BIG, 2)
MIDDLE = words(300_000, 3)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("long-lines") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCRATCH_HOME", str(home))
        for name, data, fmt in (("text", TEXT + "\n", "text"),
                                ("doc", json.dumps({"s": STRING}), "json"),
                                ("mid", f"first\n{MIDDLE}\nlast\n", "text")):
            r = cli("ingest", name, "--store-always", "--format", fmt, input=data, env=ENV)
            assert r.code == 0, r.err[-500:]
    return home


@pytest.fixture(autouse=True)
def shared(store: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCRATCH_HOME", str(store))
    return store


def run(*args: str) -> Any:
    r = cli(*args, env=ENV)
    assert r.code in (0, 3), (args, r.out[:300], r.err[-300:])
    return r


def real_count(text: str) -> int:
    """tiktoken's own count (encode_ordinary), not the counter the answer used."""
    from scratch.tokens.tokenizer import get_tokenizer
    return len(get_tokenizer("o200k_base").encode(text))


def footer_tokens(err: str) -> int:
    return int(err.rsplit("-- ", 1)[1].split(" tokens")[0].replace(",", ""))


class Reads:
    """Bytes the index reader and the cutting hand out, and characters decoded for counting."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from scratch.index.reader import IndexReader
        from scratch.tokens import stream
        self.reads: list[int] = []
        self.decoded: list[int] = []
        for name in ("read_line_part", "read_bytes"):
            original = getattr(IndexReader, name)

            def spy(*a: Any, _original: Any = original, **kw: Any) -> bytes:
                out = _original(*a, **kw)
                self.reads.append(len(out))
                return out  # type: ignore[no-any-return]

            monkeypatch.setattr(IndexReader, name, spy)
        decode = stream.decode_text

        def decoded(data: bytes) -> str:
            self.decoded.append(len(data))
            return decode(data)

        monkeypatch.setattr(stream, "decode_text", decoded)


# -- refusals ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["head", "text", "-n", "1"], ["tail", "text", "-n", "1"],
                                  ["slice", "doc", "2", "2"]])
def test_a_refusal_comes_from_the_index_and_suggests_pieces_that_run(
        args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Reads(monkeypatch)
    r = run(*args, "--json")
    assert r.code == 3
    err = r.json["error"]
    assert err["code"] == f"{args[0]}_too_large" and err["limit"] == CAP
    line = int(args[2]) if args[0] == "slice" else 1
    assert err["estimated_tokens"] > 1_000_000  # the index's count of the line
    # sizing the suggestions read windows of the line, not the line
    assert sum(spy.reads) < 200_000 and sum(spy.decoded) < 200_000, (spy.reads, spy.decoded)
    fit = f"scratch slice {args[1]} {line} {line} --fit"
    shells = [shell_of(s) for s in err["suggestions"]]
    assert fit in shells, shells
    follow = run(*shlex.split(fit)[1:], "--json")
    assert follow.code == 0
    part = follow.json["data"]["line_part"]
    assert part["line"] == line and part["from_byte"] == 0 and part["to_byte"] > 0


# -- pieces -----------------------------------------------------------------------------------

def follow_pieces(cmd: str, most: int | None = None) -> list[tuple[str, dict[str, Any], int]]:
    """(piece text, line_part, the answer's stated count) of each answer of a --fit chain."""
    out = []
    while cmd and (most is None or len(out) < most):
        args = shlex.split(cmd)[1:]
        human = run(*args)
        assert human.code == 0, human.err[-300:]
        j = run(*args, "--json")
        data = j.json["data"]
        assert j.json["meta"]["tokens"]["count"] <= CAP
        stated = footer_tokens(human.err)
        assert stated <= CAP
        if "line_part" in data:  # a piece is priced by counting it: the real count of its text
            assert stated == real_count(human.text), cmd
            out.append((data["lines"][0], data["line_part"], stated))
        nxt = data.get("next")
        cmd = shell_of(nxt) if nxt else ""
    return out


def test_pieces_of_a_line_cover_it_exactly_once_within_the_cap() -> None:
    pieces = follow_pieces("scratch slice mid 1 3 --fit")
    assert len(pieces) > 20
    for (_, a, _), (_, b, _) in zip(pieces, pieces[1:]):
        assert b["from_byte"] == a["to_byte"]  # no gap, no overlap
    assert pieces[0][1]["from_byte"] == 0
    assert pieces[-1][1]["to_byte"] == pieces[-1][1]["line_bytes"] == len(MIDDLE.encode())
    assert "".join(text for text, _, _ in pieces) == MIDDLE
    for text, part, _ in pieces:
        assert len(text.encode()) == part["to_byte"] - part["from_byte"]
        assert real_count(text) <= CAP
    # full pieces (followed in --json, whose envelope and escapes take their share of the cap)
    assert all(real_count(text) >= CAP // 2 for text, _, _ in pieces[1:-1]), \
        [real_count(text) for text, _, _ in pieces]


@pytest.mark.parametrize("start", ["scratch slice text 1 1 --fit",
                                   f"scratch slice text 1 1 --from-byte {BIG // 2 + 1} --fit",
                                   "scratch head text -n 1 --fit",
                                   "scratch tail text -n 1 --fit",
                                   "scratch slice doc 2 2 --fit",
                                   f"scratch slice doc 2 2 --from-byte {BIG // 2} --fit"])
def test_pieces_of_a_6_mb_line_follow_on_and_read_a_window(
        start: str, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Reads(monkeypatch)
    pieces = follow_pieces(start, most=3)
    assert len(pieces) == 3
    line = TEXT if " text " in start else None
    for (_, a, _), (_, b, _) in zip(pieces, pieces[1:]):
        assert b["from_byte"] == a["to_byte"]
    for text, part, _ in pieces:
        assert real_count(text) <= CAP
        if line is not None:
            assert text.encode() == line.encode()[part["from_byte"]:part["to_byte"]]
    if " doc " in start and "--from-byte" not in start:
        assert pieces[0][0].startswith('  "s": "')
    # six answers (three in each rendering), each a few probes: windows, never the line
    window = 4096 + 8 * CAP
    assert max(spy.reads) <= 4 * window and max(spy.decoded) <= 4 * window
    assert sum(spy.reads) <= 6 * 4 * window, spy.reads
    assert sum(spy.decoded) <= 6 * 12 * window, spy.decoded


def test_one_probe_reads_a_window_not_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from scratch.answers.lines.pieces import LinePiece
    from scratch.index.reader import IndexReader
    calls: list[int] = []
    original = IndexReader.read_line_part

    def spy(self: Any, lineno: int, from_byte: int, max_bytes: int) -> bytes:
        calls.append(max_bytes)
        return original(self, lineno, from_byte, max_bytes)

    monkeypatch.setattr(IndexReader, "read_line_part", spy)
    pieces: list[int] = []
    original_piece = LinePiece._piece

    def piece(self: LinePiece, k: int) -> bytes:
        pieces.append(k)
        return original_piece(self, k)

    monkeypatch.setattr(LinePiece, "_piece", piece)
    r = run("slice", "text", "1", "1", "--fit")
    assert r.code == 0
    assert len(set(pieces)) >= 2  # the fitting loop probed several sizes ...
    assert len(calls) <= 2 and max(calls) <= 4 * (4096 + 8 * CAP)  # ... on one shared window


# -- grep -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,line", [("text", 1), ("doc", 2)])
def test_grep_on_a_long_line_shows_a_window_around_the_match(name: str, line: int) -> None:
    source = TEXT if name == "text" else None
    r = run("grep", name, "NEEDLE", "-m", "1", "--json")
    assert r.code == 0
    (region,) = r.json["data"]["regions"]
    (shown,) = region["lines"]
    part = shown["line_part"]
    assert shown["line"] == part["line"] == line and shown["match"]
    assert "NEEDLE" in shown["text"]
    assert part["to_byte"] - part["from_byte"] <= 256 + 512 + 256
    assert part["line_bytes"] > BIG
    if source is not None:
        assert shown["text"].encode() == source.encode()[part["from_byte"]:part["to_byte"]]
    assert r.json["meta"]["tokens"]["count"] < 1000
    human = run("grep", name, "NEEDLE", "-m", "1")
    assert human.code == 0
    assert human.text.startswith(f"{line}:…") and human.text.rstrip("\n").endswith("…")
    # priced as grep prices lines (per line, plus its number): the window's own count
    assert abs(footer_tokens(human.err) - real_count(human.text)) <= 2
    hint = f"in pieces: scratch slice {name} {line} {line} --from-byte {part['from_byte']} --fit"
    assert hint in human.err
    follow = run(*shlex.split(hint.split(": ", 1)[1])[1:], "--json")
    assert follow.code == 0
    assert follow.json["data"]["lines"][0].startswith(shown["text"][:100])


def test_grep_all_over_long_lines_is_bounded() -> None:
    r = run("grep", "--all", "(a+)+$|NEEDLE", "--json")
    assert r.code == 0, r.out[:300]
    entries = {e["name"]: e for e in r.json["data"]["entries"]}
    assert {"text", "doc"} <= set(entries)
    for name in ("text", "doc"):
        for region in entries[name]["regions"]:
            for ln in region["lines"]:
                assert len(ln["text"].encode()) <= 1024 and "line_part" in ln
