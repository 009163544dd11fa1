"""Per-agent operation counters, kept in ``state/agents/<agent>/stats.json`` (not versioned).

Invariants: read and updated under an exclusive lock (rewritten in place,
:func:`scratch.store.locking.overwrite`), so concurrent commands never lose a count; a corrupt file
starts over from zero instead of failing the command.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from scratch.store.locking import exclusive, overwrite


def stats_file(root: Path, agent: str) -> Path:
    return root / "state" / "agents" / agent / "stats.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            raw = os.read(fd, os.fstat(fd).st_size)  # a small file: one read of its size
        finally:
            os.close(fd)
        data = orjson.loads(raw)
        if isinstance(data, dict):
            return data
    except (OSError, orjson.JSONDecodeError):
        pass
    return {}


def load(root: Path, agent: str) -> dict[str, Any]:
    path = stats_file(root, agent)
    if not path.exists():
        return {}
    try:
        with exclusive(path.with_name(".stats.lock")):  # the file is rewritten in place
            return _read(path)
    except OSError:  # a read-only store: read it as it is
        return _read(path)


_PATHS: dict[tuple[Path, str], tuple[Path, Path]] = {}  # (root, agent) -> (file, lock)


def _paths(root: Path, agent: str) -> tuple[Path, Path]:
    """The stats file of ``agent`` and its lock, made once per process (every answer counts)."""
    found = _PATHS.get((root, agent))
    if found is None:
        if len(_PATHS) > 1024:
            _PATHS.clear()
        path = stats_file(root, agent)
        found = _PATHS[(root, agent)] = (path, path.with_name(".stats.lock"))
    return found


def record(root: Path, agent: str, op: str, **counters: int) -> None:
    """Count one operation of kind ``op`` and add ``counters`` (e.g. tokens_intercepted=n)."""
    from scratch.errors import StoreError
    from scratch.safefs import check_dirs

    path, lock = _paths(root, agent)
    try:
        check_dirs(root, path)  # never through a symlink placed in the store
        with exclusive(lock):
            data = _read(path)
            ops = data.setdefault("operations", {})
            ops[op] = ops.get(op, 0) + 1
            for key, value in counters.items():
                data[key] = data.get(key, 0) + value
            overwrite(path, orjson.dumps(data))
    except (OSError, StoreError):
        pass  # counting must never fail a command (e.g. a read-only store being read)
