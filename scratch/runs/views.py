"""What a store knows of its runs, for ``scratch runs``, the artifact listing and the UI.

Every function here reads only (nothing is created, no lock is taken, a missing run reads as
empty) and returns typed rows:

- :func:`list_runs`: every run with its iterations, artifacts and usage events;
- :func:`list_artifacts`: a run's artifacts (name, the reference read commands take, version,
  size, who put it in which iteration);
- :func:`run_workers`: the agents that worked in a run, from this store's call ledger and the
  run's usage events (a worker seen only in a synced run's events has no calls here);
  :func:`workers_of` the same from records and events a caller already holds;
- :func:`usage_events` (:mod:`scratch.runs.events`): the run's usage events;
- :func:`run_info`: all of one run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from scratch.runs.events import UsageEvent, latest_iteration, runs_in, usage_events
from scratch.runs.space import RunStore
from scratch.runs.usage import usage_of
from scratch.store import ledger
from scratch.store.names import DEFAULT_AGENT, artifact_ref, validate_run


class ArtifactRow(TypedDict):
    run: str
    name: str
    ref: str  # what read commands take: artifact:RUN/NAME
    version: int
    bytes: int | None
    lines: int | None
    updated: str
    agent: str | None  # who put the current version
    iteration: int | None  # in which iteration


class RunRow(TypedDict):
    run: str
    iterations: int
    artifacts: int
    bytes: int
    usage_events: int
    updated: str | None


class Worker(TypedDict):
    """One agent's work in a run: its calls (this store's ledger) and usage events."""

    agent: str
    coordinator: bool
    iterations: list[int]
    sessions: list[str]
    calls: int
    tokens_intercepted: int
    tokens_extracted: int
    finished: int  # usage events recorded for it
    last: str | None  # its latest call or event


class RunInfo(TypedDict):
    run: str
    iterations: int
    artifacts: list[ArtifactRow]
    workers: list[Worker]
    usage: list[UsageEvent]


def _space(root: Path, run: str) -> RunStore:
    from scratch.store.config import load_config
    return RunStore(root, run, DEFAULT_AGENT, load_config(root))


def list_artifacts(root: Path, run: str) -> list[ArtifactRow]:
    """The live artifacts of ``run``, by name."""
    validate_run(run)
    space = _space(root, run)
    if not space.exists():
        return []
    rows: list[ArtifactRow] = []
    for meta in sorted(space.live_meta(), key=lambda m: m["name"]):
        if meta["kind"] == "log" or not meta.get("versions"):
            continue
        cur = meta["versions"][-1]
        info = cur.get("info") or {}
        who = info.get("agent")
        it = info.get("iteration")
        rows.append(ArtifactRow(
            run=run, name=meta["name"], ref=artifact_ref(run, meta["name"]),
            version=int(cur["version"]), bytes=cur.get("bytes"), lines=cur.get("lines"),
            updated=str(cur.get("time") or ""), agent=who if isinstance(who, str) else None,
            iteration=it if isinstance(it, int) and not isinstance(it, bool) else None))
    return rows


def list_runs(root: Path) -> list[RunRow]:
    """Every run of the store, by id."""
    out: list[RunRow] = []
    for run in runs_in(root):
        arts = list_artifacts(root, run)
        events = usage_events(root, run)
        times = [a["updated"] for a in arts] + [e["time"] for e in events]
        out.append(RunRow(run=run, iterations=latest_iteration(root, run), artifacts=len(arts),
                          bytes=sum(a["bytes"] or 0 for a in arts), usage_events=len(events),
                          updated=max(times) if times else None))
    return out


def run_workers(root: Path, run: str) -> list[Worker]:
    """The agents that worked in ``run``, by agent."""
    validate_run(run)
    by_agent: dict[str, list[ledger.Record]] = {}
    for rec in ledger.read(root):
        if rec.get("run") == run:
            by_agent.setdefault(rec["agent"], []).append(rec)
    return workers_of(by_agent, usage_events(root, run))


def workers_of(by_agent: dict[str, list[ledger.Record]], events: list[UsageEvent]
               ) -> list[Worker]:
    """The workers of one run from each agent's ledger records of that run (calls and usage
    events) and the run's usage ``events``, by agent (the UI gives the records it holds and
    the events of the agents it shows)."""
    by_agent = {a: list(recs) for a, recs in by_agent.items()}
    for e in events:
        by_agent.setdefault(e["agent"], [])
    out: list[Worker] = []
    for agent in sorted(by_agent):
        recs = by_agent[agent]
        calls = [r for r in recs if not r.get("event")]
        mine = [e for e in events if e["agent"] == agent]
        figures = usage_of(calls)
        iterations = sorted({int(r["iteration"]) for r in recs if "iteration" in r}
                            | {e["iteration"] for e in mine if e["iteration"] is not None})
        times = [r["time"] for r in recs] + [e["time"] for e in mine]
        out.append(Worker(agent=agent, coordinator=any(r.get("coordinator") for r in recs),
                          iterations=iterations,
                          sessions=list(dict.fromkeys(str(r["session"]) for r in calls)),
                          calls=figures.calls, tokens_intercepted=figures.tokens_intercepted,
                          tokens_extracted=figures.tokens_extracted, finished=len(mine),
                          last=max(times) if times else None))
    return out


def run_info(root: Path, run: str) -> RunInfo:
    """Everything the store knows of ``run``."""
    validate_run(run)
    return RunInfo(run=run, iterations=latest_iteration(root, run),
                   artifacts=list_artifacts(root, run), workers=run_workers(root, run),
                   usage=usage_events(root, run))
