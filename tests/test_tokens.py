"""The token layer: model dispatch, offline verified loading, exact counts, safe cuts, and the
truncate/tail/split round trips. Real tokenizers throughout (no mocks)."""

from __future__ import annotations

import gzip
import itertools
import os
import random
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import scratch.tokens as T
from scratch.errors import TokenizerError, UsageError
from scratch.tokens import loader
from scratch.tokens.cuts import (
    _INLINE_CUT_BYTES,
    _INLINE_CUT_STR,
    _LINE_CUT_BYTES,
    _LINE_CUT_STR,
    iter_segments,
    split_text,
)
from scratch.tokens.pybpe import PieceTooLong, PyBpe
from scratch.tokens.tokenizer import PY_MAX_CHARS, build_tokenizer

REPO = Path(__file__).resolve().parents[1]
BASES = ("o200k_base", "cl100k_base", "gemma3")


# -- dispatch ------------------------------------------------------------------------------

@pytest.mark.parametrize("model, encoding", [
    ("gpt-4o", "o200k_base"),
    ("GPT-4o-2024-08-06", "o200k_base"),
    ("gpt-4o-mini", "o200k_base"),
    ("chatgpt-4o-latest", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.1-nano", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("gpt-5-mini", "o200k_base"),
    ("o1", "o200k_base"),
    ("o1-preview", "o200k_base"),
    ("o3-mini", "o200k_base"),
    ("o4-mini", "o200k_base"),
    ("openai/gpt-4o", "o200k_base"),
    ("ft:gpt-4o-mini-2024-07-18:acme::abc123", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-4-0613", "cl100k_base"),
    ("GPT-4-Turbo", "cl100k_base"),
    ("gpt-4-32k", "cl100k_base"),
    ("gpt-3.5-turbo", "cl100k_base"),
    ("gpt-35-turbo", "cl100k_base"),
    ("text-embedding-3-large", "cl100k_base"),
    ("ft:gpt-3.5-turbo-0125:acme::x", "cl100k_base"),
    ("gemini-2.5-pro", "gemma3"),
    ("Gemini-2.0-Flash", "gemma3"),
    ("models/gemini-1.5-pro", "gemma3"),
    ("claude-sonnet-4-20250514", "claude"),
    ("claude-3-5-haiku-latest", "claude"),
    ("CLAUDE-OPUS-4-1", "claude"),
    ("anthropic.claude-3-5-sonnet-20240620-v1:0", "claude"),
    ("us.anthropic.claude-sonnet-4-20250514-v1:0", "claude"),
    ("eu.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude"),
    ("anthropic/claude-3.5-sonnet", "claude"),
    ("llama-3.1-70b", "o200k_base"),
    ("mystery-model", "o200k_base"),
    ("", "o200k_base"),
    (None, "o200k_base"),
])
def test_dispatch(model: str | None, encoding: str) -> None:
    spec = T.resolve_encoding(model)
    assert spec.name == encoding
    assert spec.model == (model or None)
    if encoding == "claude":
        assert (spec.base, spec.factor, spec.exact) == ("cl100k_base", 1.1, False)
    else:
        assert (spec.base, spec.factor, spec.exact) == (encoding, 1.0, True)


def test_encoding_overrides_model_and_is_case_insensitive() -> None:
    assert T.resolve_encoding("gpt-4o", "gemma3").base == "gemma3"
    assert T.resolve_encoding("claude-3-opus", "O200K_BASE").name == "o200k_base"
    spec = T.resolve_encoding("gpt-4o", "claude", claude_factor=1.25)
    assert (spec.name, spec.base, spec.factor, spec.exact) == ("claude", "cl100k_base", 1.25, False)


def test_unknown_encoding_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as exc:
        T.resolve_encoding("gpt-4o", "p50k_base")
    err = exc.value
    assert err.code == "unknown_encoding"
    assert err.exit_code == 2
    assert err.details["choices"] == ["o200k_base", "cl100k_base", "gemma3", "claude"]
    with pytest.raises(UsageError) as exc2:
        T.get_tokenizer("claude")
    assert exc2.value.code == "unknown_encoding"


def test_bad_claude_factor() -> None:
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(UsageError) as exc:
            T.resolve_encoding("claude-3", claude_factor=bad)
        assert exc.value.code == "invalid_argument"


def test_claude_scale_and_base_limit() -> None:
    spec = T.resolve_encoding("claude-sonnet-4")
    assert [spec.scale(n) for n in (0, 1, 9, 10, 11, 100, 1000)] == [0, 2, 10, 11, 13, 110, 1100]
    for limit in range(300):
        k = spec.base_limit(limit)
        assert spec.scale(k) <= limit
        assert spec.scale(k + 1) > limit
    exact = T.resolve_encoding("gpt-4o")
    assert exact.scale(12345) == 12345 and exact.base_limit(77) == 77


@pytest.mark.parametrize("model, window", [
    ("gpt-4o", 128_000), ("gpt-4o-mini", 128_000), ("gpt-4.1-mini", 1_047_576),
    ("gpt-5", 400_000), ("gpt-5-chat-latest", 128_000), ("o1", 200_000), ("o1-mini", 128_000),
    ("o3", 200_000), ("o4-mini", 200_000), ("gpt-4", 8_192), ("gpt-4-0613", 8_192),
    ("gpt-4-turbo-2024-04-09", 128_000), ("gpt-4-32k", 32_768), ("gpt-3.5-turbo", 16_385),
    ("claude-sonnet-4-20250514", 200_000), ("claude-3-opus", 200_000),
    ("Claude-3-5-Haiku", 200_000), ("anthropic.claude-3-haiku-20240307-v1:0", 200_000),
    ("gemini-2.5-pro", 1_048_576), ("gemini-2.0-flash", 1_048_576),
    ("gemini-1.5-pro-002", 2_097_152), ("gemini-1.5-flash", 1_048_576),
])
def test_context_window_table(model: str, window: int) -> None:
    assert T.context_window(model) == window


def test_context_window_default_and_overrides() -> None:
    assert T.context_window("mystery") == 128_000
    assert T.context_window(None, default=64_000) == 64_000
    assert T.context_window("mystery", default=32_000) == 32_000
    overrides = {"gpt-4o": 64_000, "GPT-4O-MINI": 50_000, "mystery": 9_999}
    assert T.context_window("gpt-4o-2024-08-06", overrides) == 64_000
    assert T.context_window("gpt-4o-mini", overrides) == 50_000  # longest override prefix
    assert T.context_window("mystery-2", overrides) == 9_999
    assert T.context_window("claude-3-opus", overrides) == 200_000  # table still applies


# -- loading: cheap import, known ids, checksums, cache, offline ---------------------------

def test_importing_the_package_loads_no_tokenizer() -> None:
    code = ("import sys, scratch.tokens\n"
            "heavy = [m for m in ('tiktoken', 'toktok', 'sentencepiece', 'regex', 'typer', 'rich')"
            " if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_constants_equal_tiktokens_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pattern and special tokens written into the loader are tiktoken's (its constructors
    are called with the downloading loader replaced, so nothing is fetched)."""
    import tiktoken_ext.openai_public as public

    hashes: list[str] = []
    monkeypatch.setattr(public, "load_tiktoken_bpe",
                        lambda *a, **k: hashes.append(k["expected_hash"]) or {})
    for name, build in (("o200k_base", public.o200k_base), ("cl100k_base", public.cl100k_base)):
        ref = build()
        info = loader.BPE_FILES[name]
        assert (info.pat_str, info.special_tokens) == (ref["pat_str"], ref["special_tokens"])
        assert hashes[-1] == info.sha256


def test_known_ids() -> None:
    assert T.get_tokenizer("o200k_base").encode("hello world") == [24912, 2375]
    assert T.get_tokenizer("cl100k_base").encode("hello world") == [15339, 1917]
    gemma = T.get_tokenizer("gemma3")
    assert gemma.encode("Hello world") == [9259, 1902]
    assert gemma.encode("The capital of France is") == [818, 5279, 529, 7001, 563]
    for base in BASES:
        tok = T.get_tokenizer(base)
        assert tok.count("hello world") == 2
        text = "Grüße, 世界! 🧠 tabs\tand\r\nCRLF  "
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert tok.decode_bytes(ids) == text.encode()
        assert tok.count(text) == len(ids)
        assert tok.count("") == 0


def test_lone_surrogates_count_as_replacement_characters() -> None:
    for base in BASES:
        tok = T.get_tokenizer(base)
        assert tok.count("a\udc80b") == tok.count("a\ufffdb")
        assert tok.encode("a\udc80b") == tok.encode("a\ufffdb")


def test_special_token_text_counts_as_ordinary_text() -> None:
    for base in ("o200k_base", "cl100k_base"):
        tok = T.get_tokenizer(base)
        ids = tok.encode("<|endoftext|>")
        assert len(ids) > 1 and tok.count("<|endoftext|>") == len(ids)


def test_checksum_mismatch_on_a_corrupted_rank_file(tmp_path: Path) -> None:
    good = gzip.decompress(loader.rank_source("cl100k_base").read_bytes())
    bad = tmp_path / "cl100k_base.tiktoken.gz"
    bad.write_bytes(gzip.compress(good.replace(b"IQ== 0\n", b"IQ== 1\n", 1)))
    with pytest.raises(TokenizerError) as exc:
        loader.load_ranks("cl100k_base", source=bad)
    err = exc.value
    assert err.code == "tokenizer_checksum_mismatch"
    assert err.details["expected"] == loader.BPE_FILES["cl100k_base"].sha256
    assert err.details["actual"] != err.details["expected"] and len(err.details["actual"]) == 64
    assert err.details["file"] == str(bad)
    # the same through a tokenizer pointed at the bad copy: nothing is counted with it
    tok = build_tokenizer("cl100k_base", source=bad, cache=None)
    with pytest.raises(TokenizerError):
        tok.count("hello")
    garbage = tmp_path / "o200k_base.tiktoken.gz"
    garbage.write_bytes(b"not gzip at all")
    with pytest.raises(TokenizerError) as exc2:
        loader.load_ranks("o200k_base", source=garbage)
    assert exc2.value.code == "tokenizer_checksum_mismatch"


def test_checksum_mismatch_on_a_corrupted_gemma_model(tmp_path: Path) -> None:
    import lzma

    model = bytearray(lzma.decompress(loader.GEMMA3_SOURCE.read_bytes()))
    model[1000] ^= 0xFF
    bad = tmp_path / "gemma3.model"  # not .xz: read as is
    bad.write_bytes(bytes(model))
    with pytest.raises(TokenizerError) as exc:
        loader.load_gemma3_model(source=bad)
    assert exc.value.code == "tokenizer_checksum_mismatch"
    assert exc.value.details["expected"] == loader.GEMMA3_SHA256
    assert exc.value.details["file"] == str(bad)
    with pytest.raises(TokenizerError):
        build_tokenizer("gemma3", source=bad, cache=None).count("x")
    bad_xz = tmp_path / "gemma3.model.xz"
    bad_xz.write_bytes(lzma.compress(bytes(model[:200_000]), preset=0))
    with pytest.raises(TokenizerError) as exc2:
        loader.load_gemma3_model(source=bad_xz)
    assert exc2.value.code == "tokenizer_checksum_mismatch"


def test_cache_is_private_and_a_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = loader.load_ranks("cl100k_base", cache_dir=cache)
    (cache_file,) = cache.glob("cl100k_base-*.ranks")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(cache_file.stat().st_mode) == 0o600
    assert loader.load_ranks("cl100k_base", cache_dir=cache) == first
    data = bytearray(cache_file.read_bytes())
    data[-10] ^= 0x01
    cache_file.write_bytes(bytes(data))
    assert loader.load_ranks("cl100k_base", cache_dir=cache) == first  # rebuilt, not trusted
    assert cache_file.read_bytes() != bytes(data)
    model = loader.load_gemma3_model(cache_dir=cache)
    (model_file,) = cache.glob("gemma3-*.model")
    model_file.write_bytes(b"junk")
    assert loader.load_gemma3_model(cache_dir=cache) == model
    reference = T.get_tokenizer("cl100k_base").reference_counts
    assert loader.toktok_verified("cl100k_base", cache, reference)
    marker = cache / "toktok-0.3.0-cl100k_base.ok"
    assert marker.read_text() == loader.BPE_FILES["cl100k_base"].sha256


def test_toktok_is_not_used_when_it_counts_otherwise_than_the_verified_ranks(
        tmp_path: Path) -> None:
    """toktok's vocabulary is judged by its counts of the probe texts: one count off (here a
    reference that adds a token to one probe) and it is refused, and nothing is remembered."""
    real = T.get_tokenizer("o200k_base").reference_counts

    def off_by_one(texts: list[str]) -> list[int]:
        counts = real(texts)
        return [counts[0] + 1, *counts[1:]]

    assert not loader.toktok_verified("o200k_base", tmp_path, off_by_one)
    assert list(tmp_path.iterdir()) == []
    assert loader.toktok_verified("o200k_base", tmp_path, real)
    assert [p.name for p in tmp_path.iterdir()] == ["toktok-0.3.0-o200k_base.ok"]


def test_counting_works_with_networking_unavailable(tmp_path: Path) -> None:
    code = r"""
import socket
def _refuse(*args, **kwargs):
    raise OSError("network disabled by the test")
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.getaddrinfo = _refuse
socket.create_connection = _refuse
import scratch.tokens as T
assert T.get_tokenizer("o200k_base").encode("hello world") == [24912, 2375]
assert T.get_tokenizer("cl100k_base").encode("hello world") == [15339, 1917]
assert T.get_tokenizer("gemma3").encode("Hello world") == [9259, 1902]
assert T.count_text("hello world", T.resolve_encoding("claude-3-opus")) == 3
assert T.count_text("hello world", T.resolve_encoding("gemini-2.5-pro")) == 2
big = "hello world\n" * 400_000
for base in ("o200k_base", "cl100k_base"):
    assert T.get_tokenizer(base).fast_counter() is not None  # toktok verified offline
    assert T.count_stream([big.encode()], T.resolve_encoding(encoding=base)) == 1_200_000
print("offline ok")
"""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "empty-cache"),
               TIKTOKEN_CACHE_DIR=str(tmp_path / "tiktoken-cache"))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "offline ok"


# -- engines agree ---------------------------------------------------------------------------

TRICKY = [
    "", " ", "\n", "\n\n", " \n ", "a  \n  b", "x\r\n\r\n  y", "}\n/path", "}\n  /path",
    "don't I'LL we've", "\u00a0\n\u3000x", "Grüße 世界 🧠🧠 e\u0301", "<|endoftext|><|fim_prefix|>",
    "12345678901234567890", "aaaa" * 200, " " * 300 + "x", "\t\t\n\t", "a\u2028b\u0085c",
    '{"key": "value", "n": [1, 2, 3]}\n', "x" * 5000, "é" * 300, "lone \udc80 surrogate",
]


@pytest.mark.parametrize("base", ["o200k_base", "cl100k_base"])
def test_pure_python_and_toktok_equal_tiktoken(base: str) -> None:
    tok = T.get_tokenizer(base)
    enc = tok.encoding
    py = PyBpe(loader.BPE_FILES[base].pat_str, tok.ranks())
    fast = tok.fast_counter()
    assert fast is not None
    rng = random.Random(7)
    alphabet = list("aZ1 \t\n\r/'\",:{}[]-_.") + ["é", "東", "\u00a0", "🧠", "\u0301", "s", "t"]
    samples = TRICKY + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 200)))
                        for _ in range(300)]
    for text in samples:
        expected = len(enc.encode_ordinary(text))
        try:
            assert py.count(text) == expected, text
        except (PieceTooLong, UnicodeEncodeError):  # the tokenizer hands these to tiktoken
            pass
        assert tok.count(text) == expected, text
    clean = [s for s in samples if "\udc80" not in s]
    assert fast.count_batch(clean) == [len(enc.encode_ordinary(s)) for s in clean]


def test_engine_choice_follows_volume(tmp_path: Path) -> None:
    """Small counts never load tiktoken or toktok; many mid-sized batches switch to toktok once
    their total would have repaid its load. Counts are the same whichever engine runs."""
    tok = build_tokenizer("cl100k_base", cache=tmp_path)
    assert tok.count("hello world") == 2
    assert tok._encoding is None and tok._fast_state is None  # pure Python so far
    batch = [f"some log line number {i}\n" for i in range(12_000)]  # ~300K chars
    expected = [len(T.get_tokenizer("cl100k_base").encoding.encode_ordinary(x)) for x in batch]
    for _ in range(4):
        assert tok.count_many(batch) == expected
    assert tok._fast_state is True


def test_a_page_sized_count_builds_no_tiktoken(tmp_path: Path) -> None:
    """A read's answer up to PY_MAX_CHARS (a page of 50 pods is ~670 KB) is counted by the
    pure-Python counter, exactly: building tiktoken's Encoding took 0.3 s and 73 MB of a
    paged read's 64 MB bound."""
    tok = build_tokenizer("o200k_base", cache=tmp_path)
    page = "".join(f'    {{\n      "name": "web-{i}",\n      "restarts": {i % 7}\n    }},\n'
                   for i in range(12_000))
    assert 600_000 < len(page) <= PY_MAX_CHARS
    want = len(T.get_tokenizer("o200k_base").encoding.encode_ordinary(page))
    assert tok.count(page) == want
    assert tok._encoding is None and tok._fast_state is None


# -- safe cuts ------------------------------------------------------------------------------

def test_gemma_vocabulary_allows_the_cut_rules() -> None:
    """No Gemma 3 piece spans a line-rule or in-line-rule cut (so BPE merges cannot cross)."""
    sp = T.get_tokenizer("gemma3").processor
    inline_next = set("\",:{}[")
    alnum = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    offenders = []
    for i in range(sp.get_piece_size()):
        piece = sp.id_to_piece(i)
        for a, b in itertools.pairwise(piece):
            if (a == "\n" and b != "\n") or (a in alnum and b in inline_next):
                offenders.append(piece)
    assert offenders == []


def _random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = (list("aZ19 \t\n\n\n\r/'\",:{}[]#-.=") + ["é", "東", "\u00a0", "\u3000", "🧠",
                "\u0301", "\u2028", "\x0b", "▁", "s", "t", "  ", "\n  ", "\n\n"])
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(20, 160)))
            for _ in range(count)]


def test_cut_rules_keep_counts_additive() -> None:
    toks = [T.get_tokenizer(b) for b in BASES]
    texts = _random_texts(11, 250) + [
        '{\n  "a": 1,\n  "b": [\n    "x"\n  ]\n}\n{"c":"d","e":{"f":[1,2]}}\n',
        "line\n/root\n  /indented\n\u00a0nbsp\n\u3000ideo\n\n\nend\n",
    ]
    checked = 0
    for text in texts:
        cuts = sorted({m.end() for m in _LINE_CUT_STR.finditer(text)}
                      | {m.end() for m in _INLINE_CUT_STR.finditer(text)})
        if not cuts:
            continue
        for tok in toks:
            whole = len(tok.encode(text))
            for p in cuts:
                assert len(tok.encode(text[:p])) + len(tok.encode(text[p:])) == whole, (
                    tok.name, text[:p], text[p:])
                checked += 1
    assert checked > 1000


def test_byte_rules_match_text_rules() -> None:
    for text in _random_texts(5, 300):
        raw = text.encode()
        for str_rule, byte_rule in ((_LINE_CUT_STR, _LINE_CUT_BYTES),
                                    (_INLINE_CUT_STR, _INLINE_CUT_BYTES)):
            by_text = {len(text[:m.end()].encode()) for m in str_rule.finditer(text)}
            by_bytes = {m.end() for m in byte_rule.finditer(raw)}
            assert by_text == by_bytes, text


def test_segments_rejoin_and_respect_limits() -> None:
    rng = random.Random(3)
    text = "".join(_random_texts(9, 400)).encode()
    long_line = b'{"k":"' + b"v" * 50_000 + b'","a":[1,2,3],"b":{"c":"d"}}' * 20 + b"\n"
    for data in (text, long_line + text, b"", b"no newline at all"):
        for _ in range(5):
            chunks, i = [], 0
            while i < len(data):
                step = rng.randint(1, 7000)
                chunks.append(data[i:i + step])
                i += step
            segs = list(iter_segments(chunks, target=rng.choice([1, 64, 4096]), limit=20_000))
            assert b"".join(segs) == data
            assert all(segs)
    segs = list(iter_segments([long_line], target=100, limit=2_000))
    assert len(segs) > 1 and b"".join(segs) == long_line
    assert all(s[-1:].isalnum() for s in segs[:-1])  # in-line cuts after a letter or digit
    assert split_text("abc") == ["abc"]
    pieces = split_text("x\n" * 50_000, target=1000)
    assert "".join(pieces) == "x\n" * 50_000 and len(pieces) > 50


# -- streams ---------------------------------------------------------------------------------

def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


SAMPLE = (
    '{\n  "items": [\n    {"name": "pod-1", "status": "Running", "note": "Grüße 世界 🧠"},\n'
    '    {"name": "pod-2", "status": "CrashLoopBackOff"}\n  ]\n}\n'
    "2024-01-01T00:00:00Z INFO /var/log/app started\r\n\n\n   \n"
    + "x" * 3000 + "\n"
    + "🧠" * 200 + "\n"
    + '{"minified":"' + "abc,def:" * 400 + '"}\n'
    + "\u00a0indented with nbsp\n/rooted line\nend without newline"
).encode()


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4", "gemini-2.5-pro", "claude-3-opus"])
def test_count_stream_equals_whole_count(model: str) -> None:
    spec = T.resolve_encoding(model)
    whole = T.count_text(SAMPLE.decode(), spec)
    for size in (1, 7, 100, 4096, len(SAMPLE)):
        assert T.count_stream(_chunks(SAMPLE, size), spec) == whole
    assert T.count_stream([], spec) == 0
    bad = b"ok \xff\xfe bytes \xe2\x82 cut\n" * 3
    assert T.count_stream(_chunks(bad, 5), spec) == T.count_text(T.decode_text(bad), spec)


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4", "claude-3-opus"])
def test_count_stream_until_stops_once_it_holds_enough(model: str) -> None:
    """The whole count while under ``enough``, None once reached, having read only as far as
    that: a stream of 64 KiB segments stops after the segment that reaches it."""
    spec = T.resolve_encoding(model)
    whole = T.count_text(SAMPLE.decode(), spec)
    for size in (1, 100, len(SAMPLE)):
        assert T.count_stream_until(_chunks(SAMPLE, size), spec, whole + 1) == whole
        assert T.count_stream_until(_chunks(SAMPLE, size), spec, whole) is None
    assert T.count_stream_until([], spec, 1) == 0
    line = b"2024-01-01T00:00:00Z INFO request served in 12 ms\n"
    big = line * ((4 << 20) // len(line))  # 4 MiB: 64 segments
    read: list[int] = []

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(big), 1 << 16):
            read.append(start)
            yield big[start:start + (1 << 16)]

    per_segment = T.count_text(T.decode_text(big[:1 << 16]), spec)
    assert T.count_stream_until(chunks(), spec, 3 * per_segment) is None
    assert len(read) <= 5  # ~3 segments of 64 KiB, not the 64 of the stream
    assert T.count_stream_until(chunks(), spec, 10 ** 9) == T.count_stream([big], spec)


@pytest.mark.parametrize("base", BASES)
def test_ids_stream_equals_whole_encoding(base: str) -> None:
    spec = T.resolve_encoding(encoding=base)
    data = SAMPLE * 40  # several segments
    ids = [i for part in T.ids_stream(_chunks(data, 1000), spec) for i in part]
    assert ids == T.get_tokenizer(base).encode(data.decode())


def test_decode_text_replaces_each_bad_byte() -> None:
    assert T.decode_text(b"a\xffb") == "a\ufffdb"
    assert T.decode_text(b"\xe2\x82x") == "\ufffd\ufffdx"
    assert T.decode_text("Grüße".encode()) == "Grüße"


def test_count_lines_counts_each_line() -> None:
    lines = ["hello world", "", "  indented", "Grüße 🧠"]
    for base in BASES:
        tok = T.get_tokenizer(base)
        assert T.count_lines(lines, base) == [len(tok.encode(s)) for s in lines]


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4", "gemini-2.5-pro", "claude-3-opus"])
@pytest.mark.parametrize("n", [1, 2, 5, 37, 200, 100_000])
def test_split_round_trip(model: str, n: int) -> None:
    spec = T.resolve_encoding(model)
    if spec.base_limit(n) < 1:
        with pytest.raises(UsageError):
            list(T.split_stream([SAMPLE], n, spec))
        return
    pieces = list(T.split_stream(_chunks(SAMPLE, 333), n, spec))
    assert b"".join(pieces) == SAMPLE
    assert all(pieces)
    tok = T.get_tokenizer(spec.base)
    for piece in pieces:
        text = piece.decode()  # never cut inside a character
        assert spec.scale(tok.count(text)) <= n or len(text) == 1, (n, text)
    lines = SAMPLE.splitlines(keepends=True)
    if n >= max(spec.scale(tok.count(line.decode())) for line in lines):
        # every line fits: pieces end at line ends only, and are greedy
        assert all(p.endswith(b"\n") for p in pieces[:-1])
        for a, b in itertools.pairwise(pieces):
            first_line = b.splitlines(keepends=True)[0]
            assert spec.scale(tok.count((a + first_line).decode())) > n
    if n >= spec.scale(tok.count(SAMPLE.decode())):
        assert pieces == [SAMPLE]


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4", "gemini-2.5-pro", "claude-3-opus"])
def test_truncate_and_tail(model: str) -> None:
    spec = T.resolve_encoding(model)
    tok = T.get_tokenizer(spec.base)
    total = spec.scale(tok.count(SAMPLE.decode()))
    for n in (0, 1, 3, 10, 99, 500, total - 1, total, total + 5):
        head = b"".join(T.truncate_stream(_chunks(SAMPLE, 500), n, spec))
        assert SAMPLE.startswith(head)
        head_count = spec.scale(tok.count(head.decode()))
        assert head_count <= n
        tail = b"".join(T.tail_stream(_chunks(SAMPLE, 500), n, spec))
        assert SAMPLE.endswith(tail)
        tail_count = spec.scale(tok.count(tail.decode()))
        assert tail_count <= n
        if n >= total:
            assert head == SAMPLE and tail == SAMPLE
        elif n >= 10:
            # close to the limit: within a few tokens (cuts avoid splitting characters)
            assert head_count >= n - 6 and tail_count >= n - 6, (n, head_count, tail_count)
    with pytest.raises(UsageError):
        list(T.truncate_stream([SAMPLE], -1, spec))


def test_truncate_stops_reading_early() -> None:
    spec = T.resolve_encoding("gpt-4o")
    consumed = 0

    def endless():
        nonlocal consumed
        while True:
            consumed += 1
            yield b"some line of text\n" * 1000

    head = b"".join(T.truncate_stream(endless(), 50, spec))
    assert T.count_text(head.decode(), spec) == 50
    assert consumed < 50


@pytest.mark.parametrize("model", ["gpt-4o", "gemini-2.5-pro", "claude-3-opus"])
def test_split_cuts_inside_a_line_only_when_the_line_is_too_long(model: str) -> None:
    spec = T.resolve_encoding(model)
    tok = T.get_tokenizer(spec.base)
    long_line = b'{"items":[' + b",".join(b'{"id":%d,"name":"item-%d","ok":true}' % (i, i)
                                          for i in range(6000)) + b"]}\n"
    data = b"header line\n" + long_line + b"  indented\n\n" + long_line[:5000] + b"\ntail\n"
    line_counts: dict[int, int] = {}
    for n in (300, 5_000, 200_000):
        pieces = list(T.split_stream(_chunks(data, 65_536), n, spec))
        assert b"".join(pieces) == data
        assert all(c <= n for c in map(spec.scale, tok.count_many([p.decode() for p in pieces])))
        pos = 0
        for piece in pieces[:-1]:
            pos += len(piece)
            if data[pos - 1:pos] != b"\n":  # cut inside a line: that line must not fit
                start = data.rfind(b"\n", 0, pos) + 1
                if start not in line_counts:
                    line = data[start:data.find(b"\n", pos) + 1]
                    line_counts[start] = spec.scale(tok.count(line.decode()))
                assert line_counts[start] > n
        if n == 200_000:
            assert all(p.endswith(b"\n") for p in pieces)
