"""Redact every file of the shared corpus and report, per file, what was redacted and by which
rule (a script, not collected by pytest).

The corpus is ``../shared/corpus`` beside the repository (as tests/conftest.py finds it), or
``$SCRATCH_CORPUS``. For each file: its bytes, the values redacted per rule, and whether the
redacted bytes equal the original. For the Kubernetes, cloud CLI and GitHub files every finding
is listed (rule, line, key or path, the value's length; never the value), since those must come
back byte-identical unless a value really is a credential. Usage::

    python tests/bench/redact_corpus.py [--markdown FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

LISTED = ("k8s", "aws", "gcp", "azure", "github", "yaml", "mcp")  # findings listed one by one


def corpus() -> Path:
    found = Path(os.environ.get("SCRATCH_CORPUS") or REPO.parent / "shared" / "corpus")
    if not found.is_dir():
        sys.exit(f"the corpus is not at {found} (set SCRATCH_CORPUS)")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", type=Path, help="also write the report here")
    args = parser.parse_args()
    from scratch.redact import redact_bytes
    from scratch.redact.rules import rule_set
    root = corpus()
    key = b"\x00" * 32  # a fixed key: the report's markers are reproducible
    lines: list[str] = [f"Rule set: {rule_set().source} (+ scratch's rules by place)", "",
                        "| file | bytes | identical | redacted (by rule) |",
                        "| --- | ---: | --- | --- |"]
    details: list[str] = []
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != "MANIFEST.md")
    total = changed = values = 0
    started = time.perf_counter()
    nbytes = 0
    for path in files:
        data = path.read_bytes()
        nbytes += len(data)
        done = redact_bytes(data, key)
        rel = path.relative_to(root).as_posix()
        total += 1
        red = done.redaction
        if red.count:
            changed += 1
            values += red.count
        rules = ", ".join(f"{r} {n}" for r, n in red.by_rule().items()) or "-"
        if red.count or rel.split("/")[0] in LISTED:
            lines.append(f"| `{rel}` | {len(data):,} | {'yes' if done.data == data else 'no'} "
                         f"| {rules} |")
        if red.count and rel.split("/")[0] in LISTED:
            for f in red.findings:
                where = f.get("path") or f.get("key") or ""
                details.append(f"- `{rel}` line {f['line']}: {f['rule']}"
                               + (f" at `{where}`" if where else ""))
        for miss in red.missed:
            details.append(f"- `{rel}`: not found in the text: {miss}")
    took = time.perf_counter() - started
    summary = (f"{total} files ({nbytes / 1e6:.1f} MB) in {took:.1f} s: {changed} changed, "
               f"{values} values redacted; files not listed above (logs, csv, json suites...) "
               "came back byte-identical")
    report = "\n".join([summary, "", *lines, "", "Findings in the Kubernetes, cloud, GitHub, "
                        "YAML and MCP files:", "", *(details or ["- none"])]) + "\n"
    print(report)
    if args.markdown:
        args.markdown.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
