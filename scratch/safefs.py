"""Opening files inside the store without following links out of it.

Anyone who can write the store (another agent, a store synced from elsewhere) could place a
symlink (``cache/`` pointing at a home directory, ``cache/blobs/<id>`` at a secret) or a hard
link (``logs/x.jsonl`` sharing an outside file's inode, so an append writes there). Rules:

- :func:`check_dirs` -- every directory between the store root and a path is a real
  directory (``lstat``), never a symlink; else :class:`UnsafePath`.
- :func:`open_file` -- the final component is opened with ``O_NOFOLLOW`` (a symlink there is
  refused by the kernel), must be a regular file, and must have one link (``st_nlink == 1``):
  a hard-linked file is refused, since a write through it would land outside the store and a
  read would show an outside file.
- :func:`ensure_dir` -- creates a directory chain (mode 0700), refusing symlinks on the way.

Callers that keep only rebuildable things (the cache) replace what they refuse; the rest
reports ``unsafe_path`` with the path and the reason.

A directory found real all the way down is remembered with its device, inode and ctime, so a
long-lived process (the MCP server) checks it again with one ``lstat`` instead of one per
component: the path still reaching that very directory means a file opened through it (last
component without following links) is in the directory that was checked, whatever a link
placed above it since says; anything else (a link to another tree, a directory replaced or
recreated, even on a reused inode, whose ctime differs) misses and is walked again.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from scratch.errors import UnsafePath

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
__all__ = ["UnsafePath", "check_dirs", "check_fd", "ensure_dir", "open_file", "read_fd",
           "read_file", "remove_unsafe"]


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


_Stamp = tuple[int, int, int]
_CHECKED: dict[tuple[str, str], _Stamp] = {}  # (root, directory) -> its stamp, found real
_CHECKED_KEPT = 4096


def _stamp(st: os.stat_result) -> _Stamp:
    return (st.st_dev, st.st_ino, st.st_ctime_ns)


def check_dirs(root: Path, path: Path) -> None:
    """Refuse a symlink at any directory below ``root`` down to ``path``'s parent
    (:class:`UnsafePath`; the root itself may be a symlink: that is where the user put the
    store); a file there is ``NotADirectoryError``. Missing directories are fine (they are
    created later)."""
    # string operations, not pathlib: this runs several times in every command (~20 us a
    # directory with pathlib, ~3 us without)
    base = os.fspath(root).rstrip("/")
    parent = os.path.dirname(os.fspath(path))
    if parent == base:
        return
    if not parent.startswith(base + "/"):
        raise ValueError(f"{path} is not inside {root}")
    key = (base, parent)
    known = _CHECKED.get(key)
    if known is not None:  # checked before: still that very directory? (see the module)
        try:
            if _stamp(os.lstat(parent)) == known:
                return
        except OSError:
            pass
        _CHECKED.pop(key, None)
    probe = base
    st = None
    for part in parent[len(base) + 1:].split("/"):
        if not part or part == ".":
            continue
        probe = f"{probe}/{part}"
        try:
            st = os.lstat(probe)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            shown = _shown(root, Path(probe))
            raise UnsafePath(f"refusing to follow a symlink placed in the store: {shown}",
                             path=shown, reason="symlink")
        if not stat.S_ISDIR(st.st_mode):  # as the system would say (a name clash, say)
            raise NotADirectoryError(20, "Not a directory", probe)
    if st is not None:
        if len(_CHECKED) >= _CHECKED_KEPT:
            _CHECKED.clear()
        _CHECKED[key] = _stamp(st)


def open_file(root: Path, path: Path, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """``os.open`` of ``path`` (inside ``root``) without following links: see the module
    docstring. Raises FileNotFoundError as ``os.open`` does, :class:`UnsafePath` otherwise."""
    check_dirs(root, path)
    try:
        fd = os.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
    except OSError:
        if os.path.islink(path):
            raise UnsafePath(f"refusing to follow a symlink placed in the store: "
                             f"{_shown(root, path)}", path=_shown(root, path),
                             reason="symlink") from None
        raise
    try:
        check_fd(fd, root, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_fd(fd: int, root: Path, path: Path) -> os.stat_result:
    """Refuse an open file that is not a regular file with exactly one link."""
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", str(path))
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePath(f"{_shown(root, path)} is not a regular file", path=_shown(root, path),
                         reason="not_a_file")
    if st.st_nlink > 1:
        raise UnsafePath(f"refusing {_shown(root, path)}: it is hard-linked ({st.st_nlink} "
                         "names), so it may be a file outside the store", path=_shown(root, path),
                         reason="hard_link", links=st.st_nlink)
    return st


def read_file(root: Path, path: Path) -> bytes:
    """The bytes of ``path`` (see :func:`open_file`)."""
    return read_fd(open_file(root, path))


def read_fd(fd: int) -> bytes:
    """All the bytes of open file ``fd``, which is closed: one read of its size (more only if
    it grew meanwhile)."""
    try:
        size = os.fstat(fd).st_size
        parts = []
        while True:
            block = os.read(fd, max(size, 4096))
            if not block:
                break
            parts.append(block)
            size = 4096
        return b"".join(parts)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """All of ``data`` written to ``fd``: one write() releases the GIL for as much as the
    kernel takes (a thread writing a big body needs the GIL back only between calls)."""
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view):]


def ensure_dir(root: Path, path: Path) -> Path:
    """``path`` (inside ``root``) as a real directory, created (0700) as needed."""
    check_dirs(root, path / "x")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        check_dirs(root, path / "x")  # what was created is what we asked for
        return path
    if not stat.S_ISDIR(st.st_mode):
        reason = "symlink" if stat.S_ISLNK(st.st_mode) else "not_a_directory"
        raise UnsafePath(f"refusing {_shown(root, path)}: not a real directory ({reason})",
                         path=_shown(root, path), reason=reason)
    return path


def remove_unsafe(path: Path) -> None:
    """Remove what is at ``path`` without following it (a symlink goes, not its target)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)
