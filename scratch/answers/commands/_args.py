"""Arguments many commands share, declared once (each command's signature names them)."""

from __future__ import annotations

from scratch.declare import Arg

REF = Arg("Entry: NAME, NAME@VERSION, or a unique prefix of the 8-hex hash that ends an "
          "automatic name (as the pointer shows it).", metavar="REF", max_length=1024,
          complete="names")
NAME = Arg("Entry name, e.g. notes/plan.md (A-Z a-z 0-9 / _ . -).", metavar="NAME",
           max_length=1024, complete="names")
PATH = Arg("Dot path (items.0.metadata.name), JSON Pointer (/items/0) or JSONPath "
           "($.items[?@.status.phase=='Failed']); '.' is a CSV's rows.", metavar="PATH",
           max_length=1 << 16)  # long enough that the path's own checks say what is wrong
FIT = Arg("Return the largest part that fits the per-call cap and budget, plus 'next': the "
          "call that continues exactly after it.", flags=("--fit",))
NUMBERS = Arg("Prefix each line with its number, 'N:'.", negate="--no-numbers",
              negate_help="Print raw lines without line numbers.")
LINES = Arg("How many lines.", flags=("-n", "--lines"), metavar="N", minimum=1)
OFFSET = Arg("Skip this many lines (or items) of the answer; negative counts from the end "
             "(-20: the last 20).", flags=("--offset",), metavar="N")
LIMIT = Arg("At most this many lines (or items).", flags=("--limit",), metavar="N", minimum=1)
