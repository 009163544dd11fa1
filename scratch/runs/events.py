"""A run's events log: the iterations it started and the usage events of its workers.

Each event is one entry of the run's log ``events`` (``runs/<run>/logs/events.jsonl``, an
append-only log of the store, :mod:`scratch.store.logs`): ``{"event": "iteration",
"iteration": n, "agent": ...}`` when iteration n starts, ``{"event": "scratchpad_usage", ...}``
(a :class:`UsageEvent`) when a worker finishes.

Invariants:
- Every run has iteration 1; iteration n exists once an ``iteration`` event names n or more.
  A sync unions the log of both sides (:mod:`scratch.sync.merge`), so the latest iteration is
  the largest one named: two stores that each started iteration 2 have started the same one.
- Reading never creates anything; a missing or torn log reads as what it holds whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, TypedDict

import orjson

from scratch.calls import Step, suggest
from scratch.errors import NotFound, ScratchError
from scratch.runs.space import EVENTS, RunStore, run_dir


class UsageEvent(TypedDict):
    """``scratchpad_usage``: what one worker's calls kept out of and put into its context.

    ``tokens_intercepted`` and ``tokens_extracted`` are counted as ``scratch stats`` counts an
    agent's (:func:`scratch.runs.usage.usage_of`); ``calls`` is how many calls they cover;
    ``reason`` why the worker finished (``finish``, ``session_closed``, ``server_stopped``, or
    what a hook reports, such as ``subagent_stop``)."""

    event: Literal["scratchpad_usage"]
    time: str
    agent: str
    session: str
    run: str | None
    iteration: int | None
    tokens_intercepted: int
    tokens_extracted: int
    calls: int
    reason: str
    interface: str


class IterationEvent(TypedDict):
    event: Literal["iteration"]
    time: str
    iteration: int
    agent: str


class IterationNotFound(NotFound):
    code = "iteration_not_found"


def events_file(root: Path, run: str) -> Path:
    return run_dir(root, run) / "logs" / f"{EVENTS}.jsonl"


def read_events(root: Path, run: str) -> list[dict[str, object]]:
    """The run's events, oldest first, each with its log ``time``; [] for a run with none."""
    from scratch.safefs import read_file
    path = events_file(root, run)
    try:
        data = read_file(root, path)
    except (OSError, ScratchError):
        return []
    out: list[dict[str, object]] = []
    for raw in data.split(b"\n")[:-1]:  # a torn last line (no newline) is not an entry
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        entry = line.get("entry") if isinstance(line, dict) else None
        if isinstance(entry, dict) and isinstance(entry.get("event"), str):
            entry.setdefault("time", line.get("ts"))
            out.append(entry)
    return out


def latest_iteration(root: Path, run: str) -> int:
    """The run's latest iteration (1 for a run that started none after the first)."""
    latest = 1
    for e in read_events(root, run):
        n = e.get("iteration")
        if e.get("event") == "iteration" and isinstance(n, int) and not isinstance(n, bool):
            latest = max(latest, n)
    return latest


def check_iteration(root: Path, run: str, iteration: int) -> int:
    """``iteration`` if ``run`` has started it, else ``iteration_not_found`` saying how to."""
    latest = latest_iteration(root, run)
    if iteration > latest:
        from scratch.words import plural
        raise IterationNotFound(
            f"run {run!r} has {plural(latest, 'iteration')}: iteration {iteration} does not "
            f"exist; start the next one (iteration {latest + 1}) with 'runs iterate'",
            run=run, iteration=iteration, latest=latest,
            suggestions=[suggest(Step.NEXT_ITERATION, run=run)])
    return iteration


def append_event(store: RunStore, event: UsageEvent | IterationEvent) -> None:
    """One event appended to the run's log (one commit), as it is."""
    from scratch.redact.records import Redaction
    from scratch.store.logs import append
    # scratch's own record (names, ids, counts): nothing captured from a tool to redact
    append(store, EVENTS, [orjson.dumps(event)], redaction=Redaction.skipped("usage event"))


def start_iteration(store: RunStore) -> int:
    """Start the run's next iteration; its number. Two stores (or processes) that start one at
    the same moment start the same one (see the module docstring)."""
    from scratch.store import utc_now
    n = latest_iteration(store.root, store.run) + 1
    append_event(store, IterationEvent(event="iteration", time=utc_now(), iteration=n,
                                       agent=store.agent))
    return n


def usage_events(root: Path, run: str) -> list[UsageEvent]:
    """The run's usage events, oldest first (for the UI, ``runs RUN``)."""
    out: list[UsageEvent] = []
    for e in read_events(root, run):
        if e.get("event") == "scratchpad_usage":
            out.append(UsageEvent(
                event="scratchpad_usage", time=str(e.get("time") or ""),
                agent=str(e.get("agent") or ""), session=str(e.get("session") or ""),
                run=run, iteration=_int_or_none(e.get("iteration")),
                tokens_intercepted=_int(e.get("tokens_intercepted")),
                tokens_extracted=_int(e.get("tokens_extracted")), calls=_int(e.get("calls")),
                reason=str(e.get("reason") or ""), interface=str(e.get("interface") or "")))
    return out


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def runs_in(root: Path) -> list[str]:
    """The runs that have a namespace in the store, sorted."""
    from scratch.store.names import RUN_RE
    try:
        names = os.listdir(root / "runs")
    except OSError:
        return []
    return sorted(n for n in names if RUN_RE.fullmatch(n) and (root / "runs" / n).is_dir()
                  and not (root / "runs" / n).is_symlink())
