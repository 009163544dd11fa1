"""Arguments many commands share, declared once (each command's signature names them)."""

from __future__ import annotations

from scratch.declare import Arg

REF = Arg("Entry: NAME, NAME@VERSION or a prefix of its hash.", metavar="REF", max_length=1024,
          complete="names")
NAME = Arg("Entry name, e.g. notes/plan.md (A-Z a-z 0-9 / _ . -).", metavar="NAME",
           max_length=1024, complete="names")
PATH = Arg("Dot path (items.0.name), JSON Pointer or JSONPath; '.': CSV rows.", metavar="PATH",
           max_length=1 << 16)  # long enough that the path's own checks say what is wrong
# PATH as the row commands' MCP tools describe it (rows: an array, a map of records, a[*].b)
ROWS_PATH_HELP = "Array or map of records (items; a[*].b flattens; '.': CSV rows)."
FIT = Arg("Return what fits the cap, plus 'next' to continue.", flags=("--fit",))
NUMBERS = Arg("Prefix lines with 'N:'.", negate="--no-numbers",
              negate_help="Print raw lines without line numbers.")
LINES = Arg("How many lines.", flags=("-n", "--lines"), metavar="N", minimum=1)
OFFSET = Arg("Skip this many lines (items); negative: from the end.", flags=("--offset",),
             metavar="N")
LIMIT = Arg("At most this many lines (items).", flags=("--limit",), metavar="N", minimum=1)
# CLI only: the MCP tool lists cannot afford it (issue 22's price), and rows over MCP carry
# their key in _key (__key when a record has _key)
KEY_FIELD = Arg("In a map of records, the field each row's key goes in (default _key).",
                flags=("--key-field",), metavar="NAME", max_length=256, mcp=False)
# a capture stored as given (recorded so in the version and the call ledger)
NO_REDACT = Arg("Store as given: do not redact secrets.", flags=("--no-redact",))
