"""The store: plain files per agent namespace, every change one git commit.

Layout under the store root (a git repository)::

    scratch.toml                       optional settings (see scratch.config)
    .gitignore                         keeps cache/, state/ and .lock out of history
    agents/<agent>/files/<name>        current content of a file or output entry, byte-exact
    agents/<agent>/logs/<name>.jsonl   an append-only log, one JSON object per line
    agents/<agent>/meta/<name>.json    entry metadata: kind, versions (blob ids), log cursor
    cache/                             rebuildable: indexes, old versions materialised as files
    state/                             budgets, counters, the journal and swap lock (not versioned)
    .lock                              serialises write-then-commit across processes

Invariants:
- A name passes :func:`scratch.names.validate_name`; every directory below the store root is
  a real directory, and every file scratch opens in the store is opened without following a
  symlink and refused when hard-linked (:mod:`scratch.safefs`, ``unsafe_path``; a rebuildable
  cache file found so is replaced), so nothing outside the store is ever read or written.
- A change: a journal (``state/journal.json``) first; new content and metadata written beside
  their targets; then, holding ``state/swap.lock`` exclusively, the old files moved aside (by
  rename) and the new ones moved in; then one commit whose message names entry, agent and
  version. Identical content makes no version. A crash anywhere is undone (or, if it was
  committed, finished) the next time the store is opened; ``state/writer`` marks a writer at
  work, so one that was killed has its temporary files swept. Log appends are journaled the
  same way (:mod:`scratch.logs`).
- Readers pair an entry's metadata and content under the swap lock taken shared and keep the
  content file open (:meth:`Store.version_file`): a reader sees one whole version, whose blob
  is the key of its index, even while another process writes the entry.
- Metadata is a cache of history: when it is missing or corrupt it is rebuilt from the content
  and ``git log`` of the content path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from scratch.calls import call
from scratch.config import Config, load_config
from scratch.errors import (
    EntryNotFound,
    InvalidName,
    LimitExceeded,
    QuotaExceeded,
    ScratchError,
    StoreError,
    StoreNotFound,
    UsageError,
    VersionNotFound,
)
from scratch.gitstore import GitStore, blob_sha
from scratch.locking import atomic_write, exclusive, pid_alive, shared, temp_beside, temp_owner
from scratch.names import validate_agent, validate_name
from scratch.safefs import UnsafePath, check_dirs, ensure_dir, open_file, read_file, remove_unsafe

META_VERSION = 1
KINDS = ("file", "log", "output")


def utc_now() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def count_lines(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def is_binary(data: bytes) -> bool:
    """NUL bytes or invalid UTF-8 in the first 64 KiB (a cut multibyte character is fine)."""
    head = data[:65536]
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return not (len(head) == 65536 and exc.start >= len(head) - 3)
    return False


class Pending(NamedTuple):
    """Content about to become a version: bytes in memory, or a file to move into place."""

    name: str
    content: bytes | Path
    kind: str
    info: dict[str, Any]
    blob: str
    size: int
    lines: int
    binary: bool


class Version(NamedTuple):
    name: str
    version: int
    meta: dict[str, Any]
    info: dict[str, Any]


class Store:
    """One agent's view of a store. Create with :meth:`open`."""

    def __init__(self, root: Path, agent: str, config: Config) -> None:
        self.root = root
        self.agent = agent
        self.config = config
        self.git = GitStore(root)
        self.agent_dir = root / "agents" / agent
        self.files_dir = self.agent_dir / "files"
        self.logs_dir = self.agent_dir / "logs"
        self.meta_dir = self.agent_dir / "meta"
        self.cache_dir = root / "cache"
        self.state_dir = root / "state"
        # content files of current versions held open for readers ({blob: fd}, see
        # version_file); closed with the store
        self._pinned: dict[str, int] = {}
        import weakref

        weakref.finalize(self, _close_all, self._pinned)

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path, agent: str = "default", config: Config | None = None,
             *, create: bool = True) -> Store:
        validate_agent(agent)
        os.umask(0o077)
        if not GitStore(root).exists():
            if not create:
                raise StoreNotFound(f"no scratch store at {root}", code="store_missing",
                                    store=str(root))
            cls._create(root)
        store = cls(root, agent, config if config is not None else load_config(root))
        store._check_layout()
        store._check_agent_case()
        store.recover_if_interrupted()
        store._sweep_temporaries()
        return store

    def _check_layout(self) -> None:
        """The store's own directories are real directories: a symlink at ``cache/``,
        ``state/``, ``agents/`` or ``.git`` would send writes outside the store."""
        for top in (".git", "agents", "cache", "state", "cache/index", "cache/blobs",
                    "cache/tmp", "cache/summaries"):
            check_dirs(self.root, self.root / top / "x")

    def _sweep_temporaries(self) -> None:
        """Remove temporary files a killed process left in ``cache/tmp`` and ``state/`` (their
        names carry the creator's pid; a live creator's are kept). Two small directories: cheap
        enough for every open. What a crashed writer left among the entries is swept by
        :meth:`_recover`."""
        self.git.sweep()
        for directory in (self.cache_dir / "tmp", self.state_dir):
            try:
                names = os.listdir(directory)
            except OSError:
                continue
            for fname in names:
                pid = temp_owner(fname)
                if pid is not None and not pid_alive(pid):
                    try:
                        remove_unsafe(directory / fname)
                    except OSError:
                        pass

    @staticmethod
    def _create(root: Path) -> None:
        try:
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            with exclusive(root / ".lock"):
                if not GitStore(root).exists():
                    GitStore(root).init()
        except PermissionError as exc:
            raise StoreError(f"cannot create the store at {root}: {exc.strerror}",
                             code="store_read_only") from None
        except OSError as exc:  # not a directory, a file system that takes no files (/proc)
            raise StoreError(f"cannot use {root} as a store: {exc.strerror or exc}",
                             code="store_unusable", store=str(root)) from None

    def _check_agent_case(self) -> None:
        """On case-insensitive file systems OPS and ops would share a directory: refuse that."""
        agents = self.root / "agents"
        if not agents.is_dir():
            return
        if agents.is_symlink() or self.agent_dir.is_symlink():
            raise StoreError("the agents directory must not be a symlink", code="unsafe_path")
        folded = self.agent.casefold()
        for other in os.listdir(agents):
            if other != self.agent and other.casefold() == folded:
                raise InvalidName(
                    f"agent {self.agent!r} differs only in case from existing agent {other!r}",
                    code="agent_conflict", agent=self.agent, existing=other)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """The store's write lock (one writer at a time, across processes). While it is held a
        marker ``state/writer`` exists; finding it on taking the lock means a writer was killed,
        so its temporary files are swept (:meth:`_recover`)."""
        locked = False
        try:
            with exclusive(self.root / ".lock"):
                locked = True
                self._recover()
                marker = self.state_dir / "writer"
                try:
                    atomic_write(marker, b"%d\n" % os.getpid(), fsync=False)
                except OSError:
                    pass  # a read-only store: nothing will be written anyway
                try:
                    yield
                finally:
                    marker.unlink(missing_ok=True)
        except PermissionError as exc:
            raise StoreError(f"the store at {self.root} is read-only: {exc.strerror}",
                             code="store_read_only") from None
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
            if locked:
                raise
            raise StoreError(f"cannot lock the store at {self.root}: {exc.strerror}",
                             code="store_unusable", store=str(self.root)) from None

    @property
    def journal(self) -> Path:
        return self.state_dir / "journal.json"

    def _swapping(self) -> Any:
        """Held (exclusively) while versions are swapped in or out; readers take it shared to
        pair an entry's metadata with its content (:meth:`version_file`)."""
        return exclusive(self.state_dir / "swap.lock")

    def _recover(self) -> None:
        """Undo a change a crash interrupted before its commit, or finish one that was
        committed, and sweep what a killed writer left (lock held).

        The journal lists each file the change touched and the name its old content was moved
        to (None: it did not exist); if HEAD is still where it was when the change began, the
        files go back.
        """
        killed = (self.state_dir / "writer").exists()
        try:
            entry = orjson.loads(read_file(self.root, self.journal))
        except FileNotFoundError:
            entry = None
        except (OSError, orjson.JSONDecodeError, UnsafePath):
            entry = {"pairs": [], "head": None}
        if entry is not None:
            committed = entry.get("head") is not None and self.git.head() != entry["head"]
            with self._swapping():
                if not committed and entry.get("replaced"):
                    self._restore_from(entry.get("head"), list(entry["replaced"]))
                for target, backup in entry.get("pairs", []):  # journals of older versions
                    path = self.root / target
                    saved = self.root / backup if backup else None
                    try:
                        if committed:
                            if saved is not None:
                                saved.unlink(missing_ok=True)
                        elif saved is not None:
                            if os.path.lexists(saved):
                                os.replace(saved, path)
                            # else: the crash came before the old content was moved: in place
                        else:
                            path.unlink(missing_ok=True)
                    except OSError:
                        pass
                if not committed:
                    self._undo_appends(entry)
            self.journal.unlink(missing_ok=True)
        if killed or entry is not None:
            self._sweep_entries()
            try:
                self.git.sync_index()  # its commit may have been made, its index not moved in
            except StoreError:
                pass

    def _undo_appends(self, entry: dict[str, Any]) -> None:
        """An append journal (:meth:`journal_append`): cut each file back to its size before
        the append and put each saved file back as it was (absent: removed)."""
        import base64

        for target, size in entry.get("truncate", []):
            try:
                fd = open_file(self.root, self.root / target, os.O_WRONLY)
            except (OSError, StoreError):
                continue
            try:
                if os.fstat(fd).st_size > size:
                    os.ftruncate(fd, size)
            finally:
                os.close(fd)
        for target, saved in entry.get("restore", []):
            path = self.root / target
            try:
                if saved is None:
                    path.unlink(missing_ok=True)
                else:
                    atomic_write(path, base64.b64decode(saved), fsync=False)
            except OSError:
                pass

    def journal_append(self, appended: list[tuple[Path, int]], saved: list[Path]) -> None:
        """Record, before an in-place append (lock held), how to undo it if the process dies
        before its commit: each appended file's size before it, and the bytes of each file
        that will be rewritten (``None`` when it does not exist yet). Call
        :meth:`journal_done` after the commit."""
        import base64

        restore: list[list[Any]] = []
        for path in saved:
            try:
                restore.append([self.rel(path), base64.b64encode(read_file(self.root, path))
                                .decode()])
            except FileNotFoundError:
                restore.append([self.rel(path), None])
        atomic_write(self.journal, orjson.dumps({
            "head": self.git.head(), "pairs": [],
            "truncate": [[self.rel(p), size] for p, size in appended], "restore": restore}))

    def journal_done(self) -> None:
        self.journal.unlink(missing_ok=True)

    def undo_journal(self) -> None:
        """Undo what the journal of the change in progress describes (its commit failed)."""
        try:
            entry = orjson.loads(read_file(self.root, self.journal))
        except (OSError, orjson.JSONDecodeError, StoreError):
            return
        self._undo_appends(entry)
        self.journal.unlink(missing_ok=True)

    def _sweep_entries(self) -> None:
        """Remove the temporary files (``.tmp-*``) a killed writer left among the entries of
        every agent (lock held, so no live writer has any)."""
        agents = self.root / "agents"
        try:
            names = os.listdir(agents)
        except OSError:
            return
        for agent in names:
            for sub in ("files", "meta", "logs"):
                for dirpath, _dirs, files in os.walk(agents / agent / sub):
                    for fname in files:
                        if fname.startswith(".tmp-"):
                            try:
                                os.unlink(os.path.join(dirpath, fname))
                            except OSError:
                                pass

    def recover_if_interrupted(self) -> None:
        """Readers call this first: a crashed change is undone before anything is served.

        A change in progress in a live process is not waited for: readers pair metadata and
        content under the swap lock (:meth:`version_file`), so they see the old version or the
        new one. Only when the writer is gone is the lock taken, to recover."""
        marker = self.state_dir / "writer"
        if not (self.journal.exists() or marker.exists()):
            return
        try:
            pid = int(marker.read_bytes().strip() or b"0")
        except (OSError, ValueError):
            pid = 0
        if pid and pid != os.getpid() and pid_alive(pid):
            return  # a live writer at work
        try:
            with self.lock():
                pass
        except StoreError:
            pass  # a read-only store: served as it is

    # -- paths -------------------------------------------------------------------------------
    def _safe(self, base: Path, relative: str) -> Path:
        """``base/relative`` after refusing any symlink between the store root and the target
        (the target itself is opened with ``O_NOFOLLOW`` wherever it is opened)."""
        path = base / relative
        try:
            check_dirs(self.root, path)
        except NotADirectoryError:  # "m" is an entry, so "m/k" (or "m.json/k") cannot be one
            name = relative.removesuffix(".jsonl") if base == self.logs_dir else \
                relative.removesuffix(".json") if base == self.meta_dir else relative
            raise InvalidName(f"{name!r} clashes with an existing entry: a name cannot be both "
                              "an entry and a folder of entries", code="name_conflict",
                              name=name) from None
        if os.path.islink(path):
            raise UnsafePath(f"refusing to follow a symlink placed in the store: "
                             f"{self.rel(path)}", path=self.rel(path), reason="symlink")
        return path

    def content_path(self, name: str, kind: str = "file") -> Path:
        validate_name(name)
        if kind == "log":
            return self._safe(self.logs_dir, name + ".jsonl")
        return self._safe(self.files_dir, name)

    def meta_path(self, name: str) -> Path:
        validate_name(name)
        return self._safe(self.meta_dir, name + ".json")

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    # -- metadata ----------------------------------------------------------------------------
    def load_meta(self, name: str) -> dict[str, Any] | None:
        path = self.meta_path(name)
        try:
            raw = read_file(self.root, path)
        except FileNotFoundError:
            return self._rebuild_meta(name)
        except IsADirectoryError:
            return None
        except NotADirectoryError:  # "m" is an entry, so "m.json/k" cannot be one
            raise InvalidName(f"{name!r} clashes with an existing entry: a name cannot be both "
                              "an entry and a folder of entries", code="name_conflict",
                              name=name) from None
        try:
            meta = orjson.loads(raw)
            if meta.get("scratch_meta") != META_VERSION or meta.get("kind") not in KINDS:
                raise ValueError("unknown metadata format")
            return meta
        except (orjson.JSONDecodeError, ValueError, AttributeError):
            return self._rebuild_meta(name)

    def _rebuild_meta(self, name: str) -> dict[str, Any] | None:
        """Recreate metadata from the content file and its git history (None if no entry)."""
        for kind, path in (("file", self.content_path(name)),
                           ("log", self.content_path(name, "log"))):
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            meta = new_meta(name, kind)
            if kind == "log":
                ids = []
                for line in read_file(self.root, path).split(b"\n"):
                    try:
                        ids.append(int(orjson.loads(line)["id"]))
                    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                        continue  # a torn last line or garbage: not an entry
                meta["log"] = {"next_id": (max(ids) + 1) if ids else 1, "count": len(ids)}
                return meta
            for commit in version_commits(self.git.path_history(self.rel(path))):
                if commit["message"].startswith("Ingest"):
                    meta["kind"] = "output"
                meta["versions"].append({
                    "version": len(meta["versions"]) + 1, "time": commit["time"],
                    "blob": commit["blob"], "bytes": None, "lines": None,
                    "message": commit["message"], "info": {},
                })
            data = read_file(self.root, path)
            if not meta["versions"] or meta["versions"][-1]["blob"] != blob_sha(data):
                meta["versions"].append({
                    "version": len(meta["versions"]) + 1, "time": utc_now(),
                    "blob": blob_sha(data), "bytes": len(data), "lines": count_lines(data),
                    "message": "recovered from the working tree", "info": {},
                })
            meta["versions"][-1].update(bytes=len(data), lines=count_lines(data))
            return meta
        return None

    def save_meta(self, name: str, meta: dict[str, Any]) -> Path:
        meta["updated"] = utc_now()
        path = self.meta_path(name)
        atomic_write(path, orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n", fsync=False)
        return path

    def require(self, name: str, *, kinds: tuple[str, ...] = KINDS,
                allow_deleted: bool = False) -> dict[str, Any]:
        meta = self.load_meta(name)
        if meta is None or (meta.get("deleted") and not allow_deleted):
            raise EntryNotFound(f"no entry named {name!r} for agent {self.agent!r}", name=name,
                                agent=self.agent,
                                suggestions=[call("ls", prefix=name.rsplit("/", 1)[0] + "/")
                                             if "/" in name else call("ls")])
        if meta["kind"] not in kinds:
            raise UsageError(f"{name!r} is a {meta['kind']}, this command takes "
                             f"{' or '.join(kinds)}", code="wrong_kind", name=name,
                             kind=meta["kind"])
        return meta

    # -- writing files -----------------------------------------------------------------------
    def write(self, name: str, data: bytes, *, kind: str = "file", info: dict[str, Any] | None
              = None, verb: str = "Write", note: str = "") -> dict[str, Any]:
        """Store ``data`` as the next version of ``name``. Returns the version record."""
        validate_name(name)
        limit = self.config["limits.max_write_bytes"]
        if len(data) > limit:
            raise LimitExceeded(
                f"{len(data):,} bytes is over limits.max_write_bytes ({limit:,})",
                code="write_too_large", limit="limits.max_write_bytes", limit_value=limit,
                attempted=len(data))
        item = Pending(name, data, kind, info or {}, blob_sha(data), len(data), count_lines(data),
                       is_binary(data))
        with self.lock():
            return self.commit_versions([item], verb=verb, note=note)[0]

    def commit_versions(self, items: list[Pending], *, verb: str, note: str = "",
                        message: str | None = None) -> list[dict[str, Any]]:
        """Make each item the next version of its entry, all in one commit (lock held).

        Items whose content equals their entry's current version are reported ``unchanged``
        and make no version; if nothing changed, no commit is made.
        """
        records: list[dict[str, Any]] = []
        changes: list[tuple[Path, bytes | Path | None]] = []
        blobs: dict[str, str] = {}
        metas: list[tuple[str, dict[str, Any]]] = []
        new_entries = 0
        old_bytes = new_bytes = 0
        for item in items:
            validate_name(item.name)
            meta = self.load_meta(item.name)
            if meta is not None and meta["kind"] == "log" and not meta.get("deleted"):
                raise UsageError(f"{item.name!r} is a log; use another name or remove it "
                                 "first", code="wrong_kind", name=item.name, kind="log",
                                 suggestions=[call("rm", name=item.name)])
            live = meta is not None and not meta.get("deleted")
            if meta is not None and live and meta["versions"] \
                    and meta["versions"][-1]["blob"] == item.blob:
                current = dict(meta["versions"][-1])
                current.update(name=item.name, kind=meta["kind"], unchanged=True)
                records.append(current)
                continue
            new_entries += 0 if live else 1
            old_bytes += self._current_bytes(meta) if live else 0
            new_bytes += item.size
            if meta is None or meta["kind"] == "log":
                carried = (meta or {}).get("log")  # a deleted log's ids stay used
                meta = new_meta(item.name, item.kind)
                if carried:
                    meta["log"] = carried
            meta["kind"] = item.kind
            meta["deleted"] = False
            number = len(meta["versions"]) + 1
            line = message or f"{verb} {item.name} (agent {self.agent}), version {number}.{note}"
            record = {"version": number, "time": utc_now(), "blob": item.blob,
                      "bytes": item.size, "lines": item.lines, "binary": item.binary,
                      "message": line, "info": item.info}
            meta["versions"].append(record)
            changes.append((self.content_path(item.name), item.content))
            blobs[self.rel(changes[-1][0])] = item.blob
            metas.append((item.name, meta))
            out = dict(record)
            out.update(name=item.name, kind=item.kind, unchanged=False)
            records.append(out)
        if not changes:
            return records
        self._check_quota(new_entry=new_entries > 0, new_entries=new_entries,
                          old_bytes=old_bytes, new_bytes=new_bytes)
        if len(changes) == 1 or message:
            commit_message = message or records[[r["unchanged"] for r in records].index(False)][
                "message"]
        else:
            first = next(r for r in records if not r["unchanged"])
            commit_message = (f"{first['message']} With {len(changes) - 1} companion "
                              f"{'entry' if len(changes) == 2 else 'entries'}.")
        self._commit_files(changes, metas, commit_message, blobs)
        return records

    def _commit_files(self, changes: list[tuple[Path, bytes | Path | None]],
                      metas: list[tuple[str, dict[str, Any]]], message: str,
                      blobs: dict[str, str] | None = None) -> None:
        """Write (bytes), move in (Path) or delete (None) files, save metadata, commit.

        Order: the journal (so a crash anywhere after is undone, or completed, on the next
        open); the new files written beside their targets; then, holding the swap lock so no
        reader pairs an old file with a new one, each new file renamed over its target (a
        reader of one file sees the old or the new, never neither); then the commit. The old
        contents are HEAD's (every change is committed), so nothing is copied or kept aside:
        on any failure each touched file is restored from HEAD (or removed if HEAD lacks it)
        and the error re-raised.
        """
        targets = [p for p, _ in changes] + [self.meta_path(n) for n, _ in metas]
        head = self.git.head()
        staged: list[tuple[Path, Path | None, bool]] = []  # (target, new file, ours to delete)
        swapped = False
        try:
            atomic_write(self.journal, orjson.dumps({
                "head": head, "replaced": [self.rel(p) for p in targets]}))
            for path, source in changes:
                if source is None:
                    staged.append((path, None, False))
                    continue
                self._mkdirs(path.parent)
                if isinstance(source, Path):
                    staged.append((path, source, False))
                else:
                    staged.append((path, temp_beside(path, source), True))
            for name, meta in metas:
                meta["updated"] = utc_now()
                mpath = self.meta_path(name)
                self._mkdirs(mpath.parent)
                body = orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n"
                staged.append((mpath, temp_beside(mpath, body, fsync=False), True))
            with self._swapping():
                swapped = True
                for path, new, _ in staged:
                    if new is None:
                        path.unlink(missing_ok=True)
                    else:
                        os.replace(new, path)
            self.git.commit([self.rel(p) for p in targets], message, author=self.agent,
                            blobs=blobs)
        except BaseException as exc:
            if swapped:
                with self._swapping():
                    self._restore_from(head, [self.rel(p) for p in targets])
            for _path, new, ours in staged:
                if ours and new is not None:
                    new.unlink(missing_ok=True)
            self.journal.unlink(missing_ok=True)
            if isinstance(exc, PermissionError):
                raise StoreError(f"the store is read-only: {exc.strerror}: {exc.filename}",
                                 code="store_read_only") from None
            if isinstance(exc, (NotADirectoryError, FileExistsError, IsADirectoryError)):
                names = ", ".join(repr(n) for n, _ in metas)
                raise InvalidName(f"{names} clashes with an existing entry: a name cannot be "
                                  "both an entry and a folder of entries", code="name_conflict",
                                  name=metas[0][0]) from None
            raise
        self.journal.unlink(missing_ok=True)

    def _restore_from(self, head: str | None, rels: list[str]) -> None:
        """Put each of ``rels`` back as commit ``head`` holds it (removed if it has none);
        swap lock held. Each file is replaced by rename, never truncated in place."""
        for rel in rels:
            path = self.root / rel
            try:
                if head is None or not self.git.restore_path(head, rel, path):
                    path.unlink(missing_ok=True)
            except (OSError, StoreError):
                pass

    def _mkdirs(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)

    # -- quotas ------------------------------------------------------------------------------
    def _current_bytes(self, meta: dict[str, Any] | None) -> int:
        if not meta or not meta.get("versions"):
            return 0
        return meta["versions"][-1].get("bytes") or 0

    def usage(self) -> dict[str, int]:
        """Entries, bytes of current content and log entries of this agent."""
        files = logs = total = log_entries = 0
        for directory, is_log in ((self.files_dir, False), (self.logs_dir, True)):
            for dirpath, _dirs, names in os.walk(directory):
                for fname in names:
                    if fname.startswith(".tmp-"):
                        continue
                    total += os.lstat(os.path.join(dirpath, fname)).st_size
                    if is_log:
                        logs += 1
                    else:
                        files += 1
        if logs:
            for meta in self.iter_meta():
                if meta["kind"] == "log" and not meta.get("deleted"):
                    log_entries += meta.get("log", {}).get("count", 0)
        return {"files": files, "logs": logs, "bytes": total, "log_entries": log_entries}

    def _check_quota(self, *, new_entry: bool, old_bytes: int, new_bytes: int,
                     new_log_entries: int = 0, new_entries: int = 1) -> None:
        use = self.usage()
        q_files, q_bytes = self.config["quota.files"], self.config["quota.bytes"]
        if new_entry and use["files"] + use["logs"] + new_entries > q_files:
            raise QuotaExceeded(
                f"agent {self.agent!r} has {use['files'] + use['logs']} entries; quota.files is "
                f"{q_files}", limit="quota.files", limit_value=q_files,
                current=use["files"] + use["logs"], attempted=new_entries,
                suggestions=[call("ls")])
        after = use["bytes"] - old_bytes + new_bytes
        if after > q_bytes:
            raise QuotaExceeded(
                f"storing {new_bytes:,} bytes would bring agent {self.agent!r} to {after:,} bytes;"
                f" quota.bytes is {q_bytes:,}", limit="quota.bytes", limit_value=q_bytes,
                current=use["bytes"], attempted=new_bytes)
        q_logs = self.config["quota.log_entries"]
        if new_log_entries and use["log_entries"] + new_log_entries > q_logs:
            raise QuotaExceeded(
                f"agent {self.agent!r} has {use['log_entries']:,} log entries; appending "
                f"{new_log_entries:,} would pass quota.log_entries ({q_logs:,})",
                limit="quota.log_entries", limit_value=q_logs, current=use["log_entries"],
                attempted=new_log_entries)

    # -- reading -----------------------------------------------------------------------------
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
            self._pinned[blob] = fd
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

    def history(self, name: str) -> list[dict[str, Any]]:
        meta = self.require(name, allow_deleted=True)
        if meta["kind"] == "log":
            raise UsageError(f"{name!r} is a log: logs have entries, not versions",
                             code="wrong_kind", name=name,
                             suggestions=[call("log read", name=name)])
        commits = version_commits(self.git.path_history(self.rel(self.content_path(name))))
        rows = []
        at = 0
        for rec in meta["versions"]:
            # pair each version with the next commit (oldest first) that stored its blob, so
            # one commit out of step does not shift every later pairing
            match = next((i for i in range(at, len(commits)) if commits[i]["blob"] == rec["blob"]),
                         None)
            commit = commits[match]["commit"][:12] if match is not None else ""
            if match is not None:
                at = match + 1
            rows.append({
                "version": rec["version"], "time": rec["time"], "bytes": rec.get("bytes"),
                "lines": rec.get("lines"), "commit": commit, "message": rec.get("message", ""),
            })
        return rows

    def restore(self, name: str, version: int) -> dict[str, Any]:
        ver = self.resolve(name, version, kinds=("file", "output"))
        data = self.read_bytes(ver)
        return self.write(name, data, kind=ver.meta["kind"], info=ver.info.get("info"),
                          verb="Restore", note=f" Restored from version {version}.")

    def remove(self, name: str) -> dict[str, Any]:
        with self.lock():
            meta = self.require(name)
            path = self.content_path(name, meta["kind"])
            meta["deleted"] = True
            message = f"Delete {name} (agent {self.agent})."
            self._commit_files([(path, None)], [(name, meta)], message)
            self._prune_empty_dirs(path.parent)
        return {"name": name, "kind": meta["kind"], "deleted": True,
                "versions": len(meta["versions"])}

    def _prune_empty_dirs(self, directory: Path) -> None:
        while directory not in (self.files_dir, self.logs_dir) and directory != self.agent_dir:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    # -- listing -----------------------------------------------------------------------------
    def iter_meta(self) -> Iterator[dict[str, Any]]:
        base = self.meta_dir
        for dirpath, _dirs, names in os.walk(base):
            for fname in sorted(names):
                if not fname.endswith(".json") or fname.startswith(".tmp-"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, fname), base)[: -len(".json")]
                try:
                    meta = self.load_meta(rel.replace(os.sep, "/"))
                except ScratchError:
                    continue
                if meta is not None:
                    yield meta

    def _orphans(self, known: set[str]) -> list[dict[str, Any]]:
        """Entries whose content exists but whose metadata is lost: rebuilt from history."""
        found = []
        for base, suffix in ((self.files_dir, ""), (self.logs_dir, ".jsonl")):
            for dirpath, _dirs, names in os.walk(base):
                for fname in names:
                    if fname.startswith(".tmp-") or not fname.endswith(suffix):
                        continue
                    rel = os.path.relpath(os.path.join(dirpath, fname), base)
                    name = rel[: len(rel) - len(suffix)] if suffix else rel
                    name = name.replace(os.sep, "/")
                    if name in known:
                        continue
                    try:
                        meta = self.load_meta(name)
                    except ScratchError:
                        continue
                    if meta is not None:
                        found.append(meta)
        return found

    def list(self, prefix: str = "") -> list[dict[str, Any]]:
        rows = []
        metas = list(self.iter_meta())
        metas += self._orphans({m["name"] for m in metas})
        for meta in metas:
            if meta.get("deleted") or not meta["name"].startswith(prefix):
                continue
            row: dict[str, Any] = {"name": meta["name"], "kind": meta["kind"]}
            if meta["kind"] == "log":
                path = self.content_path(meta["name"], "log")
                size = os.lstat(path).st_size if os.path.lexists(path) else 0
                row.update(version=None, bytes=size, lines=meta["log"]["count"],
                           updated=meta.get("updated"))
            else:
                cur = meta["versions"][-1]
                row.update(version=cur["version"], bytes=cur.get("bytes"),
                           lines=cur.get("lines"), updated=cur["time"])
            rows.append(row)
        rows.sort(key=lambda r: r["name"])
        return rows


_PROC_FD = Path("/proc/self/fd")


def _close_all(fds: dict[str, int]) -> None:
    for fd in fds.values():
        try:
            os.close(fd)
        except OSError:
            pass
    fds.clear()


def new_meta(name: str, kind: str) -> dict[str, Any]:
    now = utc_now()
    meta: dict[str, Any] = {"scratch_meta": META_VERSION, "name": name, "kind": kind,
                            "deleted": False, "created": now, "updated": now, "versions": []}
    if kind == "log":
        meta["log"] = {"next_id": 1, "count": 0}
    return meta


def version_commits(commits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The commits (oldest first) that created versions: the blob changed and is not a deletion."""
    out, previous = [], None
    for commit in commits:
        if commit["blob"] is not None and commit["blob"] != previous:
            out.append(commit)
        previous = commit["blob"]
    return out


# used by sync
def replace_files(store: Store, changes: list[tuple[Path, Path | None]],
                  finish: Any) -> None:
    """Move each staged file over its target (``None``: delete the target), then call
    ``finish()``, which must move HEAD to the commit that holds the new files (store lock
    held; staged files lie in the store's file system, deletions come first).

    The same journal and swap as any change (:meth:`Store._commit_files`): a crash before
    ``finish`` has moved HEAD is undone on the next open (every target back as HEAD holds
    it), one after it is complete; readers see all the old files or all the new ones."""
    head = store.git.head()
    swapped = False
    try:
        atomic_write(store.journal, orjson.dumps({
            "head": head, "replaced": [store.rel(p) for p, _ in changes]}))
        with store._swapping():
            swapped = True
            for path, new in changes:
                if new is None:
                    path.unlink(missing_ok=True)
                    store._prune_empty_dirs(path.parent)
                else:
                    if not path.parent.is_dir():  # where a file that just went was
                        store._mkdirs(path.parent)
                    os.replace(new, path)
            finish()
    except BaseException:
        if swapped and store.git.head() == head:
            with store._swapping():
                store._restore_from(head, [store.rel(p) for p, _ in changes])
        for _path, new in changes:
            if new is not None:
                new.unlink(missing_ok=True)
        store.journal.unlink(missing_ok=True)
        raise
    store.journal.unlink(missing_ok=True)
    store.git.sync_index()
