"""Read a stream once into memory or, past a size, into a temp file: bounded memory always.

Invariants:
- Every byte read is kept exactly (passthrough and storage are byte-exact).
- At most ``memory_limit`` bytes are held in memory; beyond that the data lives in a temp file
  inside the store (same file system, so it can later be renamed into place without a copy).
- ``sha256`` is the hash of exactly the bytes read; automatic names use its first 8 hex digits.
- A regular file past ``memory_limit`` (stdin redirected from a file) is copied into the temp
  file by the kernel (``copy_file_range``: no pass through Python buffers), and its sha256 is
  taken from that private copy in a thread, in one GIL-free call, while the caller goes on
  reading it: the hash is still of exactly what was kept, and a change to the input file after
  the copy changes neither. ``sha256`` waits for that thread (or hashes the copy itself if the
  thread failed). Anything else, and whatever the kernel cannot copy, is read block by block.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from scratch.safefs import write_all

CHUNK = 1 << 20
COPY_STEP = 8 * CHUNK  # bytes per copy_file_range call: progress stays live on big files


HASH_WINDOW = 16 * CHUNK  # bytes of the file mapped at a time while hashing it


class _FileHash:
    """The sha256 of a private file, taken in a thread: one ``hashlib`` call per window of a
    read-only map of the file, each releasing the GIL throughout (so it runs beside the
    caller's work, even beside C code that holds the GIL). One window is mapped at a time:
    mapped pages count as resident, and the resident set must stay bounded."""

    def __init__(self, path: Path, size: int) -> None:
        self.path, self.size = path, size
        self.digest: str | None = None
        self.thread = threading.Thread(target=self._run, name="scratch-spool-hash", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            digest = hashlib.sha256()
            with open(self.path, "rb") as fh:
                for start in range(0, self.size, HASH_WINDOW):
                    with mmap.mmap(fh.fileno(), min(HASH_WINDOW, self.size - start),
                                   access=mmap.ACCESS_READ, offset=start) as view:
                        digest.update(view)
            self.digest = digest.hexdigest()
        except (OSError, ValueError, MemoryError):
            self.digest = None  # the caller hashes the file itself (see result)

    def result(self) -> str:
        self.thread.join()
        if self.digest is None:  # the thread could not map the file: read it here
            digest = hashlib.sha256()
            with open(self.path, "rb") as fh:
                while block := fh.read(CHUNK):
                    digest.update(block)
            self.digest = digest.hexdigest()
        return self.digest


@dataclass
class Spooled:
    size: int
    digest: str | None  # the hex sha256 once known (see ``sha256``)
    data: bytes | None = None  # when small enough to stay in memory
    path: Path | None = None  # otherwise
    hashing: _FileHash | None = field(default=None, repr=False)  # the sha256, under way

    @property
    def sha256(self) -> str:
        """The hex sha256 of exactly the bytes read (waits for the hash thread, if any)."""
        if self.digest is None:
            assert self.hashing is not None
            self.digest = self.hashing.result()
            self.hashing = None
        return self.digest

    def head(self, n: int) -> bytes:
        if self.data is not None:
            return self.data[:n]
        assert self.path is not None
        with open(self.path, "rb") as fh:
            return fh.read(n)

    def chunks(self, size: int = CHUNK) -> Iterator[bytes]:
        if self.data is not None:
            for start in range(0, len(self.data), size):
                yield self.data[start:start + size]
            return
        assert self.path is not None
        with open(self.path, "rb") as fh:
            while block := fh.read(size):
                yield block

    def to_file(self, directory: Path) -> Path:
        """The content as a file in ``directory`` (written now if it was in memory)."""
        if self.path is not None:
            return self.path
        fd, name = tempfile.mkstemp(dir=directory, prefix=f".tmp-spool-{os.getpid()}-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(self.data or b"")
        self.path = Path(name)
        self.data = None
        return self.path

    def hand_over(self, path: Path) -> None:
        """The spooled file lives on as ``path`` alone: ``path`` is another name of it (the
        stored form, see :func:`scratch.index.normalizer.normalize`'s ``adopt``), which the
        caller moves into the store, where a file with two names is refused. Waits for the
        hash (it reads the file), removes the spool's own name, and reads ``path`` from now
        on (so not once the caller has moved it)."""
        assert self.path is not None and os.path.samefile(self.path, path)
        self.sha256  # noqa: B018 - waits for the thread reading the file by its name
        self.path.unlink()
        self.path = path

    def discard(self) -> None:
        if self.hashing is not None:  # the thread reads the file: let it finish first
            self.hashing.thread.join()
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def spool(stream: IO[bytes], tmp_dir: Path, *, memory_limit: int = 8 * CHUNK,
          progress: Callable[[int], None] | None = None) -> Spooled:
    fd = _regular_fd(stream, memory_limit)
    if fd is not None:
        return _spool_file(fd, tmp_dir, progress)
    digest = hashlib.sha256()
    parts: list[bytes] = []
    size = 0
    fh = None
    path: Path | None = None
    read = getattr(stream, "read1", stream.read)
    try:
        while True:
            block = read(CHUNK)
            if not block:
                break
            digest.update(block)
            size += len(block)
            if fh is None and size > memory_limit:
                tmp_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd, name = tempfile.mkstemp(dir=tmp_dir, prefix=f".tmp-spool-{os.getpid()}-")
                fh = os.fdopen(fd, "wb")
                path = Path(name)
                fh.writelines(parts)
                parts = []
            if fh is not None:
                fh.write(block)
            else:
                parts.append(block)
            if progress is not None:
                progress(size)
    except BaseException:
        if fh is not None:
            fh.close()
            assert path is not None
            path.unlink(missing_ok=True)
        raise
    if fh is not None:
        fh.close()
        return Spooled(size, digest.hexdigest(), path=path)
    return Spooled(size, digest.hexdigest(), data=b"".join(parts))


def _regular_fd(stream: IO[bytes], memory_limit: int) -> int | None:
    """The descriptor of ``stream`` when it is a regular file with more than ``memory_limit``
    bytes left and nothing read ahead into the stream's own buffer (its position is the
    descriptor's), so the kernel can copy the rest; else None."""
    try:
        fd = stream.fileno()
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        at = os.lseek(fd, 0, os.SEEK_CUR)
        if stream.tell() != at or info.st_size - at <= memory_limit:
            return None
    except (AttributeError, OSError, ValueError):  # no descriptor, closed, not seekable
        return None
    return fd


def _spool_file(fd: int, tmp_dir: Path, progress: Callable[[int], None] | None) -> Spooled:
    """The rest of the regular file ``fd`` copied into a temp file, its hash under way."""
    tmp_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    out, name = tempfile.mkstemp(dir=tmp_dir, prefix=f".tmp-spool-{os.getpid()}-")
    path = Path(name)
    size = 0
    copy = getattr(os, "copy_file_range", None)  # Linux only
    try:
        try:
            while copy is not None and (n := copy(fd, out, COPY_STEP)):
                size += n
                if progress is not None:
                    progress(size)
        except OSError:
            pass  # not copyable in the kernel (another file system, an old kernel): read on
        # 0 means the end, or a file the kernel reports as empty (as /proc's): read to the end;
        # both descriptors are where the copy left them
        while block := os.read(fd, CHUNK):
            write_all(out, block)
            size += len(block)
            if progress is not None:
                progress(size)
    except BaseException:
        os.close(out)
        path.unlink(missing_ok=True)
        raise
    os.close(out)
    return Spooled(size, None, path=path, hashing=_FileHash(path, size))


def open_input(path: str | os.PathLike[str]) -> IO[bytes]:
    """A file given on the command line, opened for reading; clear errors for what is not
    a readable file (missing, a directory, no permission, anything else the system refuses):
    ``file_not_found``, ``is_a_directory``, ``permission_denied``, ``unreadable_input``."""
    from scratch.errors import ScratchError

    shown = os.fspath(path)
    try:
        fh = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    except FileNotFoundError:
        raise ScratchError(f"no such file: {shown}", code="file_not_found", path=shown) from None
    except IsADirectoryError:
        raise ScratchError(f"{shown} is a directory; give a file (or pipe data in)",
                           code="is_a_directory", path=shown) from None
    except PermissionError:
        raise ScratchError(f"cannot read {shown}: permission denied", code="permission_denied",
                           path=shown) from None
    except OSError as exc:
        raise ScratchError(f"cannot read {shown}: {exc.strerror or exc}",
                           code="unreadable_input", path=shown) from None
    return fh
