"""Re-indenting from a file (scratch.reindent.reindent_file): the result and errors of
``reindent`` on the same bytes, at any offset in the file, in C (which reads through a map and
drops the pages it has passed) and in Python; and what ingest reads from the stored file
afterwards (the big arrays kept as text, the slices the object writer reads) is that file."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from scratch import reindent as R
from scratch.errors import JsonError
from scratch.index.jsonskel import BIG_ARRAY
from scratch.index.kube import KubeTally
from scratch.index.normalizer import SLICE_BYTES, FileSlices
from scratch.index.schema import Union
from scratch.index.textitems import (
    Readers,
    TextItems,
    lazy_parts,
    prepare_lazily,
    scan_lazily,
)

IMPLS = [pytest.param(None, id="default"), pytest.param(R.reindent_py, id="python")]
DOCS = [b'{"a": [1, 2.50, "x\\u00e9\xc3\xa9"], "b": {}}', b"  [ ]  ", b'"just a string"',
        b"[" + b"[" * 40 + b"]" * 40 + b"]", b'{"k": 1e400, "k": -0}']
BAD = [(b'{"a": 1,}', "Expecting property name enclosed in double quotes"),
       (b'["\xff"]', "Invalid UTF-8 in string"), (b"[1 2]", "Expecting ',' delimiter"),
       (b'["abc', "Unterminated string"), (b"[1]x", "Extra data")]


def _at(tmp_path: Path, data: bytes, lead: int) -> tuple[int, int]:
    """``data`` written after ``lead`` bytes of junk: (an open descriptor, its offset)."""
    path = tmp_path / f"doc-{lead}.bin"
    path.write_bytes(b"\xfe" * lead + data + b"\x00tail")
    return os.open(path, os.O_RDONLY), lead


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("lead", [0, 1, 4095, 4096, 4097])
def test_same_as_reindent_at_any_offset(impl, lead: int, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for data in DOCS:
        fd, off = _at(tmp_path, data, lead)
        try:
            got = R.reindent_file(fd, off, len(data), impl=impl)
        finally:
            os.close(fd)
        assert got == R.reindent(data, impl=impl)
    for data, message in BAD:
        fd, off = _at(tmp_path, data, lead)
        try:
            with pytest.raises(JsonError) as exc:
                R.reindent_file(fd, off, len(data), impl=impl)
        finally:
            os.close(fd)
        with pytest.raises(JsonError) as whole:
            R.reindent(data, impl=impl)
        assert exc.value.reason == whole.value.reason == message
        assert (exc.value.offset, exc.value.line, exc.value.column) == \
            (whole.value.offset, whole.value.line, whole.value.column)


@pytest.mark.parametrize("impl", IMPLS)
def test_limit_and_depth_bound_as_reindent(impl, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    deep = b"[" * 30 + b"]" * 30
    fd, off = _at(tmp_path, deep, 7)
    try:
        assert R.reindent_file(fd, off, len(deep), limit=100, impl=impl) == (b"", 59, R.TOO_BIG)
        with pytest.raises(JsonError) as exc:
            R.reindent_file(fd, off, len(deep), max_depth=10, impl=impl)
    finally:
        os.close(fd)
    assert exc.value.reason == "JSON nested too deeply (deeper than 10 levels from byte 10)"
    assert exc.value.offset == 10


@pytest.mark.skipif(not R.HAVE_C, reason="the C extension is not built here")
def test_generated_documents_match_across_the_pages_dropped(tmp_path: Path) -> None:
    """Past 16 MiB the C version drops pages behind it: a document that crosses two
    release steps, with strings, escapes and multi-byte characters on every page boundary
    region, gives reindent's bytes."""
    rng = random.Random(7)
    items = [{"s": "".join(rng.choice('ab "\\\n\t/é€😀') for _ in range(rng.randrange(40))),
              "n": rng.randrange(-10**20, 10**20), "f": rng.uniform(-1e9, 1e9),
              "a": [None, True, {"k": "v" * rng.randrange(200)}]} for _ in range(120_000)]
    data = json.dumps(items, ensure_ascii=False, indent=1).encode()
    assert len(data) > 24 << 20  # two pages-dropped steps (at 16 and 24 MiB)
    fd, off = _at(tmp_path, data, 3)
    try:
        assert R.reindent_file(fd, off, len(data)) == R.reindent(data)
    finally:
        os.close(fd)


@pytest.mark.skipif(not R.HAVE_C or not Path("/proc/self/status").exists(),
                    reason="the C extension is not built here (or no /proc)")
def test_the_input_is_not_resident_as_a_whole(tmp_path: Path) -> None:
    """Re-indenting 96 MB of already canonical text from a file raises the peak resident set
    by about the body (one copy), not the body and the input."""
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.write(b"[\n")
        line = b'  "' + b"x" * 60 + b'",\n'
        for _ in range((96 << 20) // len(line)):
            f.write(line)
        f.write(b'  "end"\n]')
    size = path.stat().st_size
    # VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's peak (kept over exec)
    script = ("import os, sys\n"
              "from scratch.reindent import reindent_file\n"
              "def hwm():\n"
              "    with open('/proc/self/status') as f:\n"
              "        return next(int(x.split()[1]) for x in f if x.startswith('VmHWM'))\n"
              "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
              "before = hwm()\n"
              "body = reindent_file(fd, 0, os.fstat(fd).st_size)[0]\n"
              "print(before, hwm(), len(body))\n")
    out = subprocess.run([sys.executable, "-c", script, str(path)], check=True,
                         capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(Path(R.__file__).parents[1])})
    before, after, n = (int(x) for x in out.stdout.split())
    assert n == size
    grown = (after - before) * 1024
    assert size <= grown < size + (40 << 20), (grown, size)


def test_detached_items_read_the_stored_file(tmp_path: Path) -> None:
    # ingest's order: the root parsed from the body, the body gone, the items scanned from
    # the stored file; the same results as scanning them from the body
    doc = {"kind": "List", "items": [{"i": i, "s": "x,\n" * (i % 7)} for i in range(400)]}
    body = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    readers = Readers(Union, KubeTally, BIG_ARRAY)
    whole = prepare_lazily(body, BIG_ARRAY, 1 << 10, 512)
    scan_lazily(whole, readers)
    assert isinstance(whole, dict) and isinstance(whole["items"], TextItems)
    value = prepare_lazily(body, BIG_ARRAY, 1 << 10, 512)
    assert isinstance(value, dict) and isinstance(value["items"], TextItems)
    assert value["items"].starts is None  # not scanned yet
    dest = tmp_path / "stored.json"
    dest.write_bytes(body + b"\n")
    for items in lazy_parts(value):
        items.detach(dest)
    del body
    scan_lazily(value, readers)
    items = value["items"]
    assert items.body is None
    assert (items.starts, items.lines, items.union) == (whole["items"].starts,
                                                         whole["items"].lines,
                                                         whole["items"].union)
    assert list(items) == doc["items"]
    assert items[399] == doc["items"][399]
    assert items[:3] == doc["items"][:3]


def test_file_slices_join_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    data = os.urandom(SLICE_BYTES // 3) * 7 + b"end"
    path.write_bytes(data)
    slices = FileSlices(path, len(data))
    assert len(slices) == -(-len(data) // SLICE_BYTES) == 3
    assert b"".join(slices) == data
    assert slices[-1] == data[2 * SLICE_BYTES:]
    assert b"".join(slices[1:]) == data[SLICE_BYTES:]
    with pytest.raises(IndexError):
        slices[3]
    short = FileSlices(path, len(data) + 1)
    with pytest.raises(OSError):
        short[2]


def test_what_written_started_reads_the_canonical_text_when_parsing_fails(
        tmp_path: Path) -> None:
    """``written`` is called while the big body is parsed; when both parsers then fail (here
    the standard library's, under a low recursion limit, for a 19-digit integer it alone
    reads exactly), the input is stored as received in a new file, the Normalized has no
    blob (so ingest drops what it started), and the started readers still read the whole
    canonical text they were handed."""
    import io

    from scratch.index.normalizer import normalize

    doc = (b'{"pad": "' + b"p" * 1_200_000 + b'", "big": 12345678901234567890, "d": '
           + b"[" * 600 + b"1" + b"]" * 600 + b"}")
    seen: list[bytes] = []
    dest = tmp_path / "stored"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        n = normalize(io.BytesIO(doc), dest,
                      written=lambda path, blob, parts: seen.append(b"".join(parts)))
    finally:
        sys.setrecursionlimit(limit)
    assert (n.format, n.layout, n.blob, dest.read_bytes() == doc) == ("text", "raw", None, True)
    assert seen == [R.reindent(doc)[0] + b"\n"]
