"""The only module that talks to git.

Invariants:
- Every git process scratch starts for its own work runs with the ``GIT_*`` variables of the
  caller cleared, ``GIT_DIR``/``GIT_WORK_TREE`` pointing at the store, ``GIT_CEILING_DIRECTORIES``
  set so an enclosing repository is never found, the user's global and system config and
  attributes ignored, replace refs ignored, and :data:`SAFE_CONFIG` on top of the store's own
  config (also through ``GIT_CONFIG_COUNT``): no hooks, no fsmonitor, no signing, no automatic
  gc or maintenance. The identity is given per call through
  the environment, so no git identity needs configuring.
- No configured program ever runs from a git command scratch runs. The store's ``.git/config``
  and attribute files can be edited by anyone who can write the store (``scratch git config``,
  or a store synced from a remote), and filters (``filter.<x>.clean``/``process``), textconv
  and ``working-tree-encoding``/``eol`` attributes could run code or change what is stored.
  So commits are made with plumbing that never reads the work tree: blobs are written from
  the bytes scratch hashed (loose objects written here, whatever their size), a
  private index is filled with ``update-index --index-info`` from the blob ids, and
  ``write-tree``/``commit-tree --no-gpg-sign``/``update-ref`` make the commit. No attributes
  are consulted anywhere on that path.
- Commits are made only by :meth:`GitStore.commit`, called with the store lock held. It never
  takes ``.git/index.lock``: the private index is moved over ``.git/index`` afterwards (so
  ``git status`` agrees with HEAD), unless a live process holds ``index.lock`` (then the index
  is left to it). A lock whose holder is gone (no process has it open, checked twice) is
  removed at once; where that cannot be known (no ``/proc``), after
  :data:`STALE_LOCK_SECONDS`. The same goes for the branch's ref lock.
- History is read with plumbing too (``rev-list``, ``cat-file --batch-check``), in the same
  environment, not with GitPython: its ``Repo`` reads the caller's ``GIT_OBJECT_DIRECTORY``,
  ``GIT_COMMON_DIR`` and ``GIT_WORK_TREE`` from ``os.environ`` and every git it starts inherits
  ``os.environ``, so keeping a caller's repository out of it would mean rewriting the process
  environment (not thread-safe, and not possible through its API).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import subprocess
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Protocol, TypedDict

from scratch.errors import StoreError
from scratch.safefs import write_all


class GitCommit(TypedDict):
    """A commit that touched a path, as :meth:`GitStore.path_history` gives it (a record of
    the store's too: :mod:`scratch.store.records`)."""

    commit: str  # full id
    time: str  # committer time, ISO 8601 in the local time zone
    timestamp: int  # the same, seconds since the epoch
    message: str  # stripped
    blob: str | None  # the path's blob at that commit; None: not a file there (deleted)


GITIGNORE = ("# scratch keeps caches, locks and budget state out of history\n"
             "/cache/\n/state/\n/.lock\n")
STALE_LOCK_SECONDS = 20.0
BRANCH = "refs/heads/main"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# blobs up to this size are written from a file read whole; larger files are read a slice at
# a time as they are hashed and compressed (write_loose_file)
LOOSE_OBJECT_MAX = 4 << 20
# bytes handed to the compressor at a time when writing a big object here: few calls, since
# each one (and each growth of its output) takes the GIL back, and Python may be busy meanwhile
COMPRESS_SLICE = 64 << 20
LOOSE_OBJECTS_PER_FANOUT = 27  # git's gc.auto default (6,700) over its 256 fan-out dirs
# Settings on top of the store's own config for every git command scratch runs: none of these
# may run a program or change content. (Filters, textconv and attributes are kept out by the
# plumbing commits, which never read the work tree.)
SAFE_SETTINGS = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.attributesFile", "/dev/null"),
    ("core.untrackedCache", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("credential.helper", ""),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
)
SAFE_CONFIG = tuple(part for key, value in SAFE_SETTINGS for part in ("-c", f"{key}={value}"))


def blob_sha(data: bytes) -> str:
    """The object id git gives ``data`` as a blob (computed here: no process needed)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def remove_private_index(index: Path) -> None:
    """Remove a private index file (``GIT_INDEX_FILE``) and the lock git may have left."""
    for leftover in (index, index.with_name(index.name + ".lock")):
        try:
            os.unlink(leftover)
        except FileNotFoundError:
            pass


def write_loose_blob(git_dir: Path, data: bytes) -> str:
    """Write ``data`` as a loose blob into ``git_dir``'s objects (as git would, compression
    level 1, fsynced, renamed into place; nothing if it is there already); its id."""
    return write_loose_parts(git_dir, (data,))


def parts_blob(parts: Sequence[bytes]) -> str:
    """The blob id of the concatenation of ``parts`` (hashed in place: no joined copy)."""
    digest = hashlib.sha1(b"blob %d\x00" % sum(len(memoryview(p)) for p in parts))
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


def write_loose_parts(git_dir: Path, parts: Sequence[bytes], sha: str | None = None) -> str:
    """:func:`write_loose_blob` of the concatenation of ``parts``, whose blob id ``sha`` is
    given when already computed. Compressed slice by slice into the file (memory beyond the
    parts: the compressed form of one :data:`COMPRESS_SLICE`); the compression, the writes
    and the fsync release the GIL, so a thread writes a big document's object while Python
    goes on with its index."""
    written = _write_loose(git_dir, parts, sha, None, None)
    assert written is not None  # no gate: always written
    return written


def _write_loose(git_dir: Path, parts: Sequence[bytes], sha: str | None,
                 staging: Path | None, gate: Callable[[], bool] | None) -> str | None:
    """:func:`write_loose_parts`, compressed into a temporary file in ``staging`` (else beside
    the object) and moved into the object database only once ``gate``, when given, says
    True; None (and no file left) when it says False."""
    sha = sha or parts_blob(parts)
    target = git_dir / "objects" / sha[:2] / sha[2:]
    if target.exists():
        return sha if gate is None or gate() else None
    if staging is None:
        target.parent.mkdir(mode=0o700, exist_ok=True)
    # in git's objects, named as git names its own; in the staging directory, as scratch's
    # temporary files, which the store's opening sweeps once their process is gone
    tmp = (staging / f".tmp-{os.getpid()}-object-{os.urandom(4).hex()}" if staging is not None
           else _git_tmp(target.parent))
    views = [memoryview(p) for p in parts]
    _deflate_into(tmp, sum(len(v) for v in views),
                  (v[at:at + COMPRESS_SLICE] for v in views
                   for at in range(0, len(v), COMPRESS_SLICE)))
    try:
        if gate is not None and not gate():
            tmp.unlink()
            return None
        _move_in(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return sha


def _move_in(tmp: Path, target: Path) -> None:
    """The finished object file ``tmp`` moved to its place ``target`` in git's objects (its
    fan-out directory made if need be); dropped when an equal object is there already."""
    if target.exists():
        tmp.unlink()
        return
    target.parent.mkdir(mode=0o700, exist_ok=True)
    try:
        os.replace(tmp, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        import shutil  # staging on another file system than the objects

        shutil.copyfile(tmp, target.with_name(tmp.name))
        os.replace(target.with_name(tmp.name), target)
        tmp.unlink()


def _write_gated(git_dir: Path, parts: Sequence[bytes], sha: str | None,
                 gate: Callable[[], bool] | None, staging: Path | None) -> str | None:
    """:func:`_write_loose` for :meth:`GitStore.write_blob_async`: without a staging
    directory the gate is asked first (nothing goes into git's objects, not even a temporary
    file, before it says True); with one, it is asked once the object is compressed there."""
    if gate is not None and staging is None:
        if not gate():  # shut: nothing is written
            return None
        gate = None
    return _write_loose(git_dir, parts, sha, staging, gate)


def _git_tmp(directory: Path) -> Path:
    """A new temporary file's name in ``directory`` of git's objects, as git names its own."""
    return directory / f"tmp_obj_{os.getpid()}_{os.urandom(4).hex()}"


def _deflate_into(tmp: Path, size: int, chunks: Iterable[bytes | memoryview]) -> None:
    """The loose object of a blob of ``size`` bytes given as ``chunks``, deflated
    (:func:`compressor`) into the new read-only file ``tmp``, fsynced; nothing is left there
    when a chunk or a write fails."""
    zobj = compressor()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        write_all(fd, zobj.compress(b"blob %d\x00" % size))
        for chunk in chunks:
            write_all(fd, zobj.compress(chunk))
        write_all(fd, zobj.flush())
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)


class Compressor(Protocol):
    """What :func:`compressor` returns (zlib's or ISA-L's compression object)."""

    def compress(self, data: bytes | memoryview, /) -> bytes: ...
    def flush(self) -> bytes: ...


def compressor(accelerated: bool = True) -> Compressor:
    """A deflate stream in the zlib format at level 1, git's default for loose objects
    (core.looseCompression): ISA-L's (the ``isal`` package) when it is installed and
    ``accelerated``, else zlib's. Both are streams git reads; ISA-L's takes a fifth of the
    time. Either releases the GIL while it compresses."""
    if accelerated:
        try:
            from isal import isal_zlib
        except ImportError:
            pass
        else:
            return isal_zlib.compressobj(1)
    return zlib.compressobj(1)


class BlobWriter:
    """A blob being written into the object database by a thread (see
    :meth:`GitStore.write_blob_async`, :meth:`GitStore.store_object_async`): ``write()``
    run there, which returns the blob id (None: nothing was written); :meth:`wait` joins it
    and returns that id or raises what it raised."""

    def __init__(self, write: Callable[[], str | None]) -> None:
        import threading

        self.sha: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(write,), name="scratch-object",
                                        daemon=True)
        self._thread.start()

    def _run(self, write: Callable[[], str | None]) -> None:
        try:
            self.sha = write()
        except BaseException as exc:  # handed to wait()
            self._error = exc

    def wait(self) -> str | None:
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self.sha


# bytes of a file read, hashed and compressed at a time: each step releases the GIL and needs
# it back after, so few of them (the caller parses in Python meanwhile, holding it)
FILE_SLICE = 16 << 20


def write_loose_file(git_dir: Path, path: Path) -> str:
    """The file ``path`` written into ``git_dir``'s objects as a loose blob, as ``git
    hash-object -w --no-filters`` writes it (level 1, fsynced, named by its id; nothing if it
    is there already), in one read of the file: each slice hashed and compressed in turn
    (each step releases the GIL), into a temporary file beside the objects that is then
    moved to the id's place; its id. Memory: one :data:`FILE_SLICE`. A file that changes
    size meanwhile raises OSError."""
    objects = git_dir / "objects"
    tmp = _git_tmp(objects)
    source = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(source).st_size
        digest = hashlib.sha1(b"blob %d\x00" % size)

        def hashed_slices() -> Iterator[memoryview]:
            view = memoryview(bytearray(min(FILE_SLICE, size + 1)))  # +1: sees a growth
            seen = 0
            while n := os.readv(source, [view]):
                digest.update(view[:n])
                yield view[:n]  # compressed before the next read refills the buffer
                seen += n
                if seen > size:
                    break
            if seen != size:
                raise OSError(f"{path} changed size while it was stored")

        _deflate_into(tmp, size, hashed_slices())
    finally:
        os.close(source)
    sha = digest.hexdigest()
    try:
        _move_in(tmp, objects / sha[:2] / sha[2:])
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return sha


def file_blob(path: Path) -> tuple[str, int]:
    """Git blob id and size of a file, streamed."""
    size = os.stat(path).st_size
    digest = hashlib.sha1(b"blob %d\x00" % size)
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest(), size


def lock_holders(path: Path) -> bool | None:
    """Whether some process has ``path`` open: True, False, or None when that cannot be seen
    (no ``/proc``). Processes of other users are not visible; scratch's git runs as the caller."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return None
    try:
        target = os.path.realpath(path)
        names = os.listdir(proc)
    except OSError:
        return None
    for pid in names:
        if not pid.isdigit():
            continue
        fd_dir = proc / pid / "fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd_dir / fd) == target:
                    return True
            except OSError:
                continue
    return False


_LOCK_IN_ERROR = re.compile(r"Unable to create '([^']+\.lock)'")


def locks_in_error(err: str, git_dir: Path) -> list[Path]:
    """The lock files of ``git_dir`` a git error names (``Unable to create '...lock'``).

    Moving a branch also locks ``HEAD`` when HEAD points to it (for HEAD's reflog): a git
    killed mid-way can leave ``HEAD.lock``, which no ``<ref>.lock`` of the refs moved names.
    Only locks inside ``git_dir`` are returned."""
    out = []
    root = os.path.realpath(git_dir)
    for found in _LOCK_IN_ERROR.findall(err):
        path = os.path.realpath(found)
        if os.path.commonpath([root, path]) == root:
            out.append(Path(path))
    return out


def clear_stale_lock(lock: Path) -> bool:
    """Remove git lock file ``lock`` if its holder is gone; True if there is no lock now.

    A lock no process has open, seen so twice 50 ms apart (git closes a lock just before it
    renames it), is stale; without ``/proc`` a lock older than :data:`STALE_LOCK_SECONDS`."""
    try:
        first = os.lstat(lock)
    except FileNotFoundError:
        return True
    held = lock_holders(lock)
    if held is None:
        if time.time() - first.st_mtime <= STALE_LOCK_SECONDS:
            return False
    elif held:
        return False
    else:
        time.sleep(0.05)
        try:
            again = os.lstat(lock)
        except FileNotFoundError:
            return True
        if (again.st_ino, again.st_mtime_ns) != (first.st_ino, first.st_mtime_ns) \
                or lock_holders(lock):
            return False
    try:
        os.unlink(lock)
    except FileNotFoundError:
        pass
    return True


class GitStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir = root / ".git"

    # -- environment -------------------------------------------------------------------------
    def env(self, *, user: bool = False, author: str | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env["GIT_DIR"] = str(self.git_dir)
        env["GIT_WORK_TREE"] = str(self.root)
        env["GIT_CEILING_DIRECTORIES"] = str(self.root.parent)
        if not user:
            env.update(safe_environment())
            name = f"scratch agent {author}" if author else "scratch"
            env["GIT_AUTHOR_NAME"] = name
            env["GIT_AUTHOR_EMAIL"] = f"{author or 'scratch'}@scratch.invalid"
            env["GIT_COMMITTER_NAME"] = "scratch"
            env["GIT_COMMITTER_EMAIL"] = "scratch@scratch.invalid"
        return env

    def _git(self, *args: str, author: str | None = None, check: bool = True,
             input: bytes | None = None, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[bytes]:
        try:
            proc = subprocess.run(
                ["git", *SAFE_CONFIG, *args], cwd=self.root,
                env=env if env is not None else self.env(author=author),
                input=input, capture_output=True,
            )
        except FileNotFoundError:
            raise StoreError("git is not installed or not on PATH; scratch needs it",
                             code="git_missing") from None
        if check and proc.returncode != 0:
            raise StoreError(
                f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}",
                code="git_failed", git_args=list(args),
            )
        return proc

    # -- set-up ------------------------------------------------------------------------------
    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def init(self) -> None:
        """Create the repository and its first commit (the .gitignore)."""
        self._git("init", "-q", "--template=", "-b", "main", str(self.root))
        (self.root / ".gitignore").write_text(GITIGNORE)
        self.commit([".gitignore"], "Create the scratch store.", author="")

    # -- writing -----------------------------------------------------------------------------
    def commit(self, paths: list[str], message: str, *, author: str,
               blobs: dict[str, str] | None = None) -> bool:
        """Commit the current state of ``paths`` (relative to the store root; a missing file is
        a deletion) on top of HEAD, with ``message``. Returns False when nothing changed (no
        empty commits). Call with the store lock held.

        ``blobs`` gives blob ids already known ({path: id}); objects that are not in the
        database yet are written. Only regular files are committed (anything else at a path
        is ``unsafe_path``)."""
        entries: list[str] = []
        for rel in paths:
            path = self.root / rel
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                entries.append(f"0 {'0' * 40}\t{rel}")
                continue
            if not stat.S_ISREG(st.st_mode):
                raise StoreError(f"refusing to commit {rel}: not a regular file",
                                 code="unsafe_path", path=rel)
            known = (blobs or {}).get(rel)
            sha = known if known and self._has_object(known) \
                else self._store_blob(path, st.st_size)
            entries.append(f"100644 {sha}\t{rel}")
        head = self.head()
        index = self.git_dir / f"scratch-index-{os.getpid()}"
        env = self.env(author=author)
        env["GIT_INDEX_FILE"] = str(index)
        try:
            self._seed_index(index, head, env)
            self._git("update-index", "-z", "--index-info",
                      input=("\0".join(entries) + "\0").encode("utf-8", "surrogateescape"),
                      env=env)
            tree = self._git("write-tree", env=env).stdout.decode().strip()
            if tree == self._tree_of(head):
                return False
            args = ["commit-tree", "--no-gpg-sign", tree, "-m", message]
            if head is not None:
                args[2:2] = ["-p", head]
            new = self._git(*args, env=env).stdout.decode().strip()
            self._update_ref(new, head, message)
            self._install_index(index)
            self._housekeep()
        finally:
            remove_private_index(index)
        return True

    def sync_index(self) -> None:
        """Make ``.git/index`` match HEAD again (a writer killed between its commit and moving
        its index into place leaves the old one). Never reads the work tree."""
        head = self.head()
        if head is None:
            return
        index = self.git_dir / f"scratch-index-{os.getpid()}"
        env = self.env()
        env["GIT_INDEX_FILE"] = str(index)
        try:
            self._seed_index(index, head, env)
            self._install_index(index)
        finally:
            remove_private_index(index)

    def _seed_index(self, index: Path, head: str | None, env: dict[str, str]) -> None:
        """The private index: HEAD's tree, with the stat data of ``.git/index`` where entries
        agree (so ``git status`` need not re-hash the store afterwards). Never reads the work
        tree, so no filter can run."""
        if head is None:
            self._git("read-tree", "--empty", env=env)
            return
        try:
            data = (self.git_dir / "index").read_bytes()
        except OSError:
            data = b""
        if data:
            index.write_bytes(data)
            if self._git("read-tree", "-m", head, env=env, check=False).returncode == 0:
                return
            os.unlink(index)  # a damaged index: start from HEAD alone
        self._git("read-tree", head, env=env)

    def _install_index(self, index: Path) -> None:
        """Make the private index ``.git/index``, unless a live process holds its lock."""
        lock = self.git_dir / "index.lock"
        if not clear_stale_lock(lock):
            return  # a git of someone else's is working on it; it keeps its index
        os.replace(index, self.git_dir / "index")

    def _update_ref(self, new: str, old: str | None, message: str) -> None:
        ref_lock = self.git_dir / f"{BRANCH}.lock"
        for attempt in range(40):
            proc = self._git("update-ref", "-m", message.splitlines()[0][:200], "HEAD", new,
                             old or "0" * 40, check=False)
            if proc.returncode == 0:
                return
            err = proc.stderr.decode(errors="replace")
            if ".lock" not in err:
                raise StoreError(f"git failed to record the commit: {err.strip()}",
                                 code="git_failed")
            # the branch's lock file (or HEAD's) exists: another program's git at work, or
            # one killed mid-way, whose lock goes at once
            cleared = [clear_stale_lock(lock)
                       for lock in {ref_lock, *locks_in_error(err, self.git_dir)}]
            if not all(cleared):
                time.sleep(min(0.05 * (attempt + 1), 0.5))
        raise StoreError("git's branch stayed locked by another program for too long",
                         code="git_locked")

    def _housekeep(self) -> None:
        """Pack loose objects once there are many, as ``gc --auto`` would after a porcelain
        commit (plumbing commits never trigger it): git's own test, about 6,700 loose objects,
        judged from the ``17/`` fan-out directory. ``repack`` and ``prune-packed`` run no
        configured program."""
        try:
            loose = len(os.listdir(self.git_dir / "objects" / "17"))
        except OSError:
            loose = 0
        if loose <= LOOSE_OBJECTS_PER_FANOUT:
            return
        self._git("repack", "-d", "-l", "-q", check=False)
        self._git("prune-packed", "-q", check=False)

    def sweep(self) -> None:
        """Remove private indexes (and their locks) of scratch processes that are gone, and
        the lock files a git killed mid-way left (``HEAD.lock``, the branch's, ``index.lock``):
        one no process holds goes at once, so a store opened after a kill shows no debris."""
        from scratch.store.locking import pid_alive

        try:
            names = os.listdir(self.git_dir)
        except OSError:
            return
        for lock in ("HEAD.lock", "index.lock", f"{BRANCH}.lock"):
            clear_stale_lock(self.git_dir / lock)  # one lstat when there is none
        for name in names:
            if not name.startswith("scratch-index-"):
                continue
            pid = name[len("scratch-index-"):].split(".", 1)[0]
            if pid.isdigit() and not pid_alive(int(pid)):
                try:
                    os.unlink(self.git_dir / name)
                except OSError:
                    pass

    def _object_path(self, sha: str) -> Path:
        return self.git_dir / "objects" / sha[:2] / sha[2:]

    def _has_object(self, sha: str) -> bool:
        if self._object_path(sha).is_file():
            return True
        return self._git("cat-file", "-e", sha, check=False).returncode == 0

    def _store_blob(self, path: Path, size: int) -> str:
        """Write ``path`` into the object database as is (no filters); its blob id."""
        if size > LOOSE_OBJECT_MAX:
            return write_loose_file(self.git_dir, path)
        return write_loose_blob(self.git_dir, read_regular(path))

    def _tree_of(self, commit: str | None) -> str:
        if commit is None:
            return EMPTY_TREE
        raw = self._loose_object(commit)
        if raw is not None and raw.startswith(b"commit ") and b"\x00tree " in raw[:64]:
            return raw.split(b"\x00tree ", 1)[1][:40].decode()
        return self._git("rev-parse", f"{commit}^{{tree}}").stdout.decode().strip()

    def _loose_object(self, sha: str) -> bytes | None:
        try:
            return zlib.decompress(self._object_path(sha).read_bytes())
        except (OSError, zlib.error):
            return None  # packed (or unreadable): ask git

    def head(self) -> str | None:
        """The commit HEAD points at, read from the ref files (no process); None if unborn."""
        try:
            ref = (self.git_dir / "HEAD").read_text().strip()
        except OSError:
            return None
        if not ref.startswith("ref: "):
            return ref
        name = ref[5:]
        try:
            return (self.git_dir / name).read_text().strip()
        except FileNotFoundError:
            pass
        try:
            for line in (self.git_dir / "packed-refs").read_text().splitlines():
                if line.endswith(" " + name):
                    return line.split(" ", 1)[0]
        except FileNotFoundError:
            pass
        return None

    def write_blob_async(self, parts: Sequence[bytes], sha: str | None = None,
                         gate: Callable[[], bool] | None = None,
                         staging: Path | None = None) -> BlobWriter:
        """Start writing the concatenation of ``parts`` (its blob id ``sha``, when known) into
        the object database from a thread, as a loose object like :func:`write_loose_blob`;
        :meth:`commit` then finds it written. The parts must not change until ``wait()``.
        Ingest runs this for a big JSON document as soon as its canonical text exists. With a
        ``gate``, the object goes into the database only on its True (``wait()`` then returns
        None when it wrote nothing): the thread asks it first, or, given a ``staging``
        directory outside the database (ingest's, which holds the uncompressed text the
        same while), compresses into a file there meanwhile and moves it in on True."""
        return BlobWriter(partial(_write_gated, self.git_dir, parts, sha, gate, staging))

    def store_object_async(self, path: Path) -> BlobWriter:
        """Start writing the file ``path`` into the object database from a thread, as
        :func:`write_loose_file` does; :meth:`commit` then finds the object written and only
        records it. Ingest runs this on the second core while it builds the index. The
        caller must ``wait()`` for it."""
        return BlobWriter(partial(write_loose_file, self.git_dir, path))

    # -- reading -----------------------------------------------------------------------------
    def restore_path(self, commit: str, rel: str, dest: Path) -> bool:
        """Write the content ``commit`` has at ``rel`` to ``dest`` (through a temporary file
        beside it and a rename, in constant memory); False if ``commit`` has no such file."""
        from scratch.store.locking import replacing

        with replacing(dest, fsync=False, rename=False) as (out, tmp):
            proc = subprocess.run(["git", *SAFE_CONFIG, "cat-file", "blob", f"{commit}:{rel}"],
                                  cwd=self.root, env=self.env(), stdout=out,
                                  stderr=subprocess.DEVNULL)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            return False
        os.replace(tmp, dest)
        return True

    def read_blob(self, sha: str) -> bytes:
        proc = self._git("cat-file", "blob", sha, check=False)
        if proc.returncode != 0:
            raise StoreError(f"git object {sha} is missing from the store", code="object_missing",
                             object=sha)
        return proc.stdout

    def path_history(self, path: str) -> list[GitCommit]:
        """Commits that touched ``path``, oldest first: id, time, message, blob (None: deleted).

        Two processes whatever the length of the history: ``rev-list`` gives each commit's id,
        committer time and message (fields split by NUL, which no commit message holds), then
        one ``cat-file --batch-check`` gives the object ``path`` names in each commit."""
        if self.head() is None:
            return []
        out = self._git("--literal-pathspecs", "rev-list", "--encoding=UTF-8",
                        "--format=%ct%x00%B%x00", "HEAD", "--", path).stdout
        # each commit prints "commit <id>\n<time>\0<message>\0\n"
        parts = out.split(b"\0")
        commits: list[GitCommit] = []
        for head, body in zip(parts[0::2], parts[1::2], strict=False):
            marker, _, stamp = head.strip().partition(b"\n")
            timestamp = int(stamp)
            commits.append({
                "commit": marker.removeprefix(b"commit ").decode(),
                "time": datetime.fromtimestamp(timestamp, UTC).astimezone().isoformat(),
                "timestamp": timestamp, "message": body.decode("utf-8", "replace").strip(),
                "blob": None})
        if commits:
            query = "".join(f"{c['commit']}:{path}\n" for c in commits)
            found = self._git("--literal-pathspecs", "cat-file", "--batch-check",
                              input=query.encode("utf-8", "surrogateescape")).stdout
            for commit, line in zip(commits, found.splitlines(), strict=True):
                fields = line.split()
                if len(fields) == 3 and fields[1] == b"blob":
                    commit["blob"] = fields[0].decode()
        commits.reverse()
        return commits

    def fsck(self) -> subprocess.CompletedProcess[bytes]:
        return self._git("fsck", "--strict", check=False)

    def run_user(self, args: list[str]) -> int:
        """``scratch git ARGS``: run git on the store with the user's own config and terminal."""
        try:
            return subprocess.call(["git", *args], cwd=self.root, env=self.env(user=True))
        except FileNotFoundError:
            raise StoreError("git is not installed or not on PATH", code="git_missing") from None


def safe_environment() -> dict[str, str]:
    """The environment that makes any git process scratch starts safe (see the module
    docstring): no global/system config or attributes, no replace refs, no prompts, and
    :data:`SAFE_SETTINGS` as ``GIT_CONFIG_*`` variables."""
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
           "GIT_NO_REPLACE_OBJECTS": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0",
           "LC_ALL": "C", "GIT_CONFIG_COUNT": str(len(SAFE_SETTINGS))}
    for i, (key, value) in enumerate(SAFE_SETTINGS):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def read_regular(path: Path) -> bytes:
    """The bytes of regular file ``path``, opened without following a symlink."""
    from scratch.safefs import read_fd
    return read_fd(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                           | getattr(os, "O_CLOEXEC", 0)))
