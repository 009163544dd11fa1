"""Fetch and push: the only git commands of scratch that talk to another repository.

Which configuration a transport command may use is the one choice here:

- The store's own ``.git/config`` is never read by a transport command. Anyone who can write
  the store can edit it, and ``remote.<name>.receivepack``/``uploadpack``/``vcs``/``proxy``,
  ``core.sshCommand``, ``credential.helper`` or ``url.<x>.insteadOf`` there would run a
  program or send the store elsewhere. Each fetch and push therefore runs in a fresh, private,
  empty bare repository (mode 0700, created here, no hooks, no config beyond ``core.bare``)
  whose object directory is the store's (``GIT_OBJECT_DIRECTORY``); only the URL is read from
  the store's config (``remote.<name>.url``), and it must pass :func:`check_url`. It lives in
  the store's ``cache/tmp`` (outside history), named by the sync's pid, so what a killed sync
  leaves is swept when the store is next opened.
- The user's own global and system git config *is* used, so https and ssh authenticate as
  the user's git does (credential helpers, ``core.sshCommand``, ``url.insteadOf``, proxies,
  CA settings), as do the transport variables of the caller's environment (``GIT_SSH``,
  ``GIT_SSH_COMMAND``, ``GIT_ASKPASS``, ``GIT_SSL_*``...). scratch stores no credentials.
- Whatever that config says, no hook runs (``core.hooksPath=/dev/null``; the private
  repository has no hooks directory, and a push passes ``--no-verify``), nothing is signed,
  no submodule is visited, no maintenance or gc starts, and received objects are checked
  (``transfer.fsckObjects``). The ``ext::`` and ``fd::`` transports and any
  ``<helper>::<address>`` URL are refused (they run arbitrary programs), as is a URL that
  starts with ``-`` (it would be an option).
- With no terminal (a background sync, an agent) git never prompts
  (``GIT_TERMINAL_PROMPT=0``); a missing credential is a failed fetch, reported.

The remote side of a local-path remote runs as the user with the remote repository's own
config and hooks, as a server runs its own: that is the remote owner's business.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scratch.errors import SyncError, UsageError

BRANCH = "refs/heads/main"
# Settings on top of the user's config for fetch and push: none may run a program.
TRANSPORT_SETTINGS = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("transfer.fsckObjects", "true"),
    ("fetch.writeCommitGraph", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("submodule.recurse", "false"),
    ("push.gpgSign", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("protocol.ext.allow", "never"),
    ("protocol.fd.allow", "never"),
    ("core.alternateRefsCommand", ""),
    ("core.pager", "cat"),
    ("advice.pushUpdateRejected", "false"),
)
# the caller's variables a transport may need (everything else GIT_* is dropped)
KEPT_VARIABLES = {
    "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_TERMINAL_PROMPT",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_SSL_NO_VERIFY",
    "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_CERT", "GIT_SSL_KEY", "GIT_HTTP_USER_AGENT",
    "GIT_HTTP_PROXY_AUTHMETHOD", "GIT_PROXY_SSL_CAINFO", "GIT_PROXY_SSL_CERT",
    "GIT_PROXY_SSL_KEY", "GIT_HTTP_LOW_SPEED_LIMIT", "GIT_HTTP_LOW_SPEED_TIME",
}
REMOTE_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_HELPER_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_SCHEMES = ("ssh://", "git+ssh://", "ssh+git://", "https://", "http://", "git://", "file://")
_SCP_RE = re.compile(r"^(?:[^@/:\s]+@)?[A-Za-z0-9.\[\]-]+:(?!//)")


def check_remote_name(name: str) -> str:
    if not REMOTE_NAME_RE.fullmatch(name or ""):
        raise UsageError(f"invalid remote name {name!r}: use 1-64 characters from A-Z a-z 0-9 _ -",
                         code="invalid_remote_name", remote=name)
    return name


def check_url(url: str) -> str:
    """A URL git may fetch from without running a program of the URL's choosing."""
    def bad(why: str) -> UsageError:
        return UsageError(f"refusing remote URL {url!r}: {why}", code="invalid_remote_url",
                          url=url)

    if not url or url != url.strip() or any(c in url for c in "\0\n\r"):
        raise bad("it is empty or holds whitespace at its ends or control characters")
    if url.startswith("-"):
        raise bad("it starts with '-' (git would read it as an option)")
    if _HELPER_RE.match(url) or url.startswith(("ext:", "fd:")):
        raise bad("'<transport>::' URLs (ext::, fd::, remote helpers) run programs; use a "
                  "path, file://, ssh://, user@host:path, https:// or git://")
    lowered = url.lower()
    if "://" in url and not lowered.startswith(_SCHEMES):
        raise bad(f"unknown scheme; use one of {', '.join(s[:-3] for s in _SCHEMES)}")
    return url


def is_local(url: str) -> bool:
    return url.lower().startswith("file://") or ("://" not in url and not _SCP_RE.match(url))


class Transport:
    """Fetch and push for one store through a private repository (see the module docstring)."""

    def __init__(self, root: Path, url: str, *, interactive: bool | None = None) -> None:
        self.root = root
        self.url = check_url(url)
        self.interactive = sys.stdin.isatty() if interactive is None else interactive

    def __enter__(self) -> Transport:
        # in the store's cache/tmp, named by the pid like its other temporaries: a sync killed
        # with SIGKILL (no __exit__) leaves it to the next open's sweep, not in the system's
        # temporary folder for good
        from scratch.safefs import ensure_dir

        where = ensure_dir(self.root, self.root / "cache" / "tmp")
        self.tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{os.getpid()}-", suffix="-sync~",
                                         dir=where))
        for sub in ("refs/heads", "refs/tags", "objects"):
            (self.tmp / sub).mkdir(parents=True, mode=0o700)
        (self.tmp / "HEAD").write_text("ref: refs/heads/main\n")
        (self.tmp / "config").write_text("[core]\n\trepositoryformatversion = 0\n"
                                         "\tbare = true\n")
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GIT_") or k in KEPT_VARIABLES}
        env["GIT_DIR"] = str(self.tmp)
        env["GIT_OBJECT_DIRECTORY"] = str(self.root / ".git" / "objects")
        env["GIT_CONFIG_COUNT"] = str(len(TRANSPORT_SETTINGS))
        for i, (key, value) in enumerate(TRANSPORT_SETTINGS):
            env[f"GIT_CONFIG_KEY_{i}"] = key
            env[f"GIT_CONFIG_VALUE_{i}"] = value
        env["LC_ALL"] = "C"
        if not self.interactive:
            env["GIT_TERMINAL_PROMPT"] = "0"
            env.setdefault("GIT_SSH_VARIANT", "auto")
        return env

    def _run(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(["git", *args], cwd=self.tmp, env=self._env(),
                                  stdin=None if self.interactive else subprocess.DEVNULL,
                                  capture_output=True)
        except FileNotFoundError:
            raise SyncError("git is not installed or not on PATH; scratch needs it",
                            code="git_missing") from None

    def _haves(self, refs: dict[str, str]) -> None:
        """Name the commits the store already has, so the remote sends only what is new."""
        for i, sha in enumerate(sorted(set(refs.values()))):
            (self.tmp / "refs" / "heads" / f"have-{i}").write_text(sha + "\n")

    def fetch(self, haves: dict[str, str]) -> str | None:
        """The remote's branch tip after fetching what it has (None: it has no branch yet)."""
        self._haves(haves)
        proc = self._run("fetch", "--no-tags", "--no-write-fetch-head", "--quiet",
                         "--end-of-options", self.url, f"+{BRANCH}:refs/fetched")
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip()
            if "couldn't find remote ref" in err:
                return None
            raise SyncError(f"fetching from {self.url} failed: {_last_lines(err)}",
                            code="sync_fetch_failed", url=self.url, stage="fetch",
                            git_error=err[-2000:])
        try:
            return (self.tmp / "refs" / "fetched").read_text().strip()
        except FileNotFoundError:
            return None

    def remote_tip(self) -> str | None:
        """The remote's branch tip, read without fetching anything (None: it has none)."""
        proc = self._run("ls-remote", "--end-of-options", self.url, BRANCH)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip()
            raise SyncError(f"reading {self.url} failed: {_last_lines(err)}",
                            code="sync_fetch_failed", url=self.url, stage="fetch",
                            git_error=err[-2000:])
        for line in proc.stdout.decode().splitlines():
            sha, _, ref = line.partition("\t")
            if ref == BRANCH:
                return sha
        return None

    def push(self, new: str, haves: dict[str, str], lease: str | None = None) -> bool:
        """Push ``new`` to the remote's branch: True if it took it, False if it refused
        because it moved on (fetch, merge and try again); other failures raise. Never forced,
        but with ``lease`` (a purge replacing the remote's history): forced only if the
        branch is still exactly ``lease`` (``--force-with-lease``)."""
        self._haves(haves)
        forced = [f"--force-with-lease={BRANCH}:{lease}"] if lease else []
        proc = self._run("push", "--no-verify", "--porcelain", "--quiet", *forced,
                         "--end-of-options", self.url, f"{new}:{BRANCH}")
        if proc.returncode == 0:
            return True
        out = proc.stdout.decode(errors="replace")
        err = proc.stderr.decode(errors="replace").strip()
        for line in out.splitlines():
            if line.startswith("!") and ("fetch first" in line or "non-fast-forward" in line
                                         or "stale info" in line):
                return False
            # another push took the branch between the remote's check and its update
            if line.startswith("!") and ("failed to update ref" in line
                                         or "failed to lock" in line) \
                    and ("but expected" in err or "cannot lock ref" in err):
                return False
        raise SyncError(f"pushing to {self.url} failed: {_last_lines(err or out)}",
                        code="sync_push_failed", url=self.url, stage="push",
                        git_error=(err or out)[-2000:])


def prune_local(url: str) -> None:
    """Remove the objects a local-path remote no longer reaches (after its history was
    replaced): its reflogs expired, what it reaches repacked, the rest pruned. Run with
    :func:`scratch.store.gitstore.safe_environment` (no global or system config, no hook, no
    program of any config). Like any ``git prune``, not to be run while another machine
    pushes to it."""
    from scratch.store.gitstore import SAFE_CONFIG, safe_environment
    path = url[len("file://"):] if url.lower().startswith("file://") else url
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(safe_environment())
    env["GIT_DIR"] = path
    for args in (("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all"),
                 ("repack", "-a", "-d", "-q", "--no-write-bitmap-index"),
                 ("prune", "--expire=now")):
        proc = subprocess.run(["git", *SAFE_CONFIG, *args], cwd=path, env=env,
                              capture_output=True)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip()
            raise SyncError(f"pruning {url} failed: {_last_lines(err)}",
                            code="sync_prune_failed", url=url, git_error=err[-2000:])
    for rel in ("info/commit-graph", "info/commit-graphs", "pack/multi-pack-index"):
        cache = Path(path) / "objects" / rel
        if cache.is_dir():
            shutil.rmtree(cache, ignore_errors=True)
        else:
            cache.unlink(missing_ok=True)


def _last_lines(text: str, n: int = 2) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return " / ".join(lines[-n:]) if lines else "git gave no reason"
