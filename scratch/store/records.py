"""The records the store hands to the layers above it, typed.

Invariants:
- These are plain data (TypedDicts where callers index by key and the record is saved or
  printed as JSON, NamedTuples otherwise): building one touches no file and takes no lock.
- :class:`EntryMeta` is exactly what ``agents/<agent>/meta/<name>.json`` holds; its keys are
  part of the store's format (``scratch_meta`` says which), so a key is only ever added.
- A :class:`Version` is one version of one entry as its metadata described it when it was
  resolved; :meth:`scratch.store.Store.version_file` turns it into content that stays that
  version even while another process writes the entry.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from scratch.store.gitstore import GitCommit as GitCommit  # made there; a record of the store's too


class VersionInfo(TypedDict):
    """One version in an entry's metadata. ``bytes``/``lines`` are None for an old version
    whose metadata was rebuilt from history; ``binary`` is absent there too."""

    version: int
    time: str
    blob: str
    bytes: int | None
    lines: int | None
    binary: NotRequired[bool]
    message: str
    info: dict[str, Any]  # what the writer recorded (ingest: format, source, ...)
    # why the version can no longer be read ("retention.keep_versions N"; "purge <id>" when
    # its bytes left history too); absent: readable
    removed: NotRequired[str]


class LogCursor(TypedDict):
    """A log's ids: the next one to give, how many entries the log holds, the first kept."""

    next_id: int
    count: int
    first_id: NotRequired[int]
    redaction: NotRequired[dict[str, Any]]  # what redaction found in its appends (logs.py)


class EntryMeta(TypedDict):
    """An entry's metadata file."""

    scratch_meta: int
    name: str
    kind: str  # one of KINDS
    deleted: bool
    created: str
    updated: str
    versions: list[VersionInfo]  # oldest first; a log has none
    log: NotRequired[LogCursor]


class WrittenVersion(VersionInfo):
    """What a write made: the version record with its entry, and whether it was ``unchanged``
    (equal to the current version, so no version was made and it is that one)."""

    name: str
    kind: str
    unchanged: bool


class Removed(TypedDict):
    name: str
    kind: str
    deleted: bool
    versions: int


class ListRow(TypedDict):
    """One row of ``ls``: a log has no version, and its ``lines`` are its entries."""

    name: str
    kind: str
    version: int | None
    bytes: int | None
    lines: int | None
    updated: str | None


class HistoryRow(TypedDict):
    """One version of ``history``; ``commit`` is the short id of the commit that stored it
    ("" when none is found, as for metadata rebuilt from the working tree)."""

    version: int
    time: str
    bytes: int | None
    lines: int | None
    commit: str
    message: str


class Usage(TypedDict):
    """What an agent holds now (see :mod:`scratch.store.quotas`)."""

    files: int
    logs: int
    bytes: int
    log_entries: int
