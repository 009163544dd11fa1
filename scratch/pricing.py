"""Pricing answers: the agent's tokenizer, its session budget, the per-call cap.

Invariants:
- The budget of (agent, session) lives in ``state/budget/<agent>/<session>.json``; every
  check-and-record is one locked operation in :class:`scratch.tokens.Budget`.
- :func:`charge_answer` first applies the per-call cap (``budget.max_extraction_tokens``), then
  the running budget; a refusal records nothing.
- ``meta["tokens"]`` / ``meta["budget"]`` built here are what every priced answer reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scratch.context import Context
    from scratch.tokens import Budget, EncodingSpec


def budget_for(ctx: Context) -> Budget:
    from scratch.tokens import Budget, context_window
    cfg = ctx.config
    window = context_window(cfg["model"] or None, cfg["budget.windows"],
                            cfg["budget.context_window"])
    path = ctx.root / "state" / "budget" / ctx.agent / f"{ctx.session}.json"
    return Budget(path, window=window, safety_margin=cfg["budget.safety_margin"],
                  max_extraction_tokens=cfg["budget.max_extraction_tokens"])


def token_meta(count: int, spec: EncodingSpec) -> dict[str, Any]:
    return {"count": count, "encoding": spec.name, "exact": spec.exact}


def budget_meta(view: dict[str, Any]) -> dict[str, Any]:
    return {k: view[k] for k in ("window", "usable", "used", "remaining")}


def charge_answer(ctx: Context, tokens: int, *, code: str, suggestions: list[str] | None = None,
                  kind: str = "extracted", details: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
    """Refuse (LimitExceeded / BudgetExceeded) or record ``tokens``; return meta to attach."""
    from scratch.errors import BudgetExceeded, LimitExceeded
    spec = ctx.encoding()
    budget = budget_for(ctx)
    try:
        budget.check_cap(tokens, code=code, suggestions=suggestions)
        view = budget.charge(tokens, kind=kind)
    except (LimitExceeded, BudgetExceeded) as exc:
        if suggestions:  # ours name this command's own alternatives
            exc.details["suggestions"] = suggestions
        exc.details.setdefault("encoding", spec.name)
        if details:
            exc.details.update(details)
        raise
    return {"tokens": token_meta(tokens, spec), "budget": budget_meta(view)}
