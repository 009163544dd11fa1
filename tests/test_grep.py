"""grep: options, region merging, linear time, pattern errors, and buffer == lines == re/grep."""

from __future__ import annotations

import mmap
import re
import shutil
import subprocess
from bisect import bisect_right
from pathlib import Path

import pytest

from scratch.errors import ExitCode, InvalidPattern
from scratch.query.grep import (
    GrepLine,
    GrepOptions,
    Region,
    compile_pattern,
    grep_buffer,
    grep_lines,
    iter_selected_lines,
    matching_line_numbers,
)
from tests.conftest import CORPUS  # ../shared/corpus, or $SCRATCH_CORPUS

TEXT = b"".join(f"line {i} {'ERROR' if i in (5, 9, 20) else 'ok'}\n".encode() for i in range(1, 31))


def numbered(buf: bytes) -> list[tuple[int, bytes]]:
    """Lines as grep counts them, computed independently of the engine."""
    parts = buf.split(b"\n")
    if parts[-1] == b"":
        parts.pop()  # no line after a final newline (and none in an empty text)
    return list(enumerate(parts, 1))


def shape(regions: list[Region]) -> list[list[tuple[int, bool]]]:
    return [[(line.lineno, line.match) for line in r.lines] for r in regions]


def both(buf: bytes, options: GrepOptions) -> list[Region]:
    """Run the buffer engine and the line engine; they must agree exactly."""
    from_buffer = list(grep_buffer(buf, options))
    from_lines = list(grep_lines(numbered(buf), options))
    assert [r.lines for r in from_buffer] == [r.lines for r in from_lines]
    return from_buffer


def test_plain_matches_are_numbered_and_marked() -> None:
    regions = both(TEXT, GrepOptions("ERROR"))
    assert shape(regions) == [[(5, True)], [(9, True)], [(20, True)]]
    assert regions[0].lines[0] == GrepLine(5, b"line 5 ERROR", True)
    assert regions[0].lines[0].display() == "line 5 ERROR"


def test_context_regions_and_merging() -> None:
    assert shape(both(TEXT, GrepOptions("ERROR", context=1))) == [
        [(4, False), (5, True), (6, False)],
        [(8, False), (9, True), (10, False)],
        [(19, False), (20, True), (21, False)],
    ]
    # With 2 lines of context, 5 and 9 overlap (7 is shared) and merge; 20 stays apart.
    assert shape(both(TEXT, GrepOptions("ERROR", context=2))) == [
        [(3, False), (4, False), (5, True), (6, False), (7, False), (8, False), (9, True),
         (10, False), (11, False)],
        [(18, False), (19, False), (20, True), (21, False), (22, False)],
    ]
    # Touching (after-context of 5 ends at 6, before-context of 8 starts at 7): merged, as grep.
    text = b"".join(b"x\n" if i not in (5, 8) else b"hit\n" for i in range(1, 12))
    assert shape(both(text, GrepOptions("hit", context=1))) == [
        [(4, False), (5, True), (6, False), (7, False), (8, True), (9, False)]]
    # Asymmetric -A / -B, clipped at the start and the end of the text.
    assert shape(both(TEXT, GrepOptions("line (1|30) ", before=3, after=0))) == [
        [(1, True)], [(27, False), (28, False), (29, False), (30, True)]]
    assert shape(both(TEXT, GrepOptions("line 30 ", after=5))) == [[(30, True)]]


def test_invert_max_count_and_trailing_context() -> None:
    inv = both(TEXT, GrepOptions("ok", invert=True))
    assert [line.lineno for r in inv for line in r.lines] == [5, 9, 20]
    assert shape(both(TEXT, GrepOptions("ERROR", max_count=2, context=1))) == [
        [(4, False), (5, True), (6, False)], [(8, False), (9, True), (10, False)]]
    # grep -m 1 -A 2 still prints the trailing context, even a line that would match.
    text = b"a\nb\na\nc\n"
    assert shape(both(text, GrepOptions("a", max_count=1, after=2))) == [
        [(1, True), (2, False), (3, False)]]
    assert both(TEXT, GrepOptions("ERROR", max_count=0)) == []
    # -v -m: the first 3 non-matching lines, one region since they are consecutive.
    assert shape(both(TEXT, GrepOptions("ERROR", invert=True, max_count=3))) == [
        [(1, True), (2, True), (3, True)]]


def test_fixed_ignore_case_and_unicode() -> None:
    text = "a.b(c\naxb(c\nÉté\nété\nERROR\n".encode()
    assert [ln.lineno for r in both(text, GrepOptions("a.b(", fixed=True)) for ln in r.lines] == [1]
    assert [ln.lineno for r in both(text, GrepOptions("a.b", fixed=False)) for ln in r.lines] == [1, 2]
    assert [ln.lineno for r in both(text, GrepOptions("été", ignore_case=True)) for ln in r.lines] == [3, 4]
    assert [ln.lineno for r in both(text, GrepOptions("error", ignore_case=True, fixed=True))
            for ln in r.lines] == [5]
    assert [ln.lineno for r in both(text, GrepOptions("^.t.$")) for ln in r.lines] == [3, 4]  # . is a char


def test_lines_edges() -> None:
    text = b"alpha\n\nbeta\r\n\ngamma"  # CRLF line, empty lines, no final newline
    assert [ln.lineno for r in both(text, GrepOptions("^$")) for ln in r.lines] == [2, 4]
    assert [ln.lineno for r in both(text, GrepOptions("")) for ln in r.lines] == [1, 2, 3, 4, 5]
    assert [ln.lineno for r in both(text, GrepOptions("a$")) for ln in r.lines] == [1, 5]
    assert [ln.lineno for r in both(text, GrepOptions("beta$")) for ln in r.lines] == []  # \r, as grep
    beta = both(text, GrepOptions("beta"))[0].lines[0]
    assert beta.text == b"beta\r" and beta.display() == "beta"
    # Nothing matches across a newline, even with \s or [^x].
    text2 = b"a\nb\na b\n"
    assert [ln.lineno for r in both(text2, GrepOptions(r"a\sb")) for ln in r.lines] == [3]
    assert [ln.lineno for r in both(text2, GrepOptions(r"a[^x]b")) for ln in r.lines] == [3]
    assert both(b"", GrepOptions("")) == []
    assert [ln.lineno for r in both(b"\n", GrepOptions("")) for ln in r.lines] == [1]


def test_binary_safe() -> None:
    text = b"ok\n\xff\xfe bad \x00 utf8 ERROR\nok\n"
    (region,) = both(text, GrepOptions("ERROR"))
    assert region.lines[0].text == b"\xff\xfe bad \x00 utf8 ERROR"
    assert region.lines[0].display() == "\ufffd\ufffd bad \x00 utf8 ERROR"
    assert [ln.lineno for r in both(text, GrepOptions("bad . utf8")) for ln in r.lines] == [2]


def test_str_lines_with_newlines() -> None:
    regions = list(grep_lines([(1, "x\n"), (2, "hit\n"), (3, "y")], GrepOptions("hit$")))
    assert shape(regions) == [[(2, True)]]
    assert regions[0].lines[0].text == b"hit"


@pytest.mark.timeout(20)
def test_catastrophic_backtracking_pattern_is_linear() -> None:
    line = b"a" * 200_000 + b"b"
    text = line + b"\n" + b"a" * 50_000 + b"\n"
    for pattern in ["(a+)+$", "(a|aa)+$", "(a*)*b$", "(x+x+)+y"]:
        got = [ln.lineno for r in both(text, GrepOptions(pattern)) for ln in r.lines]
        assert got == {"(a+)+$": [2], "(a|aa)+$": [2], "(a*)*b$": [1], "(x+x+)+y": []}[pattern]


@pytest.mark.parametrize(
    ("pattern", "position", "words"),
    [
        ("a(", 1, "missing ), unterminated subpattern"),
        ("[a", 0, "unterminated character set"),
        ("*a", 0, "nothing to repeat"),
        ("ab{2,1}", 3, "min repeat greater than max repeat"),
        ("x)", 1, "unbalanced parenthesis"),
    ],
)
def test_invalid_pattern_position_and_hint(pattern: str, position: int, words: str) -> None:
    with pytest.raises(InvalidPattern) as info:
        compile_pattern(GrepOptions(pattern))
    err = info.value
    assert err.code == "invalid_pattern" and err.exit_code == ExitCode.USAGE
    assert err.details["position"] == position
    assert words in err.message and f"position {position}" in err.message
    assert "fixed text" in err.details["hint"]
    assert err.details["pattern"] == pattern
    # ... and -F searches for exactly that text.
    hits = list(grep_lines([(1, f"x{pattern}y")], GrepOptions(pattern, fixed=True)))
    assert shape(hits) == [[(1, True)]]


@pytest.mark.parametrize(
    ("pattern", "position", "feature"),
    [
        (r"(a)\1", 3, "backreference"),
        ("foo(?=bar)", 3, "lookahead"),
        ("foo(?!bar)", 3, "negative lookahead"),
        ("(?<=a)b", 0, "lookbehind"),
        ("(?<!a)b", 0, "negative lookbehind"),
        ("(?P<x>a)(?P=x)", 8, "named backreference"),
        ("(?>ab)c", 0, "atomic group"),
        ("a++", 2, "possessive"),
        (r"[\1(?=]x(?=y)", 8, "lookahead"),  # inside a class these are plain characters
        (r"a{1001}", 1, "invalid repetition size"),
    ],
)
def test_unsupported_by_linear_engine(pattern: str, position: int, feature: str) -> None:
    with pytest.raises(InvalidPattern) as info:
        compile_pattern(GrepOptions(pattern))
    err = info.value
    assert err.code == "invalid_pattern"
    assert err.details["position"] == position
    assert feature in err.message
    assert "not supported by the linear-time regex engine" in err.message
    assert err.details["engine"] == "re2"
    assert "fixed text" in err.details["hint"]


def test_selected_line_offsets() -> None:
    got = list(iter_selected_lines(TEXT, GrepOptions("ERROR")))
    assert [n for n, _, _ in got] == [5, 9, 20]
    assert [TEXT[a:b] for _, a, b in got] == [b"line 5 ERROR", b"line 9 ERROR", b"line 20 ERROR"]


def test_matcher_spans() -> None:
    m = compile_pattern(GrepOptions("o+"))
    assert m.spans(b"foo boo x") == [(1, 3), (5, 7)]
    assert compile_pattern(GrepOptions("x*")).spans(b"axxb") == [(1, 3)]
    assert compile_pattern(GrepOptions("O", ignore_case=True, fixed=True)).spans(b"oO") == [(0, 1), (1, 2)]


def test_resume_and_line_starts_and_mmap(tmp_path: Path) -> None:
    starts = [0] + [i + 1 for i, b in enumerate(TEXT) if b == 10][:-1]
    full = list(grep_buffer(TEXT, GrepOptions("ERROR", context=1)))
    with_index = list(grep_buffer(TEXT, GrepOptions("ERROR", context=1), line_starts=starts))
    assert [r.lines for r in with_index] == [r.lines for r in full]
    # Resume at line 9: the same answer from there on, context never reaching before line 9.
    resumed = list(grep_buffer(TEXT, GrepOptions("ERROR", context=1), start=starts[8], first_lineno=9))
    assert shape(resumed) == [[(9, True), (10, False)], [(19, False), (20, True), (21, False)]]
    resumed_idx = list(grep_buffer(TEXT, GrepOptions("ERROR", context=1), start=starts[8],
                                   first_lineno=9, line_starts=starts))
    assert [r.lines for r in resumed_idx] == [r.lines for r in resumed]
    f = tmp_path / "t.log"
    f.write_bytes(TEXT)
    with f.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        assert [r.lines for r in grep_buffer(mm, GrepOptions("ERROR", context=1))] == [
            r.lines for r in full]
        assert matching_line_numbers(mm, GrepOptions("ok", invert=True)) == [5, 9, 20]


# ------------------------------------------------------------------------ corpus differential

PATTERNS = [
    ("error", {}),
    ("ERROR|WARN", {}),
    ("error", {"ignore_case": True}),
    (r"user=[a-z]+", {}),
    (r"^[0-9]{4}", {}),
    (r"[0-9]+$", {}),
    (r"Failed password for .* from 1", {}),
    (r"\bblk_-?[0-9]+\b", {}),
    (r"session opened", {"fixed": True}),
    (r"a.b(", {"fixed": True}),
    ("INFO", {"invert": True}),
    ("", {}),
    (r"\s$", {}),
    (r"abc{,2}def", {}),  # {,n} means different things to Python and RE2: must not matter
]


def _corpus_logs() -> list[Path]:
    logs = sorted((CORPUS / "logs" / "loghub").glob("*.log"))
    if not logs:
        pytest.skip("corpus logs not available")
    return logs[:6] + [CORPUS / "logs" / "app" / "auth.log"]


@pytest.mark.corpus
def test_buffer_matches_python_re_per_line_on_logs() -> None:
    for path in _corpus_logs():
        if not path.is_file():
            continue
        buf = path.read_bytes()
        lines = numbered(buf)
        starts = [0] + [m.end() for m in re.finditer(b"\n", buf)][: len(lines) - 1]
        for pattern, kw in PATTERNS:
            opts = GrepOptions(pattern, **kw)
            flags = re.IGNORECASE if kw.get("ignore_case") else 0
            rx = re.compile(re.escape(pattern.encode()) if kw.get("fixed") else pattern.encode(), flags)
            want = [n for n, t in lines if bool(rx.search(t)) != bool(kw.get("invert"))]
            assert matching_line_numbers(buf, opts) == want, (path.name, pattern)
            assert matching_line_numbers(buf, opts, line_starts=starts) == want
            ctx = GrepOptions(pattern, context=2, max_count=40, **kw)
            from_buffer = [r.lines for r in grep_buffer(buf, ctx)]
            assert from_buffer == [r.lines for r in grep_lines(lines, ctx)], (path.name, pattern)
            for region in from_buffer:
                for line in region:
                    assert line.text == lines[line.lineno - 1][1]


@pytest.mark.corpus
@pytest.mark.skipif(shutil.which("grep") is None, reason="no grep binary")
def test_regions_match_gnu_grep_context_output() -> None:
    path = CORPUS / "logs" / "app" / "auth.log"
    if not path.is_file():
        pytest.skip("corpus log not available")
    buf = path.read_bytes()
    for pattern, args in [("Invalid user", ["-C", "2"]), ("root", ["-C", "1", "-m", "50"]),
                          ("sshd", ["-v", "-A", "1", "-B", "2"])]:
        out = subprocess.run(["grep", "-n", "-E", *args, pattern, str(path)],
                             capture_output=True, check=False,
                             env={"LC_ALL": "C.UTF-8"}).stdout
        want: list[list[tuple[int, bool]]] = [[]]
        for raw in out.split(b"\n")[:-1]:
            if raw == b"--":
                want.append([])
                continue
            m = re.match(rb"(\d+)([:-])", raw)
            assert m
            want[-1].append((int(m.group(1)), m.group(2) == b":"))
        kw: dict[str, object] = {"invert": "-v" in args}
        for flag, name in (("-C", "context"), ("-m", "max_count"), ("-A", "after"), ("-B", "before")):
            if flag in args:
                kw[name] = int(args[args.index(flag) + 1])
        got = shape(list(grep_buffer(buf, GrepOptions(pattern, **kw))))  # type: ignore[arg-type]
        assert got == want, pattern


def test_bisect_line_numbers_helper_agrees() -> None:
    # The line-start convention documented for grep_buffer: bisect_right(starts, offset) is the
    # 1-based number of the line holding ``offset``.
    starts = [0, 5, 9]
    assert [bisect_right(starts, o) for o in (0, 4, 5, 9, 12)] == [1, 1, 2, 3, 3]


def test_separators_only_between_regions_with_context(scratch_home) -> None:
    from tests.helpers import cli
    assert cli("ingest", "n", "--store-always", input="".join(f"{i}\n" for i in range(1, 101))
               ).code == 0
    assert cli("grep", "n", "^(5|50|90)$").text == "5:5\n50:50\n90:90\n"  # as GNU grep -n
    assert cli("grep", "n", "^(5|50)$", "-C", "1").text == "4-4\n5:5\n6-6\n--\n49-49\n50:50\n51-51\n"
