"""Pricing answers: the agent's tokenizer, its session budget, the per-call cap.

Invariants:
- The budget of (agent, session) lives in ``state/budget/<agent>/<session>.json``; every
  check-and-record is one locked operation in :class:`scratch.tokens.Budget`.
- :func:`charge_answer` first applies the per-call cap (``budget.max_extraction_tokens``), then
  the running budget; a refusal records nothing.
- ``meta["tokens"]`` / ``meta["budget"]`` built here are what every priced answer reports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
    spec = ctx.encoding()
    budget = budget_for(ctx)
    with _refusal_details(spec, suggestions, details):
        budget.check_cap(tokens, code=code, suggestions=suggestions)
        if ctx.json_mode:
            # the agent will read the JSON envelope, not this text: check now (before any
            # content is read) and charge the envelope's exact count once it is built
            view = budget.check(tokens)
            return {"tokens": token_meta(tokens, spec), "budget": budget_meta(view),
                    PENDING: {"code": code, "suggestions": suggestions, "kind": kind,
                              "details": details}}
        view = budget.charge(tokens, kind=kind)
    return {"tokens": token_meta(tokens, spec), "budget": budget_meta(view)}


PENDING = "_pending_price"


@contextmanager
def _refusal_details(spec: EncodingSpec, suggestions: list[str] | None,
                     details: dict[str, Any] | None) -> Iterator[None]:
    from scratch.errors import BudgetExceeded, LimitExceeded
    try:
        yield
    except (LimitExceeded, BudgetExceeded) as exc:
        if suggestions:  # ours name this command's own alternatives
            exc.details["suggestions"] = suggestions
        exc.details.setdefault("encoding", spec.name)
        if details:
            exc.details.update(details)
        raise


def price_envelope(ctx: Context, meta: dict[str, Any], envelope: Callable[[], str]) -> None:
    """Charge a --json answer at the exact count of its envelope (refusing it if over)."""
    from scratch.tokens import count_text
    pending = meta.pop(PENDING)
    spec = ctx.encoding()
    tokens = count_text(envelope(), spec)
    budget = budget_for(ctx)
    with _refusal_details(spec, pending["suggestions"], pending["details"]):
        budget.check_cap(tokens, code=pending["code"], suggestions=pending["suggestions"])
        view = budget.charge(tokens, kind=pending["kind"])
    meta["tokens"] = token_meta(tokens, spec)
    meta["budget"] = budget_meta(view)


ENVELOPE_TOKENS = 100  # the --json envelope around "data" (meta, budget, next): measured ~60-90


def shrink_to_fit(ctx: Context, cap: int, n: int, build: Callable[[int], Any]) -> int:
    """For --json answers under --fit: the largest k <= n whose data ``build(k)`` fits ``cap``.

    The text estimate that chose ``n`` undercounts JSON (quotes, escapes, keys), so the data is
    counted exactly and cut until the whole envelope fits. Human mode keeps ``n``.
    """
    if not ctx.json_mode:
        return n
    from scratch.result import compact_json
    from scratch.tokens import count_text
    spec = ctx.encoding()
    k = n
    while k > 0:
        cost = count_text(compact_json(build(k)), spec) + ENVELOPE_TOKENS
        if cost <= cap:
            return k
        k = min(k - 1, int(k * cap / cost))
    return 0
