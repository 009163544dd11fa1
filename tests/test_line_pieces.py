"""A line too long for one answer is read in pieces with --fit, exactly once, under the cap."""

from __future__ import annotations

import shlex

import pytest

from tests.helpers import cli, count, shell_of, shells

CAP = 400
ENV = {"SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": str(CAP)}
LONG = " ".join(f"wörd{i} ☕ {i * 7}" for i in range(3000))  # ~30k tokens, multi-byte text
CONTENT = f"first line\n{LONG}\nthird line\n"


@pytest.fixture
def entry(scratch_home) -> str:
    assert cli("ingest", "e", "--store-always", "--format", "text", input=CONTENT).code == 0
    return "e"


def follow(cmd: str, json_mode: bool) -> list:
    """Every answer of a --fit chain, starting at ``cmd``."""
    answers = []
    while cmd:
        args = shlex.split(shell_of(cmd))[1:] + (["--json"] if json_mode else [])
        r = cli(*args, env=ENV)
        assert r.code == 0, (cmd, r.out[:300], r.err[-300:])
        if json_mode:
            assert r.json["meta"]["tokens"]["count"] <= CAP
            answers.append(r.json["data"])
            cmd = r.json["data"].get("next")
        else:
            assert count(r.text) <= CAP
            answers.append(r)
            nxt = [n for n in r.err.splitlines() if n.startswith("more: ")]
            cmd = nxt[0][len("more: "):] if nxt else None
    return answers


def test_following_next_covers_the_long_line_exactly_once(entry: str) -> None:
    answers = follow(f"scratch slice {entry} 1 3 --fit", json_mode=True)
    assert len(answers) > 5
    assert answers[0]["lines"] == ["first line"] and "line_part" not in answers[0]
    parts = [a for a in answers if "line_part" in a]
    assert [p["line_part"]["line"] for p in parts] == [2] * len(parts)
    assert parts[0]["line_part"]["from_byte"] == 0
    for a, b in zip(parts, parts[1:]):
        assert b["line_part"]["from_byte"] == a["line_part"]["to_byte"]  # no gap, no overlap
    assert parts[-1]["line_part"]["to_byte"] == parts[-1]["line_part"]["line_bytes"]
    assert "".join(p["lines"][0] for p in parts).encode() == LONG.encode()
    assert answers[-1]["lines"] == ["third line"] and "next" not in answers[-1]


def test_human_pieces_are_numbered_and_join_to_the_line(entry: str) -> None:
    answers = follow(f"scratch slice {entry} 2 2 --fit", json_mode=False)
    assert all(r.text.startswith("2:") for r in answers)
    assert "".join(r.text[2:-1] for r in answers) == LONG
    assert "more: scratch slice e 2 2 --from-byte " in answers[0].err


def test_head_fit_on_a_long_first_line_starts_the_pieces(scratch_home) -> None:
    assert cli("ingest", "h", "--store-always", "--format", "text",
               input=f"{LONG}\nnext\n").code == 0
    r = cli("head", "h", "-n", "2", "--fit", "--json", env=ENV)
    assert r.code == 0
    d = r.json["data"]
    assert d["line_part"]["line"] == 1 and d["line_part"]["from_byte"] == 0
    assert shell_of(d["next"]) == (f"scratch slice h 1 2 --from-byte {d['line_part']['to_byte']} "
                                  "--fit")


def test_from_byte_errors(entry: str) -> None:
    size = len(LONG.encode())
    r = cli("slice", entry, "2", "2", "--from-byte", str(size), "--json")
    assert r.code == 4
    assert r.json["error"]["code"] == "offset_out_of_range"
    assert (r.json["error"]["line_bytes"], r.json["error"]["from_byte"]) == (size, size)
    r = cli("slice", entry, "2", "2", "--from-byte", "-1", "--json")
    assert r.code == 2 and r.json["error"]["code"] == "invalid_argument"


def test_a_piece_never_splits_a_character(entry: str) -> None:
    # start one byte into the two-byte "ö" of the first word: the piece begins there as asked,
    # and every boundary the chain chooses itself falls between characters
    answers = follow(f"scratch slice {entry} 2 2 --from-byte 2 --fit", json_mode=True)
    raw = LONG.encode()
    for a in answers[:-1]:
        cut = a["line_part"]["to_byte"]
        assert not 0x80 <= raw[cut] < 0xC0  # the next piece starts on a character


def test_a_refused_long_line_suggests_reading_it_in_pieces(entry: str) -> None:
    r = cli("slice", entry, "2", "3", "--json", env=ENV)
    assert r.code == 3 and r.json["error"]["code"] == "slice_too_large"
    assert "scratch slice e 2 3 --fit" in shells(r.json["error"]["suggestions"])
    assert follow("scratch slice e 2 3 --fit", json_mode=True)[-1]["lines"] == ["third line"]


def test_tail_fit_over_a_long_line_also_comes_in_pieces(entry: str) -> None:
    # tail -n 2 is lines 2..3; --fit pages them from the first, so the long line 2 in pieces
    answers = follow(f"scratch tail {entry} -n 2 --fit", json_mode=True)
    parts = [a for a in answers if "line_part" in a]
    assert "".join(p["lines"][0] for p in parts).encode() == LONG.encode()
    assert answers[-1]["lines"] == ["third line"]
    r = cli("tail", entry, "-n", "2", "--json", env=ENV)
    assert r.code == 3 and r.json["error"]["code"] == "tail_too_large"
    assert shells(r.json["error"]["suggestions"]) == ["scratch tail e -n 1"]  # the short last line


def test_a_grep_match_on_a_long_line_points_to_its_pieces(entry: str) -> None:
    for extra in ([], ["--fit"]):
        r = cli("grep", entry, "wörd5 ", *extra, "--json", env=ENV)
        assert r.code == 3 and r.json["error"]["code"] == "grep_too_large"
        assert shell_of(r.json["error"]["suggestions"][0]) == "scratch slice e 2 2 --fit"
