"""Read a stream once into memory or, past a size, into a temp file: bounded memory always.

Invariants:
- Every byte read is kept exactly (passthrough and storage are byte-exact).
- At most ``memory_limit`` bytes are held in memory; beyond that the data lives in a temp file
  inside the store (same file system, so it can later be renamed into place without a copy).
- ``sha256`` is the hash of exactly the bytes read; automatic names use its first 8 hex digits.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

CHUNK = 1 << 20


@dataclass
class Spooled:
    size: int
    sha256: str
    data: bytes | None = None  # when small enough to stay in memory
    path: Path | None = None  # otherwise

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

    def discard(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def spool(stream: IO[bytes], tmp_dir: Path, *, memory_limit: int = 8 * CHUNK,
          progress: Callable[[int], None] | None = None) -> Spooled:
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
