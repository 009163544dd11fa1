"""The store: plain files per agent namespace, every change one git commit.

Layout under the store root (a git repository)::

    scratch.toml                       optional settings (see scratch.store.config)
    .gitignore                         keeps cache/, state/ and .lock out of history
    agents/<agent>/files/<name>        current content of a file or output entry, byte-exact
    agents/<agent>/logs/<name>.jsonl   an append-only log, one JSON object per line
    agents/<agent>/meta/<name>.json    entry metadata: kind, versions (blob ids), log cursor
    runs/<run>/files/<name>            an artifact of run <run>, read in place by its workers
    runs/<run>/meta/<name>.json        an artifact's metadata: versions, who put each, when
    runs/<run>/logs/events.jsonl       the run's events: iterations started, usage events
    cache/                             rebuildable: indexes, old versions materialised as files
    state/                             budgets, counters, ledger, journal, swap lock (not versioned)
    .lock                              serialises write-then-commit across processes

Invariants:
- A name passes :func:`scratch.store.names.validate_name`; every directory below the store root is
  a real directory, and every file scratch opens in the store is opened without following a
  symlink and refused when hard-linked (:mod:`scratch.safefs`, ``unsafe_path``; a rebuildable
  cache file found so is replaced), so nothing outside the store is ever read or written.
- A change: a journal (``state/journal.json``) first; new content and metadata written beside
  their targets; then, holding ``state/swap.lock`` exclusively, the old files moved aside (by
  rename) and the new ones moved in; then one commit whose message names entry, agent and
  version. Identical content makes no version. A crash anywhere is undone (or, if it was
  committed, finished) the next time the store is opened; ``state/writer`` marks a writer at
  work, so one that was killed has its temporary files swept. Log appends are journaled the
  same way (:mod:`scratch.store.logs`).
- Readers pair an entry's metadata and content under the swap lock taken shared and keep the
  content file open (:meth:`Store.version_file`): a reader sees one whole version, whose blob
  is the key of its index, even while another process writes the entry.
- Metadata is a cache of history: when it is missing or corrupt it is rebuilt from the content
  and ``git log`` of the content path.

Parts (one module each, readable alone): ``paths`` (where an entry's files live),
``metadata`` (metadata and history), ``listing``, ``quotas``, ``transactions`` (lock, journal,
swap lock, recovery), ``reading`` (versions and their content), ``writing`` (write, restore,
remove), ``opening`` (:class:`Store` itself), ``logs`` (the append-only logs, over a
:class:`Store`); ``records`` types the records handed upwards
(types only: nothing imports it at run time).

The rest of the store layer lives here too, each module readable alone: ``gitstore`` (the only
module that talks to git), ``locking`` (inter-process locks, atomic replacement), ``names``
(valid agent and entry names; where the store lives), ``config`` (effective settings),
``ledger`` (the call ledger), ``stats`` (per-agent counters), ``spool`` (a stream read once,
memory bounded).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scratch.store.metadata import (
        KINDS,
        META_VERSION,
        count_lines,
        is_binary,
        new_meta,
        utc_now,
        version_commits,
    )
    from scratch.store.opening import Store
    from scratch.store.reading import Version
    from scratch.store.records import (
        EntryMeta,
        GitCommit,
        HistoryRow,
        ListRow,
        LogCursor,
        Removed,
        Usage,
        VersionInfo,
        WrittenVersion,
    )
    from scratch.store.writing import Pending

RECORDS = ("EntryMeta", "GitCommit", "HistoryRow", "ListRow", "LogCursor", "Removed", "Usage",
           "VersionInfo", "WrittenVersion")

__all__ = ["KINDS", "META_VERSION", "EntryMeta", "GitCommit", "HistoryRow", "ListRow", "LogCursor",
           "Pending", "Removed", "Store", "Usage", "Version", "VersionInfo", "WrittenVersion",
           "count_lines", "is_binary", "new_meta", "utc_now", "version_commits"]


# where each public name lives: loaded on first use, so that a module of the store layer
# imported for itself (config, locking, names) does not pay for the whole store
HOMES = {"KINDS": "metadata", "META_VERSION": "metadata", "count_lines": "metadata",
         "is_binary": "metadata", "new_meta": "metadata", "utc_now": "metadata",
         "version_commits": "metadata", "Store": "opening", "Version": "reading",
         "Pending": "writing", **{record: "records" for record in RECORDS}}


def __getattr__(name: str) -> object:
    """A public name, from its module on first use (the record types too, for code that
    needs them at run time: see :mod:`scratch.store.records`)."""
    home = HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
