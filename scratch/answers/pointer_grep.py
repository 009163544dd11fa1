"""The pointer's error grep, checked before it is suggested.

A grep for error words is only worth its tokens when it finds errors. On JSON and YAML a
plain ``error|fail`` finds key names and enum words (``failureThreshold``, ``FAILURE_POLICY``,
``OnFailure``) instead, so the pattern here matches whole words only (``\\b``: ``Error``,
``failed``, ``fatal``, but not ``OnFailure``) and, on JSON/NDJSON/YAML, a line counts as
found in values only when the words are left once its key names are taken out. The pointer
suggests the grep when at least one line has them in a value, with the number of lines it
will match.

Cost: one pass of the grep engine (RE2, from match to match over an mmap) over at most
:data:`SCAN_BYTES` of the content; a larger entry is checked on that prefix and the pointer
says so. Python runs per matching line only.
"""

from __future__ import annotations

import mmap
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scratch.answers.kernel.target import Target
    from scratch.answers.sources.items import Info

ERROR_PATTERN = r"\b(errors?|fail(ed|ure)?|fatal|panic)\b|exception\b"
SCAN_BYTES = 256 << 20
LINE_BYTES = 1 << 16  # of a matching line, what the value check reads
_JSON_KEY = re.compile(rb'"(?:[^"\\]|\\.)*"\s*:')
_YAML_KEY = re.compile(rb"""^\s*(?:-\s+)*  # a list item's dash, then the key
                           (?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s#'"-][^:#]*?)\s*:(?=\s|$)""",
                       re.VERBOSE)
_KEYED = {"json": _JSON_KEY, "ndjson": _JSON_KEY, "yaml": _YAML_KEY}


def check_error_grep(target: Target) -> Info | None:
    """``{"pattern", "lines", "in_values"}`` (and ``scanned_bytes`` when only a prefix was
    read) of :data:`ERROR_PATTERN` over the entry, case-insensitive; None when no line
    matches."""
    from scratch.query.grep import GrepOptions, compile_pattern, iter_selected_lines
    size = target.index.meta["bytes"]
    if size == 0:
        return None
    options = GrepOptions(pattern=ERROR_PATTERN, ignore_case=True)
    keyed = _KEYED.get(target.format)
    words = re.compile(ERROR_PATTERN.encode(), re.IGNORECASE)
    lines = in_values = 0
    with open(target.path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            end = size if size <= SCAN_BYTES else buf.rfind(b"\n", 0, SCAN_BYTES) + 1
            for _, start, stop in iter_selected_lines(buf, options, end=end,
                                                      line_starts=target.index.line_starts(),
                                                      matcher=compile_pattern(options)):
                lines += 1
                if keyed is None:
                    in_values += 1
                    continue
                line = buf[start:min(stop, start + LINE_BYTES)]
                if words.search(keyed.sub(b" ", line)):
                    in_values += 1
        finally:
            buf.close()
    if not lines:
        return None
    out: Info = {"pattern": ERROR_PATTERN, "lines": lines, "in_values": in_values}
    if end < size:
        out["scanned_bytes"] = end
    return out
