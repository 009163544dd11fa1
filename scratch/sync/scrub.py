"""What a purge removes outside history: caches, temporaries and the call ledger's records.

Everything here is keyed by what history names (blob ids, entry names, agents), so it can be
listed before a purge (``--dry-run``) and done again after a crash with the same result.

- ``cache/blobs/<blob>``: old versions written out as files.
- ``cache/index/<blob>`` and ``<blob>.<format>`` (with the SQL columnar copies and count
  caches kept inside them), and what a killed index build left (``.<blob>...``).
- ``cache/index/log-<key>-<size>``: the indexes of a log, keyed by its agent and name.
- ``cache/summaries/<blob>...``: summaries.
- ``cache/tmp`` and ``state``: temporary files of processes that are gone (a live process's
  are its own: an ingest under way has not stored anything yet).
- The call ledger (``state/agents/AGENT/calls.jsonl``): records that touched a purged entry
  are scrubbed (:func:`scratch.store.ledger.scrub`); a purged namespace's whole state folder goes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from scratch.store.locking import orphaned_temps

if TYPE_CHECKING:
    from scratch.store.ledger import Record


def log_index_key(agent: str, name: str) -> str:
    """The prefix of a log's index directories (as :mod:`scratch.answers.kernel.target`
    names them: ``log-<16 hex of sha1(agent/name)>-<size>``)."""
    return "log-" + hashlib.sha1(f"{agent}/{name}".encode()).hexdigest()[:16] + "-"


def cache_paths(root: Path, blobs: Iterable[str], logs: Iterable[tuple[str, str]],
                everything: bool = False) -> list[Path]:
    """The cache files and folders that hold something of ``blobs`` or of the logs
    ``(agent, name)``, sorted; ``everything``: all of ``cache/`` but ``tmp``."""
    cache = root / "cache"
    out: set[Path] = set()
    if everything:
        for top in _listdir(cache):
            if top != "tmp":
                out.add(cache / top)
        return sorted(out)
    wanted = set(blobs)
    prefixes = tuple(log_index_key(a, n) for a, n in logs)
    for name in _listdir(cache / "blobs"):
        if name in wanted:
            out.add(cache / "blobs" / name)
    for name in _listdir(cache / "index"):
        stem = name.lstrip(".")
        if stem[:40] in wanted or stem.startswith(prefixes):
            out.add(cache / "index" / name)
    for name in _listdir(cache / "summaries"):
        if name[:40] in wanted:
            out.add(cache / "summaries" / name)
    return sorted(out)


def state_paths(root: Path, namespaces: Iterable[str]) -> list[Path]:
    """The state folders of purged namespaces (ledger, counters, budgets)."""
    out = []
    for agent in namespaces:
        for path in (root / "state" / "agents" / agent, root / "state" / "budget" / agent):
            if os.path.lexists(path):
                out.append(path)
    return out


def size_of(path: Path) -> int:
    if path.is_symlink() or not path.is_dir():
        try:
            return os.lstat(path).st_size
        except OSError:
            return 0
    total = 0
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def remove(paths: Iterable[Path]) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def sweep_temporaries(root: Path) -> None:
    """Temporary files of processes that are gone, in ``cache/tmp`` and ``state``."""
    remove(orphaned_temps(root / "cache" / "tmp") + orphaned_temps(root / "state"))


def _listdir(path: Path) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


# -- the call ledger ------------------------------------------------------------------------

def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def names_entry(text: str, name: str) -> bool:
    """Whether an argument's text refers to entry ``name``: the name, ``NAME@VERSION``, or
    either after ``=`` (``sql --table t=NAME``)."""
    for start in (0, text.rfind("=") + 1):
        part = text[start:]
        if part == name or part.startswith(name + "@"):
            return True
    return False


def touches(record: Record, names: set[str],
            versions: dict[str, set[int]] | None = None) -> bool:
    """Whether a ledger record touched one of ``names`` (the entry it read or wrote, or an
    argument or suggestion naming it) or one of ``versions`` ({name: version numbers}: the
    version it read, or ``NAME@N`` in an argument). The records of purges and gcs are left:
    they name entries and nothing of what they held."""
    if record.get("command") in ("purge", "gc") or "purged" in record:
        return False
    if record.get("entry") in names:
        return True
    versions = versions or {}
    entry = record.get("entry")
    if entry in versions and record.get("version") in versions[str(entry)]:
        return True
    refs = {f"{n}@{v}" for n, vs in versions.items() for v in vs}
    for text in _strings([record.get("args"), record.get("suggestions")]):
        if any(names_entry(text, n) for n in names) or any(
                text == r or text.endswith("=" + r) for r in refs):
            return True
    return False


def ledger_matches(root: Path, agent: str, names: set[str],
                   versions: dict[str, set[int]] | None = None) -> int:
    """How many of ``agent``'s ledger records :func:`scrub_ledger` would scrub."""
    from scratch.store import ledger
    return sum(1 for rec in ledger.read(root, agent=agent) if touches(rec, names, versions))


def scrub_ledger(root: Path, agent: str, names: set[str], versions: dict[str, set[int]],
                 mark: str) -> int:
    from scratch.store import ledger
    return ledger.scrub(root, agent, lambda rec: touches(rec, names, versions), mark)
