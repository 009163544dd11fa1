"""Listing an agent's entries.

Invariants:
- A listing reads metadata and file sizes only, never content: one row per live entry, sorted
  by name. An entry whose metadata is lost but whose content exists is listed from metadata
  rebuilt from history; temporary files (``.tmp-*``) are never entries.
- Metadata that cannot be read skips its entry; it never fails the listing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scratch.errors import ScratchError
from scratch.store.metadata import StoreMetadata

if TYPE_CHECKING:
    from scratch.store.records import EntryMeta, ListRow


class StoreListing(StoreMetadata):
    """The entries of this agent: every metadata record, and the rows of ``ls``."""

    def iter_meta(self) -> Iterator[EntryMeta]:
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

    def _orphans(self, known: set[str]) -> list[EntryMeta]:
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

    def live_meta(self) -> list[EntryMeta]:
        """The metadata of every live entry, those rebuilt from history included."""
        metas = list(self.iter_meta())
        metas += self._orphans({m["name"] for m in metas})
        return [m for m in metas if not m.get("deleted")]

    def row_of(self, meta: EntryMeta) -> ListRow:
        """The ``ls`` row of one entry: a log's bytes are its file's, its lines its entries."""
        if meta["kind"] == "log":
            path = self.content_path(meta["name"], "log")
            size = os.lstat(path).st_size if os.path.lexists(path) else 0
            return {"name": meta["name"], "kind": meta["kind"], "version": None,
                    "bytes": size, "lines": meta["log"]["count"],
                    "updated": meta.get("updated")}
        cur = meta["versions"][-1]
        return {"name": meta["name"], "kind": meta["kind"], "version": cur["version"],
                "bytes": cur.get("bytes"), "lines": cur.get("lines"), "updated": cur["time"]}

    def list(self, prefix: str = "") -> list[ListRow]:
        rows = [self.row_of(m) for m in self.live_meta() if m["name"].startswith(prefix)]
        rows.sort(key=lambda r: r["name"])
        return rows
