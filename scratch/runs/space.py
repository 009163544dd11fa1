"""A run's namespace in the store: its artifacts and its events log, one :class:`RunStore`.

Layout under the store root (versioned like an agent's entries, carried by ``scratch sync``)::

    runs/<run>/files/<name>          an artifact's current content, byte-exact
    runs/<run>/meta/<name>.json      its metadata: versions (blob ids), who put each
    runs/<run>/logs/events.jsonl     the run's events: iterations started, usage events

Invariants:
- A :class:`RunStore` is a :class:`~scratch.store.Store` whose namespace directory is
  ``runs/<run>`` instead of ``agents/<agent>``: every write goes through the store's one write
  path (journal, swap lock, one commit naming the entry, the agent that wrote it and the run),
  every read through its readers, so an artifact is stored once and read in place by every
  worker of the run (its index is keyed by its blob, as any entry's).
- Only a run id :func:`scratch.store.names.validate_run` accepts ever becomes a directory; artifact
  names are entry names, and ``events`` is the run's own log, never an artifact.
- Nothing here decides who may read a run: :func:`scratch.runs.reading.artifact_store` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scratch.errors import InvalidName
from scratch.store import Store
from scratch.store.names import validate_agent, validate_name, validate_run

if TYPE_CHECKING:
    from scratch.store.config import Config

RUNS_DIR = "runs"
EVENTS = "events"  # the run's own log (kind log), never an artifact's name


def run_dir(root: Path, run: str) -> Path:
    return root / RUNS_DIR / validate_run(run)


class RunStore(Store):
    """One run's namespace, written as ``agent`` (the worker or coordinator at work)."""

    def __init__(self, root: Path, run: str, agent: str, config: Config) -> None:
        super().__init__(root, agent, config)
        self.run = validate_run(run)
        self.agent_dir = run_dir(root, run)
        self.files_dir = self.agent_dir / "files"
        self.logs_dir = self.agent_dir / "logs"
        self.meta_dir = self.agent_dir / "meta"

    @classmethod
    def open_run(cls, root: Path, run: str, agent: str, config: Config | None = None, *,
                 create: bool = True) -> RunStore:
        """The namespace of ``run`` in the store at ``root`` (the store created if asked, and
        recovered as :meth:`Store.open` does), acting as ``agent``."""
        validate_run(run)
        validate_agent(agent)
        base = Store.open(root, agent, config, create=create)
        return cls(root, run, agent, base.config)

    def exists(self) -> bool:
        """Whether anything was ever stored for this run."""
        return self.agent_dir.is_dir()

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r}, run={self.run!r}, agent={self.agent!r})"


def check_artifact_name(name: str) -> str:
    """An artifact's name: an entry name, but not the run's own log's."""
    validate_name(name)
    if name == EVENTS:
        raise InvalidName(f"{EVENTS!r} is the run's own log (its iterations and usage events); "
                          "give the artifact another name", name=name, rule="reserved")
    return name
