"""The cold-start counter: memory-mapped rank table, ASCII pre-token patterns, heap merges.

Everything is checked against the references themselves: the official patterns run by the
``regex`` module, and tiktoken ``encode_ordinary`` built from the verified ranks. Damage to the
table is made on real table files; no mocks.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import scratch.tokens as T
from scratch.tokens import loader
from scratch.tokens.pretok import ASCII_PATTERNS, official_for_python
from scratch.tokens.pybpe import MAX_PIECE, PieceTooLong, PyBpe
from scratch.tokens.ranktable import (
    HEADER_SIZE,
    RankTable,
    TableDamaged,
    build_table,
    open_table,
    table_from_buffer,
)
from scratch.tokens.tokenizer import build_tokenizer

REPO = Path(__file__).resolve().parents[1]
OPENAI = ("o200k_base", "cl100k_base")
# Corpus files above this size are checked by the tests marked slow.
LARGE = 512 * 1024
SIZES = [pytest.param(False, id="small-files"),
         pytest.param(True, id="large-files", marks=[pytest.mark.slow, pytest.mark.skipif(
             os.environ.get("SCRATCH_SLOW") != "1",
             reason="the corpus files over 512 KB: set SCRATCH_SLOW=1")])]


def _corpus_files(corpus: Path, large: bool) -> list[Path]:
    return [p for p in sorted(corpus.rglob("*"))
            if p.is_file() and (p.stat().st_size > LARGE) == large]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RankTable]:
    cache = tmp_path_factory.mktemp("bpetab")
    out = {}
    for name in OPENAI:
        loader.write_rank_table(name, cache, T.get_tokenizer(name).ranks())
        table = loader.open_rank_table(name, cache)
        assert table is not None
        out[name] = table
    return out


def _official(name: str) -> Any:
    import regex

    return regex.compile(official_for_python(loader.BPE_FILES[name].pat_str))


def _counter(name: str, table: RankTable) -> PyBpe:
    return PyBpe(loader.BPE_FILES[name].pat_str, table, ASCII_PATTERNS[name])


# -- the ASCII patterns are the official ones on ASCII text ---------------------------------

@pytest.mark.parametrize("name", OPENAI)
def test_ascii_pattern_equals_official_on_every_ascii_pair(name: str) -> None:
    official, ascii_pat = _official(name), re.compile(ASCII_PATTERNS[name])
    chars = [chr(i) for i in range(128)]
    bad = [a + b for a in chars for b in chars
           if official.findall(a + b) != ascii_pat.findall(a + b)]
    assert bad == []


def _ascii_fuzz(seed: int, count: int, max_len: int = 40) -> list[str]:
    rng = random.Random(seed)
    # letters that start contractions, both cases, every kind of ASCII space (with the
    # \x1c-\x1f separators that stdlib \s matches and Unicode White_Space does not)
    alphabet = (list("aAbZzsStTlLdDmMvVeErRxX'' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f019/.,-_{}\":")
                + ["  ", "\r\n", "\n\n", "'s", "'LL", "'Re", "123456"]
                + [chr(i) for i in range(128)])
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, max_len)))
            for _ in range(count)]


@pytest.mark.parametrize("name", OPENAI)
def test_ascii_pattern_equals_official_on_fuzzed_text(name: str) -> None:
    official, ascii_pat = _official(name), re.compile(ASCII_PATTERNS[name])
    bad = [s for s in _ascii_fuzz(17, 20_000) if official.findall(s) != ascii_pat.findall(s)]
    assert bad == []


@pytest.mark.corpus
@pytest.mark.parametrize("large", SIZES)
@pytest.mark.parametrize("name", OPENAI)
def test_ascii_pattern_equals_official_on_corpus_ascii_lines(corpus_dir: Path, name: str,
                                                            large: bool) -> None:
    official, ascii_pat = _official(name), re.compile(ASCII_PATTERNS[name])
    lines = 0
    for path in _corpus_files(corpus_dir, large):
        text = T.decode_text(path.read_bytes())
        # whole files where they are ASCII, else their ASCII lines
        units = [text] if text.isascii() else [
            line for line in text.splitlines(keepends=True) if line.isascii()]
        for unit in units:
            assert official.findall(unit) == ascii_pat.findall(unit), (path.name, unit[:200])
            lines += unit.count("\n") + 1
    assert lines > 100_000


# -- counts equal tiktoken -------------------------------------------------------------------

def _generated(seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = (list("aZ19 \t\n\r/'\",:{}[]-_.sStTdD\x0b\x1c") + ["é", "東", "\u00a0", "\u3000",
                "🧠", "\u0301", "\u2028", "\u0085", "Ǆ", "ǅ", "'S", "  ", "\n  ", "\r\n"])
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 300)))
             for _ in range(1500)]
    texts += _ascii_fuzz(seed, 1500, 300)
    texts += [
        " " * 1000, "\n" * 500, " \n" * 300 + "x", "\t \t\r\n" * 100, "x" + " " * 77,
        "1234567890" * 50, "3.14159 2,718 0x1F 1e-9 ٣٤٥ ½",
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(MAX_PIECE)),
        "".join(rng.choice("ABCDEFGHIJ") for _ in range(3000)), "a" * MAX_PIECE,
        "-" * 4000, "=" * 999 + "\n", "Supercalifragilisticexpialidocious" * 40,
        "don't WE'LL they'Ve I'M it'S", "Grüße 世界 🧠🧠 e\u0301 Здравствуй мир",
        "\u00a0\n\u3000x", "<|endoftext|> <|endofprompt|>", "ǅungla ǄUNGLA",
    ]
    return texts


@pytest.mark.parametrize("name", OPENAI)
def test_counts_equal_tiktoken_on_generated_text(name: str,
                                                 tables: dict[str, RankTable]) -> None:
    enc = T.get_tokenizer(name).encoding
    py = _counter(name, tables[name])
    bad = [t for t in _generated(5) if py.count(t) != len(enc.encode_ordinary(t))]
    assert bad == []


@pytest.mark.parametrize("name", OPENAI)
def test_long_pieces_are_refused_and_then_counted_by_tiktoken(
        name: str, tables: dict[str, RankTable], tmp_path: Path) -> None:
    py = _counter(name, tables[name])
    word = "ab" * MAX_PIECE
    with pytest.raises(PieceTooLong):
        py.count(word)
    tok = build_tokenizer(name, cache=tmp_path)
    assert tok.count(word + " ok") == len(T.get_tokenizer(name).encoding.encode_ordinary(
        word + " ok"))


@pytest.mark.corpus
@pytest.mark.parametrize("large", SIZES)
@pytest.mark.parametrize("name", OPENAI)
def test_counts_equal_tiktoken_on_corpus_files(corpus_dir: Path, name: str, large: bool,
                                               tables: dict[str, RankTable]) -> None:
    enc = T.get_tokenizer(name).encoding
    py = _counter(name, tables[name])
    checked = 0
    for path in _corpus_files(corpus_dir, large):
        text = T.decode_text(path.read_bytes())
        try:
            got = py.count(text)
        except PieceTooLong:  # the tokenizer hands these to tiktoken: only pieces that long
            pieces = _official(name).findall(text)
            assert max(len(p.encode("utf-8", "surrogatepass")) for p in pieces) > MAX_PIECE, \
                path.name
            continue
        assert got == len(enc.encode_ordinary(text)), path.name
        checked += 1
    assert checked > (10 if large else 60)


# -- the table ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", OPENAI)
def test_table_holds_exactly_the_ranks(name: str, tables: dict[str, RankTable]) -> None:
    ranks = T.get_tokenizer(name).ranks()
    lookup = tables[name]._lookup  # reads the file every time (get() remembers answers)
    assert all(lookup(key) == rank for key, rank in ranks.items())
    rng = random.Random(1)
    misses = [key + bytes([rng.randrange(256)]) for key in list(ranks)[::50]]
    misses += [bytes(rng.randrange(256) for _ in range(rng.randint(2, 12))) for _ in range(4000)]
    assert all(lookup(key) is None for key in misses if key not in ranks)
    assert lookup(b"") is None


SMALL_RANKS = {bytes([i]): i for i in range(40)} | {
    b"ab": 40, b"ba": 41, b"abc": 42, b"hello": 43, b"\x00\x00": 44, b"xyz" * 20: 45}


def _small_table(data: bytes) -> RankTable | None:
    return table_from_buffer(data, "test", "00" * 32, len(SMALL_RANKS))


def test_table_never_confuses_keys_that_share_a_slot() -> None:
    data = build_table("test", "00" * 32, SMALL_RANKS)  # 256 slots: many shared probe runs
    table = _small_table(data)
    assert table is not None
    assert {k: table.get(k) for k in SMALL_RANKS} == SMALL_RANKS
    import zlib

    mask = table._mask
    homes = {zlib.crc32(k) & mask for k in SMALL_RANKS}
    rng = random.Random(2)
    near = []
    while len(near) < 500:  # strings that start probing where real keys live
        key = bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
        if zlib.crc32(key) & mask in homes and key not in SMALL_RANKS:
            near.append(key)
    assert all(table.get(k) is None for k in near)
    assert b"ab" in table and b"abd" not in table and table[b"hello"] == 43


def test_every_single_byte_damage_is_harmless_or_detected() -> None:
    """Flip each byte of a small table in turn (and zero each 16-byte block): the header
    check refuses it, or every lookup still answers right, or the lookup raises."""
    good = build_table("test", "00" * 32, SMALL_RANKS)
    probes = list(SMALL_RANKS) + [b"zz", b"abcd", b"hell", b"\x00\x00\x00", b"q" * 9]
    damaged: list[bytes] = []
    for i in range(len(good)):
        damaged.append(good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1:])
        damaged.append(good[:i] + bytes([good[i] ^ 0x01]) + good[i + 1:])
    for i in range(0, len(good), 16):
        damaged.append(good[:i] + bytes(len(good[i:i + 16])) + good[i + 16:])
    detected = 0
    for data in damaged:
        table = _small_table(data)
        if table is None:
            assert data[:HEADER_SIZE] != good[:HEADER_SIZE]
            continue
        for key in probes:
            try:
                got = table._lookup(key)
            except TableDamaged:
                detected += 1
                continue
            assert got == SMALL_RANKS.get(key), key
    assert detected > len(good)


def test_header_checks(tmp_path: Path) -> None:
    name = "cl100k_base"
    info = loader.BPE_FILES[name]
    good = build_table(name, info.sha256, T.get_tokenizer(name).ranks())
    path = tmp_path / "t.bpetab"
    path.write_bytes(good)
    assert open_table(path, name, info.sha256, info.n_ranks) is not None
    assert open_table(path, "o200k_base", info.sha256, info.n_ranks) is None  # other encoding
    assert open_table(path, name, "11" * 32, info.n_ranks) is None  # other source
    assert open_table(path, name, info.sha256, info.n_ranks - 1) is None
    assert open_table(tmp_path / "missing", name, info.sha256, info.n_ranks) is None
    for bad in (good[:-1], good + b"\0", good[:HEADER_SIZE // 2], b"",
                good[:20] + bytes([good[20] ^ 4]) + good[21:]):
        path.write_bytes(bad)
        assert open_table(path, name, info.sha256, info.n_ranks) is None


def _real_damage(table_file: Path) -> None:
    """Zero every other 4 KB page of slots, and flip a byte inside many entries."""
    data = bytearray(table_file.read_bytes())
    n_slots = int.from_bytes(data[64:68], "little")  # after magic, version, name, sha, count
    entries_at = HEADER_SIZE + 4 * n_slots
    for at in range(HEADER_SIZE, entries_at, 8192):
        data[at:at + 4096] = bytes(4096)
    for at in range(entries_at + 3, len(data), 997):
        data[at] ^= 0x20
    table_file.write_bytes(bytes(data))


@pytest.mark.parametrize("name", OPENAI)
def test_damaged_table_is_rebuilt_and_counts_stay_exact(name: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    text = "\n".join(_generated(9)[:300])
    expected = len(T.get_tokenizer(name).encoding.encode_ordinary(text))
    first = build_tokenizer(name, cache=cache)
    assert first.count(text) == expected  # builds the table
    table_file = loader.rank_table_path(name, cache)
    pristine = table_file.read_bytes()
    _real_damage(table_file)
    damaged = table_file.read_bytes()
    assert damaged != pristine
    again = build_tokenizer(name, cache=cache)
    assert isinstance(again._python()._get.__self__, RankTable)  # the damage is in the body
    assert again.count(text) == expected
    assert table_file.read_bytes() == pristine  # rebuilt, not trusted
    assert again._ranks is not None  # ... and this process went on with the verified dict
    table_file.write_bytes(pristine[:1000])  # truncated: refused when opened, rebuilt
    assert build_tokenizer(name, cache=cache).count(text) == expected
    assert table_file.read_bytes() == pristine


def test_no_cache_and_custom_sources_use_the_verified_dict(tmp_path: Path) -> None:
    tok = build_tokenizer("cl100k_base", cache=None)
    assert tok.count("hello world") == 2
    assert isinstance(tok._python()._get.__self__, dict)
    source = loader.rank_source("cl100k_base")
    tok2 = build_tokenizer("cl100k_base", source=source, cache=tmp_path)
    assert tok2.count("hello world") == 2
    assert not list(tmp_path.glob("*.bpetab"))


# -- a cold process ---------------------------------------------------------------------------

_COLD = r"""
import socket, sys, json
already = set(sys.modules)  # a site hook may import some of them before scratch runs
def _refuse(*args, **kwargs):
    raise OSError("network disabled by the test")
socket.socket.connect = _refuse
socket.getaddrinfo = _refuse
socket.create_connection = _refuse
from scratch.tokens import count_text, resolve_encoding
texts = json.loads(sys.argv[1])
out = {m: [count_text(t, resolve_encoding(m)) for t in texts] for m in sys.argv[2:]}
heavy = ("regex", "tiktoken", "toktok", "hashlib", "gzip", "lzma", "tempfile")
out["modules"] = sorted(m for m in heavy if m in sys.modules and m not in already)
print(json.dumps(out))
"""


def _cold(env: dict[str, str], texts: list[str], models: list[str]) -> dict[str, Any]:
    import json

    res = subprocess.run([sys.executable, "-c", _COLD, json.dumps(texts), *models], env=env,
                         cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def test_cold_process_counts_ascii_without_regex_or_tiktoken(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"),
               TIKTOKEN_CACHE_DIR=str(tmp_path / "tiktoken-cache"))
    ascii_texts = ['{\n  "kind": "Pod",\n  "metadata": {"name": "web-1"}\n}\n',
                   "GET /index.html 200 1234\r\n" * 20, "don't  stop\t\n\n  now  "]
    models = ["gpt-4o", "gpt-4", "claude-sonnet-4"]
    expected = {}
    for model in models:
        spec = T.resolve_encoding(model)
        enc = T.get_tokenizer(spec.base).encoding
        expected[model] = [spec.scale(len(enc.encode_ordinary(t))) for t in ascii_texts]
    first = _cold(env, ascii_texts, models)  # builds both tables
    assert {m: first[m] for m in models} == expected
    cache = tmp_path / "xdg" / "scratch" / "tokens"
    assert sorted(p.suffix for p in cache.glob("*.bpetab")) == [".bpetab", ".bpetab"]
    second = _cold(env, ascii_texts, models)
    assert {m: second[m] for m in models} == expected
    assert second["modules"] == []  # no regex, no tiktoken, nothing to verify or unpack
    mixed = ["naïve café ☕\n", "plain"]
    third = _cold(env, mixed, ["gpt-4o"])
    enc = T.get_tokenizer("o200k_base").encoding
    assert third["gpt-4o"] == [len(enc.encode_ordinary(t)) for t in mixed]
    assert third["modules"] == ["regex"]
