"""finish: the worker is done; record its usage event (``scratchpad_usage``).

The event counts the worker's calls since its last one (:func:`scratch.runs.finish_worker`):
tokens intercepted and extracted as ``scratch stats`` counts them. Over MCP the server also
sends it to the client as a log notification (:mod:`scratch.mcp.serve.events`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.result import Result
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.runs.events import UsageEvent


def finish(ctx: Context) -> Result[UsageEvent]:
    from scratch.runs import finish_worker
    from scratch.store import ledger
    if ctx.coordinator:  # no scratchpad: the store only, made if needed
        from scratch.store import Store
        Store.open(ctx.root, ctx.agent, ctx.config)
    else:
        ctx.store()
    event = finish_worker(ctx.root, agent=ctx.agent, session=ctx.session, run=ctx.run,
                          iteration=ctx.iteration, interface=ctx.interface, reason="finish",
                          coordinator=ctx.coordinator, config=ctx.config,
                          max_ledger_bytes=int(ctx.config.get("ledger.max_bytes",
                                                              ledger.DEFAULT_MAX_BYTES)))
    assert event is not None  # an explicit finish is always recorded
    where = (f" in run {event['run']} (iteration {event['iteration']})"
             if event["run"] is not None else "")
    from scratch.words import plural
    text = (f"finished: agent {event['agent']}{where}, session {event['session']}: "
            f"{event['tokens_intercepted']:,} tokens intercepted, {event['tokens_extracted']:,} "
            f"extracted over {plural(event['calls'], 'call')}\n")
    return Result("finish", data=event, text=text)


COMMAND = Command(
    "finish", "Say this worker is done: record its usage event (scratchpad_usage: agent, run, "
    "iteration, tokens intercepted and extracted since its last one) in the call ledger and "
    "the run's events.\n\nExample: scratch finish --run r1 --agent w1",
    finish,
    tools=(Tool("finish", "Say this worker is done: records (and notifies) its usage event, "
                "the tokens this scratchpad intercepted and extracted.", read_only=False,
                toolset="run"),))
