"""What an MCP tool result puts in front of the model, and so what an answer costs.

The answers pipeline prices what the agent reads (:mod:`scratch.answers.kernel.rendering`). An MCP
client hands the model either the result's ``content`` blocks or, when the result carries
``structuredContent``, that object serialised as JSON instead (Claude Code and VS Code do the
latter; most other clients the former). So that the price holds whichever route a client takes,
a result never carries two different things for the model:

- :class:`ToolText` (the default): no ``structuredContent``. ``content`` is the answer's text
  (what the CLI prints on stdout), then, when there is any, a second text block of notes
  (warnings, notices, ``more: NEXT`` and the token footer ``-- N tokens (ENC) · budget R of U
  left``), then for a stored output a ``resource_link``. The price is the token count of each
  text block, plus that of the link's JSON (``{"type": "resource_link", "uri", ...}`` as sent),
  summed. The footer states the price and the budget after it, so it is counted until the count
  it states is the count it has (``states_meta``). The result's ``_meta`` (``scratch/tokens``,
  ``scratch/budget``, ``scratch/next``) is protocol metadata that clients do not show the model,
  and is not counted.
- :class:`ToolJson` (``scratch mcp serve --structured``): ``structuredContent`` is the answer's
  ``{"data", "meta"}`` (the CLI's ``--json`` envelope without its version fields) and ``content``
  is one text block holding exactly that object as compact JSON, so both routes show the same
  text; the price is that text's tokens (plus the resource link's, as above, which only the
  ``content`` route shows).
- A refusal or error, in both: ``content`` is the error object as compact JSON and
  ``structuredContent`` the same object; its price is that text's tokens.

Calls inside an answer (suggestions, ``next``, the pointer's menu, a cut cell's hint) are tool
calls ``{"name": ..., "arguments": {...}}`` of :mod:`scratch.mcp.specs`; in text they are that
object as compact JSON. A call no tool spells (``export``, ``write`` from a file on disk) is
written ``command key=value ...`` in text and left out of a refusal's suggestions.

Nothing here imports the MCP SDK: blocks are plain dicts and strings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from scratch.answers.kernel.rendering import Rendering, envelope, footer, table_text
from scratch.answers.kernel.result import Result, compact_json, spelled
from scratch.calls import Call
from scratch.errors import ScratchError
from scratch.mcp.specs import not_offered, to_tool_call
from scratch.mcp.wire import JSON, JSONObject

if TYPE_CHECKING:
    from scratch.answers.kernel.result import Text
    from scratch.tokens import EncodingSpec


def tool_call(c: Call) -> JSONObject | None:
    """``c`` as an MCP tool call, or None when no tool spells it."""
    return to_tool_call(c.command, c.args)


def spell_call(c: Call) -> str:
    """``c`` as it is written inside text: the tool call's compact JSON."""
    found = tool_call(c)
    if found is not None:
        return compact_json(found)
    args = " ".join(f"{k}={compact_json(v)}" for k, v in c.args.items())
    return f"{c.command} {args}".rstrip()


def calls_data(value: object) -> JSON:
    """Calls in data as tool calls (a list of them, the pointer's menu, element-wise); a call
    no tool spells as its text."""
    if isinstance(value, Call):
        return tool_call(value) or spell_call(value)
    if isinstance(value, list) and value and isinstance(value[0], Call):
        return [calls_data(v) if isinstance(v, Call) else v for v in value
                if not (isinstance(v, Call) and not_offered(v.command, v.args))]
    return value


# how many upstream tools a hint names (the rest are counted)
NAMED_MAKERS = 8
# an entry argument of the proxy's tools names its server and one tool for example while their
# names take at most this many tokens (o200k_base, the yardstick of the tool list's price), so
# the list's price stays bounded whatever the upstreams are called
EXAMPLE_TOKENS = 6

def maker_names(limit: int) -> tuple[list[str], int]:
    """Up to ``limit`` of the proxy's upstream tools by the name offered, the reading ones
    first, and how many more there are."""
    from scratch.mcp.specs import upstream_tools
    names = [t.name for t in upstream_tools()]
    return names[:limit], max(0, len(names) - limit)


def upstream_servers() -> list[str]:
    from scratch.mcp.specs import upstream_tools
    return list(dict.fromkeys(t.server for t in upstream_tools()))


def entries_made(*, on_disk: bool) -> str:
    """How the caller of this server makes an entry, from the tools it offers: a proxy's
    upstream tools (a result over its threshold is stored, and its pointer names the entry),
    ``ingest``, ``write_file``; or that none of its tools can."""
    from scratch.mcp.specs import offered_name
    ways = []
    names, more = maker_names(NAMED_MAKERS)
    if names:
        listed = ", ".join(names) + (f", … {more} more" if more else "")
        ways.append(f"call a tool of {' or '.join(upstream_servers())} ({listed}): a result "
                    "over its threshold is stored as an entry, and the pointer you get "
                    "instead names it")
    ingest, write = offered_name("ingest"), offered_name("write_file")
    if ingest:
        ways.append(f"{ingest} stores a tool's output you pass as content")
    if write:
        ways.append(f"{write} stores text you pass as a versioned entry")
    where = "that is a path on disk, not an entry; " if on_disk else ""
    if not ways:
        return (f"{where}entries are stored tool outputs, and no tool of this server stores "
                "one: a big output is stored by 'scratch ingest' or 'scratch run' at a shell, "
                "or by 'scratch mcp proxy' in front of the server that returns it")
    return f"{where}entries are stored tool outputs: " + "; ".join(ways)


def entry_argument_text() -> str:
    """What an entry argument of the proxy's own tools says: how an entry comes to be, with
    its server and one of its tools for example (the entry_not_found hint names more)."""
    from scratch.tokens import count_text, resolve_encoding
    spec = resolve_encoding(None, "o200k_base")
    left = EXAMPLE_TOKENS
    servers = upstream_servers()
    tools = "an upstream tool"
    if len(servers) == 1 and count_text(servers[0], spec) <= left // 2:
        tools = f"a {servers[0]} tool"
        left -= count_text(servers[0], spec)
    example = next((f" (e.g. {n})" for n in maker_names(NAMED_MAKERS)[0]
                    if count_text(n, spec) <= left), "")
    return f"Entry a pointer names: a big result of {tools}{example} is stored, its pointer " \
           "returned."


def error_object(error: ScratchError) -> JSONObject:
    """The error object of a refusal or failure: ``code``, ``message``, the details, and the
    suggestions as tool calls (only those a tool can run; advice text stays text)."""
    from scratch.mcp.specs import argument_name
    info = error.to_dict(lambda name: argument_name(error.command, name))
    if "suggestions" in info:
        shown: list[object] = []
        for s in error.detail_list("suggestions"):
            if isinstance(s, Call):
                found = tool_call(s)
                if found is not None:
                    shown.append(found)
            else:
                shown.append(s)
        info["suggestions"] = shown
    return info


def error_text(error: ScratchError) -> str:
    return compact_json(error_object(error))


def data_text(data: object) -> str:
    if isinstance(data, dict) and all(not isinstance(v, (dict, list)) for v in data.values()):
        return "".join(f"{k}: {'' if v is None else v}\n" for k, v in data.items())
    return compact_json(calls_data(data)) + "\n"


def answer_text(result: Result[object]) -> str:
    """What the CLI prints on stdout for ``result``, calls spelled as tool calls; bytes that are
    not UTF-8 are shown with U+FFFD in their place."""
    text = spelled(result.text, spell_call)
    if text is not None:
        return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    if result.table is not None:
        return table_text(spelled(result.table, spell_call))
    if result.data is not None:
        return data_text(result.data)
    return ""


def notes_text(result: Result[object]) -> str:
    lines = [f"warning: {w}" for w in result.warnings]
    lines += [str(spelled(n, spell_call)) for n in result.notices]
    if result.next is not None:
        lines.append(f"more: {spell_call(result.next)}")
    shown = footer(result.meta)
    if shown:
        lines.append(shown)
    return "\n".join(lines)


class Link(NamedTuple):
    """A ``resource_link`` content block: a stored output's resource."""

    uri: str
    name: str
    mime_type: str
    size: int | None
    description: str

    def wire(self) -> JSONObject:
        out: JSONObject = {"type": "resource_link", "uri": self.uri, "name": self.name,
                               "mimeType": self.mime_type, "description": self.description}
        if self.size is not None:
            out["size"] = self.size
        return out


class Shown(NamedTuple):
    """One tool result as the client gets it (before the SDK's types)."""

    texts: list[str]  # the text blocks of ``content``, in order
    links: list[Link]  # resource_link blocks after them
    structured: JSONObject | None  # structuredContent (None: not sent)
    meta: JSONObject  # the result's _meta (never shown to the model)


class ToolText(Rendering):
    """The default: text blocks only (see the module docstring)."""

    name = "mcp"
    states_meta = True  # the footer states the count and the budget after it
    text_prices = False  # the footer costs too: a price of the text alone is not the cost

    def __init__(self, link: Callable[[Result[object]], Link | None] | None = None) -> None:
        # link(result) -> Link | None: the resource a stored output's pointer links to
        self.link = link
        self._memo: dict[int, tuple[Text, int]] = {}
        # counts of notes blocks (they come back)
        self._notes: dict[tuple[str, EncodingSpec], int] = {}

    def spell(self, call: Call) -> str:
        return spell_call(call)

    def entries_made(self, *, on_disk: bool) -> str | None:
        return entries_made(on_disk=on_disk)

    def call_data(self, call: Call) -> JSON:
        """``call`` as a tool call; None when the tool that spells it is not offered (the
        pointer leaves it out)."""
        if not_offered(call.command, call.args):
            return None
        return tool_call(call) or spell_call(call)

    def links(self, result: Result[object]) -> list[Link]:
        found = self.link(result) if self.link is not None else None
        return [found] if found is not None else []

    def show(self, result: Result[object]) -> Shown:
        texts = [answer_text(result)]
        notes = notes_text(result)
        if notes:
            texts.append(notes)
        meta: JSONObject = {}
        for key in ("tokens", "budget"):
            if key in result.meta:
                meta[f"scratch/{key}"] = result.meta[key]
        if result.next is not None:
            meta["scratch/next"] = calls_data(result.next)
        return Shown(texts, self.links(result), None, meta)

    def shown(self, result: Result[object]) -> str:
        """The result's text blocks, as the client gets them (answer, then its notes)."""
        return "\n".join(self.show(result).texts)

    def cost(self, result: Result[object], spec: EncodingSpec) -> int:
        shown = self.show(result)
        # the answer's text is counted once per result (the pipeline measures a result again
        # as its footer's figures settle; only the notes change)
        first = self._memo.get(id(result))
        if first is None or first[0] is not result.text:
            first = (result.text, self._count(shown.texts[0], spec))
            self._memo = {id(result): first}
        return first[1] + sum(self._counted(t, spec) for t in shown.texts[1:]) + sum(
            self._counted(compact_json(link.wire()), spec) for link in shown.links)

    def _counted(self, text: str, spec: EncodingSpec) -> int:
        """``_count`` of a small block, remembered: as a footer's figures settle the pipeline
        prices the same notes again."""
        key = (text, spec)
        found = self._notes.get(key)
        if found is None:
            if len(self._notes) >= 32:
                self._notes.clear()
            found = self._notes[key] = self._count(text, spec)
        return found

    @staticmethod
    def _count(text: str, spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        return count_text(text, spec) if text else 0

    def error_cost(self, command: str, error: ScratchError, spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        return count_text(error_text(error), spec)


class ToolJson(ToolText):
    """``--structured``: the answer's ``{"data", "meta"}`` as structuredContent and, as the one
    text block, the same object as compact JSON."""

    name = "mcp-json"
    shows_data = True  # the {"data", "meta"} envelope, not the text

    def envelope(self, result: Result[object]) -> JSONObject:
        """The answer's ``{"data", "meta"}`` (built where every interface's envelope is:
        :func:`scratch.answers.kernel.rendering.envelope`), calls as tool calls."""
        return envelope(result, calls_data, calls_data, versioned=False, text_data=answer_text,
                        spell_notice=lambda n: str(spelled(n, spell_call)))

    def show(self, result: Result[object]) -> Shown:
        envelope = self.envelope(result)
        meta = {f"scratch/{k}": result.meta[k] for k in ("tokens", "budget") if k in result.meta}
        if result.next is not None:
            meta["scratch/next"] = calls_data(result.next)
        return Shown([compact_json(envelope)], self.links(result), envelope, meta)

    def cost(self, result: Result[object], spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        shown = self.show(result)
        return (sum(count_text(t, spec) for t in shown.texts)
                + sum(count_text(compact_json(link.wire()), spec) for link in shown.links))


class ResourcePage(Rendering):
    """``resources/read``: the page's text is the whole of what is shown (no notes)."""

    name = "mcp-resource"

    def spell(self, call: Call) -> str:
        return spell_call(call)

    def entries_made(self, *, on_disk: bool) -> str | None:
        return entries_made(on_disk=on_disk)

    def call_data(self, call: Call) -> JSON:
        if not_offered(call.command, call.args):
            return None
        return tool_call(call) or spell_call(call)

    def error_cost(self, command: str, error: ScratchError, spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        return count_text(error_text(error), spec)
