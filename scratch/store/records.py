"""The records the store hands to the layers above it.

Invariants:
- These are plain data (NamedTuples): building one touches no file and takes no lock.
- A :class:`Version` is one version of one entry as its metadata described it when it was
  resolved; :meth:`scratch.store.Store.version_file` turns it into content that stays that
  version even while another process writes the entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple


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
