"""The only module that talks to git.

Invariants:
- Every git process scratch starts for its own work runs with the ``GIT_*`` variables of the
  caller cleared, ``GIT_DIR``/``GIT_WORK_TREE`` pointing at the store, ``GIT_CEILING_DIRECTORIES``
  set so an enclosing repository is never found, and the user's global and system config ignored
  (no hooks, signing or templates of theirs can break a commit, and their config is never written).
  The identity is given per call through the environment, so no git identity needs configuring.
- Commits are made only by :meth:`GitStore.commit`, called with the store lock held; a stale or
  foreign ``index.lock`` is waited for and, if abandoned, removed: the user never sees that error.
- Reading history uses GitPython, always as ``with Repo(...)`` so no ``git cat-file`` process is
  left running.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from scratch.errors import StoreError

GITIGNORE = ("# scratch keeps caches, locks and budget state out of history\n"
             "/cache/\n/state/\n/.lock\n")
STALE_INDEX_LOCK_SECONDS = 20.0
# The store's own .git/config can be edited through 'scratch git' by any agent; nothing in it
# may run code or change content inside another agent's commands.
SAFE_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
               "-c", "core.autocrlf=false", "-c", "core.attributesFile=/dev/null")


def blob_sha(data: bytes) -> str:
    """The object id git gives ``data`` as a blob (computed here: no process needed)."""
    import hashlib

    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


class GitStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir = root / ".git"

    # -- environment -------------------------------------------------------------------------
    def env(self, *, user: bool = False, author: str | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env["GIT_DIR"] = str(self.git_dir)
        env["GIT_WORK_TREE"] = str(self.root)
        env["GIT_CEILING_DIRECTORIES"] = str(self.root.parent)
        if not user:
            env["GIT_CONFIG_NOSYSTEM"] = "1"
            env["GIT_CONFIG_GLOBAL"] = os.devnull
            env["GIT_TERMINAL_PROMPT"] = "0"
            env["LC_ALL"] = "C"
            name = f"scratch agent {author}" if author else "scratch"
            env["GIT_AUTHOR_NAME"] = name
            env["GIT_AUTHOR_EMAIL"] = f"{author or 'scratch'}@scratch.invalid"
            env["GIT_COMMITTER_NAME"] = "scratch"
            env["GIT_COMMITTER_EMAIL"] = "scratch@scratch.invalid"
        return env

    def _git(self, *args: str, author: str | None = None, check: bool = True,
             input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        try:
            proc = subprocess.run(
                ["git", *SAFE_CONFIG, *args], cwd=self.root, env=self.env(author=author),
                input=input, capture_output=True,
            )
        except FileNotFoundError:
            raise StoreError("git is not installed or not on PATH; scratch needs it",
                             code="git_missing") from None
        if check and proc.returncode != 0:
            raise StoreError(
                f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}",
                code="git_failed", git_args=list(args),
            )
        return proc

    # -- set-up ------------------------------------------------------------------------------
    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def init(self) -> None:
        """Create the repository and its first commit (the .gitignore)."""
        self._git("init", "-q", "-b", "main", str(self.root))
        (self.root / ".gitignore").write_text(GITIGNORE)
        self._git("add", "--", ".gitignore")
        self._git("commit", "-q", "-m", "Create the scratch store.")

    # -- writing -----------------------------------------------------------------------------
    def commit(self, paths: list[str], message: str, *, author: str) -> bool:
        """Stage ``paths`` (additions, changes and deletions) and commit them with ``message``.

        Returns False when nothing changed (no empty commits). Call with the store lock held.
        """
        for attempt in range(60):
            self._clear_stale_index_lock()
            # Unstage anything else first (left by a crash, or staged by hand through
            # 'scratch git add'), so the commit holds exactly these paths; then commit without
            # a pathspec, since "commit -- paths" would hash every path a second time (a
            # second pass over a 1 GB output).
            proc = self._git("reset", "-q", check=False)
            if proc.returncode == 0:
                proc = self._git("add", "-A", "--", *paths, check=False)
            if proc.returncode == 0:
                proc = self._git("commit", "-q", "--no-verify", "-m", message,
                                 author=author, check=False)
                if proc.returncode == 0:
                    return True
                out = (proc.stdout + proc.stderr).decode(errors="replace")
                if "nothing to commit" in out or "no changes added" in out:
                    return False
            err = proc.stderr.decode(errors="replace")
            if "index.lock" not in err:
                self._git("reset", "-q", "--", *paths, check=False)
                raise StoreError(f"git failed to record the change: {err.strip()}",
                                 code="git_failed")
            time.sleep(min(0.05 * (attempt + 1), 0.5))
        raise StoreError("git's index stayed locked by another program for too long",
                         code="git_locked")

    def head(self) -> str | None:
        """The commit HEAD points at, read from the ref files (no process); None if unborn."""
        try:
            ref = (self.git_dir / "HEAD").read_text().strip()
        except OSError:
            return None
        if not ref.startswith("ref: "):
            return ref
        name = ref[5:]
        try:
            return (self.git_dir / name).read_text().strip()
        except FileNotFoundError:
            pass
        try:
            for line in (self.git_dir / "packed-refs").read_text().splitlines():
                if line.endswith(" " + name):
                    return line.split(" ", 1)[0]
        except FileNotFoundError:
            pass
        return None

    def unstage(self) -> None:
        self._git("reset", "-q", check=False)

    def store_object_async(self, path: Path) -> subprocess.Popen[bytes]:
        """Start writing ``path`` into the object database in the background.

        A later ``git add`` of identical content then only hashes it: git skips compressing
        and writing an object it already has. Ingest runs this on the second core while it
        builds the index. The caller must ``wait()`` for the process.
        """
        return subprocess.Popen(["git", *SAFE_CONFIG, "hash-object", "-w", "--", str(path)],
                                cwd=self.root,
                                env=self.env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    def _clear_stale_index_lock(self) -> None:
        lock = self.git_dir / "index.lock"
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            return
        if age > STALE_INDEX_LOCK_SECONDS:
            try:
                lock.unlink()
            except FileNotFoundError:
                pass

    # -- reading -----------------------------------------------------------------------------
    def read_blob(self, sha: str) -> bytes:
        proc = self._git("cat-file", "blob", sha, check=False)
        if proc.returncode != 0:
            raise StoreError(f"git object {sha} is missing from the store", code="object_missing",
                             object=sha)
        return proc.stdout

    def path_history(self, path: str) -> list[dict[str, Any]]:
        """Commits that touched ``path``, oldest first: id, time, message, blob (None: deleted)."""
        from git import Repo  # heavy import, only for history

        # GitPython's processes inherit os.environ: keep the caller's GIT_* out of them too
        leaked = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("GIT_")}
        try:
            commits = self._history(Repo, path)
        finally:
            os.environ.update(leaked)
        return commits

    def _history(self, repo_class: Any, path: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        with repo_class(self.root) as repo:
            for commit in repo.iter_commits("HEAD", paths=path):
                try:
                    blob = commit.tree / path
                    blob_id: str | None = blob.hexsha
                except KeyError:
                    blob_id = None
                out.append({
                    "commit": commit.hexsha,
                    "time": commit.committed_datetime.astimezone().isoformat(),
                    "timestamp": commit.committed_date,
                    "message": str(commit.message).strip(),
                    "blob": blob_id,
                })
        out.reverse()
        return out

    def fsck(self) -> subprocess.CompletedProcess[bytes]:
        return self._git("fsck", "--strict", check=False)

    def run_user(self, args: list[str]) -> int:
        """``scratch git ARGS``: run git on the store with the user's own config and terminal."""
        try:
            return subprocess.call(["git", *args], cwd=self.root, env=self.env(user=True))
        except FileNotFoundError:
            raise StoreError("git is not installed or not on PATH", code="git_missing") from None
