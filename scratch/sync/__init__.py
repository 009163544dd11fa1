"""Share a store across machines through any git remote (``scratch remote``, ``scratch sync``).

git is the distributed engine: a remote is any git repository (a bare repository's path,
``ssh://``, ``https://``); sync fetches, merges by the rules of :mod:`scratch.sync.merge`,
and pushes, never forcing (but to replace a remote's history after a purge, with a lease).
Purge and retention live here too: they rewrite the history sync carries, and sync carries
their records. Modules:

- :mod:`~scratch.sync.remotes` -- ``remote add/list/remove`` (URLs in ``.git/config``)
- :mod:`~scratch.sync.transport` -- fetch and push, and which git config they may use
- :mod:`~scratch.sync.gitops` -- plumbing: trees, blobs, commits, ref transactions
- :mod:`~scratch.sync.merge`, :mod:`~scratch.sync.agent_merge` -- the merge rules
- :mod:`~scratch.sync.engine` -- one sync: the lock, the order of steps, retries
- :mod:`~scratch.sync.status` -- ``sync`` with ``status``: what would move, without moving it
- :mod:`~scratch.sync.auto` -- ``sync.auto``: a detached process after each change
- :mod:`~scratch.sync.report` -- the human text of a result
- :mod:`~scratch.sync.rewrite` -- a history rewrite that leaves out paths and blobs
- :mod:`~scratch.sync.purge` -- ``purge``: plan, journal, steps, records learnt from remotes
- :mod:`~scratch.sync.leases` -- the remotes whose history the next sync replaces
- :mod:`~scratch.sync.scrub` -- what a purge removes outside history (caches, ledger records)
- :mod:`~scratch.sync.retention` -- ``gc``: retention settings, the daily run

Invariant: the store is only ever changed the way any change is (journal, swap, one ref
move), so a sync killed at any point leaves a store that opens whole, with nothing half
merged in view, ``git fsck`` clean, and the next sync completes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.calls import Step, suggest
from scratch.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path


def chosen_remotes(root: Path, remote: str | None) -> list[str]:
    """``remote``, or every remote of the store (none: an error that says how to add one)."""
    from scratch.sync.remotes import remote_url, remotes

    if remote is not None:
        remote_url(root, remote)
        return [remote]
    names = list(remotes(root))
    if not names:
        raise UsageError("this store has no remote to sync with", code="no_remote",
                         suggestions=[suggest(Step.ADD_REMOTE, name="origin", url="URL")])
    return names
