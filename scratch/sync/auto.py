"""``sync.auto = true``: after a command changes the store, sync it in the background.

The command does not wait: it starts a detached process (its own session, no terminal, no
inherited streams), which syncs every agent with every remote under the store lock and
records the result in ``state/sync-last.json``. One such process works at a time
(``state/autosync.lock``); a change made while it works leaves ``state/autosync.again``, and
it syncs once more before it exits, so bursts of changes cost one sync each, not one each.
Git never prompts from there: a remote that needs a password the user's credential helper
does not give fails, and says so in that file.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import orjson

from scratch.store.gitstore import GitStore
from scratch.store.locking import atomic_write

SKIPPED = ("sync", "remote")  # commands that sync themselves, or change nothing synced


def head_before(root: Path) -> str | None:
    return GitStore(root).head()


def after_command(command: str, root: Path, before: str | None) -> bool:
    """Start a background sync if the command moved HEAD; True if one was started."""
    if command.split(" ", 1)[0] in SKIPPED or not (root / ".git").is_dir():
        return False
    if GitStore(root).head() == before:
        return False
    from scratch.sync.remotes import remotes

    if not remotes(root):
        return False
    subprocess.Popen([sys.executable, "-m", "scratch.sync.auto", str(root)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                     cwd=str(root))
    return True


def run(root: Path) -> int:
    state = root / "state"
    state.mkdir(mode=0o700, exist_ok=True)
    again = state / "autosync.again"
    fd = os.open(state / "autosync.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            again.touch()  # the one at work syncs again before it exits
            return 0
        code = 0
        for _round in range(10):
            again.unlink(missing_ok=True)
            code = _sync_all(root)
            if not again.exists():
                break
        return code
    finally:
        os.close(fd)


def _sync_all(root: Path) -> int:
    from scratch.errors import ScratchError
    from scratch.store import Store
    from scratch.sync.engine import sync
    from scratch.sync.remotes import remotes

    results, errors = [], []
    try:
        store = Store.open(root, create=False)
        from scratch.sync.ledger_export import export_calls
        if remotes(root):
            export_calls(store, None)  # ledger.sync_log: the calls go with the sync
        for name in remotes(root):
            try:
                results.append(sync(store, name, None))
            except ScratchError as exc:
                errors.append({"remote": name, **exc.to_dict()})
    except ScratchError as exc:
        errors.append(exc.to_dict())
    atomic_write(root / "state" / "sync-last.json",
                 orjson.dumps({"results": results, "errors": errors}, default=str),
                 fsync=False)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1])))
