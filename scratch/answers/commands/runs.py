"""runs: the store's runs (:func:`scratch.runs.list_runs`, which a UI calls too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.result import Result, Table
from scratch.declare import Command

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def runs(ctx: Context) -> Result[dict[str, object]]:
    from scratch.runs import list_runs
    rows = [r for r in list_runs(ctx.root) if ctx.run is None or r["run"] == ctx.run]
    return Result("runs", data={"runs": rows}, table=Table(
        ["run", "iterations", "artifacts", "bytes", "usage events", "updated"],
        [[r["run"], r["iterations"], r["artifacts"], r["bytes"], r["usage_events"],
          r["updated"] or "-"] for r in rows]))


COMMAND = Command(
    "runs", "The store's runs: iterations, artifacts, bytes, usage events (a worker in a run: "
    "its own run only).\n\nExample: scratch runs --json",
    runs,
    group_help="Runs: workers sharing artifacts, in numbered iterations (list them, show one, "
    "start the next iteration).\n\nExample: scratch runs show r1")
