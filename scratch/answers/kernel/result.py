"""What a command hands back instead of printing.

Commands return a :class:`Result`; an interface decides how it looks (the CLI: rich on a
terminal, plain text on a pipe, the versioned JSON envelope with ``--json``; MCP: a tool
result).

Invariants:
- ``data`` is JSON-serialisable (orjson) once its :class:`~scratch.calls.Call` values
  are spelled, and is exactly what ``--json`` puts under ``"data"``.
- ``text`` is what a person reads on stdout, byte for byte when it is ``bytes``. It may name
  calls (a hint, a cut cell's get-in): then it is a :class:`Words` or a function of the
  interface's speller, turned into text only at the edge (so may ``table``). When ``text`` is
  None the interface formats ``table`` or ``data`` itself.
- ``next`` (with ``--fit``) is the call that continues exactly after this answer.
- ``meta`` goes under ``"meta"`` in JSON; ``meta["tokens"]`` (when present) is the token cost of
  what was printed and ``meta["budget"]`` the budget left.
- ``price`` is what the text costs when the index already knows it (line answers are priced
  from per-line token sums, so no tokenizer is loaded to answer them); None: count the text.
- ``charge`` says how the answers pipeline records the price: None for answers that are not
  priced at all (writes, listings), else a :class:`Charge`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from scratch.calls import Call

Speller = Callable[["Call"], str]


class Words(tuple):  # type: ignore[type-arg]
    """Text made of plain strings and calls, spelled by the interface that prints it."""

    __slots__ = ()

    def spell(self, spell: Speller) -> str:
        from scratch.calls import Call
        return "".join(spell(p) if isinstance(p, Call) else str(p) for p in self)


Text = str | bytes | Words | Callable[[Speller], str] | None


def spelled(text: Any, spell: Speller) -> Any:
    """``text`` as the interface prints it: words and text functions spelled, the rest as is."""
    if isinstance(text, Words):
        return text.spell(spell)
    if callable(text):
        return text(spell)
    return text


class Table(NamedTuple):
    """Rows for human output; rich draws a table, plain mode prints tab-separated columns."""

    columns: list[str]
    rows: list[list[Any]]
    title: str | None = None


class Charge(NamedTuple):
    """How a priced answer is recorded in the budget (see :mod:`scratch.answers.kernel.fitting`).

    ``kind``: the budget's label (``extracted`` for answers, ``pointer`` for the pointer shown
    instead of an output); ``enforce``: refuse when over the cap and budget (an output already
    shown, such as a pointer, is recorded whatever its size); ``stored``: the tokens of an
    output stored instead of shown (what was kept out of the context is that less the price)."""

    kind: str = "extracted"
    enforce: bool = True
    stored: int = 0


ANSWER = Charge()


class Result:
    """What a command answers: ``data`` for ``--json``, ``text``/``table`` for people."""

    __slots__ = ("command", "data", "text", "table", "meta", "warnings", "notices", "exit_code",
                 "style", "next", "price", "charge")

    def __init__(self, command: str, data: Any = None, text: Text = None,
                 table: Table | Callable[[Speller], Table] | None = None,
                 meta: dict[str, Any] | None = None,
                 warnings: tuple[str, ...] = (), notices: tuple[Any, ...] = (),
                 exit_code: int = 0, style: str | None = None, next: Call | None = None,
                 price: int | None = None, charge: Charge | None = None) -> None:
        self.command = command
        self.data = data
        self.text = text
        self.table = table
        self.meta: dict[str, Any] = {} if meta is None else meta
        self.warnings = warnings
        self.notices = notices  # human-only lines for stderr (str or Words)
        self.exit_code = exit_code
        self.style = style  # rendering hint: "diff", "json", "lines", "pointer"
        self.next = next
        self.price = price
        self.charge = charge

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"Result({fields})"


def compact_json(value: Any) -> str:
    """One-line JSON text of ``value``; integers beyond 64 bits stay exact."""
    from scratch.jsonvalues import dumps  # JSON numbers exactly as stored
    return dumps(value).decode("utf-8", errors="backslashreplace")
