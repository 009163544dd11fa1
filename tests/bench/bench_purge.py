"""Benchmark of ``scratch purge`` and ``scratch gc --prune-history`` (a script, not collected by
pytest).

    python tests/bench/bench_purge.py [--commits 1000] [--entries 200] [--kb 4] [--reps 3]

A store of ``--commits`` commits (one version each, through the store's own API) spread over
``--entries`` entries of ``--kb`` KiB, packed as a store that has synced would be; the entry
to purge gets a version every tenth commit (so about a tenth of history is rewritten from its
first version on). Timed, each on a fresh copy of that store:

- the cold ``scratch purge NAME`` (plan, rewrite, refs, caches, ledger, prune), and its
  ``--dry-run`` (plan only);
- the floor every purge pays whatever rewrites history: ``git reflog expire`` + ``git repack
  -a -d`` + ``git prune`` on the same repository;
- ``scratch gc --prune-history`` with ``retention.keep_versions = 1`` (older versions of every
  entry purged).

Medians of ``--reps`` runs; every run checks that the entry's bytes are gone from every
object. Prints a table and exits 0.
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

from scratch.store import Pending, Store, count_lines  # noqa: E402
from scratch.store.gitstore import blob_sha  # noqa: E402

MARKER = b"BENCH-PURGE-MARKER"


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return env


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env or git_env(), cwd=REPO, capture_output=True)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-500:]}")
    return took


def scratch(home: Path, *args: str) -> float:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "SCRATCH_"))}
    env["SCRATCH_HOME"] = str(home)
    return timed([sys.executable, "-m", "scratch", *args], env)


def build(home: Path, commits: int, entries: int, kb: int) -> None:
    store = Store.open(home)
    body = b"x" * (kb * 1024 - 64)
    with store.lock():
        for i in range(commits):
            if i % 10 == 5:
                name, data = "secret.json", MARKER + b" %d " % i + body
            else:
                name, data = f"e/{i % entries:04d}.txt", b"%d " % i + body
            item = Pending(name, data, "file", {}, blob_sha(data), len(data),
                           count_lines(data), False)
            store.commit_versions([item], verb="Write")
    g = [f"--git-dir={home / '.git'}"]
    subprocess.run(["git", *g, "repack", "-a", "-d", "-q"], env=git_env(), check=True)


def holds_marker(home: Path) -> bool:
    proc = subprocess.run(["git", f"--git-dir={home / '.git'}", "cat-file",
                           "--batch-all-objects", "--batch", "--unordered"],
                          capture_output=True, env=git_env(), check=True)
    return MARKER in proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--entries", type=int, default=200)
    ap.add_argument("--kb", type=int, default=4)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-purge-"))
    try:
        base = work / "base"
        t0 = time.perf_counter()
        build(base, args.commits, args.entries, args.kb)
        print(f"store: {args.commits:,} commits, {args.entries} entries of {args.kb} KiB, "
              f"built in {time.perf_counter() - t0:.1f} s", flush=True)
        rows: dict[str, list[float]] = {"purge": [], "purge --dry-run": [], "floor": [],
                                        "gc --prune-history": []}
        for rep in range(args.reps):
            copy = work / f"c{rep}"
            for label, fn in (
                    ("purge --dry-run", lambda h: scratch(h, "purge", "--dry-run",
                                                          "secret.json")),
                    ("purge", lambda h: scratch(h, "purge", "secret.json")),
                    ("floor", lambda h: sum(timed(["git", f"--git-dir={h / '.git'}", *c]) for c
                                            in (["reflog", "expire", "--expire=now", "--all"],
                                                ["repack", "-a", "-d", "-q"],
                                                ["prune", "--expire=now"]))),
                    ("gc --prune-history", None)):
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(base, copy, symlinks=True)
                if fn is None:
                    (copy / "scratch.toml").write_text("[retention]\nkeep_versions = 1\n")
                    rows[label].append(scratch(copy, "gc", "--prune-history"))
                    continue
                rows[label].append(fn(copy))
                if label == "purge" and holds_marker(copy):
                    raise SystemExit("the purged entry's bytes are still in the store")
        print(f"\n| measurement ({args.commits:,} commits) | median ms | runs |")
        print("| --- | ---: | ---: |")
        for label, times in rows.items():
            print(f"| {label} | {statistics.median(times) * 1000:,.0f} | {len(times)} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
