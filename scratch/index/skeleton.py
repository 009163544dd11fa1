"""The structural skeleton of a JSON/YAML/NDJSON document: fixed-size node records.

Records are written in DFS pre-order, so a node's descendants follow it directly and ``next``
(the index just past its subtree) lets a reader step from one child to its next sibling
without reading the grandchildren. Record 0 is the root.

``nodes.bin``: ``count`` records of :data:`RECORD` (little-endian, 64 bytes):

=============  ====  ===========================================================================
field          type  meaning
=============  ====  ===========================================================================
parent         u32   parent record (``NONE`` for the root)
next           u32   index just past this node's subtree
type           u8    index into :data:`TYPES`
flags          u8    :data:`LAZY` children not recorded; :data:`ITEMS` item start lines in
                     section ``aux``; :data:`SORTED` child keys sorted in section ``aux``
pad            u16
key_off        u32   object child: key's UTF-8 offset in ``keys.bin``; array child: its index
key_len        u32   key length in bytes; ``NONE`` for an array child
length         u32   items (array), keys (object), characters (string); 0 otherwise
start_line     u32   first line of the member (its key line for object members), 1-based
end_line       u32   last line of the member, inclusive
aux            u32   section id (see flags) or ``NONE``
aux2           u32   raw JSON: section id of item start bytes for ITEMS arrays, else ``NONE``
value_line     u32   line where the value itself starts
value_col      u32   character column (0-based) where the value starts on ``value_line``
start_byte     u64   raw JSON: byte offset of the value; 0 for line-based layouts
end_byte       u64   raw JSON: byte offset just past the value; 0 for line-based layouts
=============  ====  ===========================================================================

Sections are arrays of u32 (``u32.bin``) or u64 (``u64.bin``) addressed by id through the
index metadata. Guarantees: every container at depth <= the build's depth limit is either
expanded (its children are records) or flagged LAZY/ITEMS; a LAZY node's lines hold its whole
value, so a reader parses only those lines to go deeper.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterator
from typing import cast

from scratch.jsonvalues import JsonNumber

RECORD = struct.Struct("<IIBBHIIIIIIIIIQQ")
assert RECORD.size == 64
NONE = 0xFFFFFFFF

TYPES = ("null", "boolean", "integer", "number", "string", "object", "array")
T_NULL, T_BOOL, T_INT, T_NUM, T_STR, T_OBJ, T_ARR = range(7)
TYPE_CODE = {name: i for i, name in enumerate(TYPES)}

LAZY = 1
ITEMS = 2
SORTED = 4

SORT_MIN_CHILDREN = 32  # objects with more children get a sorted key section

# Field positions in a tuple from ``RECORD.unpack``.
F_PARENT, F_NEXT, F_TYPE, F_FLAGS = 0, 1, 2, 3
F_KEY_OFF, F_KEY_LEN, F_LENGTH, F_START, F_END = 5, 6, 7, 8, 9
F_AUX, F_AUX2, F_VLINE, F_VCOL, F_SBYTE, F_EBYTE = 10, 11, 12, 13, 14, 15


def type_code(value: object) -> int:
    if value is None:
        return T_NULL
    t = type(value)
    if t is str:
        return T_STR
    if t is dict:
        return T_OBJ
    if t is list:
        return T_ARR
    if t is bool:
        return T_BOOL
    if t is int:
        return T_INT
    if t is float:
        return T_NUM
    if t is JsonNumber:
        return T_INT if cast(JsonNumber, value).integer else T_NUM
    if isinstance(value, dict):
        return T_OBJ
    if isinstance(value, (list, tuple)):
        return T_ARR
    if isinstance(value, bool):
        return T_BOOL
    if isinstance(value, int):
        return T_INT
    if isinstance(value, float):
        return T_NUM
    return T_STR  # YAML timestamps, binary: shown as strings


class Builder:
    """Collects records in DFS pre-order plus u32/u64 sections."""

    def __init__(self) -> None:
        self.recs: list[list[int]] = []
        self.keys = bytearray()
        self.u32: list[array[int]] = []
        self.u64: list[array[int]] = []

    def __len__(self) -> int:
        return len(self.recs)

    def open(self, parent: int, key: str | int | None, type_: int, start_line: int,
             value_line: int = 0, value_col: int = 0, start_byte: int = 0) -> int:
        if isinstance(key, str):
            kb = key.encode("utf-8", "surrogatepass")
            koff, klen = len(self.keys), len(kb)
            self.keys += kb
        elif key is None:
            koff, klen = 0, 0
        else:
            koff, klen = key, NONE
        idx = len(self.recs)
        self.recs.append([parent, idx + 1, type_, 0, koff, klen, 0, start_line, start_line,
                          NONE, NONE, value_line or start_line, value_col, start_byte, 0])
        return idx

    def close(self, idx: int, end_line: int, length: int = 0, flags: int = 0,
              end_byte: int = 0) -> None:
        r = self.recs[idx]
        r[1] = len(self.recs)
        r[3] |= flags
        r[6] = min(length, NONE - 1)
        r[8] = end_line
        r[14] = end_byte

    def children_of(self, idx: int) -> Iterator[int]:
        """Children of a node still open (all of them closed already)."""
        j = idx + 1
        while j < len(self.recs):
            yield j
            j = self.recs[j][1]

    def truncate_children(self, idx: int) -> None:
        """Forget every record after ``idx`` (its descendants), e.g. when an array turns big."""
        if len(self.recs) > idx + 1:
            first = self.recs[idx + 1]
            if first[5] != NONE and first[5] != 0:
                del self.keys[first[4]:]
            del self.recs[idx + 1:]

    def set_items(self, idx: int, starts: array[int], byte_starts: array[int] | None = None
                  ) -> None:
        r = self.recs[idx]
        r[3] |= ITEMS | LAZY
        self.u32.append(starts)
        r[9] = len(self.u32) - 1
        if byte_starts is not None:
            self.u64.append(byte_starts)
            r[10] = len(self.u64) - 1

    def finish(self) -> None:
        """Add sorted-key sections to objects with many recorded children."""
        recs = self.recs
        keys = bytes(self.keys)
        for idx, r in enumerate(recs):
            if r[2] != T_OBJ or r[3] & LAZY or r[6] < SORT_MIN_CHILDREN:
                continue
            kids = []
            j = idx + 1
            while j < r[1]:
                kids.append(j)
                j = recs[j][1]
            if len(kids) < SORT_MIN_CHILDREN:
                continue
            kids.sort(key=lambda k: keys[recs[k][4]:recs[k][4] + recs[k][5]])
            self.u32.append(array("I", kids))
            r[3] |= SORTED
            r[9] = len(self.u32) - 1

    def pack(self) -> bytes:
        pack = RECORD.pack
        out = bytearray()
        for r in self.recs:
            out += pack(r[0], r[1], r[2], r[3], 0, r[4], r[5], r[6], r[7], r[8], r[9], r[10],
                        r[11], r[12], r[13], r[14])
        return bytes(out)


class Skeleton:
    """Read-only view of ``nodes.bin`` + ``keys.bin`` + sections (buffers may be mmaps)."""

    def __init__(self, nodes: memoryview, keys: memoryview, u32: memoryview, u64: memoryview,
                 sec32: dict[int, tuple[int, int]], sec64: dict[int, tuple[int, int]]) -> None:
        self._nodes = nodes
        self._keys = keys
        self._u32 = u32
        self._u64 = u64
        self._sec32 = sec32
        self._sec64 = sec64
        self.count = len(nodes) // RECORD.size

    def rec(self, i: int) -> tuple[int, ...]:
        return RECORD.unpack_from(self._nodes, i * RECORD.size)

    def key_of(self, r: tuple[int, ...]) -> str | int | None:
        if r[F_KEY_LEN] == NONE:
            return r[F_KEY_OFF]
        if r[F_PARENT] == NONE:
            return None
        off = r[F_KEY_OFF]
        return bytes(self._keys[off:off + r[F_KEY_LEN]]).decode("utf-8", "surrogatepass")

    def children(self, i: int) -> Iterator[int]:
        r = self.rec(i)
        j = i + 1
        while j < r[1]:
            yield j
            j = self.rec(j)[1]

    def section32(self, sid: int) -> memoryview:
        off, n = self._sec32[sid]
        return self._u32[off:off + n]

    def section64(self, sid: int) -> memoryview:
        off, n = self._sec64[sid]
        return self._u64[off:off + n]

    def child(self, i: int, seg: str | int) -> int | None:
        """Record of child ``seg`` of record ``i`` (None if absent or not recorded)."""
        r = self.rec(i)
        if r[3] & LAZY:
            return None
        if r[2] == T_ARR:
            if not isinstance(seg, int):
                return None
            j = i + 1
            k = 0
            while j < r[1]:
                if k == seg:
                    return j
                j = self.rec(j)[1]
                k += 1
            return None
        if r[2] != T_OBJ:
            return None
        key = seg if isinstance(seg, str) else str(seg)
        kb = key.encode("utf-8", "surrogatepass")
        if r[3] & SORTED:
            order = self.section32(r[10])
            lo, hi = 0, len(order)
            while lo < hi:
                mid = (lo + hi) // 2
                c = self.rec(order[mid])
                ck = bytes(self._keys[c[5]:c[5] + c[6]])
                if ck < kb:
                    lo = mid + 1
                else:
                    hi = mid
            found = None
            # a repeated key (kept in raw JSON text): the last one, as JSON parsers read it
            while lo < len(order):
                c = self.rec(order[lo])
                if bytes(self._keys[c[5]:c[5] + c[6]]) != kb:
                    break
                found = order[lo]
                lo += 1
            return found
        found = None
        for j in self.children(i):
            c = self.rec(j)
            if c[6] == len(kb) and bytes(self._keys[c[5]:c[5] + c[6]]) == kb:
                found = j  # the last of a repeated key, as JSON parsers read it
        return found
