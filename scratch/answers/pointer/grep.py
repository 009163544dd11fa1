"""The pointer's error grep, checked before it is suggested.

A grep for error words is only worth its tokens when it finds errors. On JSON and YAML a
plain ``error|fail`` finds key names and enum words (``failureThreshold``, ``FAILURE_POLICY``,
``OnFailure``) instead, so the pattern here matches whole words only (``\\b``: ``Error``,
``failed``, ``fatal``, but not ``OnFailure``) and, on JSON/NDJSON/YAML, a line counts as
found in values only when the words are left once its key names are taken out. The pointer
suggests the grep when at least one line has them in a value, with the number of lines it
will match.

Cost: one pass of the grep engine (RE2, from match to match, over blocks of the file) over
at most :data:`SCAN_BYTES` of the content; a larger entry is checked on that prefix and the
pointer says so. Python runs per block and per matching line only. Ingest runs it on a big
JSON's stored form as soon as that is whole (:class:`ErrorGrepAhead`), beside the analysis.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scratch.beside import Beside

if TYPE_CHECKING:
    from pathlib import Path

    from scratch.answers.kernel.target import Target
    from scratch.answers.rows.items import Info

ERROR_PATTERN = r"\b(errors?|fail(ed|ure)?|fatal|panic)\b|exception\b"
SCAN_BYTES = 16 << 20  # ~0.1 s of RE2: a 100 MB ingest stays within its 2x of git's write
LINE_BYTES = 1 << 16  # of a matching line, what the value check reads
BLOCK_BYTES = 8 << 20
_JSON_KEY = re.compile(rb'"(?:[^"\\]|\\.)*"\s*:')
_YAML_KEY = re.compile(rb"""^\s*(?:-\s+)*  # a list item's dash, then the key
                           (?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s#'"-][^:#]*?)\s*:(?=\s|$)""",
                       re.VERBOSE)
_KEYED = {"json": _JSON_KEY, "ndjson": _JSON_KEY, "yaml": _YAML_KEY}


def error_lines_for(target: Target, fmt: str, info: Info, ahead: ErrorGrepAhead | None = None
                    ) -> Info | None:
    """What the pointer of ``target`` says of its error grep: checked when it would be
    suggested (:func:`scratch.answers.pointer.build.suggests_grep`), else None. Every builder of a
    pointer (ingest, the page) asks here, so they show the same. ``ahead``: the same grep run
    over the same content as ``fmt`` already (ingest's, while it built the index)."""
    from scratch.answers.pointer.build import suggests_grep
    if not suggests_grep(fmt, info):
        return None
    if ahead is not None and ahead.fmt == fmt:
        return ahead.result()
    return check_error_grep(target)


def check_error_grep(target: Target) -> Info | None:
    """``{"pattern", "lines", "in_values"}`` (and ``scanned_bytes`` when only a prefix was
    read) of :data:`ERROR_PATTERN` over the entry, case-insensitive; None when no line
    matches. The content is read in blocks of :data:`BLOCK_BYTES` cut at line ends (not
    mapped: a mapping's pages would count in the ingest's memory)."""
    return _check_file(target.path, target.index.meta["bytes"], target.format, BLOCK_BYTES)


class ErrorGrepAhead(Beside["Info | None"]):
    """:func:`check_error_grep` of a file that is about to be stored as ``fmt``, run in a
    thread meanwhile (RE2 runs without the GIL), a megabyte at a time (the caller's memory
    is at its peak then): ingest starts it as soon as a big JSON's stored form is whole."""

    def __init__(self, path: Path, fmt: str) -> None:
        self.fmt = fmt
        super().__init__(_check_path, path, fmt, name="scratch-error-grep", daemon=True)


def _check_path(path: Path, fmt: str) -> Info | None:
    return _check_file(path, path.stat().st_size, fmt, 1 << 20)


def _check_file(path: Path, size: int, fmt: str, block_bytes: int) -> Info | None:
    """The grep over the whole lines of the first :data:`SCAN_BYTES` of ``path`` (all of it
    when smaller), read ``block_bytes`` at a time: the same answer whatever the block (a
    line longer than a block is read on; one longer than the whole window counts as one)."""
    from scratch.query.grep import GrepOptions, compile_pattern, iter_selected_lines
    if size == 0:
        return None
    options = GrepOptions(pattern=ERROR_PATTERN, ignore_case=True)
    matcher = compile_pattern(options)
    keyed = _KEYED.get(fmt)
    words = re.compile(ERROR_PATTERN.encode(), re.IGNORECASE)
    lines = in_values = scanned = 0
    limit = min(size, SCAN_BYTES)
    read = 0
    rest = b""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(min(block_bytes, limit - read)) if read < limit else b""
            read += len(block)
            data = rest + block
            if not data:
                break
            last = read >= limit or not block
            cut = data.rfind(b"\n") + 1
            if last and (read >= size or not block or (cut == 0 and not scanned)):
                cut = len(data)  # the end of the content, or a line as long as the window
            elif cut == 0 and not last:  # a line longer than a block: read on
                rest = data
                continue
            data, rest = data[:cut], data[cut:]
            scanned += len(data)
            for _, start, stop in iter_selected_lines(data, options, matcher=matcher):
                lines += 1
                piece = data[start:min(stop, start + LINE_BYTES)]
                if keyed is None or words.search(keyed.sub(b" ", piece)):
                    in_values += 1
            if last:
                break
    if not lines:
        return None
    out: Info = {"pattern": ERROR_PATTERN, "lines": lines, "in_values": in_values}
    if scanned < size:
        out["scanned_bytes"] = scanned
    return out
