"""Writing versions: write, restore, remove.

Invariants:
- Content equal to the entry's current version makes no version (``unchanged``); when nothing
  changed no commit is made.
- Versions of an entry are numbered from 1 and never reused: a removed entry keeps its
  versions in its metadata and a later write continues after them.
- The items of one :meth:`StoreWriting.commit_versions` call become one commit, checked
  against the quotas before any file is written; ``limits.max_write_bytes`` refuses a write
  before the lock is taken.
- Content becomes a version only with its :class:`~scratch.redact.Redaction` (what redaction
  found in it, or why it was stored as given): :meth:`StoreWriting.write` needs one and
  :meth:`StoreWriting.commit_versions` refuses an item without one (``TypeError``: a bug of
  the caller, never the user's input), so no new way in can skip redaction unnoticed. The
  record is kept in the version's info under ``redaction``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from scratch.calls import Step, suggest
from scratch.errors import LimitExceeded, UsageError
from scratch.redact.records import Redaction
from scratch.store.gitstore import blob_sha
from scratch.store.metadata import count_lines, is_binary, new_meta, utc_now
from scratch.store.names import validate_name
from scratch.store.quotas import StoreQuotas
from scratch.store.reading import StoreReading
from scratch.store.transactions import StoreTransactions

if TYPE_CHECKING:
    from scratch.store.records import EntryMeta, Removed, VersionInfo, WrittenVersion


class Pending(NamedTuple):
    """Content about to become a version: bytes in memory, or a file to move into place."""

    name: str
    content: bytes | Path
    kind: str
    info: dict[str, object]  # the version info (stored as JSON with the version)
    blob: str
    size: int
    lines: int
    binary: bool
    redaction: Redaction  # what redaction did to this content (see the module docstring)


class StoreWriting(StoreTransactions, StoreQuotas, StoreReading):
    """Making versions, restoring one, removing an entry."""

    def write(self, name: str, data: bytes, *, redaction: Redaction, kind: str = "file",
              info: dict[str, object] | None = None, verb: str = "Write", note: str = ""
              ) -> WrittenVersion:
        """Store ``data`` (already redacted, as ``redaction`` says) as the next version of
        ``name``. Returns the version record."""
        validate_name(name)
        limit = self.config["limits.max_write_bytes"]
        if len(data) > limit:
            raise LimitExceeded(
                f"{len(data):,} bytes is over limits.max_write_bytes ({limit:,})",
                code="write_too_large", limit="limits.max_write_bytes", limit_value=limit,
                attempted=len(data))
        item = Pending(name, data, kind, info or {}, blob_sha(data), len(data), count_lines(data),
                       is_binary(data), redaction)
        with self.lock():
            return self.commit_versions([item], verb=verb, note=note)[0]

    def commit_versions(self, items: list[Pending], *, verb: str, note: str = "",
                        message: str | None = None) -> list[WrittenVersion]:
        """Make each item the next version of its entry, all in one commit (lock held).

        Items whose content equals their entry's current version are reported ``unchanged``
        and make no version; if nothing changed, no commit is made.
        """
        records: list[WrittenVersion] = []
        changes: list[tuple[Path, bytes | Path | None]] = []
        blobs: dict[str, str] = {}
        metas: list[tuple[str, EntryMeta]] = []
        new_entries = 0
        old_bytes = new_bytes = 0
        for item in items:
            if not isinstance(getattr(item, "redaction", None), Redaction):
                raise TypeError(f"{item.name!r}: content reaches the store only with its "
                                "redaction record (scratch.redact.Redaction)")
            validate_name(item.name)
            meta = self.load_meta(item.name)
            if meta is not None and meta["kind"] == "log" and not meta.get("deleted"):
                raise UsageError(f"{item.name!r} is a log; use another name or remove it "
                                 "first", code="wrong_kind", name=item.name, kind="log",
                                 suggestions=[suggest(Step.REMOVE_ENTRY, name=item.name)])
            live = meta is not None and not meta.get("deleted")
            if meta is not None and live and meta["versions"] \
                    and meta["versions"][-1]["blob"] == item.blob:
                records.append({**meta["versions"][-1], "name": item.name,
                                "kind": meta["kind"], "unchanged": True})
                continue
            new_entries += 0 if live else 1
            old_bytes += self._current_bytes(meta) if live else 0
            new_bytes += item.size
            if meta is None or meta["kind"] == "log":
                carried = meta.get("log") if meta else None  # a deleted log's ids stay used
                meta = new_meta(item.name, item.kind)
                if carried:
                    meta["log"] = carried
            meta["kind"] = item.kind
            meta["deleted"] = False
            number = len(meta["versions"]) + 1
            line = message or f"{verb} {item.name} (agent {self.agent}), version {number}.{note}"
            record: VersionInfo = {"version": number, "time": utc_now(), "blob": item.blob,
                      "bytes": item.size, "lines": item.lines, "binary": item.binary,
                      "message": line,
                      "info": {**item.info, "redaction": item.redaction.info()}}
            meta["versions"].append(record)
            changes.append((self.content_path(item.name), item.content))
            blobs[self.rel(changes[-1][0])] = item.blob
            metas.append((item.name, meta))
            records.append({**record, "name": item.name, "kind": item.kind,
                            "unchanged": False})
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

    def restore(self, name: str, version: int) -> WrittenVersion:
        ver = self.resolve(name, version, kinds=("file", "output"))
        data = self.read_bytes(ver)
        info = dict(ver.info.get("info") or {})
        earlier = info.pop("redaction", None)
        return self.write(name, data, kind=ver.meta["kind"], info=info, verb="Restore",
                          note=f" Restored from version {version}.",
                          redaction=_restored(earlier))

    def commit_retention(self, deletions: list[str], metas: list[tuple[str, EntryMeta]],
                         message: str) -> None:
        """One commit that deletes the entries ``deletions`` (as :meth:`remove` does: their
        metadata kept, marked deleted) and saves ``metas`` (versions marked ``removed``);
        ``scratch gc``'s. Lock held."""
        changes: list[tuple[Path, bytes | Path | None]] = []
        saved: list[tuple[str, EntryMeta]] = []
        for name in deletions:
            meta = self.require(name)
            changes.append((self.content_path(name, meta["kind"]), None))
            meta["deleted"] = True
            saved.append((name, meta))
        saved += metas
        if not saved:
            return
        self._commit_files(changes, saved, message)
        for path, _ in changes:
            self._prune_empty_dirs(path.parent)

    def remove(self, name: str) -> Removed:
        with self.lock():
            meta = self.require(name)
            path = self.content_path(name, meta["kind"])
            meta["deleted"] = True
            message = f"Delete {name} (agent {self.agent})."
            self._commit_files([(path, None)], [(name, meta)], message)
            self._prune_empty_dirs(path.parent)
        removed: Removed = {"name": name, "kind": meta["kind"], "deleted": True,
                            "versions": len(meta["versions"])}
        return removed


def _restored(earlier: object) -> Redaction:
    """A restored version's record: the findings of the version it copies (its bytes are
    that version's, redacted when it was captured), else "from the store"."""
    if isinstance(earlier, dict) and earlier.get("redacted") is False:
        return Redaction.skipped(str(earlier.get("unredacted") or "restored"))
    if isinstance(earlier, dict) and isinstance(earlier.get("findings"), list):
        return Redaction(tuple(earlier["findings"]), rule_set=str(earlier.get("rule_set", "")))
    return Redaction.from_store()
