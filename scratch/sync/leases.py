"""``state/purge-leases.json``: the remotes whose history the next sync replaces after a purge.

Per remote: ``expect``, its branch's commit as this store last saw it (the push is forced only
if the branch is still exactly that: ``--force-with-lease``), ``rewritten``, what that commit
became in this store's rewritten history (the merge is made on top of it), and ``purges``,
the ids of the purges that made it so. A second purge before the sync keeps ``expect`` and
moves ``rewritten`` on. Removing the remote drops its lease.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from scratch.store.locking import atomic_write

if TYPE_CHECKING:
    from scratch.jsonvalues import Incoming

LEASES = "purge-leases.json"  # in state/


def load(root: Path) -> dict[str, Incoming]:
    """The leases by remote, as the file holds them (read with .get where used; a damaged
    file is none)."""
    try:
        value = orjson.loads((root / "state" / LEASES).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def save(root: Path, leases: dict[str, Incoming]) -> None:
    path = root / "state" / LEASES
    if leases:
        atomic_write(path, orjson.dumps(leases, option=orjson.OPT_SORT_KEYS))
    else:
        path.unlink(missing_ok=True)


def drop(root: Path, remote: str) -> None:
    leases = load(root)
    if leases.pop(remote, None) is not None:
        save(root, leases)
