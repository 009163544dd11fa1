"""calls: the call ledger (:mod:`scratch.store.ledger`) as a table, newest last.

What each call through any interface did: when, through which interface, which command with
which arguments, how it ended (ok, or the refusal or error code), what it charged, what entry
and version it touched, how long it took.

Invariants:
- Whose calls: over MCP the session's own agent's only (the interface gives ``agent``; no
  tool argument names another agent); on the CLI the agent named with ``--agent`` or
  ``SCRATCH_AGENT``, else every agent's; likewise the session named, else every session.
- A page: ``limit`` calls, newest last; ``offset`` skips that many of the newest, so the next
  page back is ``offset + limit``.
- A call's ``answer`` (what the agent got back, up to 60,000 characters) is not in the data:
  pricing a page of calls with their answers would put them all in the context again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.kernel.rendering import table_text
from scratch.answers.kernel.result import Result, Table, Words
from scratch.calls import Call
from scratch.declare import Arg as ArgDoc
from scratch.declare import Command, Tool
from scratch.errors import UsageError, argument

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Speller
    from scratch.calls import Arg, ArgValue
    from scratch.store.ledger import ArgPreview, Record

SINCE = ArgDoc("Only calls at or after TIME: an ISO time (2026-12-02T00:41, a date; UTC unless "
            "it says) or a duration back from now (90s, 10m, 2h, 3d).", flags=("--since",),
            metavar="TIME", max_length=64, show_default=False)
LIMIT = ArgDoc("At most this many calls (the newest of the page).", flags=("--limit",),
            metavar="N", minimum=1, maximum=1000)
OFFSET = ArgDoc("Skip this many of the newest calls (the page before: offset + limit).",
             flags=("--offset",), metavar="N", minimum=0)
VIA = {"cli": "cli", "mcp-stdio": "stdio", "mcp-http": "http", "proxy": "proxy"}


def _outcome(rec: Record) -> str:
    return "ok" if rec["outcome"] == "ok" else f"{rec['outcome']} {rec['code'] or ''}".rstrip()


def spell_recorded(c: Call, spell: Speller) -> str:
    """A recorded call as ``spell`` writes it; the arguments it cannot write (what a write or
    ingest read from stdin, as the ledger's preview of it; an argument of another release)
    follow as a comment, ``  # name=value``."""
    from scratch.answers.kernel.result import compact_json
    try:
        return spell(c)
    except (KeyError, ValueError, TypeError):
        pass
    kept: dict[str, ArgValue] = {}
    rest: list[str] = []
    for key, value in c.args.items():
        try:
            spell(Call(c.command, {key: value}))
            kept[key] = value
        except (KeyError, ValueError, TypeError):
            rest.append(f"{key}={compact_json(value)}")
    try:
        line = spell(Call(c.command, kept))
    except (KeyError, ValueError, TypeError):  # a command this release does not have
        line = " ".join([c.command, *(f"{k}={compact_json(v)}" for k, v in kept.items())])
    return line + ("  # " + " ".join(rest) if rest else "")


def _call_text(rec: Record, spell: Speller, width: int = 60) -> str:
    """The call as this interface spells it (``head pods -n 50`` on the CLI, without the
    program's name; a tool and its arguments over MCP), cut to ``width``; a usage event
    (:mod:`scratch.runs.usage`) as its figures."""
    from scratch.answers.kernel.result import compact_json
    if rec.get("event"):
        a = rec["args"]
        text = (f"{rec['event']} {a.get('tokens_intercepted', 0):,} intercepted "
                f"{a.get('tokens_extracted', 0):,} extracted")
        return text if len(text) <= width else text[:width - 1] + "…"
    text = spell_recorded(recorded_call(rec["command"], rec["args"]),
                          spell).removeprefix("scratch ")
    if text.startswith("{"):  # a tool call (MCP): its name, then its arguments
        import json
        try:
            spelled = json.loads(text)
            text = f"{spelled['name']} {compact_json(spelled.get('arguments') or {})}"
        except (ValueError, KeyError, TypeError):
            pass
    return text if len(text) <= width else text[:width - 1] + "…"


def recorded_call(command: str, args: Mapping[str, ArgPreview]) -> Call:
    """A ledger record's call, its previews as a call's arguments (:func:`_arg`)."""
    return Call(command, {k: _arg(v) for k, v in args.items()})


def _arg(value: ArgPreview) -> Arg:
    """A kept argument as a call's: a list of strings stays one, anything else its text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    from scratch.answers.kernel.result import compact_json
    return compact_json(value)


def _entry(rec: Record) -> str:
    if not rec.get("entry"):
        return ""
    version = rec.get("version")
    return f"{rec['entry']}@{version}" if version is not None else str(rec["entry"])


def calls(ctx: Context, since: Annotated[str | None, SINCE] = None,
          limit: Annotated[int, LIMIT] = 20, offset: Annotated[int, OFFSET] = 0, *,
          agent: str | None = None) -> Result[Mapping[str, object]]:
    """The ledger's calls (see the module docstring); ``agent`` is the interface's to give."""
    from scratch.store import ledger
    who = agent if agent is not None else (ctx.agent if "agent" in ctx.named else None)
    session = ctx.session if "session" in ctx.named else None
    floor = None
    if since is not None:
        try:
            floor = ledger.parse_since(since)
        except ValueError:
            raise UsageError(f"{argument('since')} must be an ISO time (2026-12-02T00:41) or a "
                             f"duration (90s, 10m, 2h, 3d), not {since!r}",
                             code="invalid_argument", argument="since") from None
    found = ledger.read(ctx.root, agent=who, session=session, since=floor)
    total = len(found)
    end = max(0, total - offset)
    page = found[max(0, end - limit):end]
    dropped = ledger.dropped(ctx.root, who)
    # the columns a person reads (the JSON has every field): the agent and the session only
    # when more than one may be shown
    columns = ["seq", "time", "via", *(["agent"] if who is None else []),
               *(["session"] if session is None else []), "call", "outcome", "tokens",
               "entry", "ms"]

    def rows(spell: Speller) -> list[list[object]]:
        return [[r["seq"], r["time"][5:19].replace("T", " "),
                 VIA.get(r["interface"], r["interface"]),
                 *([r["agent"]] if who is None else []),
                 *([r["session"]] if session is None else []),
                 _call_text(r, spell), _outcome(r), r["tokens"], _entry(r), f"{r['ms']:.1f}"]
                for r in page]
    # a record's answer stays out (it may hold thousands of tokens; scratch ui shows it)
    shown = [{k: v for k, v in r.items() if k != "answer"} for r in page]
    data = {"agent": who, "session": session, "since": floor, "total": total,
            "offset": offset, "limit": limit, "dropped": dropped, "calls": shown}
    notices: list[str | Words] = []
    earlier = end - len(page)
    if earlier > 0:
        from scratch.calls import call
        notices.append(Words((f"{earlier} earlier call{'' if earlier == 1 else 's'}: ",
                              call("calls", since=since, limit=limit, offset=offset + limit))))
    if dropped:
        notices.append(f"{dropped} older call{'' if dropped == 1 else 's'} dropped to keep the "
                       "ledger within ledger.max_bytes")
    if not page:
        return Result("calls", data=data, text="no calls recorded\n", notices=notices)
    # aligned plain lines on every interface, as a log reads (a boxed table folds every cell
    # of a row this wide on an 80-column terminal)
    return Result("calls", data=data, text=lambda spell: table_text(Table(columns, rows(spell))),
                  notices=notices)


COMMAND = Command(
    "calls", "The call ledger: every call through the CLI, MCP or the proxy, newest last "
    "(time, interface, agent, session, command and arguments, outcome, tokens, entry, ms).\n\n"
    "With --agent or --session (or SCRATCH_AGENT / SCRATCH_SESSION) only that agent's or "
    "session's calls; else every agent's.\n\n"
    "Example: scratch calls --since 10m --limit 50",
    calls,
    tools=(Tool("list_calls", "This agent's calls to scratch, newest last: command and "
                "arguments, outcome (ok, refused or error with its code), tokens charged, entry "
                "and version, milliseconds.", toolset="session"),))
