"""runs iterate: start a run's next iteration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._run_args import RUN, own_run
from scratch.answers.kernel.result import Payload, Result
from scratch.declare import Command

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def runs_iterate(ctx: Context, run: Annotated[str | None, RUN]) -> Result[Payload]:
    from scratch.runs import RunStore, start_iteration
    run = own_run(ctx, run, "runs iterate")
    n = start_iteration(RunStore.open_run(ctx.root, run, ctx.agent, ctx.config))
    return Result("runs iterate", data={"run": run, "iteration": n},
                  text=f"run {run}: iteration {n} started (workers join it with --run {run} "
                       f"--iteration {n})\n")


COMMAND = Command(
    "runs iterate", "Start the next iteration of run RUN (a replan: its workers join it with "
    "--iteration N; every run has iteration 1).\n\nExample: scratch runs iterate r1",
    runs_iterate)
