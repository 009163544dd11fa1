"""Benchmark of ``scratch sync``, side by side with plain git in one run (a script, not
collected by pytest).

    python tests/bench/bench_sync.py [--entries 1000] [--mb 100] [--reps 3]

- 1,000 changed entries: store A, synced with a bare remote and with store B, gets
  ``--entries`` new files (in commits of 100, through the store's own API). Timed: the cold
  ``scratch sync`` on A (fetch, merge, push) against ``git push`` of the same commits from a
  copy of A's repository to a copy of the remote as it was; then ``scratch sync`` on B
  (fetch, merge, the files written into place) against ``git fetch`` plus ``git checkout`` of
  that push into a copy of B's repository.
- One 100 MB output (``--mb``), once with ``sync.max_file_bytes`` raised so it is pushed
  (against ``git push`` of it), and once with the default (50 MiB), where it stays local:
  what that sync costs when nothing big moves.

Medians of ``--reps`` runs (each on fresh stores); every run checks that B ends up with
what A wrote. Asserts nothing else; prints a table and exits 0.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scratch.redact import Redaction  # noqa: E402
from scratch.store import Pending, Store, count_lines  # noqa: E402
from scratch.store.gitstore import blob_sha  # noqa: E402


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")
    return env


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env or git_env(), cwd=cwd, capture_output=True)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-500:]}")
    return took


def scratch(home: Path, *args: str, extra: dict[str, str] | None = None) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(SCRATCH_HOME=str(home), **(extra or {}))
    return run([sys.executable, "-m", "scratch", *args], env=env, cwd=REPO)


def setup(tmp: Path) -> tuple[Path, Path, Path]:
    remote = tmp / "remote.git"
    run(["git", "init", "-q", "--bare", "-b", "main", str(remote)])
    a, b = tmp / "a", tmp / "b"
    for home in (a, b):
        scratch(home, "remote", "add", "origin", str(remote))
    Store.open(a).write("seed.md", b"seed\n", redaction=Redaction())
    scratch(a, "sync")
    scratch(b, "sync")
    return a, b, remote


def add_entries(home: Path, n: int) -> None:
    store = Store.open(home)
    for start in range(0, n, 100):
        items = []
        for i in range(start, min(n, start + 100)):
            data = f"entry {i}\n".encode() * 20
            items.append(Pending(f"bench/e{i:05d}.txt", data, "file", {}, blob_sha(data),
                                 len(data), count_lines(data), False, Redaction()))
        with store.lock():
            store.commit_versions(items, verb="Write")


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def bench_entries(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as d:
        tmp = Path(d)
        a, b, remote = setup(tmp)
        add_entries(a, n)
        remote_copy = copy(remote, tmp / "remote-copy.git")
        a_copy = copy(a / ".git", tmp / "a-copy.git")
        b_copy = copy(b, tmp / "b-copy")
        out = {"sync_push": scratch(a, "sync")}
        out["git_push"] = run(["git", f"--git-dir={a_copy}", "push", "-q", str(remote_copy),
                               "HEAD:refs/heads/bench"])
        out["sync_fetch"] = scratch(b, "sync")
        env = git_env()
        out["git_fetch"] = run(["git", "-C", str(b_copy), "fetch", "-q", str(remote_copy),
                                "main"], env=env)
        out["git_fetch"] += run(["git", "-C", str(b_copy), "checkout", "-q", "-f",
                                 "FETCH_HEAD", "--", "agents"], env=env)
        got = sum(1 for _ in (b / "agents/default/files/bench").iterdir())
        assert got == n, f"B has {got} of {n} entries"
        return out


def bench_big(mb: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as d:
        tmp = Path(d)
        a, b, remote = setup(tmp)
        os.environ["SCRATCH_LIMITS_MAX_WRITE_BYTES"] = str((mb + 1) << 20)
        os.environ["SCRATCH_QUOTA_BYTES"] = str((mb + 10) << 20)
        line = b'{"id": %d, "host": "node-%03d", "status": "Running", "bytes": %d}\n'
        data = b"".join(line % (i, i % 997, i * 7919 % 100003)
                        for i in range((mb << 20) // 64))[: mb << 20]
        Store.open(a).write("big/output.json", data, kind="output", redaction=Redaction())
        remote_copy = copy(remote, tmp / "remote-copy.git")
        a_copy = copy(a / ".git", tmp / "a-copy.git")
        b_copy = copy(b / ".git", tmp / "b-copy.git")
        local = scratch(a, "sync")  # default limit: it stays here
        bigger = {"SCRATCH_SYNC_MAX_FILE_BYTES": str((mb + 1) << 20)}
        out = {"sync_local_only": local, "sync_push": scratch(a, "sync", extra=bigger)}
        out["git_push"] = run(["git", f"--git-dir={a_copy}", "push", "-q", str(remote_copy),
                               "HEAD:refs/heads/bench"])
        out["sync_fetch"] = scratch(b, "sync", extra=bigger)
        out["git_fetch"] = run(["git", f"--git-dir={b_copy}", "fetch", "-q",
                                str(remote_copy), "bench"])
        assert (b / "agents/default/files/big/output.json").stat().st_size == len(data)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    os.environ["SCRATCH_QUOTA_FILES"] = str(args.entries + 100)  # the bench's own entries
    rows: dict[str, list[dict[str, float]]] = {"entries": [], "big": []}
    for _ in range(args.reps):
        rows["entries"].append(bench_entries(args.entries))
        rows["big"].append(bench_big(args.mb))

    def med(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in rows[kind]) * 1000

    print(f"| measurement ({args.reps} runs, medians) | scratch | git | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for kind, label in (("entries", f"{args.entries:,} changed entries"),
                        ("big", f"one {args.mb} MB output")):
        for side, what in (("push", "sync that pushes vs `git push`"),
                           ("fetch", "sync that receives vs `git fetch`"
                            + (" + checkout" if kind == "entries" else ""))):
            s, g = med(kind, f"sync_{side}"), med(kind, f"git_{side}")
            print(f"| {label}: {what} | {s:,.0f} ms | {g:,.0f} ms | {s / g:.2f}x |")
    print(f"| one {args.mb} MB output over sync.max_file_bytes (stays local): sync | "
          f"{med('big', 'sync_local_only'):,.0f} ms | | |")


if __name__ == "__main__":
    main()
