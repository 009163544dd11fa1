"""What the pointer's signals cost at ingest, side by side in one run (a script, not collected
by pytest).

    python tests/bench/bench_pointer_signals.py [--bytes 2e7] [--reps 3] [--data-dir DIR]

For each input of :mod:`gen_inputs` (``pods``: a PodList, ``log``: Loghub text, ``ndjson``:
journald/slog records) at ``--bytes``, ``scratch ingest --store-always`` in a cold process,
new content each run, against the same ingest with the two additions made no-ops in that
process (the floor): the checked error grep (:func:`scratch.answers.pointer.grep.
check_error_grep`, one pass over the content) and the Kubernetes signals read from the values
at index time (:func:`scratch.index.kube.kube_signals`). Target: the ratio stays under 1.10
(the check is one RE2 pass; the signals one walk of the items). Medians of ``--reps`` runs,
the two sides alternating. Then the parts alone, in this process (less noise than two whole
ingests on a busy machine): the check's best of ``--reps`` on the stored entry and the
signals' walk of the parsed PodList, against that entry's ingest. Asserts nothing; prints two
tables and exits 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import gen_inputs  # noqa: E402

INGEST = """
import sys
if sys.argv[1] == "1":
    import scratch.answers.pointer.grep as pg
    import scratch.index.kube as kube
    pg.check_error_grep = lambda target: None
    kube.kube_signals = lambda value: None
from scratch.cli import main
sys.argv = ["scratch", "ingest", "--tool", "bench", "--store-always"]
main()
"""


def run(floor: bool, path: Path, home: Path, salt: int) -> float:
    """One ingest of ``path`` with a salt line first (new content, so a new index), into a
    store of its own (removed after: a store's quota would stop a few 100 MB ingests)."""
    import shutil
    store = home / f"run{salt}"
    env = {**os.environ, "SCRATCH_HOME": str(store), "PYTHONPATH": str(REPO)}
    data = path.read_bytes()
    if path.suffix == ".json":  # a JSON object: the salt goes in as a key
        data = b'{"salt": %d, ' % salt + data.lstrip()[1:]
    else:
        data = b"salt %d\n" % salt + data if path.suffix != ".ndjson" else \
            b'{"salt": %d}\n' % salt + data
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", INGEST, "1" if floor else "0"], input=data,
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.perf_counter() - t0
    shutil.rmtree(store)
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", type=float, default=2e7)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "scratch-bench")
    args = ap.parse_args()
    print(f"{'input':<22} {'with (s)':>9} {'floor (s)':>9} {'ratio':>6}")
    salt = 0
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "store"
        for kind in ("pods", "log", "ndjson"):
            path, _ = gen_inputs.ensure(kind, int(args.bytes), args.data_dir)
            with_, floor = [], []
            for _ in range(args.reps):
                salt += 1
                with_.append(run(False, path, home, salt))
                salt += 1
                floor.append(run(True, path, home, salt))
            a, b = statistics.median(with_), statistics.median(floor)
            print(f"{path.name:<22} {a:>9.2f} {b:>9.2f} {a / b:>6.2f}")
        parts(args, home)


PARTS = """
import json, sys, time
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.target import open_target
from scratch.answers.pointer.grep import check_error_grep
from scratch.index.kube import kube_signals
from scratch.cli import main
path, reps = sys.argv[1], int(sys.argv[2])
t0 = time.perf_counter()
sys.argv = ["scratch", "ingest", "parts", "--store-always"]
sys.stdin = open(path)
try:
    main()
except SystemExit:
    pass
ingest = time.perf_counter() - t0
target = open_target(Context.build(), "parts")
best = []
for _ in range(reps):
    t0 = time.perf_counter()
    check_error_grep(target)
    best.append(time.perf_counter() - t0)
target.index.close()
kube = 0.0
if path.endswith(".json"):
    value = json.loads(open(path, "rb").read())
    t0 = time.perf_counter()
    kube_signals(value)
    kube = time.perf_counter() - t0
print(json.dumps([ingest, min(best), kube]), file=sys.stderr)
"""


def parts(args: argparse.Namespace, home: Path) -> None:
    import json
    print(f"\n{'input':<22} {'ingest (s)':>10} {'check (s)':>9} {'signals (s)':>11} {'share':>6}")
    for kind in ("pods", "log", "ndjson"):
        path, _ = gen_inputs.ensure(kind, int(args.bytes), args.data_dir)
        env = {**os.environ, "SCRATCH_HOME": str(home / kind), "PYTHONPATH": str(REPO)}
        out = subprocess.run([sys.executable, "-c", PARTS, str(path), str(args.reps)],
                             check=True, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE).stderr.decode().strip().splitlines()[-1]
        ingest, check, kube = json.loads(out)
        print(f"{path.name:<22} {ingest:>10.2f} {check:>9.3f} {kube:>11.3f} "
              f"{(check + kube) / ingest:>6.1%}")


if __name__ == "__main__":
    main()
