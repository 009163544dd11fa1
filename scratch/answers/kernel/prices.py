"""The budget of an agent session as the answers pipeline sees it: the cap one answer may
cost now, and the ``meta`` figures every priced answer reports.

Invariants:
- The budget of (agent, session) lives in ``state/budget/<agent>/<session>.json``, and that of a
  worker of a run in ``state/runs/<run>/iteration-<n>/budget/<agent>/<session>.json`` (each
  worker of each iteration has its own, sized to its own model's window); every
  check-and-record is one locked operation in :class:`scratch.tokens.Budget`.
- What one answer may cost now is the per-call cap (``budget.max_extraction_tokens``; 0 or less
  means none) or what is left of the budget, whichever is smaller.
- A long-lived process sizes an answer on the last budget state it saw
  (:meth:`scratch.tokens.Budget.kept_view`) instead of reading it first: the limits then carry
  that state (``basis``), the charge expects it, and a budget changed meanwhile by anyone
  raises :class:`~scratch.tokens.budget.StaleBudget` with nothing recorded, upon which the
  answer is sized again on limits read under the lock (``limits_for(ctx, fresh=True)``).
- A person at a terminal (:attr:`Context.person`) is not an agent: the budget is charged and
  shown, but never refuses; only the per-call cap limits an answer (it protects the screen).
  Nor does it bind a run's coordinator (:attr:`Context.coordinator`), which has no scratchpad:
  what it reads is held to the per-call cap alone.
- The budget speaks before it runs out: once an answer leaves :data:`WARN_AT` or more of the
  usable budget used, ``meta["budget"]["warning"]`` says how much (the CLI's footer shows it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypedDict, cast

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import BudgetMeta, TokenMeta
    from scratch.tokens import Budget, EncodingSpec

WARN_AT = (0.95, 0.80, 0.50)  # shares of the usable budget used that a footer warns about


# (root, agent, session, run, iteration) -> its state file
_PATHS: dict[tuple[Path, str, str, str | None, int | None], Path] = {}


def budget_for(ctx: Context) -> Budget:
    from scratch.tokens import Budget, context_window
    cfg = ctx.config
    window = context_window(cfg["model"] or None, cfg["budget.windows"],
                            cfg["budget.context_window"])
    key = (ctx.root, ctx.agent, ctx.session, ctx.run, ctx.iteration)
    path = _PATHS.get(key)
    if path is None:  # made once per session: a warm server asks for it in every answer
        if len(_PATHS) > 1024:
            _PATHS.clear()
        base = ctx.root / "state"
        if ctx.run is not None:
            base = base / "runs" / ctx.run / f"iteration-{ctx.iteration}"
        path = _PATHS[key] = base / "budget" / ctx.agent / f"{ctx.session}.json"
    return Budget(path, window=window, safety_margin=cfg["budget.safety_margin"],
                  max_extraction_tokens=cfg["budget.max_extraction_tokens"], root=ctx.root)


class BudgetView(TypedDict):
    """The figures of :meth:`scratch.tokens.Budget.status` the pipeline reads (the view has
    more: window_source, margin, kinds ...)."""

    window: int
    usable: int
    used: int
    remaining: int


def budget_view(view: Mapping[str, object]) -> BudgetView:
    """A view the budget returned (its JSON state file's figures), as the pipeline reads it."""
    return cast("BudgetView", view)


NO_CAP = 1 << 62  # what one answer may cost when nothing limits it


class Limits(NamedTuple):
    """The budget as it stands before an answer, and what one answer may cost."""

    view: BudgetView  # Budget.status()
    per_call: int  # the per-call cap setting (<= 0: none)
    # the kept state the view was made from, which a charge must find (None: read under the
    # lock, as a CLI command does); the pipeline only hands it back to the budget
    basis: Mapping[str, object] | None = None
    # a person at a terminal (Context.person): the budget is charged and shown, never binds
    person: bool = False

    @property
    def cap(self) -> int:
        if self.person:
            return self.per_call if self.per_call > 0 else NO_CAP
        remaining = int(self.view["remaining"])
        return min(self.per_call, remaining) if self.per_call > 0 else remaining

    @property
    def budget_binds(self) -> bool:
        """What is left of the budget, not the per-call cap, is the limit."""
        if self.person:
            return False
        return self.per_call <= 0 or int(self.view["remaining"]) < self.per_call

    def over_budget(self, tokens: int) -> bool:
        """Whether ``tokens`` more would pass what is left of the budget (never, for a
        person at a terminal)."""
        return not self.person and tokens > int(self.view["remaining"])

    def less(self, tokens: int) -> Limits:
        """The limits once ``tokens`` more are used (a refusal's own price)."""
        view = self.view.copy()
        view["used"] = int(view["used"]) + tokens
        view["remaining"] = max(0, int(view["remaining"]) - tokens)
        return Limits(view, self.per_call, self.basis, self.person)


def limits_for(ctx: Context, *, fresh: bool = False) -> Limits:
    """The limits of ``ctx``'s session now: from the kept state when there is one (unless
    ``fresh``), else read under the lock."""
    budget = budget_for(ctx)
    per_call = int(ctx.config["budget.max_extraction_tokens"])
    kept = None if fresh else budget.kept_view()
    unbound = ctx.person or ctx.coordinator
    if kept is not None:
        return Limits(budget_view(kept[0]), per_call, kept[1], unbound)
    return Limits(budget_view(budget.status()), per_call, person=unbound)


def token_meta(count: int, spec: EncodingSpec) -> TokenMeta:
    return {"count": count, "encoding": spec.name, "exact": spec.exact}


def budget_meta(view: BudgetView) -> BudgetMeta:
    out: BudgetMeta = {"window": view["window"], "usable": view["usable"],
                       "used": view["used"], "remaining": view["remaining"]}
    warning = budget_warning(int(view["used"]), int(view["usable"]))
    if warning:
        out["warning"] = warning
    return out


def budget_warning(used: int, usable: int) -> str | None:
    """``"83% of the budget used"`` once 50% is reached (the marks of :data:`WARN_AT`), then
    ``"the budget is used up"``."""
    if usable <= 0 or used >= usable:
        return "the budget is used up" if used > 0 or usable <= 0 else None
    share = used / usable
    if share >= min(WARN_AT):
        return f"{int(share * 100)}% of the budget used"
    return None


def after(view: BudgetView, tokens: int) -> BudgetMeta:
    """``meta["budget"]`` as it reads once ``tokens`` are charged (if nothing else is)."""
    return budget_meta({"window": view["window"], "usable": view["usable"],
                        "used": int(view["used"]) + tokens,
                        "remaining": max(0, int(view["remaining"]) - tokens)})
