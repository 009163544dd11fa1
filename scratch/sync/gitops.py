"""Git plumbing for sync: read trees and blobs, write objects, trees, commits and refs.

Invariants:
- Every process here runs with :meth:`scratch.store.gitstore.GitStore.env` (the caller's ``GIT_*``
  cleared, global/system config ignored) and :data:`scratch.store.gitstore.SAFE_CONFIG`, exactly as
  the store's own commits do; none of these commands reads the work tree, so no filter,
  attribute, hook or other configured program runs.
- Trees are built in a private index (``.git/scratch-index-<pid>.sync``, swept with the
  store's own when its process is gone), never ``.git/index``.
- Refs move only through ``update-ref --stdin`` transactions that name the old value of each
  ref: all of them move or none does, and a ref someone else moved is not overwritten.
- Objects made by a history rewrite (:mod:`scratch.sync.rewrite`) go in as one pack
  (``index-pack --stdin``): one file, not thousands of loose objects. Unreachable objects go
  only through :meth:`Plumbing.prune_unreachable` (reflogs expired, everything reachable
  repacked, the rest pruned), run with the store lock held.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, NamedTuple

from scratch.errors import StoreError
from scratch.store.gitstore import (
    SAFE_CONFIG,
    GitStore,
    clear_stale_lock,
    locks_in_error,
    remove_private_index,
    write_loose_blob,
)

ZERO = "0" * 40
PACK_TYPES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}
# caches git may keep beside the objects that name commits a rewrite removed; optional (git
# works without them, and fsck checks them against the objects): removed after a prune
OBJECT_CACHES = ("info/commit-graph", "info/commit-graphs", "pack/multi-pack-index")


def object_id(kind: str, data: bytes) -> str:
    """The id git gives object ``data`` of type ``kind`` (computed here: no process)."""
    return hashlib.sha1(b"%s %d\x00" % (kind.encode(), len(data)) + data).hexdigest()


def pack_bytes(objects: Iterable[tuple[str, bytes]]) -> bytes:
    """A version 2 pack holding ``objects`` ((type, data) each, whole: no deltas)."""
    items = list(objects)
    parts = [b"PACK", (2).to_bytes(4, "big"), len(items).to_bytes(4, "big")]
    for kind, data in items:
        size = len(data)
        byte = (PACK_TYPES[kind] << 4) | (size & 0x0F)
        size >>= 4
        header = bytearray()
        while size:
            header.append(byte | 0x80)
            byte = size & 0x7F
            size >>= 7
        header.append(byte)
        parts += [bytes(header), zlib.compress(data, 1)]
    body = b"".join(parts)
    return body + hashlib.sha1(body).digest()


class ObjectReader:
    """One ``cat-file --batch`` process reading objects by id (see :meth:`Plumbing.reader`)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        assert proc.stdin is not None and proc.stdout is not None
        self._in: IO[bytes] = proc.stdin
        self._out: IO[bytes] = proc.stdout

    def read(self, sha: str) -> tuple[str, bytes]:
        """(type, bytes) of object ``sha``; a missing one is ``object_missing``."""
        self._in.write(sha.encode() + b"\n")
        self._in.flush()
        return self._answer(sha)

    def read_many(self, shas: Iterable[str]) -> dict[str, tuple[str, bytes]]:
        """(type, bytes) of each object, asked for all at once: a thread writes the ids
        while this one reads the answers (one round trip, whatever their number)."""
        import threading

        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        failed: list[BaseException] = []

        def ask() -> None:
            try:
                self._in.write("".join(s + "\n" for s in wanted).encode())
                self._in.flush()
            except BaseException as exc:  # reported by the reading side
                failed.append(exc)

        writer = threading.Thread(target=ask, name="scratch-cat-file", daemon=True)
        writer.start()
        found: dict[str, tuple[str, bytes]] = {}
        missing = []
        for sha in wanted:  # every answer is read, so the writer never blocks
            answer = self._next()
            if answer is None:
                missing.append(sha)
            else:
                found[sha] = answer
        writer.join()
        if failed:
            raise failed[0]
        if missing:
            raise StoreError(f"git object {missing[0]} is missing from the store",
                             code="object_missing", object=missing[0])
        return found

    def _answer(self, sha: str) -> tuple[str, bytes]:
        answer = self._next()
        if answer is None:
            raise StoreError(f"git object {sha} is missing from the store",
                             code="object_missing", object=sha)
        return answer

    def _next(self) -> tuple[str, bytes] | None:
        header = self._out.readline().split()
        if len(header) != 3:
            return None  # "<id> missing"
        size = int(header[2])
        data = self._out.read(size)
        self._out.read(1)  # the newline after each object
        return header[1].decode(), data


class TreeEntry(NamedTuple):
    mode: str
    sha: str
    size: int


Tree = dict[str, TreeEntry]  # path -> entry, blobs only (ls-tree -r)


class Plumbing:
    """Git plumbing on one store (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store_git = GitStore(root)
        self.git_dir = root / ".git"

    def run(self, *args: str, input: bytes | None = None, check: bool = True,
            index: Path | None = None) -> subprocess.CompletedProcess[bytes]:
        env = self.store_git.env(author="")
        env["GIT_COMMITTER_NAME"] = env["GIT_AUTHOR_NAME"] = "scratch (sync)"
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        try:
            proc = subprocess.run(["git", *SAFE_CONFIG, *args], cwd=self.root, env=env,
                                  input=input, capture_output=True)
        except FileNotFoundError:
            raise StoreError("git is not installed or not on PATH; scratch needs it",
                             code="git_missing") from None
        if check and proc.returncode != 0:
            raise StoreError(f"git {args[0]} failed: "
                             f"{proc.stderr.decode(errors='replace').strip()}",
                             code="git_failed", git_args=list(args))
        return proc

    # -- reading -----------------------------------------------------------------------------
    @contextmanager
    def reader(self) -> Iterator[ObjectReader]:
        """An :class:`ObjectReader` for the length of the block (one process)."""
        env = self.store_git.env()
        try:
            proc = subprocess.Popen(["git", *SAFE_CONFIG, "cat-file", "--batch"],
                                    cwd=self.root, env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except FileNotFoundError:
            raise StoreError("git is not installed or not on PATH; scratch needs it",
                             code="git_missing") from None
        try:
            yield ObjectReader(proc)
        finally:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()
            proc.wait()

    def all_refs(self) -> dict[str, tuple[str, str]]:
        """Every ref: name -> (object id, object type)."""
        proc = self.run("for-each-ref", "--format=%(refname) %(objectname) %(objecttype)")
        out = {}
        for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
            name, sha, kind = line.rsplit(" ", 2)
            out[name] = (sha, kind)
        return out

    def detached_head(self) -> str | None:
        """HEAD's commit when HEAD names no branch (a user's own git left it so), else None."""
        try:
            text = (self.git_dir / "HEAD").read_text().strip()
        except OSError:
            return None
        return None if text.startswith("ref: ") else text

    def commits_parents_first(self, tips: Iterable[str], exclude: Iterable[str] = ()
                              ) -> list[tuple[str, list[str]]]:
        """Every commit reachable from ``tips`` and not from ``exclude``, with its parents,
        parents before children."""
        wanted = sorted(set(tips))
        if not wanted:
            return []
        lines = [t + "\n" for t in wanted] + [f"^{x}\n" for x in sorted(set(exclude))]
        out = self.run("rev-list", "--topo-order", "--reverse", "--parents", "--stdin",
                       input="".join(lines).encode()).stdout
        rows = []
        for line in out.decode().splitlines():
            parts = line.split()
            rows.append((parts[0], parts[1:]))
        return rows

    def changed_paths(self, old: str | None, new: str) -> list[tuple[str, str | None]]:
        """The files that differ between commits ``old`` and ``new``: (path, blob in ``new`` or
        None where it has none)."""
        if old is None:
            return [(p, e.sha) for p, e in self.tree(new).items()]
        out = self.run("diff-tree", "-r", "-z", "--no-renames", old, new).stdout
        fields = out.split(b"\0")
        rows: list[tuple[str, str | None]] = []
        for head, path in zip(fields[0::2], fields[1::2], strict=False):
            if not head.startswith(b":"):
                continue
            _m1, _m2, _s1, sha, status = head[1:].decode().split()
            rows.append((path.decode("utf-8", "surrogateescape"),
                         None if status == "D" else sha))
        return rows

    def missing(self, shas: Iterable[str]) -> set[str]:
        """Which of ``shas`` the object database does not hold."""
        wanted = sorted(set(shas))
        if not wanted:
            return set()
        proc = self.run("cat-file", "--batch-check=%(objectname)",
                        input="".join(s + "\n" for s in wanted).encode())
        out = set()
        for line in proc.stdout.decode().splitlines():
            if line.endswith(" missing"):
                out.add(line.split()[0])
        return out

    def check_connected(self, tips: Iterable[str]) -> None:
        """Every object reachable from ``tips`` is in the database (else ``object_missing``)."""
        wanted = sorted(set(tips))
        if not wanted:
            return
        proc = self.run("rev-list", "--objects", "--missing=error", "--quiet", "--stdin",
                        input="".join(t + "\n" for t in wanted).encode(), check=False)
        if proc.returncode != 0:
            raise StoreError("a history rewrite made commits whose objects are missing: "
                             f"{proc.stderr.decode(errors='replace').strip()[-500:]}",
                             code="object_missing")

    def resolve(self, ref: str) -> str | None:
        proc = self.run("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip() or None

    def refs(self, prefix: str) -> dict[str, str]:
        proc = self.run("for-each-ref", "--format=%(refname) %(objectname)", prefix)
        out = {}
        for line in proc.stdout.decode().splitlines():
            name, _, sha = line.partition(" ")
            out[name] = sha
        return out

    def tree(self, commit: str | None, prefix: str = "") -> Tree:
        """Every blob below ``prefix`` in ``commit``'s tree (empty for None)."""
        if commit is None:
            return {}
        args = ["ls-tree", "-r", "-l", "-z", "--full-tree", commit]
        if prefix:
            args += ["--", prefix]
        out: Tree = {}
        for record in self.run(*args).stdout.split(b"\0"):
            if not record:
                continue
            head, _, path = record.partition(b"\t")
            mode, kind, sha, size = head.split()
            out[path.decode("utf-8", "surrogateescape")] = TreeEntry(
                mode.decode(), sha.decode(), int(size) if size.isdigit() else -1)
        return out

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """The bytes of each blob (one ``cat-file --batch``; meant for metadata and logs)."""
        wanted = sorted(set(shas))
        if not wanted:
            return {}
        proc = self.run("cat-file", "--batch", input="".join(s + "\n" for s in wanted).encode())
        data, pos, out = proc.stdout, 0, {}
        for sha in wanted:
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            if len(header) != 3:
                raise StoreError(f"git object {sha} is missing from the store",
                                 code="object_missing", object=sha)
            size = int(header[2])
            out[sha] = data[end + 1:end + 1 + size]
            pos = end + 1 + size + 1
        return out

    def blob_to(self, sha: str, fd: int) -> None:
        """Stream blob ``sha`` into the open file ``fd`` (constant memory)."""
        env = self.store_git.env()
        proc = subprocess.run(["git", *SAFE_CONFIG, "cat-file", "blob", sha], cwd=self.root,
                              env=env, stdout=fd, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise StoreError(f"git object {sha} is missing from the store",
                             code="object_missing", object=sha)

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.run("merge-base", "--is-ancestor", older, newer,
                        check=False).returncode == 0

    def has_commit(self, sha: str) -> bool:
        return self.run("cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0

    def objects_to_send(self, tip: str, have: list[str], limit: int) -> tuple[list[str], list[str]]:
        """Blobs reachable from ``tip`` and not from ``have``: those of at most ``limit``
        bytes, and the ids of the bigger ones (which a push would carry)."""
        args = ["rev-list", "--objects", f"--filter=blob:limit={limit + 1}",
                "--filter-print-omitted", tip]
        if have:
            args += ["--not", *have]
        small: list[str] = []
        big: list[str] = []
        for line in self.run(*args).stdout.decode("utf-8", "surrogateescape").splitlines():
            if line.startswith("~"):
                big.append(line[1:].split()[0])
            elif " " in line:
                small.append(line.split(" ", 1)[0])
        kinds = self.types(small)  # trees are listed with their paths too
        return [sha for sha in small if kinds.get(sha) == "blob"], big

    def types(self, shas: list[str]) -> dict[str, str]:
        if not shas:
            return {}
        proc = self.run("cat-file", "--batch-check=%(objectname) %(objecttype)",
                        input="".join(s + "\n" for s in shas).encode())
        out = {}
        for line in proc.stdout.decode().splitlines():
            parts = line.split()
            if len(parts) == 2:
                out[parts[0]] = parts[1]
        return out

    # -- writing -----------------------------------------------------------------------------
    def write_pack(self, objects: Iterable[tuple[str, bytes]]) -> None:
        """Write ``objects`` ((type, data) each) into the database as one pack."""
        data = pack_bytes(objects)
        if len(data) > 32:  # 12-byte header + 20-byte trailer: an empty pack is not written
            self.run("index-pack", "--stdin", input=data)

    def prune_unreachable(self) -> None:
        """Remove every object no ref reaches: reflogs expired, what is reachable repacked
        into one pack (older packs, and what only they held, removed), loose leftovers
        pruned; then the optional caches that could name removed commits. Store lock held;
        the caller has made ``.git/index`` match HEAD (git keeps what the index names)."""
        self.run("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
        self.run("repack", "-a", "-d", "-q", "--no-write-bitmap-index")
        self.run("prune", "--expire=now")
        for rel in OBJECT_CACHES:
            path = self.git_dir / "objects" / rel
            if path.is_dir():
                import shutil
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def write_blob(self, data: bytes) -> str:
        """Write ``data`` as a loose blob (as the store's commits do); its id."""
        return write_loose_blob(self.git_dir, data)

    def make_tree(self, entries: Tree) -> str:
        """A tree object holding exactly ``entries`` (built in a private index)."""
        index = self.git_dir / f"scratch-index-{os.getpid()}.sync"
        try:
            self.run("read-tree", "--empty", index=index)
            if entries:
                lines = "".join(f"{e.mode} {e.sha}\t{path}\0" for path, e in entries.items())
                self.run("update-index", "-z", "--index-info",
                         input=lines.encode("utf-8", "surrogateescape"), index=index)
            return self.run("write-tree", index=index).stdout.decode().strip()
        finally:
            remove_private_index(index)

    def flat_tree(self, blobs: list[str]) -> str:
        """A tree naming each blob by its id (carries objects, holds no entries)."""
        lines = "".join(f"100644 blob {sha}\t{sha}\n" for sha in sorted(set(blobs)))
        return self.run("mktree", input=lines.encode()).stdout.decode().strip()

    def commit(self, tree: str, parents: list[str], message: str) -> str:
        args = ["commit-tree", "--no-gpg-sign", tree, "-m", message]
        for parent in parents:
            args += ["-p", parent]
        return self.run(*args).stdout.decode().strip()

    def tree_of(self, commit: str | None) -> str | None:
        if commit is None:
            return None
        return self.run("rev-parse", f"{commit}^{{tree}}").stdout.decode().strip()

    def update_refs(self, updates: list[tuple[str, str | None, str | None]]) -> None:
        """Move refs in one transaction: (ref, new or None to delete, expected old or None
        for "must not exist")."""
        if not updates:
            return
        lines = []
        for ref, new, old in updates:
            if new is None:
                lines.append(f"delete {ref}\0{old or ''}\0")
            else:
                lines.append(f"update {ref}\0{new}\0{old or ZERO}\0")
        script = ("start\0" + "".join(lines) + "prepare\0commit\0").encode()
        for attempt in range(40):
            proc = self.run("update-ref", "-z", "--stdin", input=script, check=False)
            if proc.returncode == 0:
                return
            err = proc.stderr.decode(errors="replace")
            if ".lock" not in err:
                raise StoreError(f"git refused to move the refs: {err.strip()}",
                                 code="git_failed")
            # a stale lock of a git killed mid-way goes (HEAD's too: see locks_in_error)
            for lock in {*(self.git_dir / f"{ref}.lock" for ref, _new, _old in updates),
                         *locks_in_error(err, self.git_dir)}:
                clear_stale_lock(lock)
            import time
            time.sleep(min(0.05 * (attempt + 1), 0.5))
        raise StoreError("git's refs stayed locked by another program for too long",
                         code="git_locked")

    def delete_refs(self, prefix: str) -> None:
        refs = self.refs(prefix)
        self.update_refs([(ref, None, sha) for ref, sha in refs.items()])

    def config_get_all(self, pattern: str) -> list[tuple[str, str]]:
        """``(key, value)`` of the store's own config file matching ``pattern`` (read only)."""
        proc = self.run("config", "--file", str(self.git_dir / "config"), "-z",
                        "--get-regexp", pattern, check=False)
        out = []
        for record in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
            if record:
                key, _, value = record.partition("\n")
                out.append((key, value))
        return out

    def config_set(self, key: str, value: str) -> None:
        self.run("config", "--file", str(self.git_dir / "config"), key, value)

    def config_add(self, key: str, value: str) -> None:
        self.run("config", "--file", str(self.git_dir / "config"), "--add", key, value)

    def config_remove_section(self, section: str) -> None:
        self.run("config", "--file", str(self.git_dir / "config"), "--remove-section", section,
                 check=False)
