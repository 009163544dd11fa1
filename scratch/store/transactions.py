"""Changes as transactions: the store lock, the journal, the swap lock, and recovery.

Invariants:
- One writer at a time: :meth:`StoreTransactions.lock` (``.lock``, across processes). While
  it is held ``state/writer`` names the writer's pid; finding it on taking the lock means a
  writer was killed, so what it left is recovered first.
- A change (:meth:`StoreTransactions._commit_files`): the journal (``state/journal.json``,
  HEAD and the files it touches) first; the new files written beside their targets; then,
  holding ``state/swap.lock`` exclusively, each renamed over its target; then one commit. The
  old content is HEAD's, so nothing is kept aside: on failure, and after a crash, every touched
  file is restored from HEAD (or removed if HEAD lacks it). A journal whose HEAD has moved
  belongs to a committed change: it is only finished.
- Log appends are journaled too (:meth:`StoreTransactions.journal_append`): each log's size
  before the append and the bytes of each file rewritten, undone the same way.
- Readers never wait for a live writer (:meth:`StoreTransactions.recover_if_interrupted`); only
  a dead one's change is recovered before anything is served.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from scratch.errors import InvalidName, StoreError
from scratch.safefs import UnsafePath, open_file, read_file
from scratch.store.locking import atomic_write, exclusive, pid_alive, temp_beside
from scratch.store.metadata import StoreMetadata, utc_now

if TYPE_CHECKING:
    from scratch.jsonvalues import Incoming
    from scratch.store.records import EntryMeta


class StoreTransactions(StoreMetadata):
    """The write lock, the journal of the change in progress, and recovery after a crash."""

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

    def _swapping(self) -> AbstractContextManager[None]:
        """Held (exclusively) while versions are swapped in or out; readers take it shared to
        pair an entry's metadata with its content (:meth:`version_file`)."""
        return exclusive(self.state_dir / "swap.lock")

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

    def _undo_appends(self, entry: dict[str, Incoming]) -> None:
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

        restore: list[list[str | None]] = []  # [path, base64 of its bytes or None]
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
        every agent and every run (lock held, so no live writer has any)."""
        spaces = []
        for top in ("agents", "runs"):
            try:
                spaces += [self.root / top / name for name in os.listdir(self.root / top)]
            except OSError:
                continue
        for space in spaces:
            for sub in ("files", "meta", "logs"):
                for dirpath, _dirs, files in os.walk(space / sub):
                    for fname in files:
                        if fname.startswith(".tmp-"):
                            try:
                                os.unlink(os.path.join(dirpath, fname))
                            except OSError:
                                pass

    def _commit_files(self, changes: list[tuple[Path, bytes | Path | None]],
                      metas: list[tuple[str, EntryMeta]], message: str,
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

    def replace_files(self, changes: list[tuple[Path, Path | None]],
                      finish: Callable[[], None]) -> None:
        """Move each staged file over its target (``None``: delete the target), then call
        ``finish()``, which must move HEAD to the commit that holds the new files (a sync's
        merge; store lock held; staged files lie in the store's file system, deletions first).

        The same journal and swap as any change (:meth:`_commit_files`): a crash before
        ``finish`` has moved HEAD is undone on the next open (every target back as HEAD holds
        it), one after it is complete; readers see all the old files or all the new ones."""
        head = self.git.head()
        swapped = False
        try:
            atomic_write(self.journal, orjson.dumps({
                "head": head, "replaced": [self.rel(p) for p, _ in changes]}))
            with self._swapping():
                swapped = True
                for path, new in changes:
                    if new is None:
                        path.unlink(missing_ok=True)
                        self._prune_empty_dirs(path.parent)
                    else:
                        if not path.parent.is_dir():  # where a file that just went was
                            self._mkdirs(path.parent)
                        os.replace(new, path)
                finish()
        except BaseException:
            if swapped and self.git.head() == head:
                with self._swapping():
                    self._restore_from(head, [self.rel(p) for p, _ in changes])
            for _path, new in changes:
                if new is not None:
                    new.unlink(missing_ok=True)
            self.journal.unlink(missing_ok=True)
            raise
        self.journal.unlink(missing_ok=True)
        self.git.sync_index()

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
