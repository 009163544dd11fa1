"""Reading an index: line ranges, token costs and the node records, touching only what is asked.

Opening reads ``meta.json`` and checks the content's size and fingerprint (two small reads).
Binary files are memory-mapped on first use, so a line range costs two offset lookups and one
read, a token cost two lookups, and "how many lines fit" a binary search over the mapping.
A piece of one line (:meth:`IndexReader.read_line_part`) costs a read of the piece, whatever
the line's length. Index files are opened without following a symlink and refused when
hard-linked or not plain files (the index is then invalid, and rebuilt in place).

:class:`IndexReader` is what :mod:`scratch.index.structure` reads from (the node records,
the content's bytes, a cache of parsed regions); paths into the structure are answered by
:class:`scratch.index.entry.EntryIndex`, the public class, which adds them on top of both.
"""

from __future__ import annotations

import mmap
import os
import stat
import sys
from bisect import bisect_right
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Self, cast

from scratch.errors import IndexInvalid, OutOfRange
from scratch.index import files as F
from scratch.index.skeleton import Skeleton

if TYPE_CHECKING:
    from scratch.index.lines import CountLines
    from scratch.jsonvalues import JSON

MAX_KEYS = 1000  # keys listed in a NodeInfo
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
Segment = str | int


class NodeInfo(NamedTuple):
    """What the index knows about the node at ``path`` (the deepest existing prefix of a query).

    ``complete`` is false when the query went further than the document: ``missing`` is the
    first segment that does not exist under ``path``. ``indexed`` says whether the info came
    from records (True) or from parsing the text of an unrecorded region (False).
    ``value_line``/``value_col``: where the value's own text starts (YAML and raw JSON).
    """

    path: tuple[Segment, ...]
    type: str
    start_line: int
    end_line: int
    length: int | None
    keys: tuple[str, ...] | None
    complete: bool = True
    missing: Segment | None = None
    indexed: bool = True
    value_line: int | None = None
    value_col: int | None = None

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1


def open_index_file(path: Path) -> int:
    """An index file opened read-only, never through a symlink or a hard link (the cache is
    rebuildable: such a file makes the index invalid, and it is rebuilt)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        raise IndexInvalid(f"index file missing or unsafe: {path.name}", reason="missing_file",
                           file=path.name) from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        os.close(fd)
        raise IndexInvalid(f"index file {path.name} is not a plain file", reason="unsafe",
                           file=path.name)
    return fd


def read_index_file(path: Path) -> bytes:
    fd = open_index_file(path)
    try:
        size = os.fstat(fd).st_size
        return os.pread(fd, size, 0) if size else b""
    finally:
        os.close(fd)


class _Map:
    """A read-only mapping of one file (empty files allowed)."""

    def __init__(self, path: Path, expected: int | None, header: int = 0, code: str = "B") -> None:
        fd = open_index_file(path)
        try:
            size = os.fstat(fd).st_size
            if expected is not None and size != expected:
                raise IndexInvalid(f"index file {path.name} has {size} bytes, expected {expected}",
                                   reason="bad_size", file=path.name)
            self.mm = mmap.mmap(fd, size, access=mmap.ACCESS_READ) if size else None
        finally:
            os.close(fd)
        self.size = size
        if self.mm is not None:
            view = memoryview(self.mm)[header:]
            # memoryview.cast is typed for literal formats only; every format here is integral
            self.view: memoryview = view.cast(code) if code != "B" else view  # type: ignore[call-overload]
        else:
            empty = memoryview(b"")
            self.view = empty.cast(code) if code != "B" else empty  # type: ignore[call-overload]

    def close(self) -> None:
        try:
            self.view.release()
        except (AttributeError, ValueError):
            pass
        if self.mm is not None:
            try:
                self.mm.close()
            except BufferError:
                pass  # a caller still holds a slice; the mapping goes with the process


class IndexReader:
    """The files of one stored version's index. Use :meth:`open`; close when done (or
    ``with``). Callers use :class:`scratch.index.entry.EntryIndex`, which adds paths."""

    def __init__(self, content_path: Path, index_dir: Path, meta: F.IndexMeta) -> None:
        self.content_path = content_path
        self.index_dir = index_dir
        self.meta = meta
        self.format: str = meta["format"]
        self.layout: str | None = meta.get("layout")
        self.engine: str = meta.get("engine") or "orjson"
        self.bytes: int = meta["bytes"]
        self.line_count: int = meta["line_count"]
        self.warnings: list[str] = meta.get("warnings", [])
        self._maps: dict[str, _Map] = {}
        self._info: dict[str, JSON] | None = None
        self._skeleton: Skeleton | None = None
        self._fd: int | None = None
        # parsed regions and what answers left out (scratch.index.structure says which)
        self._cache: dict[object, object] = {}
        self._totals: dict[str, int] = {}

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(cls, content_path: Path, index_dir: Path, fmt: str | None = None) -> Self:
        """Open an index; raises :class:`IndexInvalid` if it must be rebuilt.

        ``fmt``: the format the caller needs the content indexed as. An index built for another
        format (the same bytes stored once as text and once as JSON) is not this one: it raises
        ``IndexInvalid`` (reason ``format_mismatch``). An index whose build fell back to text
        because the content did not parse as the format asked for counts as built for it.
        """
        import orjson

        content_path = Path(content_path)
        index_dir = Path(index_dir)
        if os.path.islink(index_dir):  # placed there to point elsewhere: rebuilt in its place
            raise IndexInvalid(f"index {index_dir.name} is a symlink", reason="unsafe")
        try:
            raw = read_index_file(index_dir / F.META)
        except IndexInvalid as exc:
            raise IndexInvalid(f"no index at {index_dir.name}", reason="missing") from exc
        try:
            meta = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise IndexInvalid("index metadata is corrupt", reason="corrupt_meta") from exc
        if not isinstance(meta, dict) or meta.get("scratch_index") != F.INDEX_FORMAT:
            raise IndexInvalid("index has another format version", reason="version",
                               found=meta.get("scratch_index") if isinstance(meta, dict) else None)
        if meta.get("byteorder") != sys.byteorder:
            raise IndexInvalid("index was built on another byte order", reason="byteorder")
        try:
            size = content_path.stat().st_size
        except OSError as exc:
            raise IndexInvalid("content missing", reason="no_content") from exc
        try:
            if size != meta["bytes"] or F.fingerprint(content_path, size) != meta["fingerprint"]:
                raise IndexInvalid("index belongs to other content", reason="content_mismatch")
            files = meta["files"]
            if files.get(F.LINES) != (meta["line_count"] + 1) * 8:
                raise IndexInvalid("line index has the wrong size", reason="bad_size",
                                   file=F.LINES)
            for name, expected in files.items():  # a stat each: cheap, catches most damage
                try:
                    actual = os.lstat(index_dir / name).st_size
                except OSError:
                    actual = None
                if actual != expected:
                    raise IndexInvalid(f"index file {name} is missing or has the wrong size",
                                       reason="bad_size" if actual is not None else "missing_file",
                                       file=name)
        except (KeyError, TypeError) as exc:
            raise IndexInvalid("index metadata is incomplete", reason="corrupt_meta") from exc
        if fmt is not None and fmt not in (meta.get("format"), meta.get("requested_format")):
            raise IndexInvalid(f"index was built for {meta.get('format')}, not {fmt}",
                               reason="format_mismatch", found=meta.get("format"), wanted=fmt)
        return cls(content_path, index_dir, cast(F.IndexMeta, meta))  # checked above

    def close(self) -> None:
        for m in self._maps.values():
            m.close()
        self._maps.clear()
        self._skeleton = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _map(self, name: str, code: str = "B", header: int = 0,
             expected: int | None = None) -> memoryview:
        m = self._maps.get(name)
        if m is None:
            if expected is None:
                expected = self.meta["files"].get(name)
                if expected is None and not name.startswith("tokens-"):
                    raise IndexInvalid(f"index has no {name}", reason="missing_file", file=name)
            m = self._maps[name] = _Map(self.index_dir / name, expected, header, code)
        return m.view

    @property
    def info(self) -> dict[str, Any]:  # JSON edge: read from the index, narrowed by readers
        """Format-specific information (schema summary, log/CSV/markdown info)."""
        if self._info is None:
            try:
                info = F.load_info(read_index_file(self.index_dir / F.INFO))
                if not isinstance(info, dict):
                    raise ValueError("info is not an object")
                self._info = info
            except (OSError, ValueError) as exc:
                raise IndexInvalid("index info is missing or corrupt",
                                   reason="corrupt_info") from exc
        return self._info

    # -- lines ---------------------------------------------------------------------------------

    def _offsets(self) -> memoryview:
        return self._map(F.LINES, "Q")

    def line_starts(self) -> Sequence[int]:
        """Every line's start offset plus the content size (``line_count + 1`` entries), backed
        by the mapping: indexing it reads one page, nothing is loaded up front."""
        return self._offsets()

    def line_offset(self, lineno: int) -> int:
        """Byte offset where line ``lineno`` (1-based) starts; ``line_count + 1`` gives the size."""
        if not 1 <= lineno <= self.line_count + 1:
            raise OutOfRange(f"line {lineno} is outside 1..{self.line_count}",
                             total_lines=self.line_count, line=lineno)
        return int(self._offsets()[lineno - 1])

    def line_at_offset(self, offset: int) -> int:
        """The line holding byte ``offset``."""
        return bisect_right(self._offsets(), offset, 0, self.line_count)

    def _check_range(self, start: int, end: int) -> None:
        if start < 1 or end < start or end > self.line_count:
            raise OutOfRange(f"lines {start}-{end} are outside 1..{self.line_count}",
                             total_lines=self.line_count, start=start, end=end)

    def read_bytes(self, start: int, end: int) -> bytes:
        """The raw bytes of lines ``start..end`` (inclusive, with terminators): one read."""
        self._check_range(start, end)
        offs = self._offsets()
        lo, hi = offs[start - 1], offs[end]
        if self._fd is None:
            self._fd = os.open(self.content_path, os.O_RDONLY)
        return os.pread(self._fd, hi - lo, lo)

    def line_length(self, lineno: int) -> int:
        """Bytes of line ``lineno`` without its terminator (``\n``, or ``\r\n``): two offset
        lookups and a read of at most two bytes, whatever the line's length."""
        self._check_range(lineno, lineno)
        offs = self._offsets()
        lo, hi = int(offs[lineno - 1]), int(offs[lineno])
        tail = self._pread(min(2, hi - lo), hi - min(2, hi - lo))
        if tail.endswith(b"\n"):
            hi -= 2 if tail.endswith(b"\r\n") else 1
        return hi - lo

    def read_line_part(self, lineno: int, from_byte: int, max_bytes: int) -> bytes:
        """At most ``max_bytes`` bytes of line ``lineno`` (terminator excluded) from its byte
        ``from_byte``: one read of the bytes returned, so a piece of a 50 MB line costs what
        the piece costs. Bytes past the line's end are not returned (``b""`` at or past it)."""
        if from_byte < 0 or max_bytes < 0:
            raise OutOfRange("from_byte and max_bytes must not be negative", line=lineno,
                             from_byte=from_byte)
        length = self.line_length(lineno)
        if from_byte >= length:
            return b""
        start = int(self._offsets()[lineno - 1]) + from_byte
        return self._pread(min(max_bytes, length - from_byte), start)

    def _pread(self, n: int, offset: int) -> bytes:
        if self._fd is None:
            self._fd = os.open(self.content_path, os.O_RDONLY)
        return os.pread(self._fd, n, offset)

    def read_lines(self, start: int, end: int, keepends: bool = False) -> list[bytes]:
        """Lines ``start..end`` (inclusive, 1-based). Without ``keepends`` the ``\\n`` and a
        ``\\r`` before it are removed."""
        data = self.read_bytes(start, end)
        if keepends:
            return data.splitlines(keepends=True) if b"\r" not in data else _split_keep(data)
        parts = data.split(b"\n")
        if data.endswith(b"\n"):
            parts.pop()
        if b"\r" in data:
            parts = [p[:-1] if p.endswith(b"\r") else p for p in parts]
        return parts

    # -- tokens --------------------------------------------------------------------------------

    def _tokens(self, base: str) -> memoryview | None:
        name = F.tokens_file(base)
        m = self._maps.get(name)
        if m is not None:
            return m.view
        path = self.index_dir / name
        try:
            fd = open_index_file(path)
        except IndexInvalid:
            return None
        try:
            head = os.pread(fd, F.TOKENS_HEADER.size, 0)
        finally:
            os.close(fd)
        if len(head) < F.TOKENS_HEADER.size:
            return None
        magic, lines, total, _flags = F.TOKENS_HEADER.unpack(head)
        if magic != F.TOKENS_MAGIC or lines != self.line_count:
            return None  # stale or foreign: treated as not indexed (add_base rewrites it)
        expected = F.TOKENS_HEADER.size + (self.line_count + 1) * 8
        try:
            view = self._map(name, "Q", F.TOKENS_HEADER.size, expected)
        except IndexInvalid:
            return None
        self._totals[base] = total
        return view

    def has_base(self, base: str) -> bool:
        return self._tokens(base) is not None

    def total_tokens(self, base: str) -> int | None:
        """Exact token count of the whole content, or None (base not indexed / not exact)."""
        if self._tokens(base) is None:
            return None
        total = self._totals.get(base, -1)
        return None if total < 0 else int(total)

    def range_tokens(self, start: int, end: int, base: str) -> int | None:
        """Sum of the line token counts of lines ``start..end``; None if ``base`` isn't indexed."""
        sums = self._tokens(base)
        if sums is None:
            return None
        self._check_range(start, end)
        return int(sums[end] - sums[start - 1])

    def line_tokens(self, lines: Sequence[int], base: str) -> list[int] | None:
        """The token count of each of ``lines`` (1-indexed), read with one lookup of the sums
        (an answer of many scattered lines, grep's, asks for them all at once); None if
        ``base`` isn't indexed."""
        sums = self._tokens(base)
        if sums is None:
            return None
        if lines:
            self._check_range(min(lines), max(lines))
        return [int(sums[n] - sums[n - 1]) for n in lines]

    def lines_fitting(self, start: int, budget_tokens: int, base: str,
                      per_line_overhead: int = 0) -> int:
        """The last line ``L >= start - 1`` such that lines ``start..L`` cost at most
        ``budget_tokens`` (each line costing its tokens plus ``per_line_overhead``).
        ``start - 1`` means not even line ``start`` fits."""
        sums = self._tokens(base)
        if sums is None:
            raise IndexInvalid(f"no token counts for {base}", reason="base_missing", base=base)
        if not 1 <= start <= self.line_count + 1:
            raise OutOfRange(f"line {start} is outside 1..{self.line_count}",
                             total_lines=self.line_count, line=start)
        base_sum = sums[start - 1]
        lo, hi = start - 1, self.line_count
        while lo < hi:
            mid = (lo + hi + 1) // 2
            cost = sums[mid] - base_sum + per_line_overhead * (mid - start + 1)
            if cost <= budget_tokens:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def add_base(self, base: str, count_lines: CountLines | None = None) -> None:
        """Store per-line token counts for another encoding (e.g. another agent's model)."""
        if self.has_base(base):
            return
        from scratch.index.lines import default_count_lines, run_line_pass

        counter = count_lines or default_count_lines()
        from scratch.store.locking import replacing

        # a rebuildable cache: replaced whole, not synced
        with replacing(self.index_dir / F.tokens_file(base), fsync=False) as (out, _tmp):
            run_line_pass(self.content_path, None, {base: out}, counter)

    # -- named sections ------------------------------------------------------------------------

    def section(self, name: str) -> Sequence[int] | None:
        """A named u32 section: ``level:ERROR`` (lines at that level), ``rows`` (CSV record
        start lines, header first). None when absent."""
        sid = self.meta.get("named", {}).get(name)
        if sid is None:
            return None
        return self._skel_or_sections().section32(sid)

    def _skel_or_sections(self) -> Skeleton:
        if self._skeleton is None:
            nodes = self._map(F.NODES) if self.meta.get("nodes") else memoryview(b"")
            keys = self._map(F.KEYS) if self.meta.get("nodes") else memoryview(b"")
            u32 = self._map(F.U32, "I")
            u64 = self._map(F.U64, "Q")
            sec32 = {i: (o, n) for i, (o, n) in enumerate(self.meta.get("sections32", []))}
            sec64 = {i: (o, n) for i, (o, n) in enumerate(self.meta.get("sections64", []))}
            self._skeleton = Skeleton(nodes, keys, u32, u64, sec32, sec64)
        return self._skeleton

    @property
    def skeleton(self) -> Skeleton | None:
        if not self.meta.get("nodes"):
            return None
        return self._skel_or_sections()


def _split_keep(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    out = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out

