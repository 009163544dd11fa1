"""runs show: one run's iterations, workers, artifacts and usage events
(:func:`scratch.runs.run_info`, which a UI calls too)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._run_args import RUN
from scratch.answers.kernel.result import Result
from scratch.declare import Command

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.runs import RunInfo


def runs_show(ctx: Context, run: Annotated[str | None, RUN]) -> Result[RunInfo]:
    from scratch.runs import not_in_run, run_info, run_not_visible
    from scratch.store.names import validate_run
    if run is None:
        raise not_in_run("runs show")
    validate_run(run)
    if ctx.run is not None and ctx.run != run:
        raise run_not_visible(run, ctx.agent, ctx.run)
    info = run_info(ctx.root, run)
    return Result("runs show", data=info, text=_text(info))


def _text(info: RunInfo) -> str:
    out = [f"run {info['run']}: {info['iterations']} iteration"
           f"{'' if info['iterations'] == 1 else 's'}, {len(info['artifacts'])} artifact"
           f"{'' if len(info['artifacts']) == 1 else 's'}"]
    if info["workers"]:
        out.append("workers:")
        out += [f"  {w['agent']}{' (coordinator)' if w['coordinator'] else ''}: iterations "
                f"{','.join(map(str, w['iterations'])) or '-'}, {w['calls']} calls, "
                f"{w['tokens_intercepted']:,} tokens intercepted, {w['tokens_extracted']:,} "
                f"extracted, finished {w['finished']}x" for w in info["workers"]]
    if info["artifacts"]:
        out.append("artifacts:")
        out += [f"  {a['ref']} (version {a['version']}, {a['bytes'] or 0:,} bytes, by "
                f"{a['agent'] or '-'} in iteration {a['iteration'] or '-'})"
                for a in info["artifacts"]]
    if info["usage"]:
        out.append("usage events:")
        out += [f"  {e['time']} {e['agent']} iteration {e['iteration']}: "
                f"{e['tokens_intercepted']:,} intercepted, {e['tokens_extracted']:,} extracted "
                f"({e['calls']} calls; {e['reason']})" for e in info["usage"]]
    return "\n".join(out) + "\n"


COMMAND = Command(
    "runs show", "Run RUN: its iterations, its workers (calls, tokens intercepted and "
    "extracted, usage events), its artifacts and its usage events.\n\n"
    "Example: scratch runs show r1",
    runs_show)
