"""The big arrays of a big canonical JSON text, kept as text and parsed a batch at a time.

Ingest of a big container (:func:`scratch.index.normalizer._big_container`) used to parse the
whole canonical text into one value and walk it again for the analysis: memory held the text
and a value four times its size. Here the root is parsed with each big array left out, and the
array stays text (:class:`TextItems`, an empty ``list`` to the type checks of the analysis'
readers): one pass (:meth:`TextItems.scan`) reads its items a batch at a time for what the
analysis needs of all of them (their start lines in the canonical layout, the item union of
:mod:`scratch.index.schema`, the counts of :mod:`scratch.index.kube`). With the C accelerator
the items are not even made: ``scan_items`` of ``scratch._union`` walks their text, carries the
union on and cuts each item down to the few members the Kubernetes tally reads (a 188 MB
PodList: ~0.45 s instead of ~1 s of making and freeing orjson's objects); without it, or for
text only orjson decides (a number past a double, a lone surrogate), each batch is parsed
and each item handed over, then dropped. The readers of the analysis ask a ``TextItems`` for those
results (``starts``/``lines``, ``union``, ``kube``) instead of walking it, and may still
iterate or slice it (each item parsed anew), so every result is the one the whole value gives.

The canonical layout (:mod:`scratch.formats.jsontext`) makes the text easy to cut: a string
never holds a raw newline, and a line at nesting depth ``d`` starts with exactly ``2 * d``
spaces, so the items of an array at depth ``d - 1`` are separated by ``",\\n"`` and ``2 * d``
spaces followed by a non-space, and the members of the root by ``"\\n  \\""``. The C
re-indent pass writes down where it put the separators at depths 1 and 2
(:class:`scratch.reindent.Separators`): then the body is not read again to find them
(:func:`known_separators`; ~0.15 s for a 188 MB body).

Kept as text: a non-empty array, at the root or as a member of a root object, whose text is
:data:`LAZY_BYTES` or more, with more than :data:`scratch.index.jsonskel.BIG_ARRAY` items (an
array the skeleton expands item by item is parsed as before). Anything unusual (a repeated
root key, a root with very many members) makes :func:`prepare_lazily` answer None, and a batch
orjson cannot read makes :func:`scan_lazily` raise :class:`NotLazy`: the caller parses the whole
text as before.
"""

from __future__ import annotations

import os
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, SupportsIndex, overload

from scratch.jsonvalues import JSON

if TYPE_CHECKING:
    from scratch.reindent import Separators

LAZY_BYTES = 4 << 20  # an array whose text is this big is kept as text
BATCH_BYTES = 1 << 20  # items are parsed this much text at a time
MAX_MEMBERS = 10_000  # a root object with more members is parsed whole


class ItemsUnion(Protocol):
    """What :class:`scratch.index.schema.Union` does for the items (the caller hands one in:
    this module sits below the schema)."""

    # (max depth, max keys, visit budget) when ``scratch._union.scan_items`` can carry this
    # union on from the items' text (it keeps the attributes of a schema.Union); else None
    text_limits: tuple[int, int, int] | None

    def add(self, item: JSON) -> None: ...

    def sample_indexes(self, total: int) -> tuple[int, ...]: ...

    def offer_sample(self, index: int, item: JSON, total: int) -> None: ...

    def to_dict(self) -> Mapping[str, object]: ...  # an ItemUnion


class Tally(Protocol):
    """What :class:`scratch.index.kube.KubeTally` does for each item."""

    # the members ``add`` reads, as paths of one or two keys: an item cut down to those
    # gives the same counts (None: it reads more)
    members: tuple[tuple[str, ...], ...] | None

    def add(self, i: int, obj: JSON) -> None: ...


class Readers:
    """What the items are handed to as they are parsed: a new union of ``n`` items, a new
    Kubernetes tally, and the item count from which the skeleton lists start lines."""

    def __init__(self, union: Callable[[int], ItemsUnion], tally: Callable[[], Tally],
                 big_array: int) -> None:
        self.union = union
        self.tally = tally
        self.big_array = big_array


class NotLazy(Exception):
    """The text cannot be read batch by batch (the caller parses it whole)."""


class Unwritten:
    """The canonical text in memory while a thread still writes it to its file: batches are
    cut from it until ``written()`` says the file is whole (it raises what the write raised),
    then it is let go, for every :class:`TextItems` sharing it, and they read the file."""

    def __init__(self, body: bytes, written: Callable[[], bool]) -> None:
        self.body: bytes | None = body
        self._written = written

    def take(self) -> bytes | None:
        """The text while the file is not yet whole, else None (for good)."""
        if self.body is not None and self._written():
            self.body = None
        return self.body


class TextItems(list[JSON]):
    """The items of one array of ``body`` (bytes ``[start, end)``, at nesting depth
    ``depth``): ``n`` of them, parsed a batch at a time. The underlying list is empty:
    only ``len``, truth, iteration and indexing are answered (from the text)."""

    def __init__(self, body: bytes, start: int, end: int, depth: int, count: int,
                 cuts: list[int], batch: int = BATCH_BYTES, tally: bool = False) -> None:
        super().__init__()
        self.batch = batch
        self.tally = tally  # scan() counts Kubernetes signals (the root, or ``items``)
        self.body: bytes | None = body
        self.path: Path | None = None  # after detach(): the file holding the same bytes
        self.unwritten: Unwritten | None = None  # after detach(): the text until the file is whole
        self.start = start
        self.end = end
        self.depth = depth
        self.n = count
        self.cuts = cuts  # the separators where batches end (see _counted)
        # from scan(): item start lines counted from the first item's (0), lines of all
        # items (canonical layout of the parsed values), the item union, Kubernetes counts
        self.starts: array[int] | None = None
        self.lines = 0
        self.union: Mapping[str, object] | None = None  # a scratch.index.schema.ItemUnion
        self.kube: Tally | None = None

    def __len__(self) -> int:
        return self.n

    def __bool__(self) -> bool:
        return self.n > 0

    def __repr__(self) -> str:
        return f"TextItems({self.n} items, bytes {self.start}-{self.end})"

    def detach(self, path: Path, unwritten: Unwritten | None = None) -> None:
        """Read the text from ``path`` from now on (the body's bytes at the same offsets: the
        stored form), so the body in memory can go. With ``unwritten`` (the same body, while
        its file is being written), from that until the file is whole."""
        self.body, self.path, self.unwritten = None, path, unwritten

    def batches(self) -> Iterator[list[JSON]]:
        """The items, parsed, a list per :data:`BATCH_BYTES` of text."""
        for _, batch in self._batches():
            yield batch

    def _batches(self) -> Iterator[tuple[bytes | memoryview, list[JSON]]]:
        """(text, its items parsed) per :data:`BATCH_BYTES` of text (see :meth:`_texts`)."""
        import orjson

        for text, framed in self._texts(framed=True):
            try:
                batch = orjson.loads(framed)
            except orjson.JSONDecodeError as exc:  # 1e400, a lone surrogate: parsed whole
                raise NotLazy(str(exc)) from None
            del framed
            yield text, batch
            del text

    def _texts(self, framed: bool = False) -> Iterator[tuple[bytes | memoryview,
                                                              bytes | memoryview]]:
        """(text, the same between the brackets orjson needs when ``framed``, else the text
        again) per :data:`BATCH_BYTES` of text. From the file, the text is read into one
        buffer used again: the views handed out are good until the next batch is asked for."""
        body = self.body
        fd = -1
        buf = bytearray()
        try:
            pos = self.start
            for stop in [*self.cuts, self.end]:
                n = stop - pos
                text: bytes | memoryview
                mem = body if body is not None or self.unwritten is None else self.unwritten.take()
                if mem is not None:
                    text = memoryview(mem)[pos:stop]
                    whole: bytes | memoryview = b"[" + text + b"]" if framed else text
                    del mem
                else:
                    if fd < 0:
                        assert self.path is not None  # detached: read from the file
                        fd = os.open(self.path, os.O_RDONLY)
                        buf = bytearray(self.batch + (64 << 10))
                    if n + 2 > len(buf):  # an item longer than a batch: a bigger buffer
                        buf = bytearray(n + 2)  # (the last view handed out keeps the old)
                    view = memoryview(buf)
                    _pread_into(fd, view[1:n + 1], pos)
                    buf[0], buf[n + 1] = 0x5B, 0x5D  # "[", "]"
                    text, whole = view[1:n + 1], (view[:n + 2] if framed else view[1:n + 1])
                yield text, whole
                del text, whole
                pos = stop + 1
        finally:
            if fd >= 0:
                os.close(fd)

    def __iter__(self) -> Iterator[JSON]:
        for batch in self.batches():
            yield from batch

    @overload
    def __getitem__(self, i: SupportsIndex) -> JSON: ...

    @overload
    def __getitem__(self, i: slice) -> list[JSON]: ...

    def __getitem__(self, i: SupportsIndex | slice) -> JSON | list[JSON]:
        import itertools

        if isinstance(i, slice):
            start, stop, step = i.indices(self.n)
            if step != 1 or start != 0:
                return list(self)[i]
            return list(itertools.islice(iter(self), stop))
        k = i.__index__()
        if k < 0:
            k += self.n
        if not 0 <= k < self.n:
            raise IndexError("list index out of range")
        return next(itertools.islice(iter(self), k, None))

    def scan(self, engine: str, readers: Readers, text_lines: bool = False) -> None:
        """Parse every item once: their start lines, the item union and (:attr:`tally`) the
        Kubernetes counts; raises :class:`NotLazy` when a batch is not orjson's JSON.

        ``text_lines``: no object in the text may repeat a key (the re-indent pass's
        ``KEY_REPEAT`` flag is clear), so an item's lines are those of its text; else each
        item is rendered to count them (a repeated key is a line fewer in the value). Then,
        with the C walk built, the items are not made at all (:meth:`_walk`), unless their
        text holds what only orjson decides: then they are parsed after all."""
        if text_lines and _c_scan_items is not None and self._walk(readers):
            return
        self._parse(engine, readers, text_lines)

    def _walk(self, readers: Readers) -> bool:
        """:meth:`scan` in one C pass over the text (``scan_items`` of ``scratch._union``):
        the union carried on from the text, the tally handed each item cut down to the
        members it reads, the sample items parsed alone. False (nothing kept) when the walk
        leaves some batch to orjson, or the readers cannot be carried on so."""
        import orjson

        n = self.n
        u = readers.union(n)
        kube = readers.tally() if self.tally else None
        limits = u.text_limits
        members = () if kube is None else kube.members
        if limits is None or members is None or _c_scan_items is None:
            return False
        wanted = u.sample_indexes(n)
        starts = array("I")
        cur = 0
        i = 0
        for text, _ in self._texts():
            try:
                got = _c_scan_items(text, i, cur, u, limits, members, wanted, orjson.loads)
            except ValueError:  # a member or sample orjson refused (not the validated text)
                return False
            if got is None:
                return False
            part, cur, count, projections, samples = got
            starts.frombytes(part)
            for index, item in samples:
                u.offer_sample(index, item, n)
            if kube is not None:
                add = kube.add
                for k, thin in enumerate(projections, i):
                    add(k, thin)
            i += count
        if i != n:  # the separators were miscounted: not canonical text after all
            raise NotLazy(f"{i} items walked, {n} counted")
        self.starts, self.lines, self.union, self.kube = starts, cur, u.to_dict(), kube
        return True

    def _parse(self, engine: str, readers: Readers, text_lines: bool) -> None:
        """:meth:`scan` by parsing each batch with orjson and handing each item over."""
        from scratch.formats.jsontext import render_line_count

        n = self.n
        u = readers.union(n)
        add, offer = u.add, u.offer_sample
        kube = readers.tally() if self.tally else None
        starts = array("I")
        cur = 0
        i = 0
        for text, batch in self._batches():
            if text_lines:
                cur = _text_starts(text, self.depth, cur, starts)
                if len(starts) != i + len(batch):
                    raise NotLazy(f"{len(starts)} items cut, {i + len(batch)} parsed")
            for item in batch:
                if not text_lines:
                    starts.append(cur)
                    t = type(item)
                    cur += render_line_count(item, engine) if (t is dict or t is list) \
                        and item else 1
                add(item)
                offer(i, item, n)
                if kube is not None:
                    kube.add(i, item)
                i += 1
        if i != n:  # the separators were miscounted: not canonical text after all
            raise NotLazy(f"{i} items parsed, {n} counted")
        self.starts, self.lines, self.union, self.kube = starts, cur, u.to_dict(), kube


def _text_starts(text: bytes | memoryview, depth: int, cur: int, starts: array[int]) -> int:
    """Append the start line (counted on from ``cur``) of each item of ``text`` (items of an
    array at ``depth``, canonical layout) to ``starts``; the line after the last item. In C
    (``item_starts`` of ``scratch._reindent``, one pass) when built, else
    :func:`_text_starts_py`."""
    if _c_item_starts is not None and starts.itemsize == 4:
        got, after = _c_item_starts(text, depth, cur)
        starts.frombytes(got)
        return int(after)
    return _text_starts_py(text, depth, cur, starts)


def _text_starts_py(text: bytes | memoryview, depth: int, cur: int, starts: array[int]
                    ) -> int:
    """The pure-Python twin of :func:`_text_starts`'s C pass."""
    text = bytes(text)
    cuts = separators(text, 0, len(text), depth, 0)[1]
    count = text.count
    pos = 1 if text[:1] == b"\n" else 0  # a batch after the first starts on its "\n"
    for cut in cuts:  # an item ends at its "," and the next starts on the next line
        starts.append(cur)
        cur += count(b"\n", pos, cut) + 1
        pos = cut + 2
    starts.append(cur)
    return cur + count(b"\n", pos) + 1


def _pread_into(fd: int, view: memoryview, offset: int) -> None:
    """Fill ``view`` from the file ``fd`` at ``offset``."""
    while view:
        got = os.preadv(fd, [view], offset)
        if not got:
            raise NotLazy("the stored file ended early")
        view = view[got:]
        offset += got


def separators_py(body: bytes, start: int, end: int, depth: int, step: int
                  ) -> tuple[int, list[int]]:
    """The pure-Python twin of the C ``separators`` (``scratch._reindent``): how many item
    separators at ``depth`` have their ``","`` in ``body[start:end]``, and the offsets of the
    first and then of each one at least ``step`` bytes after the last listed (0: all)."""
    end = min(end, len(body))
    start = max(start, 0)
    sep = re.compile(rb",\n" + b"  " * depth + rb"(?=[^ ])")
    count = 0
    cuts: list[int] = []
    for m in sep.finditer(body, start):
        at = m.start()
        if at >= end:
            break
        count += 1
        if not cuts or step == 0 or at >= cuts[-1] + step:
            cuts.append(at)
    return count, cuts


try:
    # not found when unbuilt, found (untyped) when built: either way no error
    from scratch._reindent import (  # type: ignore[import-not-found, unused-ignore]
        item_starts as _c_item_starts,
    )
    from scratch._reindent import separators as _c_separators  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # no compiler at install time: the twins above
    _c_separators = _c_item_starts = None
try:
    from scratch._union import scan_items as _c_scan_items  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # no compiler at install time: the items are parsed (TextItems._parse)
    _c_scan_items = None


def separators(body: bytes, start: int, end: int, depth: int, step: int
               ) -> tuple[int, list[int]]:
    """See :func:`separators_py` (C when built)."""
    if _c_separators is not None:
        found: tuple[int, list[int]] = _c_separators(body, start, end, depth, step)
        return found
    return separators_py(body, start, end, depth, step)


# separators(body, start, end, depth, step), or an answer the same from offsets known
Find = Callable[[bytes, int, int, int, int], tuple[int, list[int]]]


def known_separators(known: Separators) -> Find:
    """:func:`separators` answered from the offsets the re-indent pass found at depths 1 and
    2 (:class:`scratch.reindent.Separators`), without reading the body again; other depths
    are read."""

    def find(body: bytes, start: int, end: int, depth: int, step: int
             ) -> tuple[int, list[int]]:
        if depth not in (1, 2):
            return separators(body, start, end, depth, step)
        offsets = known[depth - 1]
        lo = bisect_left(offsets, max(start, 0))
        hi = max(lo, bisect_left(offsets, min(end, len(body))))
        if step == 0:
            return hi - lo, offsets[lo:hi].tolist()
        cuts: list[int] = []
        i = lo
        while i < hi:  # the first, then the first at least ``step`` after the last listed
            cuts.append(offsets[i])
            i = bisect_left(offsets, offsets[i] + step, i + 1, hi)
        return hi - lo, cuts

    return find


def prepare_lazily(body: bytes, big_array: int, lazy_bytes: int = LAZY_BYTES,
                   batch: int = BATCH_BYTES, known: Separators | None = None) -> JSON:
    """The value of the canonical text ``body`` with its arrays of ``lazy_bytes`` or more as
    :class:`TextItems` not yet scanned (parsed ``batch`` bytes at a time once they are), or
    None when nothing in it is big enough (or it cannot be read so): the step that needs
    ``body`` whole. The items may then be read from a file holding the same bytes
    (:meth:`TextItems.detach`) while ``body`` goes, before :func:`scan_lazily` parses them.
    ``known``: the body's separators as its re-indent pass found them (then the body is not
    read again to find them)."""
    n = len(body)
    if n < lazy_bytes:
        return None
    find = separators if known is None else known_separators(known)
    try:
        if body[:2] == b"[\n" and body.endswith(b"\n]"):
            count, cuts = _counted(find, body, 2, n - 2, 1, batch)
            if count <= big_array:
                return None
            return TextItems(body, 2, n - 2, 1, count, cuts, batch, tally=True)
        if body[:2] != b"{\n" or not body.endswith(b"\n}"):
            return None
        return _lazy_object(find, body, big_array, lazy_bytes, batch)
    except NotLazy:
        return None


def _counted(find: Find, body: bytes, start: int, end: int, depth: int, batch: int
             ) -> tuple[int, list[int]]:
    """The items of the array text ``body[start:end]`` at ``depth``: how many, and the
    separators that end its batches of ``batch`` bytes (the first one at least ``batch``
    bytes in, then each at least ``batch`` bytes after the last), in one pass over the
    text."""
    first = find(body, start, min(end, start + batch), depth, end)[0]
    rest, cuts = find(body, start + batch, end, depth, batch)
    return first + rest + 1, cuts


def lazy_parts(value: JSON) -> list[TextItems]:
    """The arrays kept as text in a value of :func:`prepare_lazily` (the root, or members)."""
    found = (value, *value.values()) if isinstance(value, dict) else (value,)
    return [v for v in found if isinstance(v, TextItems)]


def scan_lazily(value: JSON, readers: Readers, text_lines: bool = False) -> None:
    """The step after :func:`prepare_lazily`: every array kept as text in ``value`` scanned
    (:meth:`TextItems.scan`; ``text_lines``: no object may repeat a key); raises
    :class:`NotLazy` as that does (then the caller parses the whole text)."""
    for items in lazy_parts(value):
        items.scan("orjson", readers, text_lines=text_lines)


def _lazy_object(find: Find, body: bytes, big_array: int, lazy_bytes: int, batch: int
                 ) -> dict[str, JSON] | None:
    import orjson

    n = len(body)
    found, commas = find(body, 1, n - 2, 1, 0)
    if found > MAX_MEMBERS:
        return None
    heads = [1, *(c + 1 for c in commas), n - 2]  # each member's "\n", then the closing one
    # (value's "[", items start, items end, count, batch cuts)
    lazy: list[tuple[int, int, int, int, list[int]]] = []
    for head, after in zip(heads, heads[1:], strict=False):
        close = after - 5 if body[after - 1:after] == b"," else after - 4  # "\n  ]"
        if after - head < lazy_bytes or body[close:close + 4] != b"\n  ]":
            continue
        nl = body.find(b"\n", head + 1)
        if body[nl - 1:nl] != b"[" or nl >= close:
            continue
        count, cuts = _counted(find, body, nl + 1, close, 2, batch)
        if count > big_array:
            lazy.append((nl - 1, nl + 1, close, count, cuts))
    if not lazy:
        return None
    pieces: list[bytes] = []
    pos = 0
    for bracket, _, close, _, _ in lazy:
        pieces.append(body[pos:bracket])
        pieces.append(b"[]")
        pos = close + 4
    pieces.append(body[pos:])
    try:
        root = orjson.loads(b"".join(pieces))
    except orjson.JSONDecodeError:
        return None
    if not isinstance(root, dict) or len(root) != len(heads) - 1:
        return None  # a repeated key: which value is kept is the parser's business
    keys = list(root)
    member = {head: k for k, head in enumerate(heads[:-1])}
    for bracket, start, close, count, cuts in lazy:
        head = body.rfind(b"\n", 0, bracket)
        key = keys[member[head]]
        if root[key] != []:
            return None
        root[key] = TextItems(body, start, close, 2, count, cuts, batch, tally=key == "items")
    return root
