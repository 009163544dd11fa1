"""Per-agent operation counters, kept in ``state/agents/<agent>/stats.json`` (not versioned).

Invariants: updated under an exclusive lock with an atomic rename, so concurrent commands never
lose a count; a corrupt file starts over from zero instead of failing the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from scratch.locking import atomic_write, exclusive


def stats_file(root: Path, agent: str) -> Path:
    return root / "state" / "agents" / agent / "stats.json"


def load(root: Path, agent: str) -> dict[str, Any]:
    try:
        data = orjson.loads(stats_file(root, agent).read_bytes())
        if isinstance(data, dict):
            return data
    except (OSError, orjson.JSONDecodeError):
        pass
    return {}


def record(root: Path, agent: str, op: str, **counters: int) -> None:
    """Count one operation of kind ``op`` and add ``counters`` (e.g. tokens_intercepted=n)."""
    from scratch.errors import StoreError
    from scratch.safefs import check_dirs

    path = stats_file(root, agent)
    try:
        check_dirs(root, path)  # never through a symlink placed in the store
        with exclusive(path.with_name(".stats.lock")):
            data = load(root, agent)
            ops = data.setdefault("operations", {})
            ops[op] = ops.get(op, 0) + 1
            for key, value in counters.items():
                data[key] = data.get(key, 0) + value
            atomic_write(path, orjson.dumps(data), fsync=False)
    except (OSError, StoreError):
        pass  # counting must never fail a command (e.g. a read-only store being read)
