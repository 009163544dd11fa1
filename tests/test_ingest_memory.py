"""Ingest streams: a ~200 MB NDJSON output is stored with a bounded resident set.

The CLI runs in a child of a small wrapper process, which reports
``getrusage(RUSAGE_CHILDREN).ru_maxrss`` once the child has exited: the peak of the scratch
process (and of the git processes it ran), nothing else. About 10 s on two shared cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson

LIMIT_KB = 256 * 1024
TARGET_BYTES = 200 * 1024 * 1024

WRAPPER = """
import resource, subprocess, sys
with open(sys.argv[1], "rb") as src, open(sys.argv[2], "wb") as out:
    code = subprocess.run(sys.argv[3:], stdin=src, stdout=out).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def make_ndjson(path: Path) -> tuple[int, int]:
    """~200 MB of varied log-like records (a pool of 2,000 shapes, renumbered)."""
    levels = ["INFO", "WARN", "ERROR", "DEBUG"]
    pool = []
    for i in range(2000):
        rec = {"ts": f"2026-11-30T07:{i % 60:02d}:{(i * 7) % 60:02d}.{i % 1000:03d}Z",
               "level": levels[i % 4], "svc": f"svc-{i % 37}", "req": 0,
               "msg": f"request {i} for /api/v1/items/{i * 31 % 9973} took {i % 997} ms",
               "user": {"id": i * 13 % 5000, "region": ["eu", "us", "ap"][i % 3]},
               "tags": [f"t{i % 11}", f"t{i % 7}"], "detail": "lorem ipsum dolor " * (i % 40)}
        pool.append(rec)
    lines = 0
    size = 0
    with open(path, "wb", buffering=1 << 20) as fh:
        while size < TARGET_BYTES:
            block = []
            for rec in pool:
                rec["req"] = lines
                block.append(orjson.dumps(rec))
                lines += 1
            data = b"\n".join(block) + b"\n"
            fh.write(data)
            size += len(data)
    return size, lines


def test_ingest_of_200mb_ndjson_stays_under_256mb_rss(tmp_path: Path, scratch_home: Path) -> None:
    src = tmp_path / "big.ndjson"
    out = tmp_path / "out.json"
    size, lines = make_ndjson(src)
    try:
        env = {**os.environ, "SCRATCH_HOME": str(scratch_home)}
        r = subprocess.run(
            [sys.executable, "-c", WRAPPER, str(src), str(out),
             sys.executable, "-m", "scratch", "ingest", "--tool", "big", "--json"],
            capture_output=True, text=True, env=env, timeout=300)
        code, max_rss_kb = map(int, r.stdout.split())
        assert code == 0, r.stderr
        p = json.loads(out.read_bytes())["data"]
        assert (p["format"], p["bytes"], p["lines"]) == ("ndjson", size, lines)
        assert p["array"]["length"] == lines
        stored = scratch_home / "agents" / "default" / "files" / p["name"]
        assert stored.stat().st_size == size
        print(f"\ningest of {size:,} bytes ({lines:,} lines): max RSS {max_rss_kb:,} KB")
        assert max_rss_kb < LIMIT_KB
    finally:
        src.unlink(missing_ok=True)
        for f in (scratch_home / "agents").rglob("*"):
            if f.is_file() and f.stat().st_size > 1 << 20:
                f.unlink()
