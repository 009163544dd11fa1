"""Turning an input stream into the stored content of an entry.

It sits in the index layer, above :mod:`scratch.formats`: normalising ends in the analysis
the index is built from (:mod:`scratch.index.analyze`), while the format rules it applies
(sniffing, JSON text, embedded documents, log lines) import nothing from the index.

Rules:

- The format is ``declared`` (aliases allowed, see :data:`scratch.formats.sniffer.ALIASES`) or
  sniffed from the first :data:`scratch.formats.sniffer.SNIFF_BYTES` bytes.
- JSON is stored in canonical layout (:mod:`scratch.formats.jsontext`: 2-space indent, one
  scalar or bracket per line) with every token verbatim (:mod:`scratch.reindent`:
  numbers and string escapes as written, repeated keys kept in order): only whitespace between
  tokens changes, so line tools work on minified input and nothing the input said is lost.
  ``raw=True`` keeps the bytes as received. The whole document is read and parsed once (the
  only format read into memory). A container of :data:`PARALLEL_BYTES` or more is parsed
  from its canonical text, which has the same tokens, once the input is dropped: the text
  is written and hashed on the other core while the root is parsed, and its big arrays are
  then read back from the stored file a batch at a time, so memory holds neither the input
  nor the text nor the whole value (see :func:`_big_container`).
- Only strict RFC 8259 JSON in UTF-8 is stored as JSON: ``NaN``, ``Infinity``, a BOM, comments,
  trailing commas or invalid UTF-8 make it text (byte-exact), with the reason and position.
- Every other format is copied byte for byte (CRLF, invalid UTF-8 and all) in chunks, in
  constant memory (or, from ingest's spool file, stored as that very file: ``adopt``), then
  analysed from the stored file (:mod:`scratch.index.analyze`) to confirm it: NDJSON lines
  parse, YAML is syntactically valid.
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

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, overload

from scratch.formats.sniffer import SNIFF_BYTES, canonical_format, sniff
from scratch.safefs import write_all

if TYPE_CHECKING:
    from scratch.errors import JsonError
    from scratch.formats.embedded import Embedded
    from scratch.index.analyze import Analysis
    from scratch.index.textitems import Readers
    from scratch.jsonvalues import JSON
    from scratch.reindent import Separators

COPY_CHUNK = 1 << 20
Progress = Callable[[str, int, "int | None"], None]
# told when the stored form of a big JSON document is on disk: its path, git blob id and
# bytes (in parts, joined they are the file; read from the file as they are asked for)
Written = Callable[[Path, str, "Sequence[bytes]"], None]
Whole = Callable[[Path], None]


@dataclass(frozen=True)
class Hooks:
    """What the caller of :func:`normalize` hangs on it, handed down as one: told of progress,
    told when a big JSON document's stored form is whole and when its blob id is known (so
    work on the file starts early), and the spooled file the stored form may become."""

    progress: Progress | None = None
    whole: Whole | None = None
    written: Written | None = None
    adopt: Path | None = None


@dataclass
class Normalized:
    format: str  # what was stored: one of FORMATS
    detected: str  # the declared or sniffed format, before validation
    bytes_in: int
    bytes_out: int
    layout: str  # "canonical" (JSON re-rendered) or "raw" (bytes as received)
    warnings: list[str] = field(default_factory=list)
    parse_error: Mapping[str, JSON] | None = None  # {"message", "line", "column", "offset"}
    embedded: list[Embedded] = field(default_factory=list)
    declared: str | None = None
    analysis: Analysis | None = field(default=None, repr=False)  # for build_index(analysis=...)
    blob: str | None = None  # git blob id of what was written, when hashed while writing
    adopted: bool = False  # ``dest`` is another name of the ``adopt`` file given (no copy)


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


def _where(err: Mapping[str, JSON] | None) -> str:
    if not err or err.get("line") is None:
        return ""
    return f" at line {err['line']}, column {err['column']}"


def normalize(source: BinaryIO, dest: Path, *, declared: str | None = None, raw: bool = False,
              progress: Progress | None = None, written: Written | None = None,
              adopt: Path | None = None, whole: Whole | None = None) -> Normalized:
    """Read ``source`` to the end, write the stored form to ``dest`` and describe it.

    ``written(dest, blob, parts)``, when given, is called once a big JSON document's stored
    form is complete on disk, before its items are parsed and its analysis is built: ingest
    starts writing the git object and the line pass then, from ``parts`` (the file's, read
    as they are asked for). It is not called for other content. ``whole(dest)``, when given,
    is called just before, as soon as the stored form is complete on disk (its blob id still
    being hashed): what reads the file but needs no blob id starts then.

    ``adopt``: the file ``source`` reads from its start (ingest's spool: private, and written
    by nothing else). When the stored form is exactly its bytes (content stored as received,
    or JSON already in the canonical layout), ``dest`` becomes another name of that file
    instead of a copy of it (``Normalized.adopted``): the caller removes the other name before
    storing ``dest``. ``dest`` itself is never written in place (a new file replaces it), so
    a later call with the same ``dest`` cannot write into the adopted file."""
    dest = Path(dest)
    declared_fmt = canonical_format(declared) if declared else None
    prefix, ended = _read_prefix(source)
    detected = declared_fmt or sniff(prefix, complete=ended)
    if progress is not None:
        progress("read", len(prefix), None)
    if detected == "json":
        return _normalize_json(source, dest, prefix, ended, detected, declared_fmt, raw,
                               Hooks(progress, whole, written, adopt))
    span = None if ended or adopt is None else _file_span(source, prefix)
    # stored as received: the input's own file is the stored one when it can be
    adopted = span is not None and span[1] == 0 and _adopted(adopt, source, dest)
    if span is not None and adopted:
        bytes_in = span[2]
        if progress is not None:
            progress("read", bytes_in, None)
    else:
        bytes_in = _copy(source, dest, prefix, ended, progress)
    result = Normalized(detected, detected, bytes_in, bytes_in, "raw", declared=declared_fmt,
                        adopted=adopted)
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
    with open(_create(dest), "wb") as out:
        for block in _blocks(source, prefix, ended, progress):
            out.write(block)
            n += len(block)
    return n


def _read_all(source: BinaryIO, prefix: bytes, ended: bool, progress: Progress | None
              ) -> tuple[bytes, int | None]:
    """The whole document, and where it starts in ``source`` when it can be read again.

    A seekable source (ingest's spool file) is read back from its start in one call: one
    buffer of the right size, rather than blocks joined into another copy."""
    origin: int | None = None
    try:
        if not ended and source.seekable():
            origin = source.tell() - len(prefix)
    except (OSError, ValueError):
        origin = None
    if origin is None or origin < 0:
        return b"".join(_blocks(source, prefix, ended, progress)), None
    source.seek(origin)
    data = source.read()
    if progress is not None:
        progress("read", len(data), None)
    return data, origin


def _normalize_json(source: BinaryIO, dest: Path, prefix: bytes, ended: bool, detected: str,
                    declared: str | None, raw: bool, hooks: Hooks) -> Normalized:
    from scratch.errors import JsonError
    from scratch.formats.jsontext import parse_value
    from scratch.formats.nesting import MAX_DEPTH
    from scratch.reindent import BIG_INT, TOO_BIG, reindent_separated

    span = None if raw or ended else _file_span(source, prefix)
    if span is not None and span[2] >= PARALLEL_BYTES:
        # a big input in a file (ingest's spool): re-indented from the file, whose pages are
        # dropped as they are passed, so memory never holds the input and its body together
        done = _from_file(source, span, dest, detected, declared, hooks)
        if done is not None:
            return done
        # not JSON, too deep to lay out, or a scalar: read whole below (rare; read again)
    data, origin = _read_all(source, prefix, ended, hooks.progress)
    n = len(data)
    limit = AMPLIFICATION * n + (1 << 20)
    try:
        # one pass: validation, layout and the depth bound (nested deeper than MAX_DEPTH is
        # text, found before anything parses it recursively; the layout of a document ``d``
        # deep would take ``d**2`` bytes, which ``limit`` bounds meanwhile)
        body, lines, flags, seps = reindent_separated(data, limit=limit, max_depth=MAX_DEPTH)
    except JsonError as exc:
        return _not_json(data, dest, detected, declared, exc)
    if (n >= PARALLEL_BYTES and not raw and origin is not None and not flags & TOO_BIG
            and body[:1] in (b"{", b"[")):
        # a big container: from here on the canonical text stands for the input (same
        # tokens, so the same value), and the input is read again only if parsing fails
        del data  # this frame holds the only reference: the input's memory goes now
        box = [body]
        del body  # and the body's, once _big_container lets it go
        return _big_container(n, source, origin, box, lines, flags, seps, dest, detected,
                              declared, hooks)
    try:
        value, engine = parse_value(data, big_ints=bool(flags & BIG_INT))
    except JsonError as exc:
        return _not_json(data, dest, detected, declared, exc)
    return _finish_json(data, body, lines, flags, value, engine, dest, detected, declared, raw,
                        hooks.progress)


def _file_span(source: BinaryIO, prefix: bytes) -> tuple[int, int, int] | None:
    """(file descriptor, offset, length) of the rest of the document when ``source`` is a
    regular file read from a known place (the prefix already read included), else None."""
    import stat

    try:
        fd = source.fileno()
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not source.seekable():
            return None
        origin = source.tell() - len(prefix)
    except (OSError, ValueError, AttributeError):
        return None
    if origin < 0 or info.st_size <= origin:
        return None
    return fd, origin, info.st_size - origin


def _from_file(source: BinaryIO, span: tuple[int, int, int], dest: Path, detected: str,
               declared: str | None, hooks: Hooks) -> Normalized | None:
    """A big JSON container re-indented straight from its file (see
    :func:`scratch.reindent.reindent_file`) and stored by :func:`_big_container`; None when
    it is not one (invalid, too deep to lay out, a scalar): the caller reads it whole."""
    from scratch.errors import JsonError
    from scratch.formats.nesting import MAX_DEPTH
    from scratch.reindent import TOO_BIG, reindent_file_separated

    fd, origin, n = span
    try:
        body, lines, flags, seps = reindent_file_separated(
            fd, origin, n, limit=AMPLIFICATION * n + (1 << 20), max_depth=MAX_DEPTH)
    except JsonError:
        return None
    if flags & TOO_BIG or body[:1] not in (b"{", b"["):
        return None
    if hooks.progress is not None:
        hooks.progress("read", n, None)
    box = [body]
    del body  # _big_container holds the only reference: it can let the body go
    return _big_container(n, source, origin, box, lines, flags, seps, dest, detected, declared,
                          hooks)


def _not_json(data: bytes, dest: Path, detected: str, declared: str | None,
              exc: JsonError) -> Normalized:
    """Input that does not parse as JSON: stored as text, byte for byte, with the reason."""
    from scratch.index.analyze import analyze

    _write_file(dest, data)
    n = len(data)
    err = {"message": exc.reason, "line": exc.line, "column": exc.column, "offset": exc.offset}
    result = Normalized("text", detected, n, n, "raw", declared=declared, parse_error=err)
    result.warnings.append(f"content does not parse as JSON{_where(err)}: {exc.reason}; "
                           "stored as text")
    result.analysis = analyze(dest, "text")
    return result


def _finish_json(data: bytes, body: bytes, lines: int, flags: int, value: JSON, engine: str,
                 dest: Path, detected: str, declared: str | None, raw: bool,
                 progress: Progress | None) -> Normalized:
    """Store and analyse a parsed document of any size (the big container case aside)."""
    from scratch.formats.embedded import find_embedded
    from scratch.index.analyze import analyze
    from scratch.reindent import SAME, TOO_BIG

    n = len(data)
    if not isinstance(value, (dict, list)) and declared is None:
        # A bare scalar is not worth a structure; keep it as the text it is.
        _write_file(dest, data)
        result = Normalized("text", detected, n, n, "raw", declared=declared)
        result.analysis = analyze(dest, "text")
        return result
    warnings: list[str] = []
    if flags & TOO_BIG and not raw:
        warnings.append(f"kept as received: nested so deeply that the canonical layout would "
                        f"take more than {AMPLIFICATION} times its {n:,} bytes")
    if raw or flags & TOO_BIG:
        layout = "canonical" if flags & SAME else "raw"
        body, end = data, b""
    else:
        layout, end = "canonical", b"\n"
    _write_file(dest, body, end)
    size = len(body) + len(end)
    del data, body
    embedded, limited = find_embedded(value)
    if limited:
        warnings.append("embedded-document search stopped at its limit; some may be missed")
    if progress is not None:
        progress("analyze", 0, size)
    json_analysis: Analysis = analyze(dest, "json", value=value, engine=engine, layout=layout,
                                      lines=lines if layout == "canonical" else None)
    warnings.extend(json_analysis.warnings)
    return Normalized("json", detected, n, size, json_analysis.layout or layout,
                      warnings=warnings, embedded=embedded, declared=declared,
                      analysis=json_analysis)


PARALLEL_BYTES = 1 << 20  # from this size the stored form is written beside the parsing
# the canonical layout may take this many times the input (plus a MiB); deeper nesting grows
# with the square of the depth, and is kept as received instead
AMPLIFICATION = 16


def _big_container(n: int, source: BinaryIO, origin: int, box: list[bytes], lines: int,
                   flags: int, seps: Separators | None, dest: Path, detected: str,
                   declared: str | None, hooks: Hooks) -> Normalized:
    """A big JSON container whose canonical ``body`` exists (``box``'s only item, taken out:
    the caller holds no other reference): store it, parse it, analyse it. ``seps``: the
    body's separators as the re-indent pass found them (when it did). ``hooks.adopt`` (see
    :func:`normalize`): when the input is the body already (:data:`scratch.reindent.SAME`),
    ``dest`` becomes another name of that file and nothing is written.

    The input (``n`` bytes) is not held: the caller dropped it, or re-indented it from its
    file without holding it (:func:`_from_file`). Two threads write the body to ``dest`` and
    hash it as a git blob, without the GIL, while the root is parsed with its big arrays left
    as text (:func:`scratch.index.textitems.prepare_lazily`). Then those arrays' items are
    parsed a batch at a time and handed to the analysis: cut from the body in memory while
    its file is still being written (the parse does not wait for the write), then read from
    ``dest`` (same bytes at the same offsets) as the body goes; and as soon as the file is
    whole ``hooks.whole(dest)`` is told, from a thread, so the line pass
    (:class:`scratch.index.lines.LinesAhead`) reads the file on the other core during the
    parse, then once the hash is done too ``hooks.written(dest, blob, parts)``, so the object
    write does, with memory holding none of the body. A body
    that cannot be read so (no big array, an item orjson cannot read) is parsed whole by
    orjson: memory then holds the body and the value, and ``written`` is told before that
    parse. The canonical analysis is kept when its line count agrees with the text's (no
    repeated key); else it is built from the stored text (see
    :func:`scratch.index.analyze.analyze_json`). Nested too deeply for both parsers, the input
    is read again from ``source`` and stored as text, its error placed as received.
    """
    import hashlib

    from scratch.beside import Beside
    from scratch.errors import JsonError
    from scratch.formats.embedded import find_embedded
    from scratch.formats.jsontext import no_gc, parse_value
    from scratch.index.analyze import analyze_json
    from scratch.index.textitems import NotLazy, Unwritten, lazy_parts, scan_lazily
    from scratch.reindent import BIG_INT, KEY_REPEAT, SAME

    body: bytes | None = box.pop()
    assert body is not None
    size = len(body) + 1
    # the blob id and the file, each in one call that releases the GIL throughout (any
    # Python step in those threads would wait for the parse's C calls to finish)
    digest = hashlib.sha1(b"blob %d\x00" % size)
    adopted = (hooks.adopt is not None and flags & SAME != 0 and origin == 0
               and _adopted(hooks.adopt, source, dest))
    fd = -1 if adopted else _create(dest)
    try:
        hashing = Beside(digest.update, body)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    # the input's file is the stored one (adopted), else the body is written to ``dest``
    writing: Beside[None] | None = None
    if not adopted:
        try:
            writing = Beside(_write_parts, fd, body, b"\n")  # which closes ``fd``
        except BaseException:
            hashing.wait()
            os.close(fd)
            raise

    def file_written(wait: bool = False) -> bool:
        # whether ``dest`` holds the whole body (with ``wait``, once it does); raises what
        # its write raised
        if writing is None:
            return True
        if not wait and writing.running():
            return False
        writing.result()
        return True

    try:
        lazy = None if flags & BIG_INT else _prepare_lazily(body, seps)
    except BaseException:
        hashing.wait()
        if writing is not None:
            writing.wait()
        raise

    def announce() -> str:
        # the blob id once the hash and the file are done; ``written`` is told it then, and
        # ``whole`` as soon as the file is
        file_written(wait=True)
        if hooks.whole is not None:
            hooks.whole(dest)
        hashing.result()
        digest.update(b"\n")
        done = digest.hexdigest()
        if hooks.written is not None:  # the object write, from the file
            hooks.written(dest, done, FileSlices(dest, size))
        return done

    value: JSON = None
    failed = False
    engine = "orjson"
    if lazy is not None:
        # the items are cut from the body in memory until its file is whole (the parse
        # need not wait for the write), then read from the file
        unwritten = Unwritten(body, file_written)
        for items in lazy_parts(lazy):
            items.detach(dest, unwritten)
        del unwritten
        body = None  # the hash's and the write's threads, and ``unwritten`` until the file is
        # whole, hold it: then its memory goes
        # ``written`` is told from a thread, as soon as the file and the blob id are done
        announcing = Beside(announce)
        try:
            with no_gc():
                scan_lazily(lazy, _readers(), not flags & KEY_REPEAT)
            value = lazy
        except NotLazy:  # an item orjson cannot read: the text is parsed whole after all
            file_written(wait=True)
            body = _stored_body(dest, size)
        finally:
            announcing.wait()
        blob = announcing.result()
    else:
        blob = announce()
    if body is not None:
        value, engine, failed = _parse_whole(body, flags)
    if failed:  # nested too deeply for both parsers: placed in the input as received
        # (what ``written`` started reads the canonical text, from the file unlinked here:
        # ingest drops it, as the Normalized it gets has no blob)
        assert body is not None
        dest.unlink()
        source.seek(origin)
        data = source.read()
        try:
            value, engine = parse_value(data, big_ints=bool(flags & BIG_INT))
        except JsonError as exc:
            return _not_json(data, dest, detected, declared, exc)
        return _finish_json(data, body, lines, flags, value, engine, dest, detected,
                            declared, False, hooks.progress)
    del body
    embedded, limited = find_embedded(value)
    warnings: list[str] = []
    if limited:
        warnings.append("embedded-document search stopped at its limit; some may be missed")
    if hooks.progress is not None:
        hooks.progress("analyze", 0, size)
    with no_gc():
        analysis = analyze_json(dest, value, engine, "canonical", lines)
    warnings.extend(analysis.warnings)
    return Normalized("json", detected, n, size, analysis.layout or "canonical",
                      warnings=warnings, embedded=embedded, declared=declared,
                      analysis=analysis, blob=blob, adopted=adopted)


def _stored_body(dest: Path, size: int) -> bytes:
    """The canonical body back from the file it was written to (``size`` bytes with its
    final newline)."""
    with open(dest, "rb") as f:
        data = f.read()
    if len(data) != size:
        raise OSError(f"{dest} is not the {size:,} bytes written")
    return data[:-1]


class FileSlices(Sequence[bytes]):
    """The ``size`` bytes of the file ``path`` as consecutive slices of :data:`SLICE_BYTES`,
    each read when asked for (joined they are the file): memory holds the slice in use. The
    file is opened here: what is read is that file's, even if ``path`` is replaced meanwhile."""

    def __init__(self, path: Path, size: int) -> None:
        self.path, self.size = path, size
        self.fd: int | None = os.open(path, os.O_RDONLY)

    def __del__(self) -> None:
        fd, self.fd = getattr(self, "fd", None), None
        if fd is not None:
            os.close(fd)

    def __len__(self) -> int:
        return -(-self.size // SLICE_BYTES)

    @overload
    def __getitem__(self, i: int) -> bytes: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes]: ...

    def __getitem__(self, i: int | slice) -> bytes | Sequence[bytes]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("slice index out of range")
        start = i * SLICE_BYTES
        want = min(SLICE_BYTES, self.size - start)
        assert self.fd is not None
        parts: list[bytes] = []
        got = 0
        while got < want:
            block = os.pread(self.fd, want - got, start + got)
            if not block:
                raise OSError(f"{self.path} is shorter than {self.size:,} bytes")
            parts.append(block)
            got += len(block)
        return parts[0] if len(parts) == 1 else b"".join(parts)


SLICE_BYTES = 8 << 20


def _parse_whole(body: bytes, flags: int) -> tuple[JSON, str, bool]:
    """(value, engine, failed) of a big canonical text parsed whole: orjson, else the
    standard library; ``failed`` when it is nested too deeply for both."""
    import orjson

    from scratch.errors import JsonError
    from scratch.formats.jsontext import freeze_if_big, no_gc, parse_value
    from scratch.reindent import BIG_INT

    value: JSON = None
    if not flags & BIG_INT:
        try:
            with no_gc():
                value = orjson.loads(body)
                if isinstance(value, (dict, list)):
                    # frozen before the GC is back: else its first pass walks all of them
                    freeze_if_big(len(body))
        except orjson.JSONDecodeError:
            value = None  # JSON only the standard library reads (1e400, lone surrogates)
    if isinstance(value, (dict, list)):
        return value, "orjson", False
    try:
        value, engine = parse_value(body, big_ints=bool(flags & BIG_INT))
    except JsonError:
        return None, "json", True
    return value, engine, False


def _prepare_lazily(body: bytes, seps: Separators | None) -> JSON:
    """:func:`scratch.index.textitems.prepare_lazily` at the analysis' big-array size: the
    whole value is never held (memory), and it is walked once (time)."""
    from scratch.formats.jsontext import no_gc
    from scratch.index.jsonskel import BIG_ARRAY
    from scratch.index.textitems import prepare_lazily

    with no_gc():
        return prepare_lazily(body, BIG_ARRAY, known=seps)


def _readers() -> Readers:
    """What the items of a big array are handed to as they are parsed: the analysis'."""
    from scratch.index.jsonskel import BIG_ARRAY
    from scratch.index.kube import KubeTally
    from scratch.index.schema import Union
    from scratch.index.textitems import Readers

    return Readers(Union, KubeTally, BIG_ARRAY)


def _write_file(dest: Path, *parts: bytes) -> None:
    """``dest`` (created anew) holding ``parts`` one after the other."""
    _write_parts(_create(dest), *parts)


def _create(dest: Path) -> int:
    """A new empty file at ``dest`` (0600), open for writing: what was there is unlinked
    first, never emptied, since it may be another name of the input (see :func:`_adopted`)."""
    dest.unlink(missing_ok=True)
    return os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                   0o600)


def _same_file(source: BinaryIO, path: Path) -> bool:
    """Whether ``source`` reads the file ``path`` (False for a stream in memory)."""
    try:
        return os.path.samestat(os.fstat(source.fileno()), os.stat(path))
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return False


def _adopted(adopt: Path | None, source: BinaryIO, dest: Path) -> bool:
    """Whether ``dest`` is now another name of the file ``adopt``, which must be the file
    ``source`` reads (it holds exactly the stored form already). False where the file
    system cannot link it there: then the caller writes ``dest``."""
    if adopt is None or not _same_file(source, adopt):
        return False
    try:
        dest.unlink(missing_ok=True)
        os.link(adopt, dest)
    except OSError:
        return False
    return True


def _write_parts(fd: int, *parts: bytes) -> None:
    """``parts`` one after the other into ``fd``, which is then closed (in a thread: one
    write releases the GIL for a whole part)."""
    try:
        for part in parts:
            write_all(fd, part)
    finally:
        os.close(fd)


