"""Runs: workers of one task (each with its own scratchpad and budget) sharing artifacts.

The seed is Mezmo Aura's orchestration mode: a run has an id and numbered iterations; each
worker of it keeps a scratchpad and a context budget of its own, sized to its own model's
window; large results are saved as artifacts of the run, which any worker reads back in
place; a coordinator, with no scratchpad, gets artifacts whole; and a worker that finishes
emits a usage event. In scratch:

- a worker is an agent (its namespace is its scratchpad, isolated as ever) that names the run
  (``--run``, ``--iteration``; over MCP the server's or the token's run): :mod:`.access`;
  its budget is kept per run and iteration (:mod:`scratch.answers.kernel.prices`);
- a run's artifacts and its events live in the run's own namespace of the store,
  ``runs/<run>/`` (:mod:`.space`), versioned and synced like entries; read commands name an
  artifact ``artifact:RUN/NAME`` (:func:`scratch.store.names.split_artifact`, resolved by
  :func:`scratch.answers.kernel.target.open_target`);
- usage events: :func:`finish_worker` (:mod:`.usage`), kept per run (:mod:`.events`);
- what a UI shows: :mod:`.views`.

How this maps to Aura's files: Aura's ``{memory_dir}/{run_id}/artifacts/`` is
``runs/<run>/files/`` (with ``runs/<run>/meta/`` for their versions); Aura's
``{memory_dir}/{run_id}/iteration-{n}/scratchpad/`` has no directory of its own: a worker's
scratchpad is its agent's namespace ``agents/<agent>/``, and what it did in iteration n is
what its ledger lines and budget of that run and iteration record
(``state/runs/<run>/iteration-<n>/budget/<agent>/``).

Standard library, orjson and the store only: importable without the CLI, MCP or HTTP stacks.
"""

from __future__ import annotations

from scratch.runs.access import (
    Joined,
    artifact_not_found,
    check_member,
    join_run,
    no_scratchpad,
    not_in_run,
    run_not_visible,
)
from scratch.runs.events import (
    IterationNotFound,
    UsageEvent,
    check_iteration,
    latest_iteration,
    read_events,
    runs_in,
    start_iteration,
    usage_events,
)
from scratch.runs.space import EVENTS, RunStore, check_artifact_name, run_dir
from scratch.runs.usage import Usage, finish_worker, on_usage, usage_of, worker_calls
from scratch.runs.views import (
    ArtifactRow,
    RunInfo,
    RunRow,
    Worker,
    list_artifacts,
    list_runs,
    run_info,
    run_workers,
)

__all__ = ["EVENTS", "ArtifactRow", "IterationNotFound", "Joined", "RunInfo", "RunRow",
           "RunStore", "Usage", "UsageEvent", "Worker", "artifact_not_found",
           "check_artifact_name", "check_iteration", "check_member", "finish_worker",
           "join_run", "latest_iteration", "list_artifacts", "list_runs", "no_scratchpad",
           "not_in_run", "on_usage", "read_events", "run_dir", "run_info", "run_not_visible",
           "run_workers", "runs_in", "start_iteration", "usage_events", "usage_of",
           "worker_calls"]
