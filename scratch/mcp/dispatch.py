"""The one place an MCP tool call reaches the core: ``run_tool(name, arguments, session)``.

A tool call becomes a :class:`~scratch.calls.Call` of the core command its tool names
(:mod:`scratch.mcp.specs` checks and maps the arguments) and runs through the answers pipeline
(:func:`scratch.answers.kernel.execution.execute`) with the session's MCP rendering
(:mod:`scratch.mcp.rendering`), which prices the answer as the tool result shows it. What the
CLI checks on its own input is checked in the core, so both interfaces refuse the same things.

Invariants:
- A tool result is either an answer (``ok``) or an error object with a stable ``code``, the
  same object the CLI prints under ``--json``'s ``error``, its suggestions as tool calls.
- A ScratchError never escapes; any other exception becomes ``internal_error`` with a
  message (never a traceback), and nothing half-done is left: the core's writes are atomic.
- What the session decides is never a tool argument: ``get_usage_stats`` counts the session's
  own agent only (as ``list_calls`` lists its calls only), and the artifact tools act in
  the session's own run only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from scratch.answers.kernel.result import compact_json
from scratch.calls import Call
from scratch.errors import ScratchError, UsageError
from scratch.mcp.rendering import Link, ToolText, error_object
from scratch.mcp.specs import (
    RUN_COMMANDS,
    ArgumentError,
    CoreArgs,
    ToolSpec,
    spec_of,
    to_core_args,
)
from scratch.mcp.wire import JSON, JSONObject

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result
    from scratch.calls import ArgValue
    from scratch.mcp.serve.session import Session


class ToolOutcome(NamedTuple):
    ok: bool
    tool: str
    command: str
    texts: list[str]  # the text blocks of content: the answer, then its notes; or the error
    links: list[Link]  # resource_link blocks
    structured: JSONObject | None  # structuredContent (None: not sent)
    meta: JSONObject  # the result's _meta: scratch/tokens, scratch/budget, scratch/next
    tokens: int | None  # what the answer (or the refusal) was charged
    code: str | None = None  # the error code

    @property
    def text(self) -> str:
        return self.texts[0] if self.texts else ""


def core_call(spec: ToolSpec, args: CoreArgs, ctx: Context,
              supplied: Mapping[str, ArgValue] | None = None) -> Call:
    """The core call of a tool call whose arguments were checked (``args``: core names), with
    what the server hands the command in-process (``supplied``: the client's model)."""
    if supplied:
        args = {**args, **supplied}
    if spec.command in ("stats", "calls"):
        args = {**args, "agent": ctx.agent}  # one agent's figures: no other agent is named
    elif spec.command in RUN_COMMANDS:
        args = {**args, "run": ctx.run}  # the session's run: no other run is named
    return Call(spec.command, args)


def wire_result(outcome: ToolOutcome) -> JSONObject:
    """A tool outcome as the wire's ``CallToolResult`` object (the SDK's model of it is
    :func:`scratch.mcp.serve.server.call_result`, made from this)."""
    content: list[JSONObject] = [{"type": "text", "text": t} for t in outcome.texts]
    for link in outcome.links:
        block = {"type": "resource_link", "uri": link.uri, "name": link.name,
                 "mimeType": link.mime_type, "size": link.size,
                 "description": link.description}
        content.append({k: v for k, v in block.items() if v is not None})
    result: JSONObject = {"content": content, "isError": not outcome.ok}
    if outcome.structured is not None:
        result["structuredContent"] = outcome.structured
    if outcome.meta:
        result["_meta"] = outcome.meta
    return result


def run_tool(name: str, arguments: JSON, session: Session,
             rendering: ToolText | None = None,
             supplied: Mapping[str, ArgValue] | None = None) -> ToolOutcome:
    """Run one tool call for ``session``; never raises. ``name``: as the tool is offered;
    ``supplied``: arguments the server gives the command itself (see :func:`core_call`)."""
    spec = spec_of(name)
    if spec is None:
        return _error(name, "", UsageError(
            f"unknown tool {name!r}; tools/list names them", code="unknown_tool", tool=name))
    try:
        args = to_core_args(spec, arguments)
    except ScratchError as exc:  # refused before anything ran: the ledger still says so
        _record_refused(session, spec, arguments, exc)
        return _error(name, spec.command, exc)
    try:
        ctx = session.context()
        shown = rendering or session.rendering()
        from scratch.answers.kernel.execution import execute
        auto = not spec.read_only and ctx.config["sync.auto"]
        if auto:  # as after a CLI command: a change is synced in the background
            from scratch.sync.auto import after_command, head_before
            before = head_before(ctx.root)
        from scratch.sync.retention import configured
        retain = not spec.read_only and configured(ctx.config)
        if retain:  # a change may start the daily gc (scratch.sync.retention)
            from scratch.sync.auto import head_before as head_now
            gc_before = head_now(ctx.root)
        result = execute(ctx, shown, core_call(spec, args, ctx, supplied))
        if auto:
            after_command(spec.command, ctx.root, before)
        if retain:
            from scratch.sync.retention import after_command as retention_after
            retention_after(spec.command, ctx.root, gc_before, ctx.config)
        return _success(name, spec, shown, result)
    except ScratchError as exc:
        return _error(name, spec.command, exc)
    except RecursionError:
        return _error(name, spec.command, ScratchError(
            "the answer is nested too deeply to build", code="internal_error"))
    except ImportError as exc:  # a broken install: say what to reinstall
        from scratch.errors import missing_dependency
        return _error(name, spec.command, missing_dependency(exc, f"tool {name}"))
    except Exception as exc:  # a bug: say so in one line; the server keeps serving
        return _error(name, spec.command, ScratchError(
            f"unexpected {type(exc).__name__}: {exc}", code="internal_error"))


def _record_refused(session: Session, spec: ToolSpec, arguments: JSON,
                    exc: ScratchError) -> None:
    """The call ledger's record of a tool call whose arguments did not fit its schema (its
    arguments as the tool names them; what a write would store is never copied)."""
    import time

    from scratch.answers.kernel.recording import record_call
    started = time.perf_counter()
    given = dict(arguments) if isinstance(arguments, dict) else {}
    try:
        ctx = session.context()
    except ScratchError:
        return
    record_call(ctx, Call(spec.command, given), started, error=exc)


def _success(name: str, spec: ToolSpec, rendering: ToolText, result: Result[object]) -> ToolOutcome:
    shown = rendering.show(result)
    tokens = result.meta.get("tokens")
    count = tokens.get("count") if isinstance(tokens, dict) else None
    return ToolOutcome(True, name, spec.command, shown.texts, shown.links, shown.structured,
                       shown.meta, count, None)


def _error(tool: str, command: str, exc: ScratchError) -> ToolOutcome:
    """The error object as the one text block and as structuredContent: the text a refusal
    was priced on (:func:`scratch.mcp.rendering.error_text`), plus, for arguments that do not
    fit the schema (refused before anything ran, so not priced), the tool's input schema."""
    info = error_object(exc)
    spec = spec_of(tool)
    if isinstance(exc, ArgumentError) and spec is not None:
        info.setdefault("input_schema", spec.input_schema())
    meta: JSONObject = {}
    count = None
    if exc.charged:
        meta = {f"scratch/{k}": v for k, v in exc.charged.items()}
        count = exc.charged["tokens"]["count"]
    return ToolOutcome(False, tool, command, [compact_json(info)], [], info, meta, count,
                       exc.code)
