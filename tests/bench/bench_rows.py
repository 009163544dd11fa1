"""Benchmark of rows from maps of records and from nested arrays, side by side in one run (a
script, not collected by pytest).

    python tests/bench/bench_rows.py [--records 200000] [--reps 3]

One generated document is stored twice: as a map of records (``{"r0": {...}, ...}``) and as
the same records in an array (the floor: what reading rows cost before maps were rows). Each
record holds a short array ``lines``. Then, a cold process each run, the two sides
alternating:

- ``iterate-over map . --where '@.n >= 0' --count-by kind`` against the same over the array
  (``--where`` keeps both on the Python scan: no count cache, no DuckDB);
- ``iterate-over map '[*].lines' --where ... --count-by sku`` (the nested arrays flattened)
  against ``iterate-over flat . --where ... --count-by sku`` over a stored array that already
  holds those lines (the floor for flattening);
- ``sql map 'SELECT kind, count(*) ...' --path .`` against the same over the array (DuckDB
  reads the array from the file; the map's rows are spooled to it).

Prints medians and ratios (scratch map or nested / array floor); the answers of each pair are
compared. Asserts nothing and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KINDS = ("alpha", "beta", "gamma", "delta", "epsilon")


def scratch(home: Path, *args: str, stdin: bytes | None = None) -> tuple[float, bytes]:
    env = {**os.environ, "SCRATCH_HOME": str(home), "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "scratch", *args], input=stdin, env=env,
                         check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, out.stdout


def documents(n: int) -> tuple[bytes, bytes, bytes]:
    records = {f"r{i}": {"n": i, "kind": KINDS[i % len(KINDS)],
                         "lines": [{"sku": f"s{(i + j) % 97}", "qty": j} for j in range(i % 4)]}
               for i in range(n)}
    flat = [line for r in records.values() for line in r["lines"]]
    return (json.dumps(records).encode(), json.dumps(list(records.values())).encode(),
            json.dumps(flat).encode())


def pair(home: Path, reps: int, a: Sequence[str], b: Sequence[str]
         ) -> tuple[float, float, bool]:
    ta: list[float] = []
    tb: list[float] = []
    oa = ob = b""
    for _ in range(reps):
        t, oa = scratch(home, *a)
        ta.append(t)
        t, ob = scratch(home, *b)
        tb.append(t)

    def answer(out: bytes) -> object:
        data = json.loads(out)["data"]
        return data.get("values", data.get("rows"))

    return statistics.median(ta), statistics.median(tb), answer(oa) == answer(ob)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "store"
        as_map, as_array, flat = documents(args.records)
        for name, data in (("map", as_map), ("array", as_array), ("flat", flat)):
            scratch(home, "write", name, stdin=data)
        where = "@.n >= 0"
        lines = "@.qty >= 0"
        rows = [
            ("count-by over a map of records vs the same records as an array",
             ["iterate-over", "map", ".", "--where", where, "--count-by", "kind", "--json"],
             ["iterate-over", "array", ".", "--where", where, "--count-by", "kind", "--json"]),
            ("count-by over [*].lines flattened vs the same lines stored as an array",
             ["iterate-over", "map", "[*].lines", "--where", lines, "--count-by", "sku",
              "--limit", "100", "--json"],
             ["iterate-over", "flat", ".", "--where", lines, "--count-by", "sku", "--limit",
              "100", "--json"]),
            ("sql GROUP BY over a map of records vs over the same records as an array",
             ["sql", "map", "SELECT kind, count(*) AS n FROM entry GROUP BY 1 ORDER BY 1",
              "--path", ".", "--json"],
             ["sql", "array", "SELECT kind, count(*) AS n FROM entry GROUP BY 1 ORDER BY 1",
              "--path", ".", "--json"]),
        ]
        print(f"{args.records:,} records, map {len(as_map) / 1e6:.1f} MB, "
              f"{args.reps} cold runs each, sides alternating\n")
        print("| what | rows | floor | ratio | same answer |")
        print("|---|---|---|---|---|")
        for what, a, b in rows:
            ta, tb, same = pair(home, args.reps, a, b)
            print(f"| {what} | {ta * 1000:.0f} ms | {tb * 1000:.0f} ms | {ta / tb:.2f}x | "
                  f"{same} |")


if __name__ == "__main__":
    main()
