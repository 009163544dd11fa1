"""artifact ls: a run's artifacts, for a reader of the run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._run_args import RUN, own_run
from scratch.answers.kernel.result import Result, Table
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def artifact_ls(ctx: Context, run: Annotated[str | None, RUN]) -> Result[dict[str, object]]:
    from scratch.runs import latest_iteration, list_artifacts
    if run is not None and ctx.run is not None and run != ctx.run:  # another run: not seen
        from scratch.runs import run_not_visible
        raise run_not_visible(run, ctx.agent, ctx.run)
    run = own_run(ctx, run, "artifact ls")
    rows = list_artifacts(ctx.root, run)
    table = Table(["name", "version", "bytes", "lines", "by", "iteration", "updated"],
                  [[r["name"], r["version"], r["bytes"], r["lines"], r["agent"] or "-",
                    r["iteration"] if r["iteration"] is not None else "-", r["updated"]]
                   for r in rows])
    return Result("artifact ls", data={"run": run, "iterations": latest_iteration(ctx.root, run),
                                       "artifacts": rows}, table=table)


COMMAND = Command(
    "artifact ls", "List the artifacts of run RUN: version, bytes, lines, who put it in which "
    "iteration, when.\n\nExample: scratch artifact ls r1",
    artifact_ls,
    tools=(Tool("list_artifacts", "This run's artifacts: name, version, bytes, lines, who put "
                "each in which iteration.", toolset="run"),))
