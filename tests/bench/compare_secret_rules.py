"""Compare the secret-detection candidates on recall, false positives and speed (a script, not
collected by pytest): the figures behind the choice of rule set (see tests/bench/RESULTS.md).

Candidates:
- ``detect-secrets``: Yelp's detect-secrets (every plugin, default filters), line by line
  through its own ``scan_line`` for the labelled samples and ``SecretsCollection.scan_file``
  for corpus files. Not a dependency of scratch: ``pip install detect-secrets==1.5.0`` first
  (the candidate is skipped, and said so, when it is missing).
- ``gitleaks``: gitleaks' rules as ``secretscreen`` ships them, alone, in scratch's engine
  (:mod:`scratch.redact.scan`: RE2, one prefilter pass).
- ``scratch``: the same plus scratch's rules by place (what ingest uses).

Measures:
- recall and false-positive rate on tests/data/secrets/labelled.jsonl (detectors' own test
  fixtures; provenance in tests/data/MANIFEST.md), per source of the samples;
- false positives on the shared corpus (found via ``SCRATCH_CORPUS`` or ../shared/corpus):
  files with a finding and findings, per candidate (the corpus holds a handful of real or
  dummy credentials; tests/bench/redact_corpus.py lists scratch's one by one);
- speed: MB/s over the corpus files (one process, after a warm-up file).

Usage::

    python tests/bench/compare_secret_rules.py [--under k8s,aws,...] [--corpus-limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
LABELLED = REPO / "tests" / "data" / "secrets" / "labelled.jsonl"

Detector = Callable[[bytes], int]  # number of findings in a text


def corpus_files(limit: int | None, under: list[str]) -> list[Path]:
    root = Path(os.environ.get("SCRATCH_CORPUS") or REPO.parent / "shared" / "corpus")
    if not root.is_dir():
        return []
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != "MANIFEST.md"
                   and (not under or any(p.relative_to(root).as_posix().startswith(u)
                                         for u in under)))
    return files[:limit] if limit else files


def scratch_detector(place: bool) -> Detector:
    from scratch.redact.rules import rule_set
    from scratch.redact.scan import scan
    rules = rule_set(place=place)

    def count(data: bytes) -> int:
        found = scan(data, rules=rules)
        hits = len(found.hits)
        if place and found.kube_secret:
            from scratch.redact import kube
            hits += len(kube.find(data)[0])
        return hits

    return count


def detect_secrets_detectors() -> tuple[Detector, Callable[[Path], int]] | None:
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def count(data: bytes) -> int:
        text = data.decode("utf-8", "replace")
        with default_settings():
            return sum(len(list(scan_line(line))) for line in text.splitlines() or [text])

    def count_file(path: Path) -> int:
        with default_settings():
            secrets = SecretsCollection()
            secrets.scan_file(str(path))
            return sum(len(v) for v in secrets.data.values())

    return count, count_file


def recall(detector: Detector, rows: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for source in sorted({str(r["source"]) for r in rows}):
        pos = [r for r in rows if r["source"] == source and r["secret"]]
        neg = [r for r in rows if r["source"] == source and not r["secret"]]
        tp = sum(1 for r in pos if detector(str(r["text"]).encode()) > 0)
        fp = sum(1 for r in neg if detector(str(r["text"]).encode()) > 0)
        out[source] = {"positives": len(pos), "found": tp,
                       "recall": round(tp / len(pos), 3) if pos else None,
                       "negatives": len(neg), "flagged": fp,
                       "fp_rate": round(fp / len(neg), 3) if neg else None}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus-limit", type=int, default=None,
                        help="only the first N corpus files (in path order)")
    parser.add_argument("--under", default="",
                        help="only corpus files under these folders (comma-separated), e.g. "
                        "k8s,aws,gcp,azure,github,logs/k8s: detect-secrets takes over 20 "
                        "minutes for the whole corpus")
    args = parser.parse_args()
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    files = corpus_files(args.corpus_limit, [u for u in args.under.split(",") if u])
    candidates: dict[str, tuple[Detector, Callable[[Path], int]]] = {}
    for name, place in (("gitleaks", False), ("scratch", True)):
        det = scratch_detector(place)
        candidates[name] = (det, lambda p, d=det: d(p.read_bytes()))
    ds = detect_secrets_detectors()
    if ds is None:
        print("detect-secrets is not installed: pip install detect-secrets==1.5.0 to compare")
    else:
        candidates["detect-secrets"] = ds
    report: dict[str, object] = {"samples": len(rows), "corpus_files": len(files)}
    for name, (det, det_file) in candidates.items():
        result: dict[str, object] = {"recall": recall(det, rows)}
        if files:
            det_file(files[0])  # warm-up: compile what the candidate compiles on first use
            nbytes = flagged = findings = 0
            started = time.perf_counter()
            for path in files:
                n = det_file(path)
                nbytes += path.stat().st_size
                findings += n
                flagged += n > 0
            took = time.perf_counter() - started
            result["corpus"] = {"files_flagged": flagged, "findings": findings,
                                "seconds": round(took, 2),
                                "mb_per_s": round(nbytes / 1e6 / took, 2)}
        report[name] = result
        print(name, json.dumps(result), flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
