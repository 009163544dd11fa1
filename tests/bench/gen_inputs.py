"""Benchmark inputs built from real corpus shapes (a script, not collected by pytest).

Three kinds of input, each at a big and a small (~100 KB) size:

- ``pods``: a Kubernetes ``PodList`` (``kubectl get pods -A -o json`` shape, laid out like the
  corpus file: 2-space indent) whose items are the pods of ``k8s/honeycomb/pods.json``
  repeated, each copy with its own name, uid, resourceVersion and creation time so no two
  items are equal. ``pods4``: the same pods laid out as kubectl itself prints JSON (4-space
  indent), which ingest re-indents (the 2-space file is stored as it is).
- ``log``: the Loghub samples (``logs/loghub/*.log``) concatenated in name order, over and over,
  cut at a line end once the size is reached.
- ``ndjson``: journald (``journalctl -o json``) and Go ``log/slog`` records modelled on
  ``ndjson/journald_*.ndjson`` and ``ndjson/go-slog-app-log.head10000.ndjson``, with
  increasing cursors and timestamps. The big one (~1 GB) is streamed, never stored: run
  ``python gen_inputs.py ndjson --bytes N`` and pipe its stdout.

Files are written as ``<kind>-<size>.<ext>`` plus ``<file>.meta.json`` (generator version,
bytes, lines, and for pods the item count); :func:`ensure` regenerates a file only when its
meta is missing or stale, so runs after the first reuse the cache. Output is deterministic
for a given size. Usage::

    python tests/bench/gen_inputs.py pods|log --bytes N --out FILE
    python tests/bench/gen_inputs.py ndjson --bytes N [--out FILE]   # stdout without --out
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("SCRATCH_CORPUS") or REPO.parent / "shared" / "corpus")
VERSION = 1  # bump when the generated content changes, so cached files are rebuilt

PODS = Path("k8s/honeycomb/pods.json")
LOGHUB = Path("logs/loghub")
JOURNALD = [Path("ndjson/journald_ip-10-0-9-206.ndjson"),
            Path("ndjson/journald_ip-10-0-9-16.ndjson")]
SLOG = Path("ndjson/go-slog-app-log.head10000.ndjson")

try:  # orjson is a dependency of scratch; the stdlib fallback keeps this usable without it
    import orjson

    def _dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)
except ImportError:  # pragma: no cover
    def _dumps(obj: Any) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def corpus_dir() -> Path:
    """The corpus, or exit with a message saying where it was expected."""
    if not (CORPUS / PODS).is_file():
        sys.exit(f"benchmark inputs need the shared corpus at {CORPUS} (../shared/corpus "
                 "relative to the repository root); it is not there")
    return CORPUS


# -- PodList ---------------------------------------------------------------------------------

def _pod_copy(template: dict[str, Any], i: int, indent: int = 2) -> str:
    """Template ``template`` as the ``i``-th pod: only identity fields change, so the shape
    (and the token mix) stays that of the real listing."""
    meta = template["metadata"]
    saved = {k: meta.get(k) for k in ("name", "uid", "resourceVersion", "creationTimestamp",
                                      "selfLink")}
    name = f"{saved['name']}-{i:06d}"
    meta["name"] = name
    meta["uid"] = str(uuid.UUID(bytes=hashlib.md5(b"pod%d" % i).digest(), version=4))
    meta["resourceVersion"] = str(48_000_000 + i)
    meta["creationTimestamp"] = (f"2020-{1 + i % 12:02d}-{1 + i % 28:02d}T"
                                 f"{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}Z")
    if saved["selfLink"]:
        meta["selfLink"] = f"/api/v1/namespaces/{meta.get('namespace', 'default')}/pods/{name}"
    text = json.dumps(template, indent=indent, ensure_ascii=False)
    meta.update({k: v for k, v in saved.items() if v is not None})
    return text


def write_pods(target: int, out: BinaryIO, indent: int = 2) -> dict[str, Any]:
    """A PodList of about ``target`` bytes (at least one item); returns its meta."""
    doc = json.loads((corpus_dir() / PODS).read_bytes())
    templates = doc["items"]
    # The corpus file's own layout: 2-space indent, kind/apiVersion/metadata before items.
    pad = b" " * indent
    head = b'{\n%s"kind": "PodList",\n%s"apiVersion": "v1",\n%s"metadata": {},\n%s"items": [\n' \
        % (pad, pad, pad, pad)
    tail = b"\n%s]\n}\n" % pad
    size = len(head) + len(tail)
    out.write(head)
    n = 0
    while True:
        text = _pod_copy(templates[n % len(templates)], n, indent)
        chunk = ("" if n == 0 else ",\n") + "\n".join(" " * 2 * indent + ln
                                                       for ln in text.split("\n"))
        data = chunk.encode()
        if n > 0 and size + len(data) > target:
            break
        out.write(data)
        size += len(data)
        n += 1
    out.write(tail)
    return {"bytes": size, "items": n}


# -- Loghub logs -----------------------------------------------------------------------------

def write_log(target: int, out: BinaryIO) -> dict[str, Any]:
    """Loghub samples concatenated until about ``target`` bytes, cut at a line end."""
    files = sorted((corpus_dir() / LOGHUB).glob("*.log"))
    blobs = []
    for p in files:
        data = p.read_bytes()
        blobs.append(data if data.endswith(b"\n") else data + b"\n")
    size = lines = 0
    while size < target:
        for data in blobs:
            if size + len(data) > target:
                cut = data.rfind(b"\n", 0, target - size) + 1
                data = data[:cut]
            out.write(data)
            size += len(data)
            lines += data.count(b"\n")
            if size >= target or not data:
                break
        if not data:
            break
    return {"bytes": size, "lines": lines}


# -- NDJSON stream ---------------------------------------------------------------------------

def _ndjson_records() -> Iterator[bytes]:
    """Endless journald and slog records, cursors and clocks moving forward."""
    root = corpus_dir()
    journald = [json.loads(line) for p in JOURNALD
                for line in (root / p).read_bytes().splitlines() if line.strip()]
    slog = [json.loads(line) for line in (root / SLOG).read_bytes().splitlines() if line.strip()]
    i = 0
    real = 1_513_184_170_807_859  # microseconds, as journald prints them
    while True:
        for rec in journald[i % 97: i % 97 + 40]:
            i += 1
            real += 1_337
            rec = dict(rec)
            rec["__CURSOR"] = (f"s=ef3d47675fae4bc5a4e1f6b1c06add61;i={i:x};"
                               f"b=256db65d17374efa9df9a9ac902fe05b;t={real:x}")
            rec["__REALTIME_TIMESTAMP"] = str(real)
            rec["__MONOTONIC_TIMESTAMP"] = str(real - 1_513_184_158_998_720)
            yield _dumps(rec)
        for rec in slog[i % 9_000: i % 9_000 + 160]:
            i += 1
            real += 211
            rec = dict(rec)
            secs, micros = divmod(real, 1_000_000)
            rec["time"] = f"2024-04-06T{(secs // 3600) % 24:02d}:{(secs // 60) % 60:02d}:" \
                          f"{secs % 60:02d}.{micros:06d}+09:00"
            yield _dumps(rec)


def write_ndjson(target: int, out: BinaryIO) -> dict[str, Any]:
    """About ``target`` bytes of NDJSON (whole records), written in 1 MB batches."""
    size = lines = 0
    batch: list[bytes] = []
    batch_size = 0
    for rec in _ndjson_records():
        if size + batch_size + len(rec) + 1 > target and (size or batch):
            break
        batch.append(rec)
        batch_size += len(rec) + 1
        if batch_size >= 1 << 20:
            out.write(b"\n".join(batch) + b"\n")
            size += batch_size
            lines += len(batch)
            batch, batch_size = [], 0
    if batch:
        out.write(b"\n".join(batch) + b"\n")
        size += batch_size
        lines += len(batch)
    out.flush()
    return {"bytes": size, "lines": lines}


def write_pods4(target: int, out: BinaryIO) -> dict[str, Any]:
    """:func:`write_pods` as kubectl prints JSON (``json.MarshalIndent`` with 4 spaces)."""
    return write_pods(target, out, indent=4)


WRITERS = {"pods": (write_pods, "json"), "pods4": (write_pods4, "json"), "log": (write_log, "log"),
           "ndjson": (write_ndjson, "ndjson")}


def label(nbytes: int) -> str:
    """``100MB``, ``100KB``, ``1GB``: the size as it appears in file names."""
    for unit, div in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if nbytes >= div and nbytes % div == 0:
            return f"{nbytes // div}{unit}"
    return f"{nbytes}B"


def ensure(kind: str, nbytes: int, data_dir: Path) -> tuple[Path, dict[str, Any]]:
    """The cached input file of ``kind`` at ``nbytes`` and its meta, generated if needed."""
    writer, ext = WRITERS[kind]
    path = data_dir / f"{kind}-{label(nbytes)}.{ext}"
    meta_path = path.with_name(path.name + ".meta.json")
    want = {"version": VERSION, "kind": kind, "target": nbytes}
    try:
        meta = json.loads(meta_path.read_text())
        if all(meta.get(k) == v for k, v in want.items()) and path.stat().st_size == meta["bytes"]:
            return path, meta
    except (OSError, ValueError, KeyError):
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb", buffering=1 << 20) as fh:
        meta = {**want, **writer(nbytes, fh)}
    tmp.replace(path)
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return path, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=sorted(WRITERS))
    ap.add_argument("--bytes", type=float, required=True, help="target size (1e9 = 1 GB)")
    ap.add_argument("--out", type=Path, help="output file (default: stdout)")
    args = ap.parse_args()
    writer, _ = WRITERS[args.kind]
    try:
        if args.out:
            with open(args.out, "wb", buffering=1 << 20) as fh:
                meta = writer(int(args.bytes), fh)
            print(json.dumps(meta), file=sys.stderr)
        else:
            writer(int(args.bytes), sys.stdout.buffer)
            sys.stdout.buffer.flush()
    except BrokenPipeError:  # the reader stopped early (a refused ingest): not our error
        sys.exit(1)


if __name__ == "__main__":
    main()
