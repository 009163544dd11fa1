"""Where an entry's files live, and the rule that keeps every path inside the store.

Invariants:
- :meth:`StorePaths.content_path` and :meth:`StorePaths.meta_path` validate the name
  (:func:`scratch.store.names.validate_name`) and refuse a symlink anywhere between the store root
  and the target, so a path they return lies inside this agent's directories; the target
  itself is opened without following a symlink wherever it is opened (:mod:`scratch.safefs`).
- A name cannot be both an entry and a folder of entries (``m`` and ``m/k``):
  ``name_conflict``.
- Nothing here reads or writes content or takes a lock.
"""

from __future__ import annotations

import os
from pathlib import Path

from scratch.errors import InvalidName
from scratch.safefs import UnsafePath, check_dirs
from scratch.store.config import Config
from scratch.store.gitstore import GitStore
from scratch.store.names import validate_name


class StorePaths:
    """The directories of one agent in one store, and the paths of its entries."""

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

    def _mkdirs(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)

    def _prune_empty_dirs(self, directory: Path) -> None:
        while directory not in (self.files_dir, self.logs_dir) and directory != self.agent_dir:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent
