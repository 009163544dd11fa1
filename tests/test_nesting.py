"""Nesting never exhausts memory: any depth of ``[``/``{`` is stored, as text past the depth
scratch stores as structure, with the reason and the position (issue 21, point 2).

Before the pre-scan (:mod:`scratch.formats.nesting`) a 100 KB input of 100,000 ``[`` took
11-23 s and 4.2 GB RSS to be stored as text (the sniffer laid out the canonical text of its
first 64 KB: 4 GB of indentation), and under a 4 GiB address-space limit it ended in
``internal_error: unexpected MemoryError``; YAML flow collections 50,000 deep crashed the
process (libyaml's composer recursing in C). The inputs are generated here; the JSONTestSuite
file itself is tried when ../shared/corpus is there. Each ingest runs as a real process under
``RLIMIT_AS`` = 1 GiB. The suite runs three of them; every case as a process (and the
benchmark's figures: tests/bench/bench_nesting.py) under ``SCRATCH_SLOW=1 -m slow``.
"""

from __future__ import annotations

import io
import os
import random
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from scratch.formats.nesting import MAX_DEPTH, _place, too_deep
from scratch.index.normalizer import normalize
from tests.conftest import REPO
from tests.helpers import cli
from tests.nesting_support import cases

ADDRESS_SPACE = 1 << 30
full_size = pytest.mark.skipif(os.environ.get("SCRATCH_SLOW") != "1",
                               reason="every case as a process: set SCRATCH_SLOW=1")


def _line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


# ---------------------------------------------------------------------------------------------
# the pre-scan


def test_the_pre_scan_counts_levels_outside_strings() -> None:
    from tests import nesting_support

    assert nesting_support.MAX_DEPTH == MAX_DEPTH  # the cases place their deep bracket by it
    assert too_deep(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is None
    assert too_deep(b"[" * (MAX_DEPTH + 1)) == MAX_DEPTH
    assert too_deep(b"[]" * 100_000) is None  # many brackets, no depth
    assert too_deep(b'["' + b"[" * 5000 + b'"]') is None  # in a string
    assert too_deep(b'["\\"' + b"[" * 5000 + b'"]') is None  # after an escaped quote
    assert too_deep(b'["\\\\"' + b"[" * 5000) == 5 + MAX_DEPTH - 1  # after an escaped backslash
    assert too_deep(b'"' + b"[" * 5000) is None  # an unterminated string
    assert too_deep(b"]" * 5000 + b"{" * 5000) == 5000 + MAX_DEPTH  # stray closers count nothing
    assert too_deep(b"[" * 500 + b"]" * 500 + b"[" * 500) is None
    assert too_deep(b"[" * 10, 3) == 3


def test_the_fast_path_and_the_placing_loop_agree() -> None:
    """The C-speed passes decide, the token loop places: on random bracket soup (quotes,
    escapes, stray closers) both give the same answer at a small limit."""
    rng = random.Random(21)
    for _ in range(4000):
        data = bytes(rng.choice(b'[]{}"\\x\n') for _ in range(rng.randrange(60)))
        limit = rng.randrange(1, 6)
        assert too_deep(data, limit) == _place(data, limit), (data, limit)


def test_a_document_of_many_containers_is_not_too_deep() -> None:
    data = orjson.dumps([{"id": i, "tags": ["a", "b[", {"x": [1, 2]}], "s": 'q"['}
                         for i in range(20_000)])
    assert too_deep(data) is None


# ---------------------------------------------------------------------------------------------
# in process: every case stored, with the reason and the position, in a bounded memory


def _traced(data: bytes, dest: Path) -> tuple[Any, int]:
    """normalize(data) and the peak of what Python allocated meanwhile (modules imported first)."""
    normalize(io.BytesIO(b"[" * 2000), dest)
    normalize(io.BytesIO(b"key: [1]\n"), dest)
    tracemalloc.start()
    try:
        n = normalize(io.BytesIO(data), dest)
        return n, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", list(cases()))
def test_every_depth_is_stored_with_the_reason_and_the_position(name: str,
                                                                 tmp_path: Path) -> None:
    data, offset = cases()[name]
    dest = tmp_path / "stored"
    n, peak = _traced(data, dest)
    assert dest.read_bytes() == data  # byte for byte
    # was gigabytes; now what one line of plain text of that size costs, and a little more
    text_peak = _traced(b"x" * len(data), tmp_path / "text")[1]
    assert peak < text_peak + 16 * len(data), (peak, text_peak)
    if name == "ndjson_line":  # one line of 13 is not JSON: NDJSON, with a warning
        assert n.format == "ndjson"
        assert f"line {_line(data, offset)}: JSON nested too deeply" in n.warnings[0]
        assert f"from byte {offset})" in n.warnings[0]
        return
    assert n.format == "text"
    assert n.parse_error is not None
    assert n.parse_error["offset"] == offset
    assert n.parse_error["line"] == _line(data, offset)
    assert "nested too deeply" in n.parse_error["message"]
    assert f"from byte {offset})" in n.warnings[0]
    assert f"at line {_line(data, offset)}, column" in n.warnings[0]


def test_a_syntax_error_before_the_deep_part_is_the_reason(tmp_path: Path) -> None:
    data = b'[1 2, ' + b"[" * 5000
    n = normalize(io.BytesIO(data), tmp_path / "stored", declared="json")
    assert n.format == "text" and n.parse_error is not None
    assert (n.parse_error["message"], n.parse_error["offset"]) == ("Expecting ',' delimiter", 3)


def test_as_deep_as_the_limit_is_still_json(tmp_path: Path) -> None:
    data = b"[" * MAX_DEPTH + b"1" + b"]" * MAX_DEPTH
    assert normalize(io.BytesIO(data), tmp_path / "a").format == "json"
    data = b'{"k": ' * MAX_DEPTH + b"1" + b"}" * MAX_DEPTH
    assert normalize(io.BytesIO(data), tmp_path / "b").format == "json"


# ---------------------------------------------------------------------------------------------
# real processes under a 1 GiB address-space limit


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def ingest_limited(data: bytes, name: str) -> dict[str, object]:
    """``scratch --json ingest --store-always NAME`` in a child under RLIMIT_AS = 1 GiB (the
    store: $SCRATCH_HOME, the test's); its JSON envelope's data."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run([sys.executable, "-m", "scratch", "--json", "ingest", "--store-always",
                           name], input=data, capture_output=True, cwd=REPO, env=env,
                          preexec_fn=_limit, timeout=240)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    envelope = orjson.loads(proc.stdout)
    assert envelope["ok"], envelope
    return envelope["data"]  # type: ignore[no-any-return]


def check_stored(data: bytes, offset: int, name: str, scratch_home: Path) -> None:
    got = ingest_limited(data, name)
    assert got["stored"] is True and got["bytes"] == len(data)
    warnings = " ".join(got["warnings"])  # type: ignore[arg-type]
    assert "nested too deeply" in warnings and f"from byte {offset})" in warnings
    assert f"line {_line(data, offset)}" in warnings
    assert got["format"] == ("ndjson" if name == "ndjson_line" else "text")
    stored = next((scratch_home / "agents/default/files").glob(f"**/{name}"))
    assert stored.read_bytes() == data
    head = cli("--json", "head", name, "-n", "2", "--fit")
    assert head.code == 0, head.text
    schema = cli("--json", "schema", name)
    assert schema.code == 0, schema.text


@pytest.mark.parametrize("name", ["open_arrays", "yaml_flow"])
def test_deep_input_is_stored_under_a_1_gib_address_space(name: str,
                                                          scratch_home: Path) -> None:
    data, offset = cases()[name]
    check_stored(data, offset, name, scratch_home)


@pytest.mark.corpus
def test_the_jsontestsuite_100000_opening_arrays_under_1_gib(corpus_dir: Path,
                                                              scratch_home: Path) -> None:
    path = corpus_dir / "suites/jsontestsuite/test_parsing/n_structure_100000_opening_arrays.json"
    if not path.is_file():
        pytest.skip("the JSONTestSuite is not in the corpus")
    check_stored(path.read_bytes(), MAX_DEPTH, "jts", scratch_home)


@pytest.mark.slow
@full_size
@pytest.mark.parametrize("name", list(cases()))
def test_every_case_as_a_process_under_1_gib(name: str, scratch_home: Path) -> None:
    data, offset = cases()[name]
    check_stored(data, offset, name, scratch_home)
