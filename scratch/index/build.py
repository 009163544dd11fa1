"""Building an index directory for one stored version (layout: :mod:`scratch.index.files`).

The build writes into a sibling temporary directory and renames it into place, so readers
see either no index or a complete one. Two processes building the same index at once both
succeed: the second finds the first's directory and keeps it.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from scratch.errors import IndexInvalid
from scratch.index import files as F
from scratch.index.analyze import Analysis, analyze
from scratch.index.lines import CountLines, LinesAhead, default_count_lines, run_line_pass

Progress = Callable[[str, int, "int | None"], None]


def _write_arrays(path: Path, secs: list[array[int]], code: str) -> list[list[int]]:
    """Write ``secs`` one after another as ``code`` items; their [offset, length] spans."""
    spans = []
    off = 0
    with open(path, "wb") as f:
        for arr in secs:
            if arr.typecode != code:
                arr = array(code, arr)
            arr.tofile(f)
            spans.append([off, len(arr)])
            off += len(arr)
    return spans


def _write_sections(d: Path, analysis: Analysis, meta: F.IndexMeta) -> None:
    b = analysis.builder
    sec32: list[array[int]] = list(b.u32) if b is not None else []
    sec64: list[array[int]] = list(b.u64) if b is not None else []
    named: dict[str, int] = {}
    for name, arr in analysis.sections.items():
        named[name] = len(sec32)
        sec32.append(arr)
    meta["named"] = named
    meta["sections32"] = _write_arrays(d / F.U32, sec32, "I")
    meta["sections64"] = _write_arrays(d / F.U64, sec64, "Q")
    if b is not None:
        (d / F.NODES).write_bytes(b.pack())
        (d / F.KEYS).write_bytes(bytes(b.keys))
        meta["nodes"] = len(b)
    else:
        meta["nodes"] = 0


def build_index(content_path: Path, index_dir: Path, fmt: str, *, bases: Sequence[str] = (),
                count_lines: CountLines | None = None, progress: Progress | None = None,
                analysis: Analysis | None = None, ahead: LinesAhead | None = None) -> Any:
    """Analyse ``content_path`` as ``fmt`` and write its index to ``index_dir``.

    ``analysis`` is what :func:`scratch.index.normalizer.normalize` computed (saves a second
    parse); ``bases`` the encodings whose per-line token counts to store; ``ahead`` the line pass
    already under way on the content in memory (used when it counts those bases with the
    default counter). Returns the opened :class:`scratch.index.entry.EntryIndex`.
    """
    from scratch.index.entry import EntryIndex

    content_path = Path(content_path)
    index_dir = Path(index_dir)
    requested = fmt
    if analysis is None or analysis.format != fmt:
        analysis = analyze(content_path, fmt)
    warnings = list(analysis.warnings)
    if not analysis.ok:
        err = analysis.error or {}
        warnings.append(f"content does not parse as {fmt} ({err.get('message')}); indexed as text")
        fmt = "text"
        analysis = analyze(content_path, "text")
    if fmt == "log":  # records of a known line format: scratch.index.logrecords
        from scratch.index.logrecords import add_records
        add_records(analysis, content_path)
    if count_lines is not None:
        ahead = None  # counted another way
    if bases and count_lines is None:
        count_lines = default_count_lines()
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = index_dir.with_name(f".{index_dir.name}.build-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmp.mkdir()
    try:
        size = content_path.stat().st_size
        done = ahead.take() if ahead is not None and ahead.bases == tuple(bases) else None
        if done is not None:
            # the pass was made from memory meanwhile: its files are moved in
            lp, lines_path, token_paths = done
            os.replace(lines_path, tmp / F.LINES)
            for base, path in token_paths.items():
                os.replace(path, tmp / F.tokens_file(base))
            if progress is not None:
                progress("index", size, size)
        else:
            token_outs = {base: open(tmp / F.tokens_file(base), "w+b")  # noqa: SIM115
                          for base in bases}
            try:
                with open(tmp / F.LINES, "wb") as lines_out:
                    lp = run_line_pass(content_path, lines_out, token_outs, count_lines,
                                       progress)
            finally:
                for out in token_outs.values():
                    out.close()
        meta: F.IndexMeta = {
            "scratch_index": F.INDEX_FORMAT,
            "format": fmt,
            "requested_format": requested,
            "layout": analysis.layout,
            "engine": analysis.engine,
            "bytes": size,
            "line_count": lp.line_count,
            "byteorder": sys.byteorder,
            "fingerprint": F.fingerprint(content_path, size),
            "warnings": warnings,
        }
        _write_sections(tmp, analysis, meta)
        import orjson

        (tmp / F.INFO).write_bytes(F.dump_info(analysis.info))
        meta["files"] = {name: (tmp / name).stat().st_size
                         for name in (F.LINES, F.INFO, F.NODES, F.KEYS, F.U32, F.U64)
                         if (tmp / name).exists()}
        F.write_atomic(tmp / F.META, orjson.dumps(meta))
        _install(tmp, index_dir, content_path, requested)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return EntryIndex.open(content_path, index_dir, requested)


def _install(tmp: Path, index_dir: Path, content_path: Path, fmt: str) -> None:
    from scratch.index.entry import EntryIndex

    for _ in range(3):
        try:
            os.rename(tmp, index_dir)
            return
        except OSError:
            if not index_dir.exists():
                continue
        try:  # someone else built it (or a stale/corrupt one is in the way)
            EntryIndex.open(content_path, index_dir, fmt).close()
            return
        except IndexInvalid:
            stale = index_dir.with_name(f".{index_dir.name}.stale-{uuid.uuid4().hex[:8]}")
            try:
                os.rename(index_dir, stale)
            except OSError:
                continue
            if os.path.islink(stale):
                os.unlink(stale)  # a symlink placed there: it goes, not what it points at
            else:
                shutil.rmtree(stale, ignore_errors=True)
    os.rename(tmp, index_dir)
