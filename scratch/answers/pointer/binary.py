"""What a pointer says about binary content: what it is, its first bytes escaped, and a call
that reads it without dumping it.

A binary output (an executable, an image, an archive a tool wrote to stdout) has no lines to
read: a suggested ``slice`` of an ELF printed 7,365 tokens of raw bytes, NUL included. So its
pointer names what the first bytes say it is (:func:`scratch.formats.sniffer.binary_kind`),
shows them escaped (:func:`scratch.words.escape_bytes`, bounded), and offers only the strings
it holds, counted (``grep REF '([ -~]{8,})' --count-by 1``, as ``strings | sort | uniq -c``
would): never a range of its lines. Every answer that shows its lines shows them escaped
(:mod:`scratch.answers.lines.ranges`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.calls import Call, call

if TYPE_CHECKING:
    from scratch.answers.kernel.target import Target
    from scratch.answers.rows.items import Info

HEAD_BYTES = 32  # first bytes the pointer shows
MAGIC_BYTES = 262  # bytes read to name the content (a tar archive's magic is at 257)
STRINGS = r"([ -~]{8,})"  # runs of 8 printable ASCII characters, as strings(1) finds them


def binary_for(target: Target, fmt: str) -> Info | None:
    """``{"kind", "head"}`` of a binary entry (None for anything else): what its first bytes
    say it is (None when unknown) and the first :data:`HEAD_BYTES` of them escaped."""
    if fmt != "binary":
        return None
    from scratch.formats.sniffer import binary_kind
    from scratch.words import escape_bytes
    with open(target.path, "rb") as fh:
        head = fh.read(MAGIC_BYTES)
    size = target.index.meta["bytes"]
    return {"kind": binary_kind(head),
            "head": escape_bytes(head[:HEAD_BYTES], limit=HEAD_BYTES, total=size)}


def binary_lines(info: Info) -> list[str]:
    kind = info.get("kind")
    return [f"binary{': ' + str(kind) if kind else ''}; first bytes: {info.get('head')}"]


def binary_calls(ref: str) -> list[Call]:
    """The strings a binary holds, counted: what can be read of it without dumping it."""
    return [call("grep", ref=ref, pattern=STRINGS, count_by="1", limit=20)]
