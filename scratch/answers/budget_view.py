"""The session's context budget as every budget command answers it: the figures, and a table
of them for people."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.result import Result

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def budget_view(ctx: Context, action: str, value: int | None = None
                ) -> Result[dict[str, object]]:
    """The budget after ``action`` (show, reset, used, set-window) with ``value``."""
    from scratch.answers.kernel.prices import budget_for
    budget = budget_for(ctx)
    if action == "reset":
        view = budget.reset()
    elif action == "used":
        view = budget.report_used(int(value or 0))
    elif action == "set-window":
        view = budget.set_window(value)
    else:
        view = budget.status()
    spec = ctx.encoding()
    data = {"agent": ctx.agent, "session": ctx.session, "model": ctx.config["model"] or None,
            "tokenizer": spec.name, "exact": spec.exact, **view}
    warnings = tuple(view.get("warnings", ()))
    data.pop("warnings", None)
    rows = [("model", data["model"] or "(none: o200k_base)"), ("tokenizer", spec.name),
            ("window", f"{data['window']:,} ({data['window_source']})"),
            ("usable", f"{data['usable']:,} (margin {data['margin']:.0%})"),
            ("used", f"{data['used']:,}"), ("remaining", f"{data['remaining']:,}"),
            ("intercepted", f"{data['intercepted']:,}"), ("extracted", f"{data['extracted']:,}"),
            ("per-call cap", f"{data['max_extraction_tokens']:,}"),
            ("session", f"{ctx.agent}/{ctx.session}")]
    if ctx.run is not None:  # a worker's budget is its run's and iteration's
        data.update(run=ctx.run, iteration=ctx.iteration)
        rows.append(("run", f"{ctx.run}, iteration {ctx.iteration}"
                            + (" (coordinator)" if ctx.coordinator else "")))
    text = "".join(f"{k:<13}{v}\n" for k, v in rows)
    return Result(f"budget {action}" if action != "show" else "budget", data=data, text=text,
                  warnings=warnings)
