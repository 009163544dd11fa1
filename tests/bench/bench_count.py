"""Benchmark of counting and SQL, side by side in one run (a script, not collected by pytest).

    python tests/bench/bench_count.py [--bytes 1e8] [--reps 3] [--data-dir DIR] [--field F]

Whole commands (the figures the issue sets targets for): the 100 MB NDJSON file is ingested
once into a scratch store, then

- ``scratch iterate-over big . --count-by F --limit 1000 --json`` (a cold process each run),
  first with the count cache of the version emptied before every run (DuckDB scans the
  stored file), then with it kept (every later count-by of that field), against ``jq -s
  'group_by(.F)|map({k:.[0].F,n:length})'`` on the original file. Target: >= 10x faster;
  the groups and counts are compared with jq's.
- ``scratch sql big "SELECT F AS k, count(*) AS n FROM entry GROUP BY 1 ORDER BY 2 DESC"
  --json`` against DuckDB's own query over the original file (``python -c`` with ``import
  duckdb``: DuckDB has no command-line tool here). Target: <= 1.5x; the rows are compared.

Engines alone (what the commands above are made of):

- count-by: :func:`scratch.index.countcache.cached_count_by` over
  :func:`scratch.query.filecount.count_by_file` on a 100 MB NDJSON file (a cold process each
  run), first with the count cache emptied before every run (a DuckDB scan), then with it
  kept (what every later count-by of that field costs), against ``jq -s
  'group_by(.F)|map({k:.[0].F,n:length})'`` on the same file. Target: >= 10x faster. The
  answers are compared with jq's (same groups, same counts).
- SQL: :func:`scratch.query.sql.run_sql` with a GROUP BY (cold process: the sandbox set-up
  included) against DuckDB's own query over the original file, ``SELECT F, count(*) FROM
  read_ndjson(file) GROUP BY F`` in a cold Python process. Target: <= 1.5x.
- Log records at index time: ``scratch ingest`` of a 100 MB combined access log (the corpus
  file repeated), against the same ingest with the records hook made a no-op in the process.

Medians of ``--reps`` runs, the two sides alternating. The jq rows are skipped (with a note)
when jq is not installed. Asserts nothing; prints a table and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_inputs  # noqa: E402

ACCESS = Path("logs/app/apache_access_10k.log")


def timed(cmd: Sequence[str], **kw: object) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - t0, out.stdout


def side_by_side(reps: int, a: Callable[[], tuple[float, bytes]],
                 b: Callable[[], tuple[float, bytes]]) -> tuple[float, float, bytes, bytes]:
    ta: list[float] = []
    tb: list[float] = []
    oa = ob = b""
    for _ in range(reps):
        t, oa = a()
        ta.append(t)
        t, ob = b()
        tb.append(t)
    return statistics.median(ta), statistics.median(tb), oa, ob


COUNT = """
import json, sys
from pathlib import Path
from scratch.index.countcache import cached_count_by
from scratch.query.filecount import count_by_file
f = sys.argv[2]
r = cached_count_by(Path(sys.argv[3]), ("ndjson", [], [f]),
                    lambda: count_by_file(Path(sys.argv[1]), "ndjson", [f], limit=None),
                    limit=None)
print(json.dumps({json.dumps(b.values[0]) if b.types[0] != "missing" else "null": b.count
                  for b in r.buckets}))
"""
SQL = """
import sys
from pathlib import Path
from scratch.query.sql import Source, run_sql
r = run_sql({"entry": Source.ndjson(Path(sys.argv[1]))},
            f'SELECT "{sys.argv[2]}" AS k, count(*) AS n FROM entry GROUP BY 1 ORDER BY 2 DESC')
print(sorted(r.rows, key=repr))
"""
DUCK = """
import sys, duckdb
rows = duckdb.sql(f'SELECT "{sys.argv[2]}" AS k, count(*) AS n FROM read_ndjson(\\'{sys.argv[1]}\\') '
                  'GROUP BY 1 ORDER BY 2 DESC').fetchall()
print(sorted(rows, key=repr))
"""


# scratch ingest, optionally with the records analysis hook made a no-op (the A/B baseline);
# each run stores and indexes new content
INGEST = """
import sys
if sys.argv[1] == "1":
    import scratch.index.logrecords as lr
    lr.add_records = lambda analysis, path: None
from scratch.cli import main
sys.argv = ["scratch", "ingest", "--tool", "bench", "--store-always", sys.argv[2]]
main()
"""


def jq_counts(out: bytes) -> dict[str, int]:
    return {json.dumps(g["k"]): g["n"] for g in json.loads(out)}


def cli_counts(out: bytes) -> dict[str, int]:
    data = json.loads(out)["data"]
    assert not data["other"]["count"], "raise --limit: some values were left out"
    return {json.dumps(b["value"]) if b["type"] != "missing" else "null": b["count"]
            for b in data["values"]}


DUCK_CLI = """
import json, sys, duckdb
rows = duckdb.sql(f'SELECT "{sys.argv[2]}" AS k, count(*) AS n FROM '
                  f"read_ndjson('{sys.argv[1]}') GROUP BY 1 ORDER BY 2 DESC").fetchall()
print(json.dumps(sorted([list(r) for r in rows], key=repr)))
"""


def cli_rows(out: bytes) -> str:
    return json.dumps(sorted(json.loads(out)["data"]["rows"], key=repr))


def whole_commands(args: argparse.Namespace, nd: Path, meta: dict, rows: list, notes: list
                   ) -> None:
    """The CLI rows: count-by vs jq, sql vs DuckDB on the file (see the module docstring)."""
    py = sys.executable
    f = args.field
    with tempfile.TemporaryDirectory(prefix="bench-count-cli-") as home:
        env = {**os.environ, "SCRATCH_HOME": home,
               "SCRATCH_LIMITS_MAX_INGEST_BYTES": str(64 << 30),
               "SCRATCH_LIMITS_MAX_WRITE_BYTES": str(4 << 30),
               "SCRATCH_QUOTA_BYTES": str(10**12),
               "SCRATCH_BUDGET_MAX_EXTRACTION_TOKENS": str(10**6),
               "SCRATCH_BUDGET_CONTEXT_WINDOW": str(10**9),
               # the sql row reads the stored file each run (bench_sql_cache.py measures the
               # columnar copies)
               "SCRATCH_SQL_COPY": "off"}
        with open(nd, "rb") as fh:
            subprocess.run([py, "-m", "scratch", "ingest", "big", "--store-always"], stdin=fh,
                           env=env, check=True, stdout=subprocess.DEVNULL)
        scratch = [py, "-m", "scratch"]
        count_by = [*scratch, "iterate-over", "big", ".", "--count-by", f, "--limit", "1000",
                    "--json"]

        def reset() -> None:
            subprocess.run([*scratch, "budget", "reset"], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            for d in Path(home, "cache", "index").glob("*/counts"):
                shutil.rmtree(d)

        def first() -> tuple[float, bytes]:
            reset()
            return timed(count_by, env=env)

        def later() -> tuple[float, bytes]:
            return timed(count_by, env=env)

        if shutil.which("jq"):
            prog = f"group_by(.{f})|map({{k:.[0].{f},n:length}})"
            jq = lambda: timed(["jq", "-c", "-s", prog, str(nd)])  # noqa: E731
            for label, ours in (("scratch iterate-over --count-by, first (DuckDB scan)", first),
                                ("scratch iterate-over --count-by, later (cached)", later)):
                t_ours, t_jq, o_ours, o_jq = side_by_side(args.reps, ours, jq)
                same = cli_counts(o_ours) == jq_counts(o_jq)
                ratio = t_jq / t_ours
                rows.append((f"{label} vs jq -s group_by", f"{t_ours * 1000:.0f} ms",
                             f"{t_jq * 1000:.0f} ms", f"{ratio:.1f}x faster",
                             "pass" if ratio >= 10 and same else "FAIL"))
                notes.append(f"{label}: {f} over {meta['bytes']:,} bytes, {meta['lines']:,} "
                             f"lines; same counts as jq: {same}")
        else:
            notes.append("jq is not installed: count-by vs jq skipped")

        query = f'SELECT "{f}" AS k, count(*) AS n FROM entry GROUP BY 1 ORDER BY 2 DESC'

        def ours_sql() -> tuple[float, bytes]:
            reset()
            return timed([*scratch, "sql", "big", query, "--json"], env=env)

        t_sql, t_duck, o_sql, o_duck = side_by_side(
            args.reps, ours_sql, lambda: timed([py, "-c", DUCK_CLI, str(nd), f]))
        same = cli_rows(o_sql) == o_duck.decode().strip()
        ratio = t_sql / t_duck
        rows.append(("scratch sql GROUP BY vs DuckDB's query on the file", f"{t_sql * 1000:.0f} ms",
                     f"{t_duck * 1000:.0f} ms", f"{ratio:.2f}x",
                     "pass" if ratio <= 1.5 and same else "FAIL"))
        notes.append(f"scratch sql: same rows as DuckDB: {same}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", type=float, default=1e8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--field", default="PRIORITY")
    ap.add_argument("--data-dir", type=Path, default=HERE / "data")
    ap.add_argument("--commands-only", action="store_true",
                    help="only the whole-command rows (the issue's targets)")
    args = ap.parse_args()
    nd, meta = gen_inputs.ensure("ndjson", int(args.bytes), args.data_dir)
    py = sys.executable
    rows: list[tuple[str, str, str, str, str]] = []
    notes: list[str] = []
    whole_commands(args, nd, meta, rows, notes)
    if args.commands_only:
        _print(rows, notes)
        return

    # count-by vs jq
    cache = Path(tempfile.mkdtemp(prefix="bench-count-"))

    def first() -> tuple[float, bytes]:
        shutil.rmtree(cache / "counts", ignore_errors=True)
        return timed([py, "-c", COUNT, str(nd), args.field, str(cache)])

    def cached() -> tuple[float, bytes]:
        return timed([py, "-c", COUNT, str(nd), args.field, str(cache)])

    if shutil.which("jq"):
        prog = f"group_by(.{args.field})|map({{k:.[0].{args.field},n:length}})"
        jq = lambda: timed(["jq", "-c", "-s", prog, str(nd)])  # noqa: E731
        for label, ours in (("first count-by (DuckDB scan)", first),
                            ("later count-by (cached)", cached)):
            t_ours, t_jq, o_ours, o_jq = side_by_side(args.reps, ours, jq)
            same = json.loads(o_ours) == jq_counts(o_jq)
            ratio = t_jq / t_ours
            rows.append((f"{label} vs jq -s group_by", f"{t_ours * 1000:.0f} ms",
                         f"{t_jq * 1000:.0f} ms", f"{ratio:.1f}x faster",
                         "pass" if ratio >= 10 and same else "FAIL"))
            notes.append(f"{label}: {args.field} over {meta['bytes']:,} bytes, "
                         f"{meta['lines']:,} lines: same counts as jq: {same}")
    else:
        notes.append("jq is not installed: count-by vs jq skipped")

    shutil.rmtree(cache, ignore_errors=True)

    # SQL vs DuckDB's own query
    t_sql, t_duck, o_sql, o_duck = side_by_side(
        args.reps, lambda: timed([py, "-c", SQL, str(nd), args.field]),
        lambda: timed([py, "-c", DUCK, str(nd), args.field]))
    ratio = t_sql / t_duck
    rows.append(("sql GROUP BY vs DuckDB on the file", f"{t_sql * 1000:.0f} ms",
                 f"{t_duck * 1000:.0f} ms", f"{ratio:.2f}x",
                 "pass" if ratio <= 1.5 and o_sql == o_duck else "FAIL"))
    notes.append(f"sql: same rows as DuckDB: {o_sql == o_duck}")

    # log records at index time
    corpus = gen_inputs.corpus_dir()
    log = args.data_dir / f"access-{gen_inputs.label(int(args.bytes))}.log"
    if not log.exists() or log.stat().st_size < args.bytes * 0.9:
        block = (corpus / ACCESS).read_bytes()
        with open(log, "wb") as fh:
            for _ in range(max(1, int(args.bytes // len(block)))):
                fh.write(block)
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "SCRATCH_HOME": home,
               "SCRATCH_LIMITS_MAX_INGEST_BYTES": str(64 << 30),
               "SCRATCH_LIMITS_MAX_WRITE_BYTES": str(4 << 30),
               "SCRATCH_QUOTA_BYTES": str(10**12)}
        reps = iter(range(10**6))
        data = log.read_bytes()

        def ingest(without_records: bool) -> tuple[float, bytes]:
            n = next(reps)
            # other bytes each run: the same bytes would find their index already built
            return timed([py, "-c", INGEST, str(int(without_records)), f"access{n}"],
                         input=data + b"run %d\n" % n, env=env, stderr=subprocess.DEVNULL)

        t_with, t_without, _, _ = side_by_side(args.reps, lambda: ingest(False),
                                               lambda: ingest(True))
    rows.append(("ingest of a 100 MB combined access log, records vs no records",
                 f"{t_with * 1000:.0f} ms", f"{t_without * 1000:.0f} ms",
                 f"{t_with / t_without:.2f}x", "-"))
    notes.append(f"access log: {log.stat().st_size:,} bytes")

    _print(rows, notes)


def _print(rows: list, notes: list) -> None:
    print("| what | scratch | baseline | ratio | result |\n|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()
    for n in notes:
        print(f"- {n}")


if __name__ == "__main__":
    main()
