"""Benchmark: normalise + index a ~100 MB PodList vs ``git hash-object -w`` on the same bytes.

Not collected by pytest. Run::

    python tests/bench/bench_index.py [--mb 100] [--keep DIR]

The PodList is built from the real pods of the corpus (k8s/honeycomb/pods.json), each copy
renamed so items differ. Both the minified and the pretty-printed form are measured; token
counts are o200k_base through ``scratch.tokens``. Figures are wall-clock seconds on this
machine; max RSS is for the whole process.
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("SCRATCH_CORPUS") or ROOT.parent / "shared" / "corpus")


def make_podlist(mb: int) -> dict[str, object]:
    src = orjson.loads((CORPUS / "k8s/honeycomb/pods.json").read_bytes())
    items = src["items"]
    out = {k: v for k, v in src.items() if k != "items"}
    res = []
    size = 0
    i = 0
    while size < mb * 1_000_000:
        item = copy.deepcopy(items[i % len(items)])
        item["metadata"]["name"] = f"{item['metadata'].get('name', 'pod')}-{i}"
        item["metadata"]["uid"] = f"uid-{i:08d}"
        res.append(item)
        size += len(orjson.dumps(item, option=orjson.OPT_INDENT_2))
        i += 1
    out["items"] = res
    return out


def git_hash_object(path: Path, work: Path) -> float:
    """Seconds for ``git hash-object -w`` of ``path`` into a fresh repository (a real write:
    an object already present would only be hashed)."""
    repo = work / f"repo-{time.monotonic_ns()}"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    t = time.perf_counter()
    subprocess.run(["git", "hash-object", "-w", "--no-filters", str(path)], cwd=repo,
                   check=True, capture_output=True)
    elapsed = time.perf_counter() - t
    shutil.rmtree(repo, ignore_errors=True)
    return elapsed


def bench(path: Path, work: Path, label: str) -> dict[str, float]:
    from scratch.index import EntryIndex, build_index
    from scratch.index.normalizer import normalize

    dest = work / f"{label}.stored"
    idx = work / f"{label}.index"
    shutil.rmtree(idx, ignore_errors=True)
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        n = normalize(f, dest)
    t1 = time.perf_counter()
    ix = build_index(dest, idx, n.format, bases=["o200k_base"], analysis=n.analysis)
    t2 = time.perf_counter()
    tokens = ix.total_tokens("o200k_base")
    ix.close()
    git_in = git_hash_object(path, work)
    git_out = git_hash_object(dest, work)
    # cold-ish reads through a fresh reader
    t3 = time.perf_counter()
    ix = EntryIndex.open(dest, idx)
    ix.read_lines(1, 50)
    mid = ix.line_count // 2
    ix.read_lines(mid, mid + 49)
    ix.range_tokens(1, ix.line_count, "o200k_base")
    ix.value_at(["items", len(ix.item_starts(["items"])) // 2, "metadata", "name"])
    t4 = time.perf_counter()
    ix.close()
    row = {"bytes_in": n.bytes_in / 1e6, "bytes_out": n.bytes_out / 1e6,
           "normalize_s": t1 - t0, "index_s": t2 - t1, "total_s": t2 - t0,
           "git_in_s": git_in, "git_out_s": git_out, "reads_s": t4 - t3,
           "tokens": float(tokens or 0)}
    print(f"{label}: in {row['bytes_in']:.1f} MB -> stored {row['bytes_out']:.1f} MB, "
          f"{int(row['tokens']):,} tokens; normalize {row['normalize_s']:.2f}s + index "
          f"{row['index_s']:.2f}s = {row['total_s']:.2f}s; git hash-object -w: input "
          f"{git_in:.2f}s, stored {git_out:.2f}s; ratio {row['total_s'] / git_out:.2f}x "
          f"(stored bytes), {row['total_s'] / git_in:.2f}x (input bytes); 4 reads {row['reads_s'] * 1000:.1f} ms", flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print("corpus not found", file=sys.stderr)
        return 1
    work = args.keep or Path(tempfile.mkdtemp(prefix="scratch-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        doc = make_podlist(args.mb)
        minified = work / "pods.min.json"
        pretty = work / "pods.pretty.json"
        minified.write_bytes(orjson.dumps(doc))
        pretty.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        print(f"PodList of {len(doc['items']):,} pods")  # type: ignore[arg-type]
        del doc
        bench(pretty, work, "pretty")
        bench(minified, work, "minified")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"max RSS {rss:.0f} MB")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
