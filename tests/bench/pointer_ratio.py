"""Pointer size against output size for every corpus file (a script, not collected by pytest).

Every file under ../shared/corpus (except MANIFEST.md and LICENSE files) is ingested with
``store_always`` into a temporary store. Per file it prints:

- ``raw``: tokens of the bytes as received (what the agent would have read),
- ``stored``: tokens of the stored form (JSON is pretty-printed, so it can differ),
- ``pointer``: tokens of the rendered pointer (the real tokenizer, as ingest prints it),
- ``json``: tokens of the pointer's data as ``--json`` prints it (without the ~60-token
  envelope around it): the data of an ingest sized as ``--json`` sizes it (the CLI's JSON
  rendering), which shows the data and fits it on its own, not the data of the text's level,
- ``ratio``: pointer / raw, and whether the size invariant holds (pointer < raw; for raw
  >= 50k tokens also pointer <= 1% of raw and <= 800), for the printed pointer and for the
  ``--json`` one (data plus envelope). Files under the default threshold
  (5120 tokens) are marked ``small``: ingest would pass them through.

Then a summary. Usage::

    python tests/bench/pointer_ratio.py [--encoding o200k_base] [--corpus DIR] [--json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = Path(os.environ.get("SCRATCH_CORPUS") or REPO.parent / "shared" / "corpus")
SKIP_NAMES = {"MANIFEST.md", "LICENSE"}
DEFAULT_MIN_TOKENS = 5120
ENVELOPE = 60  # tokens of the --json envelope around the data (measured 56-58)


def check(raw: int, pointer: int) -> bool | None:
    """The size rule against the output as received; None below the default threshold, where
    ingest passes the output through (``--store-always`` on a 60-token file cannot win)."""
    if raw < DEFAULT_MIN_TOKENS:
        return None
    if pointer >= raw:
        return False
    if raw >= 50_000:
        return pointer <= raw // 100 and pointer <= 800
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--encoding", default=None, help="tokenizer override (default: config)")
    ap.add_argument("--json", action="store_true", help="one JSON object per file, then summary")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    files = sorted(p for p in args.corpus.rglob("*") if p.is_file() and p.name not in SKIP_NAMES)

    with tempfile.TemporaryDirectory(prefix="scratch-ratio-") as home:
        os.environ["SCRATCH_HOME"] = home
        os.environ.setdefault("XDG_CACHE_HOME", str(Path(home) / "xdg-cache"))
        sys.path.insert(0, str(REPO))
        import orjson

        from scratch.answers.capture.ingest import IngestOptions, ingest
        from scratch.answers.kernel.context import Context
        from scratch.cli.render import JsonEnvelope
        from scratch.cli.spelling import shell_line
        from scratch.tokens import count_stream, count_text

        ctx = Context.build(encoding=args.encoding)
        spec = ctx.encoding()
        rows = []
        started = time.perf_counter()
        for i, path in enumerate(files):
            rel = path.relative_to(args.corpus).as_posix()
            raw_bytes = path.read_bytes()
            raw = count_stream([raw_bytes], spec)
            t0 = time.perf_counter()
            with open(path, "rb") as fh:
                res = ingest(ctx, fh, IngestOptions(name=f"c{i}", store_always=True))
            took = time.perf_counter() - t0
            data = res.data
            if "format" not in data:  # passed through (an embedded document's own name, ...)
                print(f"{rel:70} not stored: passed through")
                continue
            # the data as --json prints it: sized by the JSON rendering (the same content again:
            # the same entry, "already stored"), its calls shell lines
            with open(path, "rb") as fh:
                shown = ingest(ctx, fh, IngestOptions(name=f"c{i}", store_always=True),
                               rendering=JsonEnvelope()).data
            json_tokens = count_text(orjson.dumps(shown, default=shell_line).decode(), spec)
            row = {"file": rel, "bytes": len(raw_bytes), "format": data["format"], "raw": raw,
                   "stored": data["tokens"], "pointer": data["pointer_tokens"],
                   "json": json_tokens,
                   "ratio": data["pointer_tokens"] / raw if raw else None,
                   "ok": check(raw, max(data["pointer_tokens"], json_tokens + ENVELOPE)),
                   "seconds": round(took, 3)}
            rows.append(row)
            if args.json:
                print(orjson.dumps(row).decode())
            else:
                ratio = f"{row['ratio']:.4f}" if row["ratio"] is not None else "-"
                verdict = {True: "ok", False: "OVER", None: "small"}[row["ok"]]
                print(f"{rel:70} {row['format']:8} raw {raw:>9,} stored {row['stored']:>9,} "
                      f"pointer {row['pointer']:>4} json {json_tokens:>4} ratio {ratio} "
                      f"{verdict} {took:.2f}s")
        elapsed = time.perf_counter() - started

    big = [r for r in rows if r["raw"] >= 50_000]
    judged = [r for r in rows if r["ok"] is not None]
    ratios = [r["ratio"] for r in judged]
    summary = {
        "files": len(rows),
        "encoding": spec.name,
        "raw_tokens": sum(r["raw"] for r in rows),
        "stored_tokens": sum(r["stored"] for r in rows),
        "pointer_tokens": sum(r["pointer"] for r in rows),
        "pointer_max": max(r["pointer"] for r in rows),
        "json_max": max(r["json"] for r in rows),
        "judged_files": len(judged),
        "small_files": len(rows) - len(judged),
        "ratio_median": statistics.median(ratios),
        "ratio_max": max(ratios),
        "big_files": len(big),
        "big_ratio_max": max((r["ratio"] for r in big), default=None),
        "big_pointer_max": max((r["pointer"] for r in big), default=None),
        "violations": [r["file"] for r in rows if r["ok"] is False],
        "seconds": round(elapsed, 1),
    }
    if args.json:
        print(orjson.dumps({"summary": summary}).decode())
    else:
        print()
        print(f"files {summary['files']} ({summary['encoding']}), {summary['seconds']} s")
        print(f"raw tokens {summary['raw_tokens']:,}, stored {summary['stored_tokens']:,}, "
              f"pointers {summary['pointer_tokens']:,} "
              f"({summary['pointer_tokens'] / summary['raw_tokens']:.4%} of raw)")
        print(f"pointer tokens max {summary['pointer_max']} (--json data max "
              f"{summary['json_max']}); over {summary['judged_files']} "
              f"files at or above {DEFAULT_MIN_TOKENS} raw tokens: ratio median "
              f"{summary['ratio_median']:.4f}, max {summary['ratio_max']:.4f} "
              f"({summary['small_files']} smaller files would pass through)")
        print(f"outputs >= 50k tokens: {summary['big_files']}, worst ratio "
              f"{summary['big_ratio_max']:.4%}, biggest pointer {summary['big_pointer_max']}")
        print(f"size invariant violations ({len(summary['violations'])}): "
              + (", ".join(summary["violations"]) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
