"""Quotas: what an agent holds, and the check made before anything more is stored.

Invariants:
- Usage is what is on disk now: content files and logs (not metadata, not temporary files),
  and the log entries their metadata counts.
- A change is checked against ``quota.files``, ``quota.bytes`` and ``quota.log_entries`` with
  the store lock held and before any file of it is written, so a refused change leaves
  nothing behind (``QuotaExceeded`` names the limit, the current use and the attempt).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from scratch.calls import Step, suggest
from scratch.errors import QuotaExceeded
from scratch.store.listing import StoreListing

if TYPE_CHECKING:
    from scratch.store.records import EntryMeta, Usage


class StoreQuotas(StoreListing):
    """An agent's usage and the quota check of a change."""

    def _current_bytes(self, meta: EntryMeta | None) -> int:
        if not meta or not meta.get("versions"):
            return 0
        return meta["versions"][-1].get("bytes") or 0

    def usage(self) -> Usage:
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
        usage: Usage = {"files": files, "logs": logs, "bytes": total, "log_entries": log_entries}
        return usage

    def cache_usage(self) -> dict[str, int]:
        """Bytes on disk under the store's ``cache/`` (rebuildable: indexes with what is kept
        beside them -- count caches, SQL columnar copies --, old versions as files,
        summaries, temporaries), by part (``index``, ``blobs``, ...), with ``sql_copies``
        (the part of ``index`` that is SQL columnar copies) and the ``total``."""
        parts: dict[str, int] = {}
        copies = 0
        try:
            tops = sorted(os.listdir(self.cache_dir))
        except OSError:
            tops = []
        for top in tops:
            size = 0
            for dirpath, _dirs, names in os.walk(self.cache_dir / top):
                in_copies = os.path.basename(dirpath) == "sql"
                for fname in names:
                    try:
                        n = os.lstat(os.path.join(dirpath, fname)).st_size
                    except OSError:
                        continue
                    size += n
                    if in_copies and top == "index":
                        copies += n
            if not os.path.isdir(self.cache_dir / top):
                with contextlib.suppress(OSError):
                    size = os.lstat(self.cache_dir / top).st_size
            parts[top] = size
        return {**parts, "sql_copies": copies, "total": sum(parts.values())}

    def _check_quota(self, *, new_entry: bool, old_bytes: int, new_bytes: int,
                     new_log_entries: int = 0, new_entries: int = 1) -> None:
        use = self.usage()
        q_files, q_bytes = self.config["quota.files"], self.config["quota.bytes"]
        if new_entry and use["files"] + use["logs"] + new_entries > q_files:
            raise QuotaExceeded(
                f"agent {self.agent!r} has {use['files'] + use['logs']} entries; quota.files is "
                f"{q_files}", limit="quota.files", limit_value=q_files,
                current=use["files"] + use["logs"], attempted=new_entries,
                suggestions=[suggest(Step.LIST_ENTRIES)])
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
