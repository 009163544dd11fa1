"""One streaming pass over stored content: line start offsets and per-line token prefix sums.

Definitions (shared with :mod:`scratch.index.reader`):

- A line ends with ``\\n`` (a ``\\r`` before it belongs to the line); the last line may lack
  it. ``line_count`` = number of ``\\n`` + 1 if the content does not end with ``\\n`` (0 for
  empty content).
- ``lines.bin``: ``line_count + 1`` native-endian u64 offsets; line ``i`` (1-based) is the
  bytes ``[off[i-1], off[i])`` including its terminator; ``off[line_count]`` is the size.
- The token count of a line is the count of its text *including* its terminator, decoded as
  UTF-8 with each invalid byte as U+FFFD (``scratch.tokens`` rules). Prefix sums
  ``P[0] = 0``, ``P[i] = P[i-1] + count(line i)`` are stored per base encoding.
- The exact token count of the whole content is also stored. Line counts add up to it except
  where a line does not start at a *safe cut* (see ``scratch.tokens.cuts``: the next line
  is blank or starts with ``/``); such runs of lines are counted together once more and the
  difference added, so the total is exact without tokenizing everything twice.

Memory: chunks of about :data:`CHUNK` bytes cut at safe line boundaries; one line longer than
that is held whole.
"""

from __future__ import annotations

import io
import itertools
import operator
import os
import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from scratch.errors import TokenizerError
from scratch.index.files import TOKENS_HEADER, TOKENS_MAGIC

if TYPE_CHECKING:
    import subprocess
    from concurrent.futures import Future, ThreadPoolExecutor

CHUNK = 8 << 20
FORCE_CUT = 64 << 20  # with no safe cut in this much text, cut at any newline (total inexact)

CountLines = Callable[[Sequence[str], str], list[int]]

# A cut after "\n" is safe when the next line starts (after spaces/tabs) with a character that
# is neither whitespace (Unicode) nor "/". Bytes version: ASCII printable except "/" and space,
# or a UTF-8 lead byte that does not start a Unicode whitespace character.
_SAFE_CUT_PATTERN = (
    rb"\n(?=[ \t]*(?:[\x21-\x2e\x30-\x7e]|(?!\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a"
    rb"\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80)[\xc2-\xf4]))")
_safe_cut: re.Pattern[bytes] | None = None  # compiled on first use: readers never cut


def _safe_cut_re() -> re.Pattern[bytes]:
    global _safe_cut
    if _safe_cut is None:
        _safe_cut = re.compile(_SAFE_CUT_PATTERN)
    return _safe_cut


def decode_text(data: bytes) -> str:
    """UTF-8 with one U+FFFD per invalid byte (the token counter's rule)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
        return re.sub("[\udc80-\udcff]", "\ufffd", text)


def iter_file_chunks(f: io.BufferedIOBase, chunk: int = CHUNK
                     ) -> Iterator[tuple[memoryview, bool]]:
    """(piece, cut_safe) pieces of whole lines of ``f``, read ``chunk`` bytes at a time;
    joined they give the stream back exactly. Each is a view of one buffer used again and
    again, good until the next piece is asked for: no new object per read and no join (the
    line pass of a 188 MB file read it in 0.35 s less than so)."""
    buf = bytearray(2 * chunk)
    size = 0  # the bytes not yet handed out, at the buffer's start
    while True:
        if size + chunk > len(buf):  # no cut for a long stretch: a new, bigger buffer (the
            grown = bytearray(max(2 * len(buf), size + chunk))  # old one may be viewed)
            grown[:size] = buf[:size]
            buf = grown
        view = memoryview(buf)
        before = size
        while size < before + chunk:  # as read(chunk): short only at the end
            got = f.readinto(view[size:before + chunk])
            if not got:
                break
            size += got
        block = size > before
        if block and size < chunk and buf.find(b"\n", before, size) < 0:
            continue
        if not size:
            return
        data = view[:size]
        if not block:  # end of input
            yield data, True
            return
        found = _cut_point(data)
        if found is None:
            continue
        cut, safe = found
        yield data[:cut], safe
        if cut < size:  # the rest moves to the front (same length: the buffer keeps its size)
            buf[:size - cut] = buf[cut:size]
        size -= cut


def _cut_point(data: bytes | memoryview) -> tuple[int, bool] | None:
    """Where a chunk of ``data`` (bytes-like) ends: after its last safe cut, searched near the
    end first (``(offset, True)``); else, once ``data`` is :data:`FORCE_CUT` long, after its
    last newline (``(offset, False)``); None: read more before cutting."""
    m = _safe_cut_re().search(data, max(0, len(data) - (1 << 20)))
    if m is None:
        last = None
        for last in _safe_cut_re().finditer(data):  # noqa: B007 - keep the last match
            pass
        m = last
    if m is not None:
        return m.end(), True
    if len(data) >= FORCE_CUT and (after := _after_last_newline(data)):
        return after, False
    return None


def _after_last_newline(data: bytes | memoryview) -> int:
    """The offset just past the last ``\\n`` of a bytes-like object, 0 if it has none."""
    if isinstance(data, bytes):
        return data.rfind(b"\n") + 1
    step = 1 << 16
    for end in range(len(data), 0, -step):
        at = bytes(data[max(0, end - step):end]).rfind(b"\n")
        if at >= 0:
            return max(0, end - step) + at + 1
    return 0


# "\n" followed by a line that is not a safe cut: blank/whitespace-only, or starting with "/"
# or another whitespace character after its indentation.
_UNSAFE_CHARS = (rb"(?:[\n\r/\x0b\x0c\x1c-\x1f]|\xc2[\x85\xa0]|\xe1\x9a\x80"
                 rb"|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80)")
_UNSAFE_BYTES = rb"\n[ \t]*" + _UNSAFE_CHARS
_unsafe_re: dict[bool, re.Pattern[bytes]] = {}


def _unsafe_finder(tight: bool = False) -> re.Pattern[bytes]:
    """The compiled pattern (``re``: re2 reads a bytes pattern as UTF-8, so its ``\\xe2\\x80``
    would not match the bytes of U+2003 and the like, and the total would miss a correction).
    ``tight``: without the blanks between the ``\\n`` and the character, for text with its
    spaces and tabs taken out (it matches there exactly when the pattern matches the text)."""
    found = _unsafe_re.get(tight)
    if found is None:
        found = _unsafe_re[tight] = re.compile(b"\n" + _UNSAFE_CHARS if tight
                                               else _UNSAFE_BYTES)
    return found


try:  # the C line scanner (built with the re-indenter); the pure-Python path below is its twin
    from scratch._reindent import prefix_sums as _c_prefix_sums  # type: ignore[import-not-found, unused-ignore]
    from scratch._reindent import scan_lines as _c_scan_lines  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # pragma: no cover - built without a compiler
    _c_scan_lines = _c_prefix_sums = None

# Distinct line texts remembered with their counts across chunks (per base): pretty-printed
# JSON and logs repeat most of their lines ("},", "\"kind\": \"Pod\","), and a line's count
# depends on its text alone, so each distinct text is counted once. Bounded: short texts only,
# and the memory is forgotten when it holds too many.
CACHE_TEXT_CHARS = 256
CACHE_ENTRIES = 1 << 17


class _Prepared:
    """One chunk's lines for counting: the distinct texts, each line's index into them, and
    the runs of lines joined by unsafe boundaries (first, last; 0-based in the chunk)."""

    __slots__ = ("uniq", "ids", "groups")

    def __init__(self, uniq: list[str], ids: array[int], groups: list[tuple[int, int]]) -> None:
        self.uniq = uniq
        self.ids = ids
        self.groups = groups


def _groups_of(glued: list[int]) -> list[tuple[int, int]]:
    """Runs of lines from the indices of lines glued to the next one."""
    groups: list[tuple[int, int]] = []
    for i in glued:
        if groups and groups[-1][1] == i:
            groups[-1] = (groups[-1][0], i + 1)
        else:
            groups.append((i, i + 1))
    return groups


def scan_chunk(chunk: bytes | memoryview, base: int, texts: bool
               ) -> tuple[array[int], list[str], array[int], list[tuple[int, int]]]:
    """``(ends, uniq, ids, groups)`` of a chunk of whole lines starting at offset ``base``:
    each line's absolute end offset; with ``texts``, the distinct line texts (decoded by
    :func:`decode_text`'s rule) and each line's index into them; the unsafe runs."""
    if _c_scan_lines is None:
        return _scan_chunk_py(bytes(chunk), base, texts)
    raw_ends, uniq, raw_ids, glued = _c_scan_lines(chunk, base, texts)
    ends = array("Q")
    ends.frombytes(raw_ends)
    ids = array("I")
    ids.frombytes(raw_ids)
    for k, t in enumerate(uniq):
        if isinstance(t, bytes):  # not valid UTF-8: one U+FFFD per invalid byte
            uniq[k] = decode_text(t)
    return ends, uniq, ids, _groups_of(glued)


def _scan_chunk_py(chunk: bytes, base: int, texts: bool
                   ) -> tuple[array[int], list[str], array[int], list[tuple[int, int]]]:
    """The pure-Python twin of the C scanner (same results)."""
    parts = chunk.split(b"\n")
    if chunk.endswith(b"\n"):
        parts.pop()
    offs = array("Q", map(operator.add, itertools.accumulate(map(len, parts), initial=base),
                          itertools.count()))
    if not chunk.endswith(b"\n"):
        offs[-1] -= 1  # the last line has no terminator
    uniq: list[str] = []
    ids = array("I")
    if texts:  # each line's index among the distinct lines in the order first seen, as C
        # finds them: equal bytes, decoded once each (most lines of a big output repeat)
        ended = parts if chunk.endswith(b"\n") else parts[:-1]
        index = {line: k for k, line in enumerate(dict.fromkeys(ended))}
        uniq = [decode_text(line + b"\n") for line in index]
        ids = array("I", map(index.__getitem__, ended))
        if len(ended) < len(parts) and parts[-1]:  # the last line, without its terminator
            ids.append(len(uniq))
            uniq.append(decode_text(parts[-1]))
    return offs[1:], uniq, ids, _unsafe_groups(chunk, offs)


def _prefix_sums(ids: array[int], ucounts: array[int], start: int) -> array[int]:
    """``start`` plus the running sum of each line's count, ``ucounts[ids[k]]``."""
    sums = array("Q")
    if _c_prefix_sums is not None:
        sums.frombytes(_c_prefix_sums(ids, ucounts, start))
    else:
        sums.extend(itertools.accumulate(map(ucounts.__getitem__, ids), initial=start))
        del sums[0]
    return sums


class LinePass:
    """Accumulates offsets and token prefix sums chunk by chunk into open files.

    Counting a chunk runs in a worker thread (tokenizers release the GIL) while the next
    chunk is scanned, so scanning and counting overlap on two cores. Each distinct line text
    is counted once (see :data:`CACHE_ENTRIES`).
    """

    def __init__(self, lines_out: IO[bytes] | None, token_outs: Mapping[str, IO[bytes]],
                 count_lines: CountLines | None) -> None:
        self.lines_out = lines_out
        self.token_outs = token_outs
        self.count_lines = count_lines
        self.line_count = 0
        self.offset = 0
        self.totals = {b: 0 for b in token_outs}
        self.corrections = {b: 0 for b in token_outs}
        self.exact = True
        self._known: dict[str, dict[str, int]] = {b: {} for b in token_outs}
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[list[tuple[str, array[int], int]]] | None = None
        if lines_out is not None:
            array("Q", [0]).tofile(lines_out)
        for out in token_outs.values():
            out.write(TOKENS_HEADER.pack(TOKENS_MAGIC, 0, -1, 0))
            array("Q", [0]).tofile(out)

    def feed(self, chunk: bytes | memoryview, cut_safe: bool = True) -> None:
        if not chunk:
            return
        ends, uniq, ids, groups = scan_chunk(chunk, self.offset, bool(self.token_outs))
        if self.lines_out is not None:
            ends.tofile(self.lines_out)
        if self.token_outs:
            prepared = _Prepared(uniq, ids, groups)
            self._drain()  # the totals the new chunk's sums continue from are now final
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(1, thread_name_prefix="scratch-count")
            self._pending = self._pool.submit(self._count, prepared, dict(self.totals))
        self.exact = self.exact and cut_safe
        self.line_count += len(ends)
        self.offset += len(chunk)

    def _count(self, prepared: _Prepared, starts: dict[str, int]
               ) -> list[tuple[str, array[int], int]]:
        """Per base: the chunk's prefix sums (continuing ``starts``) and its correction."""
        assert self.count_lines is not None
        out = []
        uniq, ids = prepared.uniq, prepared.ids
        for base in self.token_outs:
            known = self._known[base]  # only this (one) worker thread touches it
            new = [t for t in uniq if t not in known]
            fresh = dict(zip(new, self.count_lines(new, base), strict=True)) if new else {}
            got = known.get
            ucounts = array("Q", [fresh[t] if (c := got(t)) is None else c for t in uniq])
            if len(known) + len(fresh) > CACHE_ENTRIES:
                known.clear()
            for t, c in fresh.items():
                if len(t) <= CACHE_TEXT_CHARS:
                    known[t] = c
            start = starts[base]
            sums = _prefix_sums(ids, ucounts, start)
            correction = 0
            if prepared.groups:
                texts = ["".join(uniq[ids[k]] for k in range(a, b + 1))
                         for a, b in prepared.groups]
                together = self.count_lines(texts, base)
                correction = sum(t - (sums[b] - (sums[a - 1] if a else start))
                                 for t, (a, b) in zip(together, prepared.groups, strict=True))
            out.append((base, sums, correction))
        return out

    def _drain(self) -> None:
        if self._pending is None:
            return
        results = self._pending.result()
        self._pending = None
        for base, sums, correction in results:
            sums.tofile(self.token_outs[base])
            if sums:
                self.totals[base] = sums[-1]
            self.corrections[base] += correction

    def finish(self) -> None:
        try:
            self._drain()
        finally:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None
        for base, out in self.token_outs.items():
            total = self.totals[base] + self.corrections[base] if self.exact else -1
            out.seek(0)
            out.write(TOKENS_HEADER.pack(TOKENS_MAGIC, self.line_count, total, 0))


def _unsafe_groups(chunk: bytes, offs: array[int]) -> list[tuple[int, int]]:
    """Runs of lines (first, last; 0-based in the chunk) joined by unsafe boundaries.
    ``offs`` holds the chunk's absolute line starts and its end."""
    groups: list[tuple[int, int]] = []
    if _unsafe_finder(tight=True).search(chunk.translate(None, b" \t")) is None:
        # none at all (the usual case): the pattern without the indentation before its
        # character, on the chunk without blanks, is one pass with no loop per "\n"
        return groups
    last = len(chunk) - 1
    base = offs[0]
    search = _unsafe_finder().search
    m = search(chunk, 0)
    while m is not None:
        pos = m.start()
        if pos >= last:
            break  # the chunk's last newline: its cut was chosen safe
        m = search(chunk, pos + 1)  # the match may end on the next boundary's "\n"
        # the "\n" at pos ends line i (0-based); line i + 1 is glued to it
        i = bisect_right(offs, base + pos) - 1
        if i >= len(offs) - 2:
            break
        if groups and groups[-1][1] == i:
            groups[-1] = (groups[-1][0], i + 1)
        else:
            groups.append((i, i + 1))
    return groups


def run_line_pass(content: Path, lines_out: IO[bytes] | None, token_outs: Mapping[str, IO[bytes]],
                  count_lines: CountLines | None,
                  progress: Callable[[str, int, int | None], None] | None = None,
                  chunk: int = CHUNK) -> LinePass:
    lp = LinePass(lines_out, token_outs, count_lines)
    size = content.stat().st_size
    try:
        with open(content, "rb") as f:
            for piece, safe in iter_file_chunks(f, chunk):
                lp.feed(piece, safe)
                if progress is not None:
                    progress("index", lp.offset, size)
    except BaseException:
        if lp._pool is not None:  # do not leave the counting thread behind
            lp._pool.shutdown(cancel_futures=True)
        raise
    lp.finish()
    return lp


class LinesAhead:
    """The line pass of the complete file ``source``, run beside the caller (ingest: with the
    JSON analysis), into temporary files in ``directory``. :meth:`take` waits for it;
    :func:`scratch.index.build.build_index` moves those files into the index instead of
    reading the content; :meth:`discard` removes whatever was not taken. Same results as
    :func:`run_line_pass` on the file.

    The pass runs in a child process (:mod:`scratch.children`; it holds a chunk of the file at
    a time): in a thread, its Python steps between the C calls took the GIL from the caller's
    parse, which ran twice as slow. With a ``count_lines`` of the caller's, or when no child
    starts, it runs in a thread. A child that fails (is killed, says something unreadable) is
    replaced by the same pass run here when :meth:`take` asks."""

    def __init__(self, source: Path, bases: Sequence[str], directory: Path,
                 count_lines: CountLines | None = None, chunk: int = CHUNK) -> None:
        import tempfile
        import threading

        self.bases = tuple(bases)
        self.paths: dict[str | None, Path] = {}
        for key in (None, *self.bases):  # None: the offsets
            # named as scratch names its temporary files (its pid first): swept if it dies
            fd, name = tempfile.mkstemp(dir=directory, prefix=f".tmp-{os.getpid()}-lines-")
            os.close(fd)
            self.paths[key] = Path(name)
        self._out: list[LinePass | BaseException] = []
        self._taken = False
        self.answered_by: str | None = None  # "child", "here" or "thread", once done
        self.source = source
        self._chunk = chunk  # bytes per piece of the file read
        self._child: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        if count_lines is None:
            self._child = _start_pass(source, self.paths, chunk)
        if self._child is None:
            self._thread = threading.Thread(
                target=self._run, args=(count_lines or default_count_lines(),),
                name="scratch-lines", daemon=True)
            self._thread.start()

    def _run(self, count_lines: CountLines) -> None:
        try:
            self._out.append(_pass_into(self.source, self.paths, count_lines, self._chunk))
        except BaseException as exc:  # handed to take()
            self._out.append(exc)

    def _wait(self) -> None:
        """Until the pass is done: the thread's, or the child's (else the same pass here)."""
        if self._thread is not None:
            self._thread.join()
            self.answered_by = "thread"
            return
        child, self._child = self._child, None
        if child is None:
            return  # waited for already
        done = _pass_answer(child)
        if done is not None:
            self._out.append(done)
            self.answered_by = "child"
        else:
            self._run(default_count_lines())
            self.answered_by = "here"

    def take(self) -> tuple[LinePass, Path, dict[str, Path]] | None:
        """(the pass, the ``lines.bin`` file, {base: its token file}) once it is done, for
        the caller to move away; None once taken (a second index build reads the file)."""
        self._wait()
        if self._taken:
            return None
        got = self._out[0]
        if isinstance(got, BaseException):
            raise got
        self._taken = True
        return got, self.paths[None], {b: self.paths[b] for b in self.bases}

    def discard(self) -> None:
        """End the pass and remove the files not moved away."""
        if self._child is not None:
            from scratch.children import end_child

            child, self._child = self._child, None
            end_child(child)
        if self._thread is not None:
            self._thread.join()
        for path in self.paths.values():
            path.unlink(missing_ok=True)


def _start_pass(source: Path, paths: Mapping[str | None, Path], chunk: int
                ) -> subprocess.Popen[bytes] | None:
    """The child running :func:`_child_main` on ``source`` into ``paths``; None if it cannot
    start."""
    from scratch.children import start_child

    args = [str(source), str(chunk), str(paths[None]),
            *(f"{base}={path}" for base, path in paths.items() if base is not None)]
    try:
        return start_child("scratch.index.lines", args)
    except OSError:
        return None


def _pass_answer(child: subprocess.Popen[bytes]) -> LinePass | None:
    """The child's pass (its line count and bytes, as a :class:`LinePass` with no files), or
    None when it failed."""
    import json

    from scratch.children import child_output

    out = child_output(child)
    if out is None:
        return None
    try:
        said = json.loads(out)
        lp = LinePass(None, {}, None)
        lp.line_count, lp.offset = int(said["line_count"]), int(said["offset"])
    except (ValueError, TypeError, KeyError):
        return None
    return lp


def _pass_into(source: Path, paths: Mapping[str | None, Path], count_lines: CountLines,
               chunk: int) -> LinePass:
    """:func:`run_line_pass` of ``source`` into the files ``paths`` (None: the line ends;
    each base: its token sums), written anew."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        lines_out = stack.enter_context(open(paths[None], "wb"))
        token_outs = {base: stack.enter_context(open(path, "w+b"))
                      for base, path in paths.items() if base is not None}
        return run_line_pass(source, lines_out, token_outs, count_lines, chunk=chunk)


def _child_main(argv: list[str]) -> int:
    """``SOURCE CHUNK LINES BASE=TOKENS...``: the line pass of SOURCE into those files; prints
    ``{"line_count": n, "offset": bytes}``."""
    import json
    import sys

    source, chunk, lines = Path(argv[0]), int(argv[1]), Path(argv[2])
    paths: dict[str | None, Path] = {None: lines}
    paths.update((base, Path(path)) for base, path in (arg.split("=", 1) for arg in argv[3:]))
    lp = _pass_into(source, paths, default_count_lines(), chunk)
    sys.stdout.write(json.dumps({"line_count": lp.line_count, "offset": lp.offset}))
    return 0


def default_count_lines() -> CountLines:
    """``scratch.tokens.count_lines`` when available, else toktok's exact BPE counts."""
    try:
        from scratch.tokens import count_lines

        return count_lines
    except ImportError:
        pass
    try:
        from scratch.tokens.tokenizer import count_lines as cl

        return cl
    except ImportError:
        pass

    def toktok_count(lines: Sequence[str], base: str) -> list[int]:
        import toktok

        try:
            return toktok.batch_count(list(lines), base)  # type: ignore[no-any-return]
        except KeyError:
            raise TokenizerError(f"no tokenizer for encoding {base!r}", base=base) from None

    return toktok_count


if __name__ == "__main__":  # the child of LinesAhead
    import sys

    sys.exit(_child_main(sys.argv[1:]))
