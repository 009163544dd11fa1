"""The commands the answers layer serves, and the one way every interface runs them.

An interface turns its input into a :class:`~scratch.calls.Call` and hands it to
:func:`execute` with its :class:`~scratch.answers.kernel.rendering.Rendering`; it gets back the
final :class:`~scratch.answers.kernel.result.Result` (priced and charged when it is an answer) or a
:class:`~scratch.errors.ScratchError`.

Invariants:
- What a command would answer is described without side effects
  (:mod:`scratch.answers.kernel.catalogue`); pricing, charging and the operation counters happen in
  :func:`execute`, after the answer is final.
- Every call :func:`execute` runs, answered, refused or failed, is appended to its agent's call
  ledger (:mod:`scratch.answers.kernel.recording`), whichever interface it came through.
"""

from __future__ import annotations

from time import perf_counter
from typing import TYPE_CHECKING

from scratch.answers.kernel.catalogue import describe, describe_candidate

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.rendering import Rendering
    from scratch.answers.kernel.result import Meta, Result
    from scratch.calls import Call

__all__ = ["describe", "describe_candidate", "execute", "record"]

def execute(ctx: Context, rendering: Rendering, call: Call) -> Result[object]:
    """Run ``call``: its answer delivered (fitted, priced, charged), or its result; counted."""
    from scratch.answers.kernel.candidate import Candidate
    from scratch.answers.kernel.fitting import charge_result, deliver
    from scratch.answers.kernel.recording import record_call
    from scratch.errors import ScratchError
    started = perf_counter()
    produced: Candidate | Result[object] | None = None
    try:
        produced = describe(ctx, call, rendering)
        if isinstance(produced, Candidate):
            result = deliver(ctx, rendering, produced)
        elif produced.charge is not None:
            result = charge_result(ctx, rendering, produced)
        else:
            result = produced
    except ScratchError as exc:
        if exc.command is None:
            exc.command = call.command
        _retry_with_close_names(exc, call)
        _say_how_entries_are_made(exc, rendering)
        record_call(ctx, call, started, error=exc, produced=produced)
        raise
    except Exception as exc:  # a bug: the interface reports it; the ledger says it happened
        record_call(ctx, call, started, error=exc, produced=produced)
        raise
    from scratch.answers.kernel.recording import redaction_meta
    result = redaction_meta(ctx, call, produced, result)
    record(ctx, call.command, result.meta)
    record_call(ctx, call, started, result=result, produced=produced, rendering=rendering)
    return result


def _retry_with_close_names(exc: Exception, asked: Call) -> None:
    """An unknown entry name that is close to some: suggest the call asked, with each close
    name in its place (the version asked kept), before the rest."""
    from scratch.errors import EntryNotFound
    if not isinstance(exc, EntryNotFound) or not exc.details.get("close_names"):
        return
    missing = str(exc.details.get("name"))
    for key, value in asked.args.items():
        if isinstance(value, str) and (value == missing or value.startswith(missing + "@")):
            tail = value[len(missing):]
            retries = [asked.with_args(**{key: f"{n}{tail}"})
                       for n in exc.detail_list("close_names")]
            rest = [s for s in exc.detail_list("suggestions")
                    if getattr(s, "command", None) != "head"]
            exc.details["suggestions"] = retries + rest
            return


def _say_how_entries_are_made(exc: Exception, rendering: Rendering) -> None:
    """An unknown entry name nothing else explains: the message ends with how the caller
    makes an entry, as the interface says it from the tools it offers (an MCP server offers
    no ``write`` and may offer no ``ingest``; the proxy's are its upstreams' tools)."""
    from scratch.errors import EntryNotFound
    if not isinstance(exc, EntryNotFound) or exc.unmade is None:
        return
    said = rendering.entries_made(on_disk=exc.unmade == "path")
    if said:
        exc.extend("; " + said)


def record(ctx: Context, command: str, meta: Meta) -> None:
    """Count the operation, and the tokens it kept out of (or put into) the context."""
    if not ctx.has_store():
        return
    from scratch.answers.kernel.recording import charged, intercepted
    from scratch.store import stats
    counters: dict[str, int] = {}
    if intercepted(meta):
        counters["tokens_intercepted"] = intercepted(meta)
    elif charged(meta):
        counters["tokens_extracted"] = charged(meta)
    stats.record(ctx.root, ctx.agent, command, **counters)
