"""A memory-mapped rank table: the BPE rank of a byte string without loading every rank.

Why: a small answer needs the ranks of a few hundred byte strings, but unpickling all 200k
ranks of o200k_base costs ~50 ms in every fresh process. This file is opened with ``mmap`` in
well under a millisecond and each lookup reads one or two slots and entries.

File format (all integers little-endian; derived data, kept in the token cache, rebuilt when
missing or damaged, never an error):

- Header, :data:`HEADER_SIZE` bytes: magic ``SCRBPETB``, format version (u32), encoding name
  (16 bytes, NUL-padded), the sha256 of the verified ``.tiktoken`` file it was built from
  (32 raw bytes), entry count, slot count (a power of two), slots offset, entries offset,
  entries size, file size (all u32), then the crc32 of everything before it (u32), then
  zero padding.
- Slots: ``n_slots`` u32. Slot ``i`` is either *empty*, written ``0x80000000 | i``, or the
  offset of an entry inside the entries area (< 2**31). Open addressing with linear probing
  from ``crc32(token bytes) mod n_slots``; at most ~40% of slots are used.
- Entries, laid out in slot order: u32 check, u32 ``rank << 8 | length``, then the token
  bytes. ``check`` is ``crc32(the 4 meta bytes + token bytes, start value = slot index)``.

Invariants:
- Exact: a rank is returned only when the stored token bytes equal the query (hash
  collisions can never give a false positive).
- Every slot and entry a lookup reads is checked before it is trusted: an empty slot must be
  exactly the empty value of its own index, and an entry must carry the check that binds its
  bytes, rank and length to the slot that points at it. So a damaged file (zeroed or
  garbled pages, a pointer moved, an entry edited) is detected with probability 1 - 2**-32
  per damaged slot or entry read, and raises :class:`TableDamaged`; untouched damage cannot
  change a result. The header is checked (crc, sizes, name, source hash) when opened.
- Read only: the mapping is never written, and a new table replaces the file by rename, never
  by rewriting it in place (a mapped file truncated under a reader would fault it).
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
from array import array
from collections.abc import Mapping
from zlib import crc32

MAGIC = b"SCRBPETB"
VERSION = 1
HEADER_SIZE = 128
_HEADER = struct.Struct("<8sI16s32s7I")  # ... followed by the header crc32
_EMPTY = 0x80000000
_META = struct.Struct("<II")
_MEMO_LIMIT = 1 << 18
_UNSEEN = -1  # never a rank


class TableDamaged(Exception):
    """A slot or entry of the table failed its check: rebuild the table."""


def build_table(name: str, source_sha256: str, ranks: Mapping[bytes, int]) -> bytes:
    """The table file for ``ranks`` (taken from verified rank files only)."""
    n = len(ranks)
    n_slots = 1 << max(4, (n * 5 // 2).bit_length())  # load factor <= 0.4
    keys: list[bytes | None] = [None] * n_slots
    mask = n_slots - 1
    for key in ranks:
        if not 0 < len(key) < 256:
            raise ValueError(f"token of {len(key)} bytes cannot be stored")
        i = crc32(key) & mask
        while keys[i] is not None:
            i = (i + 1) & mask
        keys[i] = key
    slots = array("I", bytes(4 * n_slots))
    if slots.itemsize != 4:  # pragma: no cover - every CPython platform has 4-byte 'I'
        raise ValueError("array('I') is not 32 bits here")
    parts: list[bytes] = []
    offset = 0
    pack_meta = _META.pack
    for i, token in enumerate(keys):
        if token is None:
            slots[i] = _EMPTY | i
            continue
        slots[i] = offset
        meta = ranks[token] << 8 | len(token)
        parts.append(pack_meta(crc32(meta.to_bytes(4, "little") + token, i), meta) + token)
        offset += 8 + len(token)
    if sys.byteorder == "big":  # pragma: no cover
        slots.byteswap()
    entries = b"".join(parts)
    slots_at = HEADER_SIZE
    entries_at = slots_at + 4 * n_slots
    size = entries_at + len(entries)
    head = _HEADER.pack(MAGIC, VERSION, name.encode(), bytes.fromhex(source_sha256), n,
                        n_slots, slots_at, entries_at, len(entries), size, 0)
    head += crc32(head).to_bytes(4, "little")
    head += bytes(HEADER_SIZE - len(head))
    return head + slots.tobytes() + entries


class RankTable:
    """Read-only lookups in a table file; behaves like ``dict.get`` on the ranks."""

    def __init__(self, buf: mmap.mmap | bytes, n_slots: int, slots_at: int, entries_at: int,
                 entries_size: int) -> None:
        self._buf = buf
        self._mask = n_slots - 1
        view = memoryview(buf)[slots_at:slots_at + 4 * n_slots]
        if sys.byteorder == "little":
            self._slots: memoryview | array[int] = view.cast("I")
        else:  # pragma: no cover
            self._slots = array("I", view)
            self._slots.byteswap()
        self._base = entries_at
        self._end = entries_size
        # Answers already read (hits and misses): BPE asks for the same pairs again and again.
        self._memo: dict[bytes, int | None] = {}

    def get(self, key: bytes, default: int | None = None) -> int | None:
        """The rank of ``key``, or ``default`` when it is not a token."""
        memo = self._memo
        r = memo.get(key, _UNSEEN)
        if r is _UNSEEN:
            r = self._lookup(key)
            if len(memo) < _MEMO_LIMIT:
                memo[key] = r
        return default if r is None else r

    def __contains__(self, key: object) -> bool:
        return isinstance(key, bytes) and self.get(key) is not None

    def __getitem__(self, key: bytes) -> int:
        r = self.get(key)
        if r is None:
            raise KeyError(key)
        return r

    def _lookup(self, key: bytes) -> int | None:
        slots = self._slots
        buf = self._buf
        base = self._base
        end = self._end
        mask = self._mask
        n = len(key)
        i = crc32(key) & mask
        for _ in range(mask + 1):
            v = slots[i]
            if v & _EMPTY:
                if v == _EMPTY | i:
                    return None
                raise TableDamaged(f"slot {i}")
            at = base + v
            if v + 8 > end:
                raise TableDamaged(f"slot {i}")
            check: int
            meta: int
            check, meta = _META.unpack_from(buf, at)
            length = meta & 0xFF
            if v + 8 + length > end:
                raise TableDamaged(f"entry of slot {i}")
            body = buf[at + 4:at + 8 + length]
            if crc32(body, i) != check:
                raise TableDamaged(f"entry of slot {i}")
            if length == n and body[4:] == key:
                return meta >> 8
            i = (i + 1) & mask
        raise TableDamaged("no empty slot")


def open_table(path: os.PathLike[str] | str, name: str, source_sha256: str,
               n_entries: int) -> RankTable | None:
    """The table at ``path`` mapped read-only, or None when it is missing, was built for
    another encoding, source or format version, or its header fails its checks."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size < HEADER_SIZE:
            return None
        try:
            buf = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
    finally:
        os.close(fd)
    table = table_from_buffer(buf, name, source_sha256, n_entries)
    if table is None:
        buf.close()
    return table


def table_from_buffer(buf: mmap.mmap | bytes, name: str, source_sha256: str,
                      n_entries: int) -> RankTable | None:
    """A :class:`RankTable` over ``buf`` (a whole table file) after its header checks."""
    if len(buf) < HEADER_SIZE:
        return None
    head = bytes(buf[:_HEADER.size])
    stored_crc = int.from_bytes(buf[_HEADER.size:_HEADER.size + 4], "little")
    if crc32(head) != stored_crc:
        return None
    (magic, version, raw_name, sha, n, n_slots, slots_at, entries_at, entries_size, size,
     _reserved) = _HEADER.unpack(head)
    if (magic, version) != (MAGIC, VERSION) or raw_name.rstrip(b"\0") != name.encode():
        return None
    if sha != bytes.fromhex(source_sha256) or n != n_entries or size != len(buf):
        return None
    if (n_slots & (n_slots - 1) or n_slots < n * 2 or slots_at != HEADER_SIZE
            or entries_at != slots_at + 4 * n_slots or entries_at + entries_size != size):
        return None
    return RankTable(buf, n_slots, slots_at, entries_at, entries_size)
