"""Opening a store: :class:`Store`, the one class the rest of scratch uses, made of the parts.

Invariants:
- A store is created only when asked (``create``): a git repository with its first commit,
  directories 0700 and, as for every process that opens one, umask 077.
- Opening checks that the store's own directories are real directories, refuses an agent whose
  name differs only in case from an existing one, undoes a change a dead writer interrupted
  and sweeps the temporary files dead processes left, before anything is served.
"""

from __future__ import annotations

import os
from pathlib import Path

from scratch.errors import InvalidName, StoreError, StoreNotFound
from scratch.safefs import check_dirs, remove_unsafe
from scratch.store.config import Config, load_config
from scratch.store.gitstore import GitStore
from scratch.store.locking import exclusive, orphaned_temps
from scratch.store.names import validate_agent
from scratch.store.writing import StoreWriting


class Store(StoreWriting):
    """One agent's view of a store. Create with :meth:`open`.

    Its parts, each readable alone (each uses only the parts it inherits from):
    :class:`~scratch.store.paths.StorePaths` (paths and names) ←
    :class:`~scratch.store.metadata.StoreMetadata` (metadata and history) ←
    :class:`~scratch.store.listing.StoreListing` ← :class:`~scratch.store.quotas.StoreQuotas`;
    :class:`~scratch.store.transactions.StoreTransactions` (lock, journal, recovery) and
    :class:`~scratch.store.reading.StoreReading` (versions and their content), both on
    metadata; :class:`~scratch.store.writing.StoreWriting` (write, restore, remove) on all.
    """

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

    def _check_layout(self) -> None:
        """The store's own directories are real directories: a symlink at ``cache/``,
        ``state/``, ``agents/``, ``runs/`` or ``.git`` would send writes outside the store."""
        for top in (".git", "agents", "runs", "cache", "state", "cache/index", "cache/blobs",
                    "cache/tmp", "cache/summaries"):
            check_dirs(self.root, self.root / top / "x")

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

    def _sweep_temporaries(self) -> None:
        """Remove temporary files a killed process left in ``cache/tmp`` and ``state/`` (their
        names carry the creator's pid; a live creator's are kept). Two small directories: cheap
        enough for every open. What a crashed writer left among the entries is swept by
        :meth:`_recover`."""
        self.git.sweep()
        for directory in (self.cache_dir / "tmp", self.state_dir):
            for path in orphaned_temps(directory):
                try:
                    remove_unsafe(path)
                except OSError:
                    pass
