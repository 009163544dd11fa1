"""`scratch guide`: how an LLM agent should use scratch, in at most 600 tokens (o200k_base).

Written for a model that is handed it once, e.g. in a system prompt. Every command it names
exists in the command tree (a test checks), and its size is checked with the real tokenizer.
The human form is the sections joined: ``# heading`` then the body, a blank line between
sections; ``--json`` gives the same sections as a list, so one can be rebuilt from the other.

This module is core-clean: it imports nothing from the CLI stack.
"""

from __future__ import annotations

from typing import TypedDict

MAX_TOKENS = 600

SECTIONS: list[tuple[str, str]] = [
    ("The pointer", """\
Pipe a big tool output through scratch (`CMD | scratch ingest --tool NAME` or
`scratch run -- CMD`). Small outputs pass through unchanged. A big one is stored once and
you get a pointer: its name (REF), format, size in tokens, schema outline with line ranges,
samples, and `next:` commands to copy. The entry stays: explore it instead of re-running the
tool. REF is a name, NAME@VERSION, or a prefix of the hash in an automatic name."""),
    ("Cheapest order", """\
1. scratch schema REF                     paths, types, array lengths, line ranges
2. scratch item-schema REF PATH           keys of an array's items: presence k/n, nulls
3. scratch iterate-over REF PATH --fields a,b.c --limit 20    one row per item
   (--where EXPR scans all items; --sort F [--desc]; --count; --count-by F: value counts)
   scratch get-in REF PATH                one value: items.-1.name, /items/3, or $..name
   scratch sql REF "SELECT ... FROM entry"   SQL over the items (--describe: columns)
4. scratch grep REF PATTERN -m 20         matching lines with context
   scratch slice REF START END            exact lines (also head, tail)
Read a whole entry (scratch read REF) only when it is small."""),
    ("Refusals", """\
Each answer is priced: with --json, meta.tokens and meta.budget. An answer over the per-call
cap or the remaining budget is refused (exit 3) with error.code (head_too_large, ...,
budget_exceeded), estimated_tokens, limit, and suggestions: exact commands. Run one of
them; don't retry the same call. Or add --fit (head, tail, slice, grep, get-in, iterate-over,
read, log read) to get the largest part that fits plus `next`, the exact command that
continues; follow `next` until it is absent (a line too long for one answer comes in pieces).
Exit 4 is not found: key_path_not_found names the valid_prefix and the available keys."""),
    ("Budget", """\
scratch budget               window, used, remaining
scratch budget used N        after your model reports N tokens used (keeps the estimate true)
scratch budget reset         when a new conversation starts"""),
    ("Habits", """\
Use --json when you parse output: one document {ok, data | error, meta}. Keep notes with
scratch write NAME and scratch log append NAME; scratch ls lists entries."""),
]


def text() -> str:
    """The guide as printed in human mode."""
    return "\n\n".join(f"# {head}\n{body}" for head, body in SECTIONS) + "\n"


class Section(TypedDict):
    heading: str
    body: str


class Guide(TypedDict):
    """The guide as ``--json`` gives it."""

    sections: list[Section]
    max_tokens: int


def data() -> Guide:
    """The guide for ``--json``: the same sections, in order."""
    return {"sections": [{"heading": head, "body": body} for head, body in SECTIONS],
            "max_tokens": MAX_TOKENS}
