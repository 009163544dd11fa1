"""Who is in which run, and who may read a run's artifacts.

Invariants:
- A call joins a run by naming it (``--run``/``$SCRATCH_RUN`` on the command line; over MCP
  the server's ``--run`` or its token's run: never a tool argument). :func:`join_run` checks
  the run id and the iteration (an iteration the run has not started is refused, with how to
  start it) before anything runs, and creates nothing.
- A reader reads the artifacts of its own run only. Naming another run's artifact is answered
  exactly as another agent's entry is, ``entry_not_found``, with the same words whether or not
  it exists (:func:`check_member`). A reader in no run names the run it reads (the command
  line's ``artifact read RUN NAME``, ``artifact:RUN/NAME``); over MCP a session in no run has
  none to name.
- A coordinator (``coordinator``: only in a run) has no scratchpad of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from scratch.calls import Step, suggest
from scratch.errors import EntryNotFound, UsageError
from scratch.runs.events import check_iteration, latest_iteration
from scratch.store.names import artifact_ref, validate_iteration, validate_run


class Joined(NamedTuple):
    """The run a call is in (None: none), its iteration and whether it is the coordinator."""

    run: str | None
    iteration: int | None
    coordinator: bool


def join_run(root: Path, run: str | None, iteration: int | str | None = None,
             coordinator: bool = False) -> Joined:
    """The run ``run`` (validated) at ``iteration`` (checked to exist; None: the latest)."""
    if run is None:
        if iteration is not None:
            raise UsageError("an iteration is one of a run's: give the run too (--run RUN or "
                             "$SCRATCH_RUN)", code="not_in_run", argument="iteration")
        if coordinator:
            raise UsageError("a coordinator coordinates a run: give the run (--run RUN or "
                             "$SCRATCH_RUN)", code="not_in_run", argument="coordinator")
        return Joined(None, None, False)
    validate_run(run)
    if iteration is None:
        return Joined(run, latest_iteration(root, run), coordinator)
    return Joined(run, check_iteration(root, run, validate_iteration(iteration)), coordinator)


def not_in_run(what: str) -> UsageError:
    """``not_in_run``: a run's command asked where no run is given."""
    return UsageError(f"{what} needs a run: this agent is in none (give --run RUN or "
                      "$SCRATCH_RUN; over MCP, start the server with --run RUN or use a token "
                      "made with --run)", code="not_in_run")


def no_scratchpad(agent: str, run: str | None) -> UsageError:
    """A coordinator asked for a scratchpad of its own."""
    return UsageError(f"agent {agent!r} is the coordinator of run {run!r}, and a coordinator "
                      "has no scratchpad: it reads the run's artifacts (artifact ls, artifact "
                      "read); without --coordinator the agent uses its own entries",
                      code="coordinator_has_no_scratchpad", agent=agent, run=run,
                      suggestions=[suggest(Step.LIST_ARTIFACTS, run=run)] if run else [])


def check_member(reader_run: str | None, run: str, name: str, agent: str) -> None:
    """Refuse a reader in another run than ``run`` as if artifact ``name`` did not exist."""
    if reader_run is not None and reader_run != run:
        raise artifact_not_found(run, name, agent, reader_run)


def artifact_not_found(run: str, name: str, agent: str, reader_run: str | None
                       ) -> EntryNotFound:
    """``entry_not_found`` for an artifact; a reader outside the run learns nothing more than
    that it has no such artifact (the same words whether it exists or not)."""
    ref = artifact_ref(run, name)
    if reader_run is not None and reader_run != run:
        return EntryNotFound(f"no artifact {ref!r} for agent {agent!r} in run {reader_run!r}",
                             name=ref, agent=agent, run=reader_run)
    return EntryNotFound(f"no artifact {name!r} in run {run!r}", name=ref, run=run,
                         suggestions=[suggest(Step.LIST_ARTIFACTS, run=run)])


def run_not_visible(run: str, agent: str, reader_run: str) -> EntryNotFound:
    """A reader in another run asked for the whole of ``run`` (its listing): not found, in
    the same words whether the run exists or not."""
    return EntryNotFound(f"no run {run!r} for agent {agent!r} in run {reader_run!r}",
                         agent=agent, run=reader_run)
