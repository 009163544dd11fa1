"""Benchmark of ingesting deeply nested input, beside flat input of the same size in one run (a
script, not collected by pytest).

    python tests/bench/bench_nesting.py [--size 100000] [--as-gib 1] [--reps 1]

Every case of tests/test_nesting.py (100,000 ``[``, closed or not, objects, mixed with
whitespace, an NDJSON line, YAML flow collections), the JSONTestSuite's
``n_structure_100000_opening_arrays.json`` when ../shared/corpus is there, and beside them a
flat JSON array of records and one line of plain text of the same size: each is stored by
``scratch ingest --store-always`` in its own process on a fresh store, under an address-space
limit of ``--as-gib`` GiB (0: none). Prints wall time, CPU time (user + system, which the
machine's load distorts less), peak RSS, the exit code and the stored format; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.nesting_support import cases  # noqa: E402

JTS = Path(os.environ.get("SCRATCH_CORPUS") or REPO.parent / "shared" / "corpus") \
    / "suites/jsontestsuite/test_parsing/n_structure_100000_opening_arrays.json"


def flat_json(size: int) -> bytes:
    parts, n, i = [], 2, 0
    while n < size:
        item = b'{"id": %d, "name": "item %d", "ok": %s}' % (i, i, b"true" if i % 2 else b"false")
        parts.append(item)
        n += len(item) + 2
        i += 1
    return b"[" + b", ".join(parts) + b"]"


def run_one(data: bytes, limit: int) -> tuple[float, float, int, int, str]:
    """(wall s, cpu s, peak RSS bytes, exit code, first output line) of one ingest."""
    home = tempfile.mkdtemp(prefix="bench-nesting-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(SCRATCH_HOME=home, PYTHONPATH=str(REPO))

    def pre() -> None:
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        with tempfile.TemporaryFile() as src, tempfile.TemporaryFile() as out:
            src.write(data)
            src.seek(0)
            t0 = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "scratch", "ingest", "--store-always",
                                     "x"], stdin=src, stdout=out, stderr=subprocess.STDOUT,
                                    env=env, cwd=REPO, preexec_fn=pre)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            out.seek(0)
            first = out.read().decode("utf-8", "replace").splitlines()[:1]
    finally:
        shutil.rmtree(home, ignore_errors=True)
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status), \
        (first[0] if first else "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--as-gib", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    limit = int(args.as_gib * (1 << 30))
    inputs = {name: data for name, (data, _) in cases(args.size).items()}
    if JTS.is_file():
        inputs["jsontestsuite_100000"] = JTS.read_bytes()
    inputs["flat_json"] = flat_json(args.size)
    inputs["plain_text_line"] = b"x" * args.size
    print(f"address-space limit: {args.as_gib:g} GiB; best of {args.reps}")
    print(f"{'input':22} {'bytes':>8} {'wall s':>7} {'cpu s':>6} {'peak RSS':>9} {'rc':>3}  stored")
    for name, data in inputs.items():
        best = min((run_one(data, limit) for _ in range(args.reps)), key=lambda r: r[0])
        wall, cpu, rss, rc, first = best
        stored = first.split(": ", 1)[1].split(",")[0] if first.startswith("stored") else first
        print(f"{name:22} {len(data):8,} {wall:7.2f} {cpu:6.2f} {rss / 2**20:7.0f}MB {rc:3}  "
              f"{stored[:40]}", flush=True)


if __name__ == "__main__":
    main()
