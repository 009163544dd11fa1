"""What the call ledger's records add up to, for the pages: pure functions, nothing read.

Invariants:
- Every figure is a sum over the records given (the calls the ledger still holds); the pages
  say when older calls were dropped. A usage event (``scratchpad_usage``, a record with
  ``event``) is kept in the ledger beside the calls but counts as no call (as ``scratch runs
  show`` counts a worker's calls).
- Tokens *extracted* and *intercepted* follow ``scratch stats`` (its ``tokens_extracted`` and
  ``tokens_intercepted`` counters, :func:`scratch.answers.kernel.execution.record`): a call
  that stored an output instead of showing it counts the output's tokens less the pointer's
  as intercepted, and its pointer is not counted as extracted; what a refusal (or an error)
  charged is not extracted either; every other answer's charge is. Tokens *charged* are all
  of them (the budget's ``used``). :data:`SAVINGS_RULE` says so on the page.
- Chart series are at most :data:`CHART_POINTS` points (the overview's small ones fewer):
  evenly spaced calls, with every refusal (up to a fifth of the points) and the costliest
  calls (up to a tenth) always among them; the sums are cumulative,
  so a point left out loses nothing of the totals.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from scratch.store.ledger import Record

CHART_POINTS = 1000  # points of a chart at most
KEPT_REFUSALS = 200  # refusals always among a chart's points
KEPT_COSTLIEST = 100  # costliest calls always among a chart's points
STORING = ("ingest", "run")  # the commands that store an output and answer with its pointer

SAVINGS_RULE = (
    "Tokens intercepted: the tokens of each output stored instead of shown, less the pointer "
    "the agent read in its place. Tokens extracted: what every other answer put into the "
    "context. A pointer is counted apart, and so is what a refusal charged (its message and "
    "suggestions); all of them are the tokens charged. These are the figures scratch stats "
    "reports (tokens_intercepted, tokens_extracted) and the README's table measures (output "
    "tokens against pointer tokens), added up over the calls the ledger holds.")


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key putting ``t2`` before ``t10`` (runs of digits compare as numbers, the rest
    case-insensitively, then as written)."""
    parts = re.split(r"(\d+)", name)
    return tuple((0, int(p)) if p.isdigit() else (1, p.casefold()) for p in parts if p) + (
        (2, name),)


def is_stored(r: Record) -> bool:
    """Whether the call stored an output and showed its pointer instead."""
    return r["intercepted"] > 0


class Totals(NamedTuple):
    """Calls counted under one key: how many, tokens extracted (answers), pointer tokens,
    tokens refusals and errors charged, tokens intercepted, refusals, errors."""

    key: str
    calls: int
    extracted: int
    pointers: int
    failed: int  # tokens charged by refusals and errors (what they printed)
    intercepted: int
    refused: int
    errors: int

    @property
    def charged(self) -> int:
        """Every token the calls put into the context (the budget's used)."""
        return self.extracted + self.pointers + self.failed


def totals(records: Iterable[Record], key: str = "") -> Totals:
    calls = extracted = pointers = failed = intercepted = refused = errors = 0
    for r in records:
        if r.get("event"):  # a usage event the ledger keeps beside the calls: no call
            continue
        calls += 1
        if r["outcome"] != "ok":
            failed += r["tokens"]
        elif is_stored(r):
            pointers += r["tokens"]
        else:
            extracted += r["tokens"]
        intercepted += r["intercepted"]
        refused += r["outcome"] == "refused"
        errors += r["outcome"] == "error"
    return Totals(key, calls, extracted, pointers, failed, intercepted, refused, errors)


ARTIFACT_COMMANDS = ("artifact put", "artifact read")  # a record's entry: a run's artifact


def entry_of(r: Record) -> str | None:
    """What the call touched: an entry of its agent's, or a run's artifact as read commands
    name it (``artifact:RUN/NAME``; ``artifact put`` records its bare name beside its run, and
    ``artifact read`` too when it answers inline, its reference when it answers with a
    pointer)."""
    entry, run = r["entry"], r.get("run")
    if entry and run and r["command"] in ARTIFACT_COMMANDS and \
            not entry.startswith("artifact:"):
        return f"artifact:{run}/{entry}"
    return entry


def by(records: Iterable[Record], field: str) -> dict[str, list[Record]]:
    """The records grouped by a text field (``command``, ``session``, ``entry``), in the order
    each key first appears."""
    out: dict[str, list[Record]] = {}
    for r in records:
        value = entry_of(r) if field == "entry" else r.get(field)
        if isinstance(value, str):
            out.setdefault(value, []).append(r)
    return out


def per_command(records: Iterable[Record]) -> dict[str, Totals]:
    """The calls' totals per command (a usage event is no command: left out)."""
    return {command: totals(recs, command) for command, recs in
            by((r for r in records if not r.get("event")), "command").items()}


def top_commands(tallies: Iterable[dict[str, Totals]], most: int = 10) -> list[Totals]:
    """The commands that charged the most (then intercepted the most), at most ``most``, over
    the :func:`per_command` tallies of several agents."""
    merged: dict[str, Totals] = {}
    for tally in tallies:
        for command, t in tally.items():
            had = merged.get(command)
            merged[command] = t if had is None else Totals(
                command, *(a + b for a, b in zip(had[1:], t[1:], strict=True)))
    rows = sorted(merged.values(),
                  key=lambda t: (-t.charged, -t.intercepted, -t.calls, natural_key(t.key)))
    return rows[:most]


def ranked(records: Sequence[Record]) -> list[Record]:
    """The calls by tokens charged, most first (the earlier first among equals)."""
    return sorted((r for r in records if r["tokens"] > 0), key=lambda r: (-r["tokens"], r["seq"]))


class EntrySpend(NamedTuple):
    """What one entry cost and saved: the calls that touched it, the tokens of the outputs
    stored under it and of their pointers, those intercepted, and those read from it later."""

    entry: str
    calls: int
    stored: int  # outputs stored (calls that intercepted)
    pointers: int
    intercepted: int
    read: int  # tokens extracted by the other calls that touched it

    @property
    def output(self) -> int:
        """The tokens of the outputs stored: what showing them whole would have cost."""
        return self.intercepted + self.pointers


def by_entry(records: Iterable[Record]) -> list[EntrySpend]:
    """Every entry the calls touched, the one that cost the most tokens first."""
    rows = []
    for entry, recs in by(records, "entry").items():
        t = totals(recs)
        rows.append(EntrySpend(entry, t.calls, sum(1 for r in recs if is_stored(r)), t.pointers,
                               t.intercepted, t.extracted))
    rows.sort(key=lambda e: (-(e.read + e.pointers), -e.intercepted, natural_key(e.entry)))
    return rows


class SessionRow(NamedTuple):
    """A session of one agent in the ledger: its totals, its first and last call's time."""

    session: str
    totals: Totals
    first: str
    last: str


def sessions(records: Iterable[Record]) -> list[SessionRow]:
    """The sessions, the one with the latest call first."""
    rows = [SessionRow(s, totals(recs, s), recs[0]["time"], recs[-1]["time"])
            for s, recs in by(records, "session").items()]
    rows.sort(key=lambda s: s.last, reverse=True)
    return rows


def seconds(iso: str) -> float | None:
    """A ledger time as seconds since the epoch (None when it does not read as one)."""
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def series(records: Sequence[Record], most: int = CHART_POINTS) -> dict[str, list[object]]:
    """Tokens over time for a chart: ``t`` (seconds since the epoch), cumulative ``charged``
    (every token put into the context, answers and pointers: what the budget counts as used)
    and ``intercepted``, ``refused`` (the cumulative charged at a refused call, else None: a
    mark), and per point its call: ``seq``, ``tokens`` charged and ``command`` (the agent is
    the chart's: one a chart). At most ``most`` points (see the module docstring); the first
    is the start, just before the first call, at zero."""
    points: list[tuple[float, Record]] = []
    for r in records:
        when = seconds(r["time"])
        if when is not None:
            points.append((when, r))
    out: dict[str, list[object]] = {k: [] for k in ("t", "charged", "intercepted", "refused",
                                                    "seq", "tokens", "command")}
    if not points:
        return out
    keep = _picked(points, most - 1)
    charged = intercepted = 0
    lead = max((points[-1][0] - points[0][0]) * 0.02, 0.01)  # a little before the first call
    for key, value in (("t", round(points[0][0] - lead, 3)), ("charged", 0), ("intercepted", 0),
                       ("refused", None), ("seq", None), ("tokens", 0),
                       ("command", "")):
        out[key].append(value)
    for i, (when, r) in enumerate(points):
        charged += r["tokens"]
        intercepted += r["intercepted"]
        if i not in keep:
            continue
        out["t"].append(round(when, 3))
        out["charged"].append(charged)
        out["intercepted"].append(intercepted)
        out["refused"].append(charged if r["outcome"] == "refused" else None)
        out["seq"].append(r["seq"])
        out["tokens"].append(r["tokens"])
        out["command"].append(r["command"])
    return out


def _picked(points: list[tuple[float, Record]], most: int) -> set[int]:
    """The indexes of the points a chart keeps (see the module docstring)."""
    n = len(points)
    if n <= most:
        return set(range(n))
    keep = {n - 1}
    refusals = [i for i, (_, r) in enumerate(points) if r["outcome"] == "refused"]
    keep.update(refusals[-min(KEPT_REFUSALS, most // 5):])
    costliest = sorted(range(n), key=lambda i: -points[i][1]["tokens"])[
        :min(KEPT_COSTLIEST, most // 10)]
    keep.update(costliest)
    rest = [i for i in range(n) if i not in keep]
    need = most - len(keep)
    if need == 1:
        keep.add(rest[0])
    elif need > 1:  # the rest evenly spaced
        keep.update(rest[round(j * (len(rest) - 1) / (need - 1))] for j in range(need))
    return keep
