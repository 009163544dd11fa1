"""How values read from an entry are shown, and the notes that go with them (shared by get-in,
iterate-over and item-schema).

- A value renders as 2-space JSON (key order kept); a string prints as its text.
- A stored region that does not parse names its entry line, with the ``slice`` that shows it.
- An answer over many items that left out NDJSON lines that are not JSON says which.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from scratch.calls import call

if TYPE_CHECKING:
    from scratch.answers.kernel.target import Target
    from scratch.errors import FormatError

SHOWN_LINES = 5  # line numbers a not-JSON warning lists before "and N more"


def render_value(value: object) -> str:
    if isinstance(value, str):
        return value if value.endswith("\n") else value + "\n"
    import orjson

    from scratch.jsonvalues import dumps  # JSON numbers exactly as stored
    return dumps(value, orjson.OPT_INDENT_2).decode("utf-8", errors="backslashreplace") + "\n"


def suggest_slice(exc: FormatError, target: Target) -> None:
    """A stored region that does not parse names its entry line: offer to read that line."""
    line = exc.details.get("line")
    if isinstance(line, int) and not exc.details.get("suggestions"):
        exc.details["suggestions"] = [call("slice", ref=target.ref, start=line, end=line)]


def not_json_warning(target: Target, lines: Iterable[int]) -> tuple[str, ...]:
    """The warning of an answer that left out NDJSON lines that are not JSON (as null items)."""
    shown = sorted(lines)
    n = len(shown)
    if not n:
        return ()
    listed = ", ".join(str(x) for x in shown[:SHOWN_LINES])
    if n > SHOWN_LINES:
        listed += f" and {n - SHOWN_LINES} more"
    if n == 1:
        return (f"1 line of {target.ref} is not JSON (line {listed}); left out",)
    return (f"{n} lines of {target.ref} are not JSON (lines {listed}); left out",)
