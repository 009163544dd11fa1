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
pointer says so. Python runs per block and per matching line only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scratch.answers.kernel.target import Target
    from scratch.answers.rows.items import Info

ERROR_PATTERN = r"\b(errors?|fail(ed|ure)?|fatal|panic)\b|exception\b"
SCAN_BYTES = 16 << 20  # ~0.1 s of RE2: a 100 MB ingest stays within its 2x of git's write
LINE_BYTES = 1 << 16  # of a matching line, what the value check reads
BLOCK_BYTES = 8 << 20
LONG_LINE = 4 * BLOCK_BYTES
_JSON_KEY = re.compile(rb'"(?:[^"\\]|\\.)*"\s*:')
_YAML_KEY = re.compile(rb"""^\s*(?:-\s+)*  # a list item's dash, then the key
                           (?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s#'"-][^:#]*?)\s*:(?=\s|$)""",
                       re.VERBOSE)
_KEYED = {"json": _JSON_KEY, "ndjson": _JSON_KEY, "yaml": _YAML_KEY}


def error_lines_for(target: Target, fmt: str, info: Info) -> Info | None:
    """What the pointer of ``target`` says of its error grep: checked when it would be
    suggested (:func:`scratch.answers.pointer.build.suggests_grep`), else None. Every builder of a
    pointer (ingest, the page) asks here, so they show the same."""
    from scratch.answers.pointer.build import suggests_grep
    return check_error_grep(target) if suggests_grep(fmt, info) else None


def check_error_grep(target: Target) -> Info | None:
    """``{"pattern", "lines", "in_values"}`` (and ``scanned_bytes`` when only a prefix was
    read) of :data:`ERROR_PATTERN` over the entry, case-insensitive; None when no line
    matches. The content is read in blocks of :data:`BLOCK_BYTES` cut at line ends (not
    mapped: a mapping's pages would count in the ingest's memory)."""
    from scratch.query.grep import GrepOptions, compile_pattern, iter_selected_lines
    size = target.index.meta["bytes"]
    if size == 0:
        return None
    options = GrepOptions(pattern=ERROR_PATTERN, ignore_case=True)
    matcher = compile_pattern(options)
    keyed = _KEYED.get(target.format)
    words = re.compile(ERROR_PATTERN.encode(), re.IGNORECASE)
    lines = in_values = scanned = 0
    rest = b""
    with open(target.path, "rb") as fh:
        while scanned < SCAN_BYTES:
            block = fh.read(BLOCK_BYTES)
            if not block and not rest:
                break
            data = rest + block
            cut = data.rfind(b"\n") + 1 if block else len(data)
            if cut == 0:  # a line longer than a block: read on, up to LONG_LINE bytes of it
                if len(data) < LONG_LINE:
                    rest = data
                    continue
                cut = len(data)  # its pieces are checked as lines (it may count twice)
            data, rest = data[:cut], data[cut:]
            scanned += len(data)
            for _, start, stop in iter_selected_lines(data, options, matcher=matcher):
                lines += 1
                piece = data[start:min(stop, start + LINE_BYTES)]
                if keyed is None or words.search(keyed.sub(b" ", piece)):
                    in_values += 1
    if not lines:
        return None
    out: Info = {"pattern": ERROR_PATTERN, "lines": lines, "in_values": in_values}
    if scanned < size:
        out["scanned_bytes"] = scanned
    return out
