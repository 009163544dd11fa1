"""Usage events: when a worker finishes, what its calls kept out of and put into its context.

:func:`finish_worker` is the one function every way a worker finishes calls: ``scratch
finish`` and the MCP tool ``finish``, an MCP session that closes (the server), and a client's
hook (Claude Code's SubagentStop or Stop). It records the event in the agent's call ledger
(``scratch calls`` shows it), appends it to the run's events log when the worker is in a run
(``scratch runs RUN``, the UI), and hands it to every listener of this process
(:func:`on_usage`: the MCP server sends it to its clients).

The figures are those ``scratch stats`` counts (:func:`scratch.answers.kernel.execution.record`):
per call answered, the tokens of an output it stored instead of showing (``intercepted``), or
else the tokens it charged to the context (``extracted``); refused and failed calls count in
neither. They are read from the ledger: the worker's calls (its agent and session, and run and
iteration when in one) since its last usage event, so finishing twice never counts a call twice.

Invariants:
- An event nobody asked for (a session closing) with nothing intercepted or extracted is not
  recorded (as Aura never emits one with both counters 0); an explicit finish always is.
- Recording the ledger line never fails (:func:`scratch.store.ledger.append`); the run's log is one
  commit, or an error and nothing half-written (the store's log append).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from scratch.runs.events import UsageEvent, append_event
from scratch.runs.space import RunStore
from scratch.store import ledger

if TYPE_CHECKING:
    from scratch.store.config import Config

EVENT: Literal["scratchpad_usage"] = "scratchpad_usage"


class Usage(NamedTuple):
    tokens_intercepted: int
    tokens_extracted: int
    calls: int


def usage_of(records: Iterable[ledger.Record]) -> Usage:
    """The figures of ``records`` (call records, oldest first), as ``scratch stats`` counts."""
    intercepted = extracted = calls = 0
    for rec in records:
        if rec.get("event"):
            continue
        calls += 1
        if rec.get("outcome") != "ok":
            continue
        kept_out = int(rec.get("intercepted") or 0)
        if kept_out:
            intercepted += kept_out
        else:
            extracted += int(rec.get("tokens") or 0)
    return Usage(intercepted, extracted, calls)


def worker_calls(root: Path, agent: str, session: str | None, run: str | None,
                 iteration: int | None) -> list[ledger.Record]:
    """The worker's calls since its last usage event: ``agent``'s ledger records of
    ``session`` (any, when None) in ``run`` and ``iteration`` (outside any run, when None)."""
    mine = [r for r in ledger.read(root, agent=agent)
            if (session is None or r.get("session") == session)
            and r.get("run") == run and (run is None or r.get("iteration") == iteration)]
    last = max((i for i, r in enumerate(mine) if r.get("event") == EVENT), default=-1)
    return mine[last + 1:]


_LISTENERS: list[Callable[[UsageEvent], None]] = []
_LOCK = threading.Lock()


def on_usage(listener: Callable[[UsageEvent], None]) -> Callable[[], None]:
    """Call ``listener`` with every usage event this process records; returns the undo."""
    with _LOCK:
        _LISTENERS.append(listener)

    def off() -> None:
        with _LOCK:
            if listener in _LISTENERS:
                _LISTENERS.remove(listener)
    return off


def finish_worker(root: Path, *, agent: str, session: str, run: str | None = None,
                  iteration: int | None = None, interface: str = "cli", reason: str = "finish",
                  explicit: bool = True, coordinator: bool = False,
                  config: Config | None = None, max_ledger_bytes: int | None = None
                  ) -> UsageEvent | None:
    """Record that the worker (``agent``, ``session``, in ``run`` and ``iteration``) finished:
    the event, or None when it was not asked for (``explicit`` False) and there is nothing to
    report. ``interface`` names how (as the ledger does: cli, mcp-stdio, mcp-http, proxy, or a
    hook's); ``reason`` why."""
    from scratch.store import utc_now
    from scratch.store.names import validate_agent, validate_run
    validate_agent(agent)
    if run is not None:
        validate_run(run)
    figures = usage_of(worker_calls(root, agent, session, run, iteration))
    if not explicit and not (figures.tokens_intercepted or figures.tokens_extracted):
        return None
    event = UsageEvent(event=EVENT, time=utc_now(), agent=agent, session=session, run=run,
                       iteration=iteration if run is not None else None,
                       tokens_intercepted=figures.tokens_intercepted,
                       tokens_extracted=figures.tokens_extracted, calls=figures.calls,
                       reason=reason, interface=interface)
    if run is not None:  # the run's own record first: it is the one that can fail
        append_event(RunStore.open_run(root, run, agent, config), event)
    args: dict[str, ledger.ArgPreview] = {
        "tokens_intercepted": event["tokens_intercepted"],
        "tokens_extracted": event["tokens_extracted"], "calls": event["calls"],
        "reason": reason}
    ledger.append(root, ledger.make(interface=interface, agent=agent, session=session,
                                    command=EVENT, args=args, run=run, iteration=iteration,
                                    coordinator=coordinator, event=EVENT),
                  max_bytes=max_ledger_bytes if max_ledger_bytes is not None
                  else ledger.DEFAULT_MAX_BYTES)
    with _LOCK:
        listeners = list(_LISTENERS)
    for listener in listeners:
        try:
            listener(event)
        except Exception:  # noqa: BLE001,S112 - a listener never fails the finish
            continue
    return event
