"""The one place an MCP tool call reaches the core: ``run_tool(name, arguments, session)``.

Everything else in :mod:`scratch.mcp` deals in tool specs, sessions and SDK types; only this
module knows which core function answers which command. Today it calls the core functions
directly (``scratch.explore.*``, ``scratch.ops.*``, ``scratch.ingest``) on a
:class:`~scratch.context.Context` built per call with ``json_mode`` on, prices the answer as
the CLI's ``--json`` does, counts it in the agent's stats, and reads the CLI lines of
suggestions and ``next`` back into calls (:mod:`scratch.mcp.shellcalls`). When the answers
layer lands, the body of :func:`_answer` becomes ``Call(command, args)`` run on it and the
interim helpers go; the signature and :class:`ToolOutcome` stay.

What the swap needs from the answers layer (each interim helper below stands in for one):
- ``run(Call, ctx) -> Answer(data, text, meta, next)`` with suggestions and ``next`` as Calls
  (then :mod:`scratch.mcp.shellcalls` and :func:`_pointer_text` go: the pointer's menu and the
  "[N chars: scratch get-in ...]" cells of iterate-over should be Calls or neutral text);
- pricing, the stats counters and the checks the CLI does on input today (``write``'s size
  and empty-content limits, done here in :func:`_store_answer`) done inside the layer, once;
- ``read``'s binary switch as an argument rather than "is stdout a terminal";
- ``stats`` narrowed to one agent as an option (:func:`_usage_stats` filters it here);
- a hook for a per-process index cache keyed by ``<blob>.<format>`` (immutable), so a warm
  server keeps recently used indexes open instead of reopening them on every call.

Invariants:
- A tool result is either an answer (``ok``) or an error object with a stable ``code``, the
  same object the CLI prints under ``--json``'s ``error``, its suggestions as tool calls.
- A ScratchError never escapes; any other exception becomes ``internal_error`` with a
  message (never a traceback), and nothing half-done is left: the core's writes are atomic.
- The text of an answer is what the CLI prints on stdout in human mode; its diagnostics
  (warnings, the token footer, ``next``) come as a second text, as the CLI's stderr.
"""

from __future__ import annotations

import io
from typing import Any, NamedTuple

from scratch.context import Context
from scratch.errors import ScratchError, UsageError
from scratch.mcp.session import Session
from scratch.mcp.shellcalls import parse_cli_line
from scratch.mcp.specs import BY_NAME, ArgumentError, ToolSpec, to_core_args, to_tool_call
from scratch.result import Result, compact_json


class ToolOutcome(NamedTuple):
    ok: bool
    tool: str
    command: str
    text: str  # the answer (human text), or the error object as JSON text
    notes: str  # diagnostics: warnings, next, the token footer ("" when none)
    structured: dict[str, Any]  # {"data", "meta"} of an answer, or the error object
    links: list[dict[str, Any]]  # resource links: {"uri", "name", "mimeType", "size"}
    tokens: int | None  # what the answer was charged
    code: str | None = None  # the error code


def run_tool(name: str, arguments: Any, session: Session) -> ToolOutcome:
    """Run one tool call for ``session``; never raises."""
    spec = BY_NAME.get(name)
    if spec is None:
        return _error(name, "", UsageError(
            f"unknown tool {name!r}; tools/list names them", code="unknown_tool", tool=name))
    try:
        args = to_core_args(spec, arguments)
        ctx = session.context()
        result = _answer(spec, args, ctx)
        return _success(spec, ctx, result)
    except ScratchError as exc:
        return _error(name, spec.command, exc)
    except RecursionError:
        return _error(name, spec.command, ScratchError(
            "the answer is nested too deeply to build", code="internal_error"))
    except Exception as exc:  # a bug: say so in one line; the server keeps serving
        return _error(name, spec.command, ScratchError(
            f"unexpected {type(exc).__name__}: {exc}", code="internal_error"))


# -- the core, as it is today -----------------------------------------------------------------

def _answer(spec: ToolSpec, a: dict[str, Any], ctx: Context) -> Result:
    """Run core command ``spec.command`` with core arguments ``a`` (contract names)."""
    cmd = spec.command
    if cmd in ("head", "tail"):
        from scratch.explore import lines
        fn = lines.head if cmd == "head" else lines.tail
        result = fn(ctx, a["ref"], a["lines"], numbers=a["numbers"], fit=a["fit"])
    elif cmd == "slice":
        from scratch.explore.lines import slice_
        result = slice_(ctx, a["ref"], a["start"], a["end"], numbers=a["numbers"],
                        fit=a["fit"], from_byte=a.get("from_byte"))
    elif cmd == "read":
        from scratch.explore import read
        if a.get("since_version") is not None:
            result = read.read_since(ctx, a["ref"], a["since_version"], a.get("context", 3))
        else:
            # the answer goes into a model as text: binary content only when asked for
            result = read.read(ctx, a["ref"], raw=a.get("raw", False), is_terminal=True,
                               fit=a["fit"])
    elif cmd == "grep":
        from scratch.explore import grep
        common = {k: a[k] for k in ("context", "ignore_case", "fixed", "invert")}
        if a.get("all"):
            result = grep.grep_all(ctx, a["pattern"], max_count=a.get("max_count"), **common)
        else:
            result = grep.grep(ctx, a["ref"], a["pattern"], max_count=a.get("max_count"),
                               fit=a["fit"], from_line=a["from_line"], **common)
    elif cmd == "schema":
        from scratch.explore.structure import schema
        result = schema(ctx, a["ref"], a["depth"])
    elif cmd == "get-in":
        from scratch.explore.structure import get_in
        result = get_in(ctx, a["ref"], a["path"], offset=a["offset"], limit=a.get("limit"),
                        fit=a["fit"])
    elif cmd == "item-schema":
        from scratch.explore.items import item_schema
        result = item_schema(ctx, a["ref"], a["path"], offset=a["offset"],
                             limit=a.get("limit"), depth=a.get("depth"))
    elif cmd == "iterate-over":
        from scratch.explore.items import iterate_over
        result = iterate_over(ctx, a["ref"], a["path"], ",".join(a["fields"]),
                              offset=a["offset"], limit=a.get("limit"), where=a.get("where"),
                              fit=a["fit"])
    elif cmd == "summarize":
        from scratch.explore.summarize import summarize
        result = summarize(ctx, a["ref"])
    else:
        result = _store_answer(cmd, a, ctx)
    _price(ctx, result)
    _record(ctx, cmd, result.meta)
    return result


def _store_answer(cmd: str, a: dict[str, Any], ctx: Context) -> Result:
    from scratch.ops import files, logs, tokens
    if cmd == "write":
        from scratch.names import validate_name
        validate_name(a["name"])
        data = a["content"].encode("utf-8", errors="surrogateescape")
        limit = ctx.config["limits.max_write_bytes"]
        if len(data) > limit:
            from scratch.errors import LimitExceeded
            raise LimitExceeded(f"content is over limits.max_write_bytes ({limit:,} bytes)",
                                code="write_too_large", limit="limits.max_write_bytes",
                                limit_value=limit, attempted_at_least=len(data))
        if not data and not a["allow_empty"]:
            raise UsageError("content was empty: nothing to store (allow_empty stores an "
                             "empty file)", code="empty_input")
        return files.write(ctx, a["name"], data)
    if cmd == "log append":
        return logs.append(ctx, a["name"], [e.encode("utf-8", errors="surrogateescape")
                                            for e in a["entries"]])
    if cmd == "log read":
        return logs.read(ctx, a["name"], a["since"], a["limit"], fit=a["fit"])
    if cmd == "log tail":
        return logs.tail(ctx, a["name"], a["lines"], fit=a["fit"])
    if cmd == "ls":
        return files.ls(ctx, a["prefix"])
    if cmd == "rm":
        return files.remove(ctx, a["name"])
    if cmd == "history":
        return files.history(ctx, a["name"])
    if cmd == "diff":
        from scratch.explore.read import diff
        return diff(ctx, a["name"], a["a"], a["b"], a["context"])
    if cmd == "restore":
        return files.restore(ctx, a["ref"])
    if cmd == "stats":
        return _usage_stats(ctx)
    if cmd == "ingest":
        from scratch.ingest import IngestOptions, ingest
        opts = IngestOptions(name=a.get("name"), tool=a.get("tool"), fmt=a.get("format"),
                             raw=a["raw"], store_always=a["store_always"])
        stream = io.BytesIO(a["content"].encode("utf-8", errors="surrogateescape"))
        return ingest(ctx, stream, opts)
    if cmd == "budget":
        return tokens.budget_show(ctx)
    if cmd == "budget reset":
        return tokens.budget_show(ctx, "reset")
    if cmd == "budget used":
        return tokens.budget_show(ctx, "used", a["tokens"])
    if cmd == "budget set-window":
        return tokens.budget_show(ctx, "set-window", a["tokens"] or None)
    raise UsageError(f"no core command {cmd!r}", code="unknown_tool")


def _usage_stats(ctx: Context) -> Result:
    """The CLI's stats narrowed to the caller's own agent (the CLI, a tool for people, shows
    every agent; an MCP client must not learn which other agents exist), plus this session's
    budget counters."""
    from scratch.ops import files
    from scratch.pricing import budget_for
    full = files.store_stats(ctx)
    rows = [r for r in full.data["agents"] if r["agent"] == ctx.agent]
    view = budget_for(ctx).status()
    session = {"session": ctx.session, **{k: view[k] for k in (
        "intercepted", "extracted", "calls", "used", "remaining")}}
    mine: dict[str, Any] = rows[0] if rows else {"agent": ctx.agent}
    data = {**mine, "session": session}
    counts: dict[str, int] = mine.get("operations") or {}
    ops = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    text = "".join(f"{k}: {v}\n" for k, v in (
        ("agent", ctx.agent), ("files", mine.get("files", 0)), ("logs", mine.get("logs", 0)),
        ("log entries", mine.get("log_entries", 0)), ("bytes", mine.get("bytes", 0)),
        ("operations", ops or "-"),
        ("tokens intercepted", mine.get("tokens_intercepted", 0)),
        ("tokens extracted", mine.get("tokens_extracted", 0)),
        ("session", f"{ctx.session}: {view['calls']} calls, {view['extracted']} extracted, "
                    f"{view['intercepted']} intercepted, {view['remaining']} left")))
    return Result("stats", data=data, text=text)


def _price(ctx: Context, result: Result) -> None:
    """As the CLI's --json: an answer checked before it was read is charged its envelope."""
    from scratch.pricing import PENDING, price_envelope
    if PENDING in result.meta:
        from scratch.render import envelope_text
        price_envelope(ctx, result.meta, lambda: envelope_text(result))


def _record(ctx: Context, command: str, meta: dict[str, Any]) -> None:
    """Count the operation and the tokens it kept out of (or put into) the context, in the
    same counters the CLI keeps (``scratch stats``)."""
    from scratch import stats
    counters: dict[str, int] = {}
    if meta.get("intercepted"):
        counters["tokens_intercepted"] = int(meta["intercepted"])
    elif "budget" in meta and meta.get("tokens"):
        counters["tokens_extracted"] = int(meta["tokens"]["count"])
    stats.record(ctx.root, ctx.agent, command, **counters)


# -- rendering for MCP --------------------------------------------------------------------------

def as_tool_call(line: Any) -> Any:
    """A suggestion or ``next`` as a tool call; what is not a command stays as it was."""
    if not isinstance(line, str):
        return line
    call = parse_cli_line(line)
    if call is None:
        return line
    return to_tool_call(*call) or line


def _calls(value: Any) -> Any:
    return [as_tool_call(v) for v in value] if isinstance(value, list) else as_tool_call(value)


def _human_text(result: Result) -> str:
    from scratch import render
    if result.text is not None:
        text = result.text
        return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    if result.table is not None:
        return render.plain_table(result.table)
    if result.data is not None:
        return render._plain_data(result.data)
    return ""


def _pointer_text(text: str) -> str:
    """The pointer's ``next:`` menu with tool calls in place of CLI lines."""
    out = []
    for line in text.splitlines(keepends=True):
        body = line.strip()
        if line.startswith("  scratch "):
            call = as_tool_call(body)
            if isinstance(call, dict):
                line = "  " + compact_json(call) + "\n"
        out.append(line)
    return "".join(out)


def _success(spec: ToolSpec, ctx: Context, result: Result) -> ToolOutcome:
    from scratch.render import footer
    data = result.data
    meta = dict(result.meta)
    if isinstance(data, dict):
        data = dict(data)
        if "next" in data:
            data["next"] = _calls(data["next"])
    if "next" in meta:
        meta["next"] = _calls(meta["next"])
    if result.warnings:
        meta["warnings"] = list(result.warnings)
    text = _human_text(result)
    if result.style == "pointer":
        text = _pointer_text(text)
    notes = [f"warning: {w}" for w in result.warnings]
    notes += [n for n in result.notices if not n.startswith("more: ")]
    if meta.get("next"):
        notes.append("more: " + compact_json(meta["next"]))
    line = footer(meta)
    if line:
        notes.append(line)
    links = []
    if result.command == "ingest" and isinstance(data, dict) and data.get("stored"):
        from scratch.mcp.resources import entry_link
        links.append(entry_link(ctx, data))
    tokens = meta.get("tokens", {}).get("count") if isinstance(meta.get("tokens"), dict) else None
    return ToolOutcome(True, spec.name, spec.command, text, "\n".join(notes),
                       {"data": data, "meta": meta}, links, tokens)


def _error(tool: str, command: str, exc: ScratchError) -> ToolOutcome:
    info = exc.to_dict()
    if "suggestions" in info:
        info["suggestions"] = _calls(info["suggestions"])
    if isinstance(exc, ArgumentError) and tool in BY_NAME:
        info.setdefault("input_schema", BY_NAME[tool].input_schema())
    return ToolOutcome(False, tool, command, compact_json(info), "", info, [], None,
                       exc.code)
