"""Benchmark: the records analysis of each log format at index time, against a floor.

Not collected by pytest. Run::

    python tests/bench/bench_logformats.py [--mb 20]

For each format a file of about ``--mb`` MB is made from its real sample in tests/data/logformats
(the header once, the data lines repeated; the combined access log from a line of the existing
test suite's shape). Measured in one run, side by side, best of three:

- floor: reading the file a block at a time and splitting each line on whitespace (what any
  parse of every line costs at least);
- records: :func:`scratch.index.logrecords.analyze_records` (detection, one parse of every
  line, type and facet counts), as ingest runs it.

Printed: seconds, MB/s and the ratio records / floor per format, and each format's time per
byte over the combined access log's (the format the index already parsed before these were
added), the two measured alternately in the same rounds.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data" / "logformats"
SAMPLES = {"zeek": "zeek_conn.log", "w3c": "iis_w3c.log", "alb": "aws_elb_access.log",
           "elb": "aws_classic_elb.log", "s3": "s3_access.log", "cef": "cef.log",
           "auditd": "audit_rhel7.log"}
COMBINED = ('10.0.0.{i} - - [01/Jan/2024:00:00:{s:02d} +0000] "GET /p{p} HTTP/1.1" {st} {b} '
            '"-" "agent {a}"')


def make(fmt: str, mb: int, out: Path) -> int:
    if fmt == "combined":
        header: list[str] = []
        body = [COMBINED.format(i=i % 7, s=i % 60, p=i % 5, st=[200, 404, 500][i % 3],
                                b=i * 3, a=i % 2) for i in range(300)]
    else:
        from scratch.formats.logformats import detect
        lines = (DATA / SAMPLES[fmt]).read_text(encoding="utf-8").splitlines()
        found, _, _ = detect(lines)
        assert found is not None and found.name == fmt, (fmt, found)
        header = [ln for ln in lines if ln.startswith("#")][:12] if found.comment else []
        body = [ln for ln in lines if ln.strip() and found.parse(ln) is not None]
    chunk = ("\n".join(body) + "\n").encode()
    n = 0
    with open(out, "wb") as f:
        f.write(("\n".join(header) + "\n").encode() if header else b"")
        while n < mb * 1_000_000:
            f.write(chunk)
            n += len(chunk)
    return out.stat().st_size


def floor(path: Path) -> float:
    from scratch.index.logrecords import _line_lists
    t = time.perf_counter()
    for lines in _line_lists(path):
        for line in lines:
            line.split()
    return time.perf_counter() - t


def records(path: Path) -> tuple[float, str | None]:
    from scratch.index.logrecords import analyze_records
    t = time.perf_counter()
    info, _ = analyze_records(path)
    return time.perf_counter() - t, info.get("format")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--mb", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base_path = Path(tmp) / "combined.log"
        base_size = make("combined", args.mb, base_path)
        for fmt in SAMPLES:
            path = Path(tmp) / f"{fmt}.log"
            size = make(fmt, args.mb, path)
            # interleaved, so a busy machine slows both sides of each ratio alike
            f, r, b = [], [], []
            for _ in range(args.rounds):
                f.append(floor(path))
                t, got = records(path)
                assert got == fmt, (fmt, got)
                r.append(t)
                b.append(records(base_path)[0])
            rows.append((fmt, size, min(f), min(r), min(b)))
            path.unlink()
    print(f"records analysis at index time, ~{args.mb} MB per format, best of {args.rounds}, "
          "each format measured alternately with the combined access log")
    print(f"{'format':10} {'MB':>6} {'floor s':>8} {'records s':>10} {'MB/s':>7} "
          f"{'x floor':>8} {'x combined':>11}")
    for fmt, size, f, r, b in rows:
        per_byte = (r / size) / (b / base_size)
        print(f"{fmt:10} {size / 1e6:6.1f} {f:8.2f} {r:10.2f} {size / 1e6 / r:7.1f} "
              f"{r / f:8.1f} {per_byte:11.2f}")


if __name__ == "__main__":
    main()
