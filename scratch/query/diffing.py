"""Compact line diffs between two versions, exact to the byte.

Lines are cut after each ``"\\n"`` and nowhere else, the way ``scratch`` counts lines everywhere:
a ``"\\r"`` stays part of its line, so a CRLF line and the same line ending in LF are different
lines, and a last line without ``"\\n"`` differs from the same line with one. Line endings are
therefore never hidden: any two versions that differ in a byte produce at least one change.

Two forms of the same diff (one ``SequenceMatcher`` run gives both):

- ``ops``: ``{"op": "equal", "count": n}`` for unchanged runs (collapsed to a count) and
  ``{"op": "add"|"remove", "lines": [...], "line": first_line_number}`` where ``line`` counts in
  the new version for additions and in the old version for removals. ``lines`` hold each line
  without its ``"\\n"`` (a ``"\\r"`` before it is kept, so JSON shows ``"a\\r"``). The only line
  that can lack the ``"\\n"`` is a version's last one; an op ending with that line says so with
  ``"no_newline_at_end": true``. Applying the ops to the old version rebuilds the new version
  byte for byte: ``"".join(apply_ops(split_lines(old), ops)).encode() == new`` (tests prove it).
- ``text``: unified-diff hunks with ``context`` lines around each change, not the whole file,
  written like ``diff -u`` and git:

  - a line without a final newline is followed by the line ``\\ No newline at end of file``;
  - every carriage return is shown as ``␍`` (U+240D SYMBOL FOR CARRIAGE RETURN), so a CRLF line
    reads ``-a␍`` and its LF form ``+a``, and a bare CR inside a line reads ``a␍b``. Only CR is
    rewritten; every other character is printed as it is. When a shown line holds a literal
    U+240D as well, ``Diff.literal_cr_symbol`` is true and the caller says that ``␍`` is
    ambiguous in that diff (the ops stay exact).

Content must be valid UTF-8 (:func:`split_lines` raises ``UnicodeDecodeError`` otherwise): a
lossy decode could not keep the round trip.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import NamedTuple, NotRequired, TypedDict

CR_SYMBOL = "\u240d"
NO_NEWLINE = "\\ No newline at end of file"


class DiffOp(TypedDict):
    """One op (see the module docstring): ``count`` for ``equal``, ``lines`` and ``line`` for
    ``add`` and ``remove``."""

    op: str  # "equal", "add" or "remove"
    count: NotRequired[int]
    lines: NotRequired[list[str]]
    line: NotRequired[int]
    no_newline_at_end: NotRequired[bool]


class Diff(NamedTuple):
    ops: list[DiffOp]
    text: str
    literal_cr_symbol: bool  # a shown line holds a literal U+240D, so "␍" is not only CR


def split_lines(data: bytes) -> list[str]:
    """The lines of ``data``, each with its ``"\\n"`` (the last one may lack it).

    ``"".join(split_lines(data)).encode() == data``; raises ``UnicodeDecodeError`` for content
    that is not UTF-8.
    """
    pieces = data.decode("utf-8").split("\n")
    last = pieces.pop()
    lines = [piece + "\n" for piece in pieces]
    if last:
        lines.append(last)
    return lines


def _matcher(old: list[str], new: list[str]) -> difflib.SequenceMatcher[str]:
    return difflib.SequenceMatcher(a=old, b=new, autojunk=False)


def _change(op: str, lines: list[str], first: int) -> DiffOp:
    out: DiffOp = {"op": op, "lines": [_bare(line) for line in lines], "line": first}
    if not lines[-1].endswith("\n"):
        out["no_newline_at_end"] = True
    return out


def _bare(line: str) -> str:
    return line[:-1] if line.endswith("\n") else line


def _ops(matcher: difflib.SequenceMatcher[str], old: list[str],
         new: list[str]) -> list[DiffOp]:
    ops: list[DiffOp] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            ops.append({"op": "equal", "count": i2 - i1})
            continue
        if tag in ("delete", "replace"):
            ops.append(_change("remove", old[i1:i2], i1 + 1))
        if tag in ("insert", "replace"):
            ops.append(_change("add", new[j1:j2], j1 + 1))
    return ops


def diff_ops(old: list[str], new: list[str]) -> list[DiffOp]:
    """The ops turning ``old`` into ``new`` (both as :func:`split_lines` gives them)."""
    return _ops(_matcher(old, new), old, new)


def apply_ops(old: list[str], ops: list[DiffOp]) -> list[str]:
    """Rebuild the new lines (with their ``"\\n"``) from the old lines and the ops."""
    out: list[str] = []
    pos = 0
    for op in ops:
        if op["op"] == "equal":
            out.extend(old[pos:pos + op["count"]])
            pos += op["count"]
        elif op["op"] == "remove":
            pos += len(op["lines"])
        else:
            lines = [line + "\n" for line in op["lines"]]
            if op.get("no_newline_at_end") and lines:
                lines[-1] = lines[-1][:-1]
            out.extend(lines)
    return out


def _range(start: int, stop: int) -> str:
    """A hunk header range as ``diff -u`` writes it: ``3``, ``3,4``, or ``2,0`` when empty."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _unified(matcher: difflib.SequenceMatcher[str], old: list[str], new: list[str],
             old_label: str, new_label: str, context: int) -> tuple[str, bool]:
    """The hunks, and whether a shown line holds a literal U+240D."""
    out: list[str] = []
    literal = False

    def show(prefix: str, lines: Sequence[str]) -> None:
        nonlocal literal
        for line in lines:
            literal = literal or CR_SYMBOL in line
            out.append(prefix + _bare(line).replace("\r", CR_SYMBOL))
            if not line.endswith("\n"):
                out.append(NO_NEWLINE)

    for group in matcher.get_grouped_opcodes(context):
        if not out:
            out += [f"--- {old_label}", f"+++ {new_label}"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                show(" ", old[i1:i2])
            if tag in ("delete", "replace"):
                show("-", old[i1:i2])
            if tag in ("insert", "replace"):
                show("+", new[j1:j2])
    return ("\n".join(out) + "\n" if out else ""), literal


def unified(old: list[str], new: list[str], *, old_label: str, new_label: str,
            context: int = 3) -> str:
    """Unified hunks from ``old`` to ``new`` (both as :func:`split_lines` gives them)."""
    return _unified(_matcher(old, new), old, new, old_label, new_label, context)[0]


def compare(old: bytes, new: bytes, *, old_label: str, new_label: str,
            context: int = 3) -> Diff:
    """Both forms of the diff from ``old`` to ``new``; raises ``UnicodeDecodeError``."""
    a, b = split_lines(old), split_lines(new)
    matcher = _matcher(a, b)
    ops = _ops(matcher, a, b)  # first: get_grouped_opcodes trims the cached opcodes in place
    text, literal = _unified(matcher, a, b, old_label, new_label, context)
    return Diff(ops, text, literal)


def summarize_ops(ops: list[DiffOp]) -> dict[str, int]:
    return {
        "added": sum(len(o["lines"]) for o in ops if o["op"] == "add"),
        "removed": sum(len(o["lines"]) for o in ops if o["op"] == "remove"),
        "unchanged_lines": sum(o["count"] for o in ops if o["op"] == "equal"),
    }
