"""Reading versions: which version a name means, and its bytes or a file holding them.

Invariants:
- Readers pair an entry's metadata and content under the swap lock taken shared and keep the
  content file open (:meth:`StoreReading.version_file`): a reader sees one whole version,
  whose blob is the key of its index, even while another process writes the entry.
- An old version comes from ``cache/blobs/<blob>``, written from git once; the cache is
  rebuildable, so a symlink or hard link found there is replaced, never followed.
- The descriptors held open for readers are closed with the store, or by
  :meth:`StoreReading.release_pins` / :meth:`StoreReading.trim_pins` when no reader is using
  them. A descriptor is kept per blob: content files are replaced by rename, never rewritten,
  so an open one always holds the blob it was opened as, and a later call whose metadata
  names that blob as current may read it without opening it again.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from scratch.errors import EntryNotFound, StoreError, VersionNotFound
from scratch.safefs import UnsafePath, ensure_dir, open_file, read_file, remove_unsafe
from scratch.store.config import Config
from scratch.store.locking import atomic_write, shared
from scratch.store.metadata import StoreMetadata

if TYPE_CHECKING:
    from scratch.store.records import EntryMeta, VersionInfo

_PROC_FD = Path("/proc/self/fd")


class Version(NamedTuple):
    """Version ``version`` (from 1) of entry ``name``: its metadata and its record in it."""

    name: str
    version: int
    meta: EntryMeta
    info: VersionInfo


class StoreReading(StoreMetadata):
    """Resolving a version and reading its content."""

    def __init__(self, root: Path, agent: str, config: Config) -> None:
        super().__init__(root, agent, config)
        # content files of current versions held open for readers ({blob: fd}, see
        # version_file), least recently used first; closed with the store
        self._pinned: OrderedDict[str, int] = OrderedDict()
        import weakref

        weakref.finalize(self, _close_all, self._pinned)

    def release_pins(self) -> None:
        """Close the content files :meth:`version_file` holds open. A long-lived process that
        keeps one store across calls does this between calls, when no answer is reading
        through them (a path handed out before then no longer names its content)."""
        _close_all(self._pinned)

    def trim_pins(self, keep: int) -> None:
        """Close all but the ``keep`` most recently used content files :meth:`version_file`
        holds open: a long-lived process does this between calls, as :meth:`release_pins`,
        keeping the files its next calls most likely read."""
        while len(self._pinned) > keep:
            _, fd = self._pinned.popitem(last=False)
            _close_fd(fd)

    def resolve(self, name: str, version: int | None = None,
                kinds: tuple[str, ...] = ("file", "output")) -> Version:
        meta = self.require(name, kinds=kinds, allow_deleted=version is not None)
        versions = meta["versions"]
        if version is None:
            if not versions:
                raise EntryNotFound(f"{name!r} has no versions", name=name)
            version = len(versions)
        if not 1 <= version <= len(versions):
            raise VersionNotFound(
                f"{name!r} has no version {version}; it has versions 1-{len(versions)}",
                name=name, version=version, latest=len(versions))
        removed = versions[version - 1].get("removed")
        if removed:
            kept = [v["version"] for v in versions if not v.get("removed")]
            raise VersionNotFound(
                f"{name!r} version {version} is no longer kept ({removed}); "
                + (f"versions {kept[0]}-{kept[-1]} are" if len(kept) > 1 else
                   f"version {kept[0]} is" if kept else "none is") + " readable",
                code="version_removed", name=name, version=version, reason=removed,
                latest=len(versions))
        return Version(name, version, meta, versions[version - 1])

    def read_bytes(self, ver: Version) -> bytes:
        path = self.version_file(ver)
        if path.parent == _PROC_FD:
            fd = int(path.name)
            size = os.fstat(fd).st_size
            parts, pos = [], 0
            while pos < size:
                block = os.pread(fd, min(size - pos, 1 << 30), pos)
                if not block:
                    break
                parts.append(block)
                pos += len(block)
            return b"".join(parts)
        return read_file(self.root, path)

    def version_file(self, ver: Version) -> Path:
        """A path whose content is exactly ``ver``'s for as long as this store is open, even
        while another process writes a new version of the entry.

        The current version's content file is opened (no symlink, no hard link) while holding
        the swap lock shared and after checking, under it, that the entry's current blob is
        still ``ver``'s: metadata and content are then one version. The path returned names
        that open file (``/proc/self/fd/N``), so a rename of a newer version over the entry
        does not change what it reads. An old version, or the current one where there is no
        ``/proc``, or one replaced meanwhile, comes from ``cache/blobs/<blob>`` (written from
        git once; a symlink or hard link found there is replaced).
        """
        meta, info = ver.meta, ver.info
        blob = str(info["blob"])
        if not meta.get("deleted") and ver.version == len(meta["versions"]):
            pinned = self._pin_current(ver.name, blob)
            if pinned is not None:
                return pinned
        return self._cached_blob(blob)

    def _pin_current(self, name: str, blob: str) -> Path | None:
        fd = self._pinned.get(blob)
        if fd is not None:
            # the caller's metadata, read this call, names ``blob`` as current: the file held
            # open for it is that blob (see the module docstring)
            try:
                self._pinned.move_to_end(blob)
            except KeyError:  # trimmed meanwhile by another thread: open it again
                fd = None
        if fd is None:
            if not _PROC_FD.is_dir():
                return None
            try:
                with shared(self.state_dir / "swap.lock"):
                    fd = self._open_if_current(name, blob)
            except PermissionError:  # a read-only store: no lock to take, nothing moves
                fd = self._open_if_current(name, blob)
            if fd is None:
                return None
            kept = self._pinned.setdefault(blob, fd)
            if kept != fd:  # a parallel reader pinned it first: use that one
                _close_fd(fd)
                fd = kept
        return _PROC_FD / str(fd)

    def _open_if_current(self, name: str, blob: str) -> int | None:
        meta = self.load_meta(name)
        if (meta is None or meta.get("deleted") or not meta.get("versions")
                or meta["versions"][-1]["blob"] != blob):
            return None  # replaced since it was resolved: that version comes from git
        try:
            return open_file(self.root, self.content_path(name))
        except (FileNotFoundError, IsADirectoryError):
            return None

    def _cached_blob(self, blob: str) -> Path:
        if not (len(blob) == 40 and blob.isalnum()):
            raise StoreError(f"not a blob id: {blob!r}", code="corrupt_meta", blob=blob)
        blobs = ensure_dir(self.root, self.cache_dir / "blobs")
        cached = blobs / blob
        try:
            os.close(open_file(self.root, cached))
            return cached
        except FileNotFoundError:
            pass
        except (UnsafePath, IsADirectoryError):
            remove_unsafe(cached)  # the cache is rebuildable: a link placed there just goes
        data = self.git.read_blob(blob)
        atomic_write(cached, data, fsync=False)
        return cached


def _close_fd(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _close_all(fds: dict[str, int]) -> None:
    for fd in fds.values():
        _close_fd(fd)
    fds.clear()
