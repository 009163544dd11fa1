"""Exactness on real data: every corpus file, every encoding, every counting engine.

References are the libraries themselves on the whole text: tiktoken ``encode_ordinary`` for the
OpenAI encodings, SentencePiece ``encode`` for Gemma 3. Skipped when ../shared/corpus is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import scratch.tokens as T
from scratch.tokens import loader
from scratch.tokens.pybpe import PieceTooLong, PyBpe

pytestmark = pytest.mark.corpus

# Files above this size are checked by the tests marked slow (the references themselves take
# ~30 s for SentencePiece on the 40 MB of large files); the rest run in a few seconds.
LARGE = 512 * 1024
SIZES = [pytest.param(False, id="small-files"),
         pytest.param(True, id="large-files", marks=[pytest.mark.slow, pytest.mark.skipif(
             os.environ.get("SCRATCH_SLOW") != "1",
             reason="the corpus files over 512 KB: set SCRATCH_SLOW=1")])]


def _files(corpus: Path, large: bool | None = None) -> list[Path]:
    files = sorted(p for p in corpus.rglob("*") if p.is_file())
    if large is None:
        return files
    return [p for p in files if (p.stat().st_size > LARGE) == large]


def _read_chunks(path: Path, size: int = 1 << 16):
    with path.open("rb") as fh:
        while chunk := fh.read(size):
            yield chunk


@pytest.mark.parametrize("large", SIZES)
@pytest.mark.parametrize("base", ["o200k_base", "cl100k_base"])
def test_openai_counts_equal_tiktoken_on_every_file(corpus_dir: Path, base: str,
                                                    large: bool) -> None:
    files = _files(corpus_dir, large)
    assert len(files) > 20
    tok = T.get_tokenizer(base)
    texts = [T.decode_text(p.read_bytes()) for p in files]
    expected = [len(ids) for ids in tok.encoding.encode_ordinary_batch(texts, num_threads=2)]
    spec = T.resolve_encoding(encoding=base)
    streamed = [T.count_stream(_read_chunks(p), spec) for p in files]
    fast = tok.fast_counter().count_batch(texts)
    bad = [(str(p.relative_to(corpus_dir)), e, s, f)
           for p, e, s, f in zip(files, expected, streamed, fast) if not e == s == f]
    assert bad == []


@pytest.mark.parametrize("base", ["o200k_base", "cl100k_base"])
def test_pure_python_counter_equals_tiktoken_on_small_files(corpus_dir: Path, base: str) -> None:
    tok = T.get_tokenizer(base)
    py = PyBpe(loader.BPE_FILES[base].pat_str, tok.ranks())
    checked = 0
    for p in _files(corpus_dir):
        if p.stat().st_size > 100_000:
            continue
        text = T.decode_text(p.read_bytes())
        try:
            got = py.count(text)
        except PieceTooLong:
            continue
        assert got == len(tok.encoding.encode_ordinary(text)), p
        checked += 1
    assert checked > 60


@pytest.mark.parametrize("large", SIZES)
def test_gemma3_counts_equal_sentencepiece_on_every_file(corpus_dir: Path, large: bool) -> None:
    files = _files(corpus_dir, large)
    assert len(files) > 20
    tok = T.get_tokenizer("gemma3")
    sp = tok.processor
    texts = [T.decode_text(p.read_bytes()) for p in files]
    expected = [len(ids) for ids in sp.encode(texts, num_threads=2)]
    spec = T.resolve_encoding("gemini-2.5-pro")
    streamed = [T.count_stream(_read_chunks(p), spec) for p in files]
    bad = [(str(p.relative_to(corpus_dir)), e, s)
           for p, e, s in zip(files, expected, streamed) if e != s]
    assert bad == []


def test_count_lines_equals_per_line_reference(corpus_dir: Path) -> None:
    paths = [corpus_dir / "ndjson" / "nginxplus_json_logs.ndjson",
             corpus_dir / "logs" / "loghub" / "OpenSSH_2k.log",
             corpus_dir / "csv" / "country-codes.csv"]
    for path in paths:
        lines = T.decode_text(path.read_bytes()).splitlines(keepends=True)
        for base in ("o200k_base", "cl100k_base"):
            tok = T.get_tokenizer(base)
            expected = [len(tok.encoding.encode_ordinary(line)) for line in lines]
            assert T.count_lines(lines, base) == expected, (path.name, base)
            assert tok.fast_counter().count_batch(lines) == expected
        sp = T.get_tokenizer("gemma3").processor
        assert T.count_lines(lines, "gemma3") == [len(ids) for ids in sp.encode(lines)]


def test_split_round_trip_on_a_large_file(corpus_dir: Path) -> None:
    path = corpus_dir / "json" / "minified" / "kubernetes-openapi-v1.14-aggregated.json"
    data = path.read_bytes()  # one 3.1 MB line: cut inside it at token boundaries
    spec = T.resolve_encoding("gpt-4o")
    tok = T.get_tokenizer("o200k_base")
    pieces = list(T.split_stream(_read_chunks(path), 50_000, spec))
    assert b"".join(pieces) == data
    counts = [tok.count(p.decode()) for p in pieces]
    assert max(counts) <= 50_000 and min(counts[:-1]) > 40_000
    head = b"".join(T.truncate_stream(_read_chunks(path), 1000, spec))
    assert data.startswith(head) and 990 <= tok.count(head.decode()) <= 1000
    tail = b"".join(T.tail_stream(_read_chunks(path), 1000, spec))
    assert data.endswith(tail) and 990 <= tok.count(tail.decode()) <= 1000
