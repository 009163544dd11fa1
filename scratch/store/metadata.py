"""Entry metadata and history: which versions an entry has.

Metadata lives in ``agents/<agent>/meta/<name>.json``; history is git's log of the entry's
content path.

Invariants:
- A metadata file holds ``{"scratch_meta": META_VERSION, "name", "kind" (one of KINDS),
  "deleted", "created", "updated", "versions": [...]}`` (a log adds ``"log"``: its next id and
  count); a file that does not is treated as missing.
- Metadata is a cache of history: when it is missing or corrupt it is rebuilt from the content
  file and the commits that changed its blob (:func:`version_commits`), losing only the byte and
  line counts and the info of old versions.
- Writing metadata is an atomic rename; a change saves it through the transaction that commits
  the content with it (:mod:`scratch.store.transactions`).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from scratch.calls import Step, suggest
from scratch.errors import EntryNotFound, InvalidName, UsageError
from scratch.safefs import read_file
from scratch.store.gitstore import blob_sha
from scratch.store.locking import atomic_write
from scratch.store.names import where
from scratch.store.paths import StorePaths

if TYPE_CHECKING:
    from scratch.store.records import EntryMeta, GitCommit, HistoryRow

META_VERSION = 1
KINDS = ("file", "log", "output")


class StoreMetadata(StorePaths):
    """Loading, rebuilding, saving and requiring an entry's metadata; its version history."""

    def load_meta(self, name: str) -> EntryMeta | None:
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
            meta: EntryMeta = orjson.loads(raw)  # JSON edge: checked below
            if meta.get("scratch_meta") != META_VERSION or meta.get("kind") not in KINDS:
                raise ValueError("unknown metadata format")
            return meta
        except (orjson.JSONDecodeError, ValueError, AttributeError):
            return self._rebuild_meta(name)

    def _rebuild_meta(self, name: str) -> EntryMeta | None:
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
                    "blob": str(commit["blob"]), "bytes": None, "lines": None,
                    "message": commit["message"], "info": {},
                })
            data = read_file(self.root, path)
            if not meta["versions"] or meta["versions"][-1]["blob"] != blob_sha(data):
                meta["versions"].append({
                    "version": len(meta["versions"]) + 1, "time": utc_now(),
                    "blob": blob_sha(data), "bytes": len(data), "lines": count_lines(data),
                    "message": "recovered from the working tree", "info": {},
                })
            current = meta["versions"][-1]
            current["bytes"], current["lines"] = len(data), count_lines(data)
            return meta
        return None

    def save_meta(self, name: str, meta: EntryMeta) -> Path:
        meta["updated"] = utc_now()
        path = self.meta_path(name)
        atomic_write(path, orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n", fsync=False)
        return path

    def require(self, name: str, *, kinds: tuple[str, ...] = KINDS,
                allow_deleted: bool = False) -> EntryMeta:
        meta = self.load_meta(name)
        if meta is None or (meta.get("deleted") and not allow_deleted):
            raise EntryNotFound(f"no entry named {name!r} {where(self.root, self.agent)}",
                                name=name, agent=self.agent, store=str(self.root),
                                suggestions=[suggest(Step.LIST_ENTRIES,
                                                     prefix=name.rsplit("/", 1)[0] + "/")
                                             if "/" in name else suggest(Step.LIST_ENTRIES)])
        if meta["kind"] not in kinds:
            raise UsageError(f"{name!r} is a {meta['kind']}, this command takes "
                             f"{' or '.join(kinds)}", code="wrong_kind", name=name,
                             kind=meta["kind"])
        return meta

    def history(self, name: str) -> list[HistoryRow]:
        meta = self.require(name, allow_deleted=True)
        if meta["kind"] == "log":
            raise UsageError(f"{name!r} is a log: logs have entries, not versions",
                             code="wrong_kind", name=name,
                             suggestions=[suggest(Step.READ_LOG, name=name)])
        commits = version_commits(self.git.path_history(self.rel(self.content_path(name))))
        rows: list[HistoryRow] = []
        at = 0
        for rec in meta["versions"]:
            # pair each version with the next commit (oldest first) that stored its blob, so
            # one commit out of step does not shift every later pairing
            match = next((i for i in range(at, len(commits)) if commits[i]["blob"] == rec["blob"]),
                         None)
            commit = commits[match]["commit"][:12] if match is not None else ""
            if match is not None:
                at = match + 1
            rows.append({"version": rec["version"], "time": rec["time"],
                         "bytes": rec.get("bytes"), "lines": rec.get("lines"), "commit": commit,
                         "message": rec.get("message", "")})
        return rows


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


def new_meta(name: str, kind: str) -> EntryMeta:
    now = utc_now()
    meta: EntryMeta = {"scratch_meta": META_VERSION, "name": name, "kind": kind,
                            "deleted": False, "created": now, "updated": now, "versions": []}
    if kind == "log":
        meta["log"] = {"next_id": 1, "count": 0}
    return meta


def version_commits(commits: list[GitCommit]) -> list[GitCommit]:
    """The commits (oldest first) that created versions: the blob changed and is not a deletion
    (so each has a blob)."""
    out, previous = [], None
    for commit in commits:
        if commit["blob"] is not None and commit["blob"] != previous:
            out.append(commit)
        previous = commit["blob"]
    return out
