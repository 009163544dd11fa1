"""Arguments of the run and artifact commands, declared once, and the run a call acts in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.declare import Arg

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context

# a run's id: on the command line the run a command acts in; over MCP never an argument (the
# session's run, supplied by scratch.mcp.dispatch)
RUN = Arg("The run's id (A-Z a-z 0-9 _ -).", metavar="RUN", max_length=128, mcp=False)
ARTIFACT = Arg("The artifact's name, e.g. results/task-1.json (A-Z a-z 0-9 / _ . -).",
               metavar="ARTIFACT", max_length=1024, complete="artifacts")


def own_run(ctx: Context, run: str | None, what: str) -> str:
    """The run ``what`` acts in: ``run`` as given (the command line's RUN; over MCP the
    session's), which must be the caller's own when the caller is in one."""
    from scratch.runs import not_in_run
    from scratch.store.names import validate_run
    if run is None:
        raise not_in_run(what)
    validate_run(run)
    if ctx.run is not None and ctx.run != run:
        from scratch.errors import UsageError
        raise UsageError(f"agent {ctx.agent!r} works in run {ctx.run!r}: {what} acts in its "
                         f"own run only, not in run {run!r}", code="not_in_run",
                         run=run, own_run=ctx.run)
    return run


def run_iteration(ctx: Context, run: str) -> int:
    """The caller's iteration of ``run``: its own when it joined the run, else the latest."""
    if ctx.run == run and ctx.iteration is not None:
        return ctx.iteration
    from scratch.runs import latest_iteration
    return latest_iteration(ctx.root, run)
