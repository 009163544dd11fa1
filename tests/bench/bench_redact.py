"""Ingest with redaction on vs off, side by side (a script, not collected by pytest).

Inputs are gen_inputs.py's: a ``kubectl get pods -A -o json`` PodList built from the corpus'
pods and a log of the Loghub samples, at ``--bytes`` each (100 MB by default; cached under
``--data-dir``). Each round ingests each input twice, redaction on (the default) and off
(``SCRATCH_REDACT_ENABLED=0``), in alternating order, each into a fresh store, as a cold
``scratch ingest --store-always`` process reading the file on stdin; the figure is the median
wall time over ``--rounds`` rounds and the ratio on/off (target: at most 1.15x). The redaction
pass alone (``scratch.redact.core.redact_file`` on the file, in this process, median of as many
rounds) is timed too, and its share of the ingest without redaction (issue 32: at most 15%).
The CPU seconds of each ingest (user and system, its child processes included) are shown
beside: on a busy machine the wall times are noisy, and the CPU ratio says what redaction
costs in work (the scan runs beside normalisation, on the other core, so wall time on a quiet
machine is the figure the target is about). ``--repo`` runs the ingests from another checkout
(a before/after comparison).

    python tests/bench/bench_redact.py [--bytes 1e8] [--rounds 3] [--data-dir DIR] [--repo DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))
TARGET = 1.15
SHARE = 0.15  # the scan's cost, as a share of an ingest without redaction


def ingest_once(path: Path, tool: str, redact: bool, repo: Path = REPO) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, the ingest's children included) of one cold
    ingest of ``path``."""
    home = Path(tempfile.mkdtemp(prefix="bench-redact-"))
    # modules compiled once, as an installed scratch has them (an environment that forbids
    # bytecode files makes every process compile every module: seconds added to both sides)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SCRATCH_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(SCRATCH_HOME=str(home / "store"), SCRATCH_REDACT_ENABLED="1" if redact else "0",
               XDG_CACHE_HOME=str(home / "cache"))
    try:
        # the store and the rule cache exist before the timed run, as they do in use
        subprocess.run([sys.executable, "-m", "scratch", "write", "seed", "--no-redact"],
                       input=b"seed\n", env=env, check=True, capture_output=True, cwd=repo)
        subprocess.run([sys.executable, "-m", "scratch", "ingest", "--store-always",
                        "--tool", "warm"], input=b"password=warm1234\n", env=env, check=True,
                       capture_output=True, cwd=repo)
        with open(path, "rb") as stdin:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "scratch", "ingest", "--store-always",
                                   "--tool", tool], stdin=stdin, env=env, capture_output=True,
                                  cwd=repo)
            took = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"ingest failed: {done.stderr.decode(errors='replace')}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return took, cpu
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", type=float, default=1e8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data-dir", type=Path, default=HERE / "data")
    ap.add_argument("--repo", type=Path, default=REPO, help="the checkout whose ingest runs")
    args = ap.parse_args()
    from gen_inputs import ensure

    from scratch.redact.core import redact_file
    rows = []
    for kind, tool in (("pods", "kubectl_get_pods"), ("log", "loghub")):
        path, meta = ensure(kind, int(args.bytes), args.data_dir)
        on: list[float] = []
        off: list[float] = []
        cpu_on: list[float] = []
        cpu_off: list[float] = []
        for r in range(args.rounds):
            order = (True, False) if r % 2 == 0 else (False, True)
            for redact in order:
                took, cpu = ingest_once(path, tool, redact, args.repo.resolve())
                (on if redact else off).append(took)
                (cpu_on if redact else cpu_off).append(cpu)
        alones = []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                found = redact_file(path, Path(tmp) / "out", b"\0" * 32)
                alones.append(time.perf_counter() - started)
        alone = statistics.median(alones)
        m_on, m_off = statistics.median(on), statistics.median(off)
        ratio = m_on / m_off
        share = alone / m_off
        c_on, c_off = statistics.median(cpu_on), statistics.median(cpu_off)
        rows.append((kind, meta["bytes"], m_on, m_off, ratio, alone, share, c_on, c_off))
        print(f"{kind}: {meta['bytes'] / 1e6:.0f} MB, on {m_on:.2f} s, off {m_off:.2f} s, "
              f"ratio {ratio:.2f}x ({'pass' if ratio <= TARGET else 'FAIL'} <= {TARGET}x); "
              f"runs on {', '.join(f'{t:.2f}' for t in on)} / off "
              f"{', '.join(f'{t:.2f}' for t in off)}; redaction pass alone {alone:.2f} s "
              f"({meta['bytes'] / 1e6 / alone:.0f} MB/s), {share:.0%} of the ingest without "
              f"redaction ({'pass' if share <= SHARE else 'FAIL'} <= {SHARE:.0%}), "
              f"{0 if found is None else found.count} values found; CPU on {c_on:.2f} s, "
              f"off {c_off:.2f} s ({c_on / c_off:.2f}x)", flush=True)
    print()
    print("| input | bytes | redaction on | off | ratio | target | pass alone | share of off "
          "| CPU on | CPU off |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for kind, nbytes, m_on, m_off, ratio, alone, share, c_on, c_off in rows:
        print(f"| {kind} | {nbytes:,} | {m_on:.2f} s | {m_off:.2f} s | {ratio:.2f}x | "
              f"<= {TARGET}x {'pass' if ratio <= TARGET else 'FAIL'} | {alone:.2f} s | "
              f"{share:.0%} ({'pass' if share <= SHARE else 'FAIL'} <= {SHARE:.0%}) | "
              f"{c_on:.2f} s | {c_off:.2f} s |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
