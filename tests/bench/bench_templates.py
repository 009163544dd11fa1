"""Benchmark: the cost of mining line templates at ingest, on a ~100 MB log in no known format.

Not collected by pytest. Run::

    python tests/bench/bench_templates.py [--mb 100] [--sample Thunderbird] [--rounds 1]

The log is a Loghub sample of the corpus (``logs/loghub/NAME_2k.log``, a format scratch does
not parse: Thunderbird, Android, BGL, HPC, Windows, Zookeeper...) repeated to ``--mb`` MB, and
the same size of random words after ISO timestamps (a log with no template structure: the
miner must give up early). Each is ingested by ``python -m scratch ingest --format log
--store-always`` into a fresh store, in separate processes, alternately:

- ``mined``: as scratch runs;
- ``not mined``: the same, with the miner replaced by one that finds no structure at once
  (``scratch.index.logrecords._mined`` patched in that process), i.e. ingest as it was before
  templates.

Printed per input: seconds of each (best of ``--rounds``), the difference and the ratio, max
RSS, and, from one in-process run of :func:`scratch.index.logtemplates.mine` over the lines,
its lines per second, the templates found and how many lines went through Drain (the others
repeat a masked content already seen; a repeated sample makes that share small, a real log of
the same size has more distinct contents).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

NOT_MINED = (
    "import runpy, sys\n"
    "import scratch.index.logrecords as L\n"
    "L._mined = lambda path, sample, detected: ({'format': None, 'detected': detected}, {})\n"
    "sys.argv = ['scratch'] + sys.argv[1:]\n"
    "runpy.run_module('scratch', run_name='__main__')\n")


def corpus_dir() -> Path:
    return Path(os.environ.get("SCRATCH_CORPUS") or ROOT.parent / "shared" / "corpus")


def make_repeated(sample: str, mb: int, out: Path) -> None:
    data = (corpus_dir() / "logs" / "loghub" / f"{sample}_2k.log").read_bytes()
    if not data.endswith(b"\n"):
        data += b"\r\n"
    with open(out, "wb") as f:
        n = 0
        while n < mb * 1_000_000:
            f.write(data)
            n += len(data)


def make_random(mb: int, out: Path) -> None:
    rng = random.Random(5)
    letters = "abcdefghijklmnopqrstuvwxyz"
    with open(out, "w", encoding="ascii") as f:
        n = i = 0
        while n < mb * 1_000_000:
            words = " ".join("".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))
                             for _ in range(rng.randint(4, 14)))
            line = f"2024-03-{1 + i % 28:02d} {i // 3600 % 24:02d}:{i // 60 % 60:02d}:" \
                   f"{i % 60:02d} {words}\n"
            f.write(line)
            n += len(line)
            i += 1


def ingest(path: Path, mined: bool, work: Path) -> tuple[float, int]:
    """Seconds and the child's max RSS (KB) of one ingest into a fresh store."""
    store = work / f"store-{time.monotonic_ns()}"
    args = ["ingest", "big", "--format", "log", "--store-always", "--store", str(store)]
    cmd = [sys.executable, "-m", "scratch", *args] if mined else \
        [sys.executable, "-c", NOT_MINED, *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(path, "rb") as stdin:
        t = time.perf_counter()
        subprocess.run(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True, cwd=ROOT)
        took = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    shutil.rmtree(store, ignore_errors=True)
    return took, max(rss, before)


def mine_alone(path: Path) -> str:
    import itertools

    from scratch.index.logrecords import _line_lists
    from scratch.index.logtemplates import mine, timestamp_format_of
    from scratch.index.textinfo import iter_text_lines

    ts = timestamp_format_of(list(itertools.islice(iter_text_lines(path), 5000)))
    t = time.perf_counter()
    found = mine(itertools.chain.from_iterable(_line_lists(path)), ts)
    took = time.perf_counter() - t
    what = found.structure or f"{len(found.templates):,} templates"
    return (f"mine() alone: {took:.1f} s, {found.lines / took:,.0f} lines/s over "
            f"{found.lines:,} lines; {what}; {found.drained:,} lines through Drain")


def mine_samples() -> str:
    """mine() over each Loghub sample of the corpus once (lines seen once each: the memo
    helps little, most lines go through Drain), with a plain split of the same lines as
    the floor."""
    from scratch.index.logtemplates import mine, timestamp_format_of

    took = floor = 0.0
    lines = drained = 0
    for path in sorted((corpus_dir() / "logs" / "loghub").glob("*_2k.log")):
        text = path.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n")
        sample = text.splitlines()
        ts = timestamp_format_of(sample)
        t = time.perf_counter()
        found = mine(sample, ts)
        took += time.perf_counter() - t
        t = time.perf_counter()
        for line in sample:
            line.split()
        floor += time.perf_counter() - t
        lines += len(sample)
        drained += found.drained
    return (f"mine() over the {lines:,} lines of the Loghub samples, each once: {took:.2f} s, "
            f"{lines / took:,.0f} lines/s, {drained:,} lines through Drain; a split of the "
            f"same lines {floor:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--sample", default="Thunderbird", help="a Loghub sample of the corpus")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    print(mine_samples())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        inputs = {f"{args.sample} x{args.mb} MB": work / "repeated.log",
                  f"random words, {args.mb} MB": work / "random.log"}
        make_repeated(args.sample, args.mb, inputs[f"{args.sample} x{args.mb} MB"])
        make_random(args.mb, inputs[f"random words, {args.mb} MB"])
        for label, path in inputs.items():
            best = {True: float("inf"), False: float("inf")}
            rss = {True: 0, False: 0}
            for _ in range(args.rounds):
                for mined in (False, True):
                    took, kb = ingest(path, mined, work)
                    best[mined] = min(best[mined], took)
                    rss[mined] = max(rss[mined], kb)
            size = path.stat().st_size
            print(f"{label} ({size / 1e6:,.1f} MB): not mined {best[False]:.1f} s, mined "
                  f"{best[True]:.1f} s (+{best[True] - best[False]:.1f} s, "
                  f"x{best[True] / best[False]:.2f}); max RSS of the children so far "
                  f"{rss[True] / 1024:,.0f} MB")
            print("  " + mine_alone(path))


if __name__ == "__main__":
    main()
