"""The commands the answers layer serves: their names, and what each would answer.

Invariants:
- A command's module is imported only when the command runs (a cold CLI call pays for its own
  command only).
- ``describe`` has no side effects on the budget: it returns a candidate answer, or for
  commands that are not priced (writes, listings) their result.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import TYPE_CHECKING, Any

from scratch.errors import UsageError

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.rendering import Rendering
    from scratch.answers.kernel.result import Result
    from scratch.calls import Call

# command -> "module:function" under scratch.answers; the function takes (ctx, **args)
COMMANDS: dict[str, str] = {
    "head": "line_ranges:head",
    "tail": "line_ranges:tail",
    "slice": "line_ranges:slice_",
    "read": "reading:read",
    "diff": "reading:diff",
    "export": "reading:export",
    "schema": "shapes:schema",
    "get-in": "values:get_in",
    "item-schema": "item_shapes:item_schema",
    "iterate-over": "rows:iterate_over",
    "grep": "search:grep",
    "summarize": "summaries:summarize",
    "sql": "sql_answers:sql",
    "log append": "log_reads:append",
    "log read": "log_reads:read",
    "log tail": "log_reads:tail",
    "write": "entries:write",
    "history": "entries:history",
    "restore": "entries:restore",
    "rm": "entries:remove",
    "ls": "entries:ls",
    "stats": "entries:store_stats",
    "config": "entries:show_config",
    "config threshold": "entries:threshold",
    "tokens": "token_tools:tokens",
    "budget": "token_tools:budget_show",
    "budget used": "token_tools:budget_used",
    "budget reset": "token_tools:budget_reset",
    "budget set-window": "token_tools:budget_set_window",
    "ingest": "ingest:ingest_call",
    "run": "run_command:run_call",
}


@functools.cache
def command_function(command: str) -> Any:
    try:
        where = COMMANDS[command]
    except KeyError:
        raise UsageError(f"unknown command {command!r}", code="unknown_command",
                         command=command) from None
    module, function = where.split(":")
    return getattr(importlib.import_module(f"scratch.answers.{module}"), function)


@functools.cache
def _signature(fn: Any) -> inspect.Signature:
    return inspect.signature(fn)  # ~25 us each time: a warm server describes every call


@functools.cache
def _plain(fn: Any) -> tuple[frozenset[str], frozenset[str]] | None:
    """The keyword names ``fn`` takes after its context, and those it requires, when that is
    all there is to check (no positional-only or variadic parameter); else None."""
    params = list(_signature(fn).parameters.values())[1:]
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        return None
    return (frozenset(p.name for p in params),
            frozenset(p.name for p in params if p.default is p.empty))


def describe(ctx: Context, call: Call, rendering: Rendering | None = None
             ) -> Candidate | Result:
    """What ``call`` would answer, without charging anything. A command whose answer depends
    on how it is printed (the pointer's next calls are spelled and sized as the agent reads
    them) takes the ``rendering``."""
    fn = command_function(call.command)
    signature = _signature(fn)
    args: dict[str, object] = dict(call.args)
    if "rendering" in signature.parameters and rendering is not None:
        args["rendering"] = rendering
    plain = _plain(fn)
    if plain is not None and plain[1] <= args.keys() <= plain[0]:
        return fn(ctx, **args)  # what bind would accept, without binding (~10 us a call)
    try:
        bound = signature.bind(ctx, **args)
    except TypeError as exc:
        raise UsageError(f"{call.command}: {exc}", code="invalid_argument",
                         command=call.command) from None
    return fn(*bound.args, **bound.kwargs)


def describe_candidate(ctx: Context, call: Call) -> Candidate:
    """The candidate of ``call`` (a finished result is wrapped as one that cannot be cut)."""
    from scratch.answers.kernel.candidate import Candidate, Fixed
    produced = describe(ctx, call)
    if isinstance(produced, Candidate):
        return produced
    return Fixed(call, produced, code="")
