"""How an interface prints answers, as far as pricing needs to know.

The answers pipeline prices what the agent reads, so it asks the interface's
:class:`Rendering` to measure a result as it will be printed and to spell the calls it names.
Interfaces implement it: the CLI (plain text, or the ``--json`` envelope, with calls spelled as
shell lines) and MCP (tool results, with calls spelled as tool calls). Nothing here prints.

Invariants:
- ``cost(result, spec)`` is the exact token count of what is printed for ``result`` with its
  ``meta`` as filled in; a rendering whose output holds ``meta`` (the JSON envelope states its
  own count and the budget after it) says so with ``states_meta``.
- ``text_prices``: the rendering prints a result's ``text`` and nothing else that costs, so a
  price the index already knows (``Result.price``) is its cost.
- ``shows_data``: of a result with both ``text`` and ``data`` (a pointer), the rendering shows
  the data (as JSON), not the text; what is sized to a rule (the pointer's) is what is shown.
- Every interface that shows an answer as JSON builds it with :func:`envelope` (and a failure
  with :func:`error_envelope`): one place decides its keys, each interface only how a call in
  it is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

# the version of the JSON envelope (``"scratch"``): a change of its keys' meaning changes it
ENVELOPE_VERSION = 1

if TYPE_CHECKING:
    from scratch.answers.kernel.result import Meta, Result, Table, Words
    from scratch.calls import Call
    from scratch.errors import ScratchError
    from scratch.tokens import EncodingSpec


class Rendering:
    """Base: plain text on stdout (its cost: the text's tokens, or the index's price)."""

    name = "text"
    states_meta = False
    text_prices = True
    shows_data = False

    def spell(self, call: Call) -> str:
        raise NotImplementedError

    def call_data(self, call: Call) -> object:
        """A call as structured output carries it (the pointer's ``next`` in JSON); here its
        command and arguments, an interface's own spelling in an override."""
        return {"command": call.command, "args": call.args}

    def entries_made(self, *, on_disk: bool) -> str | None:
        """How a caller of this interface makes an entry, said where a name is unknown
        (``on_disk``: the name is a file on disk); None: nothing to say. Here the commands a
        shell has (an MCP rendering says it from the tools its server offers)."""
        if not on_disk:
            return None
        return ("that is a path on disk: entries are stored first (write stores a file as a "
                "versioned entry, ingest stores a tool's output from stdin)")

    def cost(self, result: Result[object], spec: EncodingSpec) -> int:
        if self.text_prices and result.price is not None:
            return result.price
        from scratch.answers.kernel.result import spelled
        from scratch.tokens import count_text
        text = spelled(result.text, self.spell)
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        return count_text(text, spec) if text else 0

    def error_cost(self, command: str, error: ScratchError, spec: EncodingSpec) -> int:
        raise NotImplementedError

    def shown(self, result: Result[object]) -> str:
        """What this interface hands the agent for ``result``, as text (the call ledger keeps
        it): here the answer's text with its calls spelled, a table as plain columns, data
        alone as JSON; an interface that shows more (an envelope, notes) says so."""
        from scratch.answers.kernel.result import compact_json, spelled
        text = spelled(result.text, self.spell)
        if isinstance(text, bytes):
            return text.decode("utf-8", errors="replace")
        if text is not None:
            return text
        if result.table is not None:
            return table_text(spelled(result.table, self.spell))
        if result.data is None:
            return ""
        try:
            return compact_json(result.data) + "\n"
        except TypeError:  # data holding values JSON does not (calls): its text form
            return str(result.data) + "\n"


class PlainCalls(Rendering):
    """For callers of the core without an interface (the library API, tests): calls spelled
    as ``command key=value ...``, errors priced on their message."""

    name = "plain"

    def spell(self, call: Call) -> str:
        from scratch.answers.kernel.result import compact_json
        args = " ".join(f"{k}={compact_json(v)}" for k, v in call.args.items())
        return f"{call.command} {args}".rstrip()

    def error_cost(self, command: str, error: ScratchError, spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        return count_text(f"{error.code}: {error.message}\n", spec)


# -- plain text every interface shows alike ------------------------------------------------


def footer(meta: Meta) -> str | None:
    """``-- 1,234 tokens (o200k_base) · budget 5,000 of 10,000 left`` (and the budget's
    warning): the cost line the CLI writes to stderr and an MCP result carries as a note."""
    tokens = meta.get("tokens")
    if tokens is None:
        return None
    unit = "token" if tokens["count"] == 1 else "tokens"
    parts = [f"{tokens['count']:,} {unit} ({tokens['encoding']}"
             + ("" if tokens.get("exact", True) else ", estimate") + ")"]
    budget = meta.get("budget")
    if budget:
        parts.append(f"budget {budget['remaining']:,} of {budget['usable']:,} left")
        if budget.get("warning"):
            parts.append(budget["warning"])
    return "-- " + " · ".join(parts)


def table_text(table: Table) -> str:
    """A table as aligned plain columns (what the CLI prints to a pipe)."""
    rows = [list(table.columns)] + [["" if v is None else str(v) for v in row]
                                    for row in table.rows]
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(table.columns))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    return "\n".join(lines) + "\n"


def envelope(result: Result[object], spell_value: Callable[[object], object],
             spell_next: Callable[[Call], object], *, versioned: bool = True,
             text_data: Callable[[Result[object]], str] | None = None,
             spell_notice: Callable[[str | Words], str] | None = None) -> dict[str, object]:
    """The JSON of an answer: ``{"data", "meta"}``, after ``{"scratch", "ok", "command"}`` when
    ``versioned`` (the CLI's ``--json``; MCP's ``--structured`` shows the answer alone).

    ``data`` is the result's, each value written by ``spell_value`` (the calls in it as the
    interface writes calls); ``next`` goes under ``data`` when it is an object, else under
    ``meta``, written by ``spell_next``; ``meta`` holds the result's meta and its warnings.
    ``text_data``: an answer that is only text is ``{"text": text_data(result)}``;
    ``spell_notice``: the notices go under ``meta`` too, each written by it.
    """
    data: object = result.data
    if isinstance(data, dict):
        data = {k: spell_value(v) for k, v in data.items()}
    elif data is None and text_data is not None and result.text is not None:
        data = {"text": text_data(result)}
    meta: dict[str, object] = dict(result.meta)
    if result.next is not None:
        nxt = spell_next(result.next)
        if isinstance(data, dict):
            data["next"] = nxt
        else:
            meta["next"] = nxt
    if result.warnings:
        meta["warnings"] = list(result.warnings)
    if spell_notice is not None and result.notices:
        meta["notices"] = [spell_notice(n) for n in result.notices]
    body = {"data": data, "meta": meta}
    if not versioned:
        return body
    return {"scratch": ENVELOPE_VERSION, "ok": True, "command": result.command, **body}


def error_envelope(command: str, error: dict[str, object]) -> dict[str, object]:
    """The JSON of a failure: ``{"scratch", "ok": false, "command", "error"}``, ``error`` the
    error object as the interface writes it (at least ``code`` and ``message``)."""
    return {"scratch": ENVELOPE_VERSION, "ok": False, "command": command, "error": error}
