"""Compact line diffs between two versions.

Two forms of the same diff:
- ``ops``: ``{"op": "equal", "count": n}`` for unchanged runs (collapsed to a count) and
  ``{"op": "add"|"remove", "lines": [...], "line": first_line_number}`` where ``line`` counts in
  the new version for additions and in the old version for removals. Applying the ops to the old
  lines gives exactly the new lines (a test proves it).
- ``text``: unified-diff hunks with ``context`` lines around each change, not the whole file.
"""

from __future__ import annotations

import difflib
from typing import Any


def split_lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines()


def diff_ops(old: list[str], new: list[str]) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            ops.append({"op": "equal", "count": i2 - i1})
            continue
        if tag in ("delete", "replace"):
            ops.append({"op": "remove", "lines": old[i1:i2], "line": i1 + 1})
        if tag in ("insert", "replace"):
            ops.append({"op": "add", "lines": new[j1:j2], "line": j1 + 1})
    return ops


def apply_ops(old: list[str], ops: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    pos = 0
    for op in ops:
        if op["op"] == "equal":
            out.extend(old[pos:pos + op["count"]])
            pos += op["count"]
        elif op["op"] == "remove":
            pos += len(op["lines"])
        else:
            out.extend(op["lines"])
    return out


def unified(old: list[str], new: list[str], *, old_label: str, new_label: str,
            context: int = 3) -> str:
    lines = difflib.unified_diff(old, new, fromfile=old_label, tofile=new_label, n=context,
                                 lineterm="")
    text = "\n".join(lines)
    return text + "\n" if text else ""


def summarize_ops(ops: list[dict[str, Any]]) -> dict[str, int]:
    return {
        "added": sum(len(o["lines"]) for o in ops if o["op"] == "add"),
        "removed": sum(len(o["lines"]) for o in ops if o["op"] == "remove"),
        "unchanged_lines": sum(o["count"] for o in ops if o["op"] == "equal"),
    }
