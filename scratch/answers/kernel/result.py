"""What a command hands back instead of printing.

Commands return a :class:`Result`; an interface decides how it looks (the CLI: rich on a
terminal, plain text on a pipe, the versioned JSON envelope with ``--json``; MCP: a tool
result).

Invariants:
- A :class:`Result` is immutable: whoever adds to it (the pipeline its price, ``--fit`` its next
  call) builds a new one, so a page measured while sizing an answer is never changed after.
- ``data`` is JSON-serialisable (orjson) once its :class:`~scratch.calls.Call` values
  are spelled, and is exactly what ``--json`` puts under ``"data"``.
- ``text`` is what a person reads on stdout, byte for byte when it is ``bytes``. It may name
  calls (a hint, a cut cell's get-in): then it is a :class:`Words` or a function of the
  interface's speller, turned into text only at the edge (so may ``table``). When ``text`` is
  None the interface formats ``table`` or ``data`` itself.
- ``next`` (with ``--fit``) is the call that continues exactly after this answer.
- ``meta`` goes under ``"meta"`` in JSON, its keys those of :class:`Meta`; ``meta["tokens"]``
  (when present) is the token cost of what was printed and ``meta["budget"]`` the budget left.
- ``price`` is what the text costs when the index already knows it (line answers are priced
  from per-line token sums, so no tokenizer is loaded to answer them); None: count the text.
- ``charge`` says how the answers pipeline records the price: None for answers that are not
  priced at all (writes, listings), else a :class:`Charge`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeAlias, TypeVar, overload

from scratch.meta import BudgetMeta as BudgetMeta  # re-exported: where results were typed
from scratch.meta import Meta as Meta
from scratch.meta import TokenMeta as TokenMeta

if TYPE_CHECKING:
    from scratch.calls import Call

Speller = Callable[["Call"], str]

# ``data``: JSON (:data:`scratch.jsonvalues.JSON`) whose values may still be calls, spelled
# by the interface that prints them (a pointer's next calls, a refusal's suggestions)
Payload: TypeAlias = ("Mapping[str, Payload] | Sequence[Payload] | str | int | float | bool"
                      " | None | Call")
# a command's own payload type (a TypedDict of its rows, a list of them ...): TypedDicts are
# Mapping[str, object] to mypy, not Mapping[str, Payload], so it is not bound to Payload;
# covariant (a result is immutable), so any ``Result[P]`` is a ``Result[object]``, what the
# pipeline and the interfaces take
P = TypeVar("P", covariant=True)


class Words(tuple):  # type: ignore[type-arg]
    """Text made of plain strings and calls, spelled by the interface that prints it."""

    __slots__ = ()

    def spell(self, spell: Speller) -> str:
        from scratch.calls import Call
        return "".join(spell(p) if isinstance(p, Call) else str(p) for p in self)


Text = str | bytes | Words | Callable[[Speller], str] | None


class Table(NamedTuple):
    """Rows for human output; rich draws a table, plain mode prints tab-separated columns."""

    columns: list[str]
    rows: Sequence[Sequence[object]]
    title: str | None = None


TableText = Table | Callable[[Speller], Table]


@overload
def spelled(text: TableText, spell: Speller) -> Table: ...


@overload
def spelled(text: str | Words | Callable[[Speller], str], spell: Speller) -> str: ...


@overload
def spelled(text: Text, spell: Speller) -> str | bytes | None: ...


def spelled(text: Text | TableText, spell: Speller) -> str | bytes | Table | None:
    """``text`` as the interface prints it: words and text functions spelled, the rest as is."""
    if isinstance(text, Words):
        return text.spell(spell)
    if callable(text):
        return text(spell)
    return text


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


@dataclass(frozen=True, slots=True, eq=False)
class Result(Generic[P]):
    """What a command answers: ``data`` for ``--json``, ``text``/``table`` for people.

    A value: the pipeline adds its price to ``meta`` and the next call with :meth:`with_meta`
    and :func:`dataclasses.replace`, building a new result. ``Result[P]`` is a result whose
    ``data`` is a ``P`` (a JSON value, see :data:`Payload`); ``Result[object]`` is any result."""

    command: str
    data: P = None  # type: ignore[assignment]  # None is every payload's "no data"
    text: Text = None
    table: TableText | None = None
    meta: Meta = field(default_factory=lambda: Meta())
    warnings: Sequence[str] = ()
    notices: Sequence[str | Words] = ()  # human-only lines for stderr
    exit_code: int = 0
    style: str | None = None  # rendering hint: "diff", "json", "lines", "pointer"
    next: Call | None = None
    price: int | None = None
    charge: Charge | None = None

    def with_meta(self, meta: Meta) -> Result[P]:
        """This result with the keys of ``meta`` set over its own (built field by field:
        :func:`dataclasses.replace` costs ~15 us, and a warm call takes several)."""
        merged: Meta = {**self.meta, **meta}
        return Result(command=self.command, data=self.data, text=self.text, table=self.table,
                      meta=merged, warnings=self.warnings, notices=self.notices,
                      exit_code=self.exit_code, style=self.style, next=self.next,
                      price=self.price, charge=self.charge)


def compact_json(value: object) -> str:
    """One-line JSON text of ``value``; integers beyond 64 bits stay exact."""
    from scratch.jsonvalues import dumps  # JSON numbers exactly as stored
    return dumps(value).decode("utf-8", errors="backslashreplace")
