"""Benchmark: count_stream vs tiktoken single-thread on ~100 MB of JSON built from the corpus.

Run from the repository root:  python tests/bench/bench_tokens.py [--mb 100] [--encoding o200k_base]

Prints MB/s of tiktoken ``encode_ordinary`` on the whole text (one thread, Encoding already
built), MB/s of ``count_stream`` over 1 MB reads (warm: tokenizer loaded; cold: in a fresh
process, load included), the ratio, and whether the counts are identical. Not collected by
pytest (no ``test_`` prefix). Needs ../shared/corpus.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("SCRATCH_CORPUS") or REPO.parent / "shared" / "corpus")


def build_sample(target_mb: int) -> bytes:
    files = sorted(p for p in CORPUS.rglob("*.json") if p.is_file())
    if not files:
        sys.exit(f"no JSON files under {CORPUS}")
    parts: list[bytes] = []
    size = 0
    while size < target_mb * 1_000_000:
        for p in files:
            data = p.read_bytes()
            if not data.endswith(b"\n"):
                data += b"\n"
            parts.append(data)
            size += len(data)
            if size >= target_mb * 1_000_000:
                break
    return b"".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--encoding", default="o200k_base",
                    choices=["o200k_base", "cl100k_base", "gemma3"])
    args = ap.parse_args()

    sys.path.insert(0, str(REPO))
    import scratch.tokens as T

    data = build_sample(args.mb)
    mb = len(data) / 1e6
    spec = T.resolve_encoding(encoding=args.encoding)
    tok = T.get_tokenizer(spec.base)
    print(f"sample: {mb:.1f} MB of JSON from {CORPUS.name}/ ({args.encoding})")

    text = data.decode("utf-8")
    if spec.base == "gemma3":
        sp = tok.processor  # type: ignore[attr-defined]
        ref_name = "sentencepiece (64 KB pieces)"
        from scratch.tokens.cuts import split_text

        t0 = time.perf_counter()
        ref = sum(len(ids) for ids in (sp.encode(p) for p in split_text(text, 1 << 16)))
        ref_s = time.perf_counter() - t0
    else:
        enc = tok.encoding  # type: ignore[attr-defined]
        ref_name = "tiktoken encode_ordinary, 1 thread"
        t0 = time.perf_counter()
        ref = len(enc.encode_ordinary(text))
        ref_s = time.perf_counter() - t0
    del text
    print(f"{ref_name}: {ref:,} tokens in {ref_s:.2f} s = {mb / ref_s:.1f} MB/s")

    def reads() -> list[bytes]:
        return [data[i:i + (1 << 20)] for i in range(0, len(data), 1 << 20)]

    T.count_stream([b"warm up\n"], spec)
    if spec.base != "gemma3":
        tok.fast_counter()  # type: ignore[attr-defined]
    chunks = reads()
    t0 = time.perf_counter()
    got = T.count_stream(chunks, spec)
    warm_s = time.perf_counter() - t0
    print(f"count_stream (warm): {got:,} tokens in {warm_s:.2f} s = {mb / warm_s:.1f} MB/s "
          f"= {ref_s / warm_s:.1f}x, identical: {got == ref}")

    with tempfile.NamedTemporaryFile(suffix=".json") as fh:
        fh.write(data)
        fh.flush()
        code = ("import sys, time; t0 = time.perf_counter(); import scratch.tokens as T\n"
                f"spec = T.resolve_encoding(encoding={args.encoding!r})\n"
                "f = open(sys.argv[1], 'rb')\n"
                "n = T.count_stream(iter(lambda: f.read(1 << 20), b''), spec)\n"
                "print(n, time.perf_counter() - t0)")
        out = subprocess.run([sys.executable, "-c", code, fh.name], capture_output=True,
                             text=True, check=True, cwd=REPO).stdout.split()
    cold_n, cold_s = int(out[0]), float(out[1])
    print(f"count_stream (cold process, file reads, load included): {cold_s:.2f} s = "
          f"{mb / cold_s:.1f} MB/s = {ref_s / cold_s:.1f}x, identical: {cold_n == ref}")


if __name__ == "__main__":
    main()
