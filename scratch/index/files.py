"""On-disk layout of one version's index directory (format :data:`INDEX_FORMAT`).

The caller chooses the directory: a stored version's is ``cache/index/<blob>.<format>``
(:func:`scratch.index.open_version_index`), since the same bytes indexed as another format
(text, CSV, JSON...) make another index. Files:

``meta.json``
    Written last, atomically (rename); its presence means the index is complete. Keys:
    ``scratch_index`` (format version), ``format`` (what the content was indexed as),
    ``requested_format`` (what the build was asked for: ``format`` is ``text`` when the content
    did not parse as it; absent from indexes written before it was added), ``layout``,
    ``engine``, ``bytes``, ``line_count``, ``byteorder``, ``fingerprint`` (CRC-32 of the
    content's first and last 4 KiB), ``files`` ({name: size} of every file below except token
    files), ``nodes`` (record count), ``sections32`` / ``sections64`` ([[offset, count], ...]
    by section id), ``named`` ({name: u32 section id}: ``level:<LEVEL>``, ``rows``), ``warnings``.
``info.json``
    Format-specific information: schema summary, log/CSV/markdown info (see
    :mod:`scratch.index.schema` and :mod:`scratch.index.textinfo`). Loaded only when asked.
``lines.bin``
    ``line_count + 1`` u64 line start offsets (see :mod:`scratch.index.lines`).
``tokens-<base>.bin``
    Per base encoding, added at build time or later: a 32-byte header
    (:data:`TOKENS_HEADER`: magic, line count, exact total or -1, flags)
    then ``line_count + 1`` u64 prefix sums. Written to a temporary name and renamed.
``nodes.bin``, ``keys.bin``
    Skeleton records and their key bytes (:mod:`scratch.index.skeleton`); JSON/YAML/NDJSON.
``u32.bin``, ``u64.bin``
    Concatenated sections (item start lines and bytes, sorted keys, level lines, CSV rows).

All integers are in the byte order named by ``byteorder`` (the builder's native order; a
reader on another order treats the index as invalid and rebuilds it). Any mismatch -- missing
file, wrong size, other format version, content of another size or fingerprint, built for
another format than the reader asks for -- raises :class:`scratch.errors.IndexInvalid`; the
caller rebuilds. Bit flips inside the binary files are not detected.
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from pathlib import Path
from typing import NotRequired, TypedDict

from scratch.errors import IndexInvalid

TOKENS_MAGIC = b"SCTOKv1\0"
TOKENS_HEADER = struct.Struct("<8sQqQ")  # magic, line_count, exact total (-1: unknown), flags

INDEX_FORMAT = 2  # 2: CSV columns are numbers only when every value reads back as written


class IndexMeta(TypedDict):
    """``meta.json``: what the builder wrote and the reader checks before trusting the files."""

    scratch_index: int  # INDEX_FORMAT: any other value means rebuild
    format: str  # what the content was indexed as ("text" when it did not parse as asked)
    requested_format: str  # what the build was asked for
    layout: str | None  # how stored JSON/YAML is laid out (canonical, raw, ndjson, yaml, ...)
    engine: str | None  # the parser that read it (orjson or json)
    bytes: int  # content size, checked on open
    line_count: int
    byteorder: str  # sys.byteorder of the builder: the binary files are native-endian
    fingerprint: int  # of the content (fingerprint()), checked on open
    warnings: list[str]
    # Written after the fields above, as the files are (a reader treats the first four as
    # empty when absent; a meta without ``files`` is refused as incomplete).
    named: NotRequired[dict[str, int]]  # named u32 section -> its number in sections32
    sections32: NotRequired[list[list[int]]]  # [offset, length] of each u32 section in U32
    sections64: NotRequired[list[list[int]]]  # the same in U64
    nodes: NotRequired[int]  # node records in NODES
    files: NotRequired[dict[str, int]]  # every index file and its size, checked on open
META = "meta.json"
INFO = "info.json"
LINES = "lines.bin"
NODES = "nodes.bin"
KEYS = "keys.bin"
U32 = "u32.bin"
U64 = "u64.bin"
_BASE_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def tokens_file(base: str) -> str:
    if not _BASE_RE.fullmatch(base) or base.startswith("."):
        raise IndexInvalid(f"invalid encoding name {base!r}", reason="bad_base", base=base)
    return f"tokens-{base}.bin"


def fingerprint(path: Path, size: int | None = None) -> int:
    """CRC-32 of the first and last 4 KiB (cheap: two reads)."""
    with open(path, "rb") as f:
        if size is None:
            size = os.fstat(f.fileno()).st_size
        head = f.read(4096)
        tail = b""
        if size > 4096:
            f.seek(max(4096, size - 4096))
            tail = f.read(4096)
    return zlib.crc32(tail, zlib.crc32(head))


def dump_info(info: object) -> bytes:
    """``info.json`` bytes, numbers exact (:func:`scratch.jsonvalues.dumps`)."""
    from scratch.jsonvalues import dumps

    return dumps(info)


def load_info(raw: bytes) -> object:
    """Inverse of :func:`dump_info`, numbers exact; an older index may hold NaN (the stdlib
    wrote it then), which still reads."""
    import json

    from scratch.errors import JsonError
    from scratch.jsonvalues import exact_float, exact_int, parse_exact

    try:
        return parse_exact(raw)
    except JsonError:
        return json.loads(raw, parse_int=exact_int, parse_float=exact_float)


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
