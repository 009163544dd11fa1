"""Turning an input stream into the stored content of an entry.

Rules:

- The format is ``declared`` (aliases allowed, see :data:`ALIASES`) or sniffed from the first
  :data:`scratch.formats.sniffer.SNIFF_BYTES` bytes.
- JSON is stored in canonical layout (:mod:`scratch.formats.jsontext`: 2-space indent, one
  scalar or bracket per line) with every token verbatim (:mod:`scratch.reindent`:
  numbers and string escapes as written, repeated keys kept in order): only whitespace between
  tokens changes, so line tools work on minified input and nothing the input said is lost.
  ``raw=True`` keeps the bytes as received. The whole document is read and parsed once (the
  only format read into memory).
- Only strict RFC 8259 JSON in UTF-8 is stored as JSON: ``NaN``, ``Infinity``, a BOM, comments,
  trailing commas or invalid UTF-8 make it text (byte-exact), with the reason and position.
- Every other format is copied byte for byte (CRLF, invalid UTF-8 and all) in chunks, in
  constant memory, then analysed from the stored file (:mod:`scratch.index.analyze`) to
  confirm it: NDJSON lines parse, YAML is syntactically valid.
- Content that does not parse as its declared or sniffed format is stored as ``text``
  (byte-exact) with a warning naming the parse error's line and column; the position is also
  in :attr:`Normalized.parse_error`. That covers truncated JSON and JSON nested too deeply to
  parse.
- Embedded documents in JSON string values are reported (:mod:`scratch.formats.embedded`).

:attr:`Normalized.analysis` carries the parsed structure to ``build_index(analysis=...)`` so
the content is not parsed twice. Progress callbacks get ``(phase, done_bytes, total_or_None)``
with phase ``"read"`` (input consumed) or ``"analyze"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from scratch.errors import UsageError
from scratch.formats.sniffer import FORMATS, SNIFF_BYTES, sniff

COPY_CHUNK = 1 << 20
ALIASES = {"jsonl": "ndjson", "json-lines": "ndjson", "jsonlines": "ndjson", "yml": "yaml",
           "txt": "text", "md": "markdown", "logs": "log", "plain": "text"}
Progress = Callable[[str, int, "int | None"], None]
Written = Callable[[Path], None]  # told when the stored form is complete on disk


@dataclass
class Normalized:
    format: str  # what was stored: one of FORMATS
    detected: str  # the declared or sniffed format, before validation
    bytes_in: int
    bytes_out: int
    layout: str  # "canonical" (JSON re-rendered) or "raw" (bytes as received)
    warnings: list[str] = field(default_factory=list)
    parse_error: dict[str, Any] | None = None  # {"message", "line", "column", "offset"}
    embedded: list[Any] = field(default_factory=list)  # scratch.formats.embedded.Embedded
    declared: str | None = None
    analysis: Any = field(default=None, repr=False)  # for build_index(analysis=...)
    blob: str | None = None  # git blob id of what was written, when hashed while writing


def canonical_format(name: str) -> str:
    """A format name or alias -> its canonical name; ``invalid_argument`` if unknown."""
    fmt = ALIASES.get(name.lower(), name.lower())
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {name!r}; use one of {', '.join(FORMATS)}",
                         format=name, allowed=list(FORMATS))
    return fmt


def _read_prefix(source: BinaryIO) -> tuple[bytes, bool]:
    """Up to SNIFF_BYTES from ``source`` (pipes return short reads) and whether it ended."""
    parts: list[bytes] = []
    n = 0
    while n < SNIFF_BYTES:
        block = source.read(SNIFF_BYTES - n)
        if not block:
            return b"".join(parts), True
        parts.append(block)
        n += len(block)
    return b"".join(parts), False


def _where(err: dict[str, Any] | None) -> str:
    if not err or err.get("line") is None:
        return ""
    return f" at line {err['line']}, column {err['column']}"


def normalize(source: BinaryIO, dest: Path, *, declared: str | None = None, raw: bool = False,
              progress: Progress | None = None, written: Written | None = None) -> Normalized:
    """Read ``source`` to the end, write the stored form to ``dest`` and describe it.

    ``written(dest)``, when given, is called (from any thread) once a big JSON document's
    stored form is complete on disk, while its analysis is still being built: ingest starts
    writing the git object then. It is not called for other content."""
    dest = Path(dest)
    declared_fmt = canonical_format(declared) if declared else None
    prefix, ended = _read_prefix(source)
    detected = declared_fmt or sniff(prefix, complete=ended)
    if progress is not None:
        progress("read", len(prefix), None)
    if detected == "json":
        return _normalize_json(source, dest, prefix, ended, detected, declared_fmt, raw, progress,
                               written)
    bytes_in = _copy(source, dest, prefix, ended, progress)
    result = Normalized(detected, detected, bytes_in, bytes_in, "raw", declared=declared_fmt)
    if detected == "binary" or bytes_in == 0:
        if bytes_in == 0:
            result.format = "text"
        return result
    from scratch.index.analyze import analyze

    if progress is not None:
        progress("analyze", 0, bytes_in)
    analysis = analyze(dest, detected)
    if not analysis.ok:
        err = analysis.error
        result.warnings.append(f"content does not parse as {detected}{_where(err)}: "
                               f"{(err or {}).get('message')}; stored as text")
        result.parse_error = err
        result.format = "text"
        analysis = analyze(dest, "text")
    result.warnings.extend(analysis.warnings)
    result.analysis = analysis
    return result


def _blocks(source: BinaryIO, prefix: bytes, ended: bool,
            progress: Progress | None) -> Iterator[bytes]:
    """The already-read prefix, then the rest of ``source`` block by block (with progress)."""
    yield prefix
    n = len(prefix)
    while not ended:
        block = source.read(COPY_CHUNK)
        if not block:
            break
        n += len(block)
        if progress is not None:
            progress("read", n, None)
        yield block


def _copy(source: BinaryIO, dest: Path, prefix: bytes, ended: bool,
          progress: Progress | None) -> int:
    n = 0
    with open(dest, "wb") as out:
        for block in _blocks(source, prefix, ended, progress):
            out.write(block)
            n += len(block)
    return n


def _normalize_json(source: BinaryIO, dest: Path, prefix: bytes, ended: bool, detected: str,
                    declared: str | None, raw: bool, progress: Progress | None,
                    written: Written | None = None) -> Normalized:
    from scratch.errors import JsonError
    from scratch.formats.embedded import find_embedded
    from scratch.formats.jsontext import parse_value
    from scratch.index.analyze import Analysis, analyze
    from scratch.reindent import BIG_INT, TOO_BIG, reindent

    data = b"".join(_blocks(source, prefix, ended, progress))
    n = len(data)
    limit = AMPLIFICATION * n + (1 << 20)
    early: Analysis | None = None
    blob: str | None = None  # set when the worker wrote (and hashed) the canonical form
    try:
        if n >= PARALLEL_BYTES and not raw:
            body, lines, flags, value, engine, early, blob = _parse_then_reindent(
                data, limit, dest, progress, written)
        else:
            body, lines, flags = reindent(data, limit=limit)
            value, engine = parse_value(data, big_ints=bool(flags & BIG_INT))
    except JsonError as exc:
        dest.write_bytes(data)
        err = {"message": exc.reason, "line": exc.line, "column": exc.column,
               "offset": exc.offset}
        result = Normalized("text", detected, n, n, "raw", declared=declared, parse_error=err)
        result.warnings.append(f"content does not parse as JSON{_where(err)}: {exc.reason}; "
                               "stored as text")
        result.analysis = analyze(dest, "text")
        return result
    if not isinstance(value, (dict, list)) and declared is None:
        # A bare scalar is not worth a structure; keep it as the text it is.
        dest.write_bytes(data)
        result = Normalized("text", detected, n, n, "raw", declared=declared)
        result.analysis = analyze(dest, "text")
        return result
    warnings: list[str] = []
    if flags & TOO_BIG and not raw:
        warnings.append(f"kept as received: nested so deeply that the canonical layout would "
                        f"take more than {AMPLIFICATION} times its {n:,} bytes")
    if raw or flags & TOO_BIG:
        layout = "canonical" if not flags & TOO_BIG and len(data) == len(body) + 1 \
            and data.startswith(body) and data.endswith(b"\n") else "raw"
        body, end = data, b""
    else:
        layout, end = "canonical", b"\n"
    if blob is None or layout != "canonical":
        blob = None
        with open(dest, "wb") as f:
            f.write(body)
            f.write(end)
    size = len(body) + len(end)
    del data, body
    embedded, limited = find_embedded(value)
    if limited:
        warnings.append("embedded-document search stopped at its limit; some may be missed")
    if progress is not None:
        progress("analyze", 0, size)
    json_analysis: Analysis
    if early is not None and layout == "canonical" and _lines_of(early) == lines:
        json_analysis = early  # built while the text was re-indented, and it agrees with it
    else:
        del early
        json_analysis = analyze(dest, "json", value=value, engine=engine, layout=layout,
                                lines=lines if layout == "canonical" else None)
    warnings.extend(json_analysis.warnings)
    return Normalized("json", detected, n, size, json_analysis.layout or layout,
                      warnings=warnings, embedded=embedded, declared=declared,
                      analysis=json_analysis, blob=blob)


PARALLEL_BYTES = 1 << 20  # from this size the re-indenting runs beside the analysis
# the canonical layout may take this many times the input (plus a MiB); deeper nesting grows
# with the square of the depth, and is kept as received instead
AMPLIFICATION = 16


def _lines_of(analysis: Any) -> int | None:
    """The line count the canonical skeleton of an analysis gives the document."""
    b = analysis.builder
    return b.recs[0][8] if b is not None and b.recs else None


def _parse_then_reindent(data: bytes, limit: int, dest: Path, progress: Progress | None,
                         written: Written | None = None
                         ) -> tuple[bytes, int, int, Any, str, Any, str | None]:
    """(body, lines, flags, value, engine, analysis or None, blob or None) of a big document.

    orjson parses first; then the C re-indenter (which releases the GIL) runs on another core
    while this one builds the structural analysis from the value. The analysis is kept only
    if the text turns out valid, with no integer beyond 64 bits (orjson made it a float) and
    the same line count as the value's layout (no repeated key); else it is built again.
    Parsing before re-indenting keeps orjson's peak memory and the body apart.

    When orjson read a container (so the canonical body is what will be stored), the worker
    also writes it to ``dest`` with its final newline, hashes it as a git blob (both release
    the GIL) and calls ``written``, all during the analysis; ``blob`` is then that id.
    """
    import hashlib
    import threading

    import orjson

    from scratch.formats.jsontext import freeze_if_big, no_gc, parse_value
    from scratch.index.analyze import analyze_json
    from scratch.reindent import BIG_INT, TOO_BIG, reindent

    quick: Any = None
    try:
        with no_gc():
            quick = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass  # invalid, or JSON only the stdlib reads: the re-indenter tells which
    container = isinstance(quick, (dict, list))
    out: list[Any] = []

    def work() -> None:
        try:
            result = reindent(data, limit=limit)
            out.append(result)
            body, _, flags = result
            if container and not flags & TOO_BIG:
                with open(dest, "wb") as f:
                    f.write(body)
                    f.write(b"\n")
                digest = hashlib.sha1(b"blob %d\x00" % (len(body) + 1))
                digest.update(body)
                digest.update(b"\n")
                out.append(digest.hexdigest())
                if written is not None:
                    written(dest)
        except BaseException as exc:  # handed to the caller below
            out.append(exc)

    thread = threading.Thread(target=work, name="scratch-reindent")
    thread.start()
    early = None
    try:
        if container:
            if progress is not None:
                progress("analyze", 0, len(data))
            with no_gc():
                early = analyze_json(dest, quick, "orjson", "canonical")
    finally:
        thread.join()
    for item in out:
        if isinstance(item, BaseException):
            raise item
    body, lines, flags = out[0]
    blob = out[1] if len(out) > 1 else None
    if quick is not None and not flags & BIG_INT:
        freeze_if_big(len(data))
        return body, lines, flags, quick, "orjson", early, blob
    del quick, early
    value, engine = parse_value(data, big_ints=bool(flags & BIG_INT))
    return body, lines, flags, value, engine, None, blob
