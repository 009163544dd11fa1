"""Indexes kept open between calls by a long-lived process (the MCP server); off by default.

A command run once opens the index of the version it answers and closes it when done. A warm
server answering many calls on the same entries would reopen the same index each time (read
its metadata, stat its files, map them, re-parse what it parsed before); with
:func:`keep_indexes` it keeps the most recently used ones open instead.

Invariants:
- Off unless :func:`keep_indexes` was called with a size above 0; a CLI command never keeps
  anything.
- A kept index is used only while the content file it indexes has the size, modification
  time and inode it had when the index was opened, checked with one ``stat`` per use: a
  version written by the CLI or another server in the meantime (a new current file, a log
  that grew) is never answered from an index of the old content.
- Each :func:`open_kept` hands out its own handle; the handle's ``close()`` releases it (once,
  however often it is called). An index pushed out of the cache, or found stale, is closed
  for real only when no handle to it is still open, so a parallel call never loses the maps
  it is reading.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scratch.index import EntryIndex

    # to mypy a handle is the index it hands out (it forwards every attribute to it)
    _Handle = EntryIndex
else:
    _Handle = object

_Key = str
_Stamp = tuple[int, int, int]


class _Entry:
    __slots__ = ("index", "stamp", "users", "dropped")

    def __init__(self, index: EntryIndex, stamp: _Stamp) -> None:
        self.index = index
        self.stamp = stamp
        self.users = 0
        self.dropped = False  # out of the cache: close once the last handle is released


class KeptIndex(_Handle):
    """A handle on a kept index: everything the index has, except that ``close`` releases.

    Its own attributes are prefixed ``_kept`` so none hides one of the index's (``_cache``)."""

    __slots__ = ("_kept_by", "_kept_entry", "_kept_index", "_kept_open")

    def __init__(self, cache: IndexCache, entry: _Entry) -> None:
        self._kept_by = cache
        self._kept_entry = entry
        self._kept_index = entry.index
        self._kept_open = True

    def __getattr__(self, name: str) -> object:
        return getattr(self._kept_index, name)

    def close(self) -> None:
        if self._kept_open:
            self._kept_open = False
            self._kept_by.release(self._kept_entry)

    def __enter__(self) -> KeptIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class IndexCache:
    """The ``size`` most recently used indexes, keyed by index directory and content file."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()

    def open(self, index_dir: Path, content: Path, opener: Callable[[], EntryIndex]
             ) -> KeptIndex:
        st = os.stat(content)
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        # keyed by the index, not by the content's path: a store hands out the current version
        # as the path of a descriptor it holds open (/proc/self/fd/N), a different one per
        # store; the stamp (inode included) tells whether it is still the same file
        key = str(index_dir)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.stamp == stamp:
                self._entries.move_to_end(key)
                entry.users += 1
                if entry.index.content_path != content and \
                        not _same_file(entry.index.content_path, st):
                    entry.index.content_path = content  # the old path went with its store
                return KeptIndex(self, entry)
            if entry is not None:  # the content changed under it
                self._drop(key)
        index = opener()  # outside the lock: a first open may build token counts
        entry = _Entry(index, stamp)
        with self._lock:
            old = self._entries.get(key)
            if old is not None:
                self._drop(key)
            self._entries[key] = entry
            entry.users += 1
            while len(self._entries) > self.size:
                self._drop(next(iter(self._entries)))
        return KeptIndex(self, entry)

    def _drop(self, key: _Key) -> None:
        """Take ``key`` out of the cache (the caller holds the lock)."""
        entry = self._entries.pop(key)
        entry.dropped = True
        if entry.users == 0:
            entry.index.close()

    def release(self, entry: _Entry) -> None:
        with self._lock:
            entry.users -= 1
            if entry.users == 0 and entry.dropped:
                entry.index.close()

    def clear(self) -> None:
        with self._lock:
            for key in list(self._entries):
                self._drop(key)


def _same_file(path: Path, st: os.stat_result) -> bool:
    try:
        now = os.stat(path)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


_cache: IndexCache | None = None


def keep_indexes(size: int) -> None:
    """Keep the ``size`` most recently used indexes open (0: keep none, closing those kept)."""
    global _cache
    if _cache is not None:
        _cache.clear()
    _cache = IndexCache(size) if size > 0 else None


def open_kept(index_dir: Path, content: Path, opener: Callable[[], EntryIndex]) -> EntryIndex:
    """``opener()``'s index, or a kept one for the same directory and unchanged content."""
    if _cache is None:
        return opener()
    return _cache.open(index_dir, content, opener)
