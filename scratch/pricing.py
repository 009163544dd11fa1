"""Pricing answers: the agent's tokenizer, its session budget, the per-call cap.

Invariants:
- The budget of (agent, session) lives in ``state/budget/<agent>/<session>.json``; every
  check-and-record is one locked operation in :class:`scratch.tokens.Budget`.
- :func:`charge_answer` first applies the per-call cap (``budget.max_extraction_tokens``), then
  the running budget; a refusal records nothing.
- ``meta["tokens"]`` / ``meta["budget"]`` built here are what every priced answer reports.
- Suggestions may be given as a function: they are worked out only when the answer is refused
  (sizing them can read the entry), and each names a command that fits as the refusal stands.
- Under ``--fit --json`` the measure is the envelope the answer prints: :class:`EnvelopeMeter`
  counts the data, the command, ``next``, warnings and the meta numbers (at their widest), so
  an answer cut to fit is never refused by the exact count that prices it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scratch.context import Context
    from scratch.tokens import Budget, EncodingSpec

Suggestions = list[str] | Callable[[], list[str]] | None


def budget_for(ctx: Context) -> Budget:
    from scratch.tokens import Budget, context_window
    cfg = ctx.config
    window = context_window(cfg["model"] or None, cfg["budget.windows"],
                            cfg["budget.context_window"])
    path = ctx.root / "state" / "budget" / ctx.agent / f"{ctx.session}.json"
    return Budget(path, window=window, safety_margin=cfg["budget.safety_margin"],
                  max_extraction_tokens=cfg["budget.max_extraction_tokens"], root=ctx.root)


def token_meta(count: int, spec: EncodingSpec) -> dict[str, Any]:
    return {"count": count, "encoding": spec.name, "exact": spec.exact}


def budget_meta(view: dict[str, Any]) -> dict[str, Any]:
    return {k: view[k] for k in ("window", "usable", "used", "remaining")}


def charge_answer(ctx: Context, tokens: int, *, code: str, suggestions: Suggestions = None,
                  kind: str = "extracted", details: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
    """Refuse (LimitExceeded / BudgetExceeded) or record ``tokens``; return meta to attach."""
    spec = ctx.encoding()
    budget = budget_for(ctx)
    with _refusal_details(spec, suggestions, details):
        budget.check_cap(tokens, code=code)
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
def _refusal_details(spec: EncodingSpec, suggestions: Suggestions,
                     details: dict[str, Any] | None) -> Iterator[None]:
    from scratch.errors import BudgetExceeded, LimitExceeded
    try:
        yield
    except (LimitExceeded, BudgetExceeded) as exc:
        ours = resolve_suggestions(suggestions)
        # ours name this command's own alternatives, each sized to fit; none fitting leaves
        # none over the cap (the generic advice is not a command), and the budget's own advice
        if ours or (ours is not None and isinstance(exc, LimitExceeded)):
            exc.details["suggestions"] = ours
        exc.details.setdefault("encoding", spec.name)
        if details:
            exc.details.update(details)
        raise


def price_envelope(ctx: Context, meta: dict[str, Any], envelope: Callable[[], str]) -> None:
    """Charge a --json answer at the exact count of its envelope (refusing it if over).

    The envelope holds its own count and the budget after it, so the count is settled first:
    the meta is filled in as it will read after the charge and the envelope counted again
    until the count it states is the count it has."""
    from scratch.tokens import count_text
    pending = meta.pop(PENDING)
    spec = ctx.encoding()
    budget = budget_for(ctx)
    view = budget.status()
    tokens = count_text(envelope(), spec)
    cap = budget.max_extraction_tokens
    settle = tokens <= min(view["remaining"], cap if cap > 0 else tokens) + 16
    for attempt in range(4 if settle else 0):  # an envelope far over is refused as it is
        meta["tokens"] = token_meta(tokens, spec)
        meta["budget"] = _after(view, tokens)
        again = count_text(envelope(), spec)
        if again == tokens:
            break
        tokens = again if attempt < 3 else max(again, tokens)
    with _refusal_details(spec, pending["suggestions"], pending["details"]):
        budget.check_cap(tokens, code=pending["code"])
        view = budget.charge(tokens, kind=pending["kind"])
    meta["tokens"] = token_meta(tokens, spec)
    meta["budget"] = budget_meta(view)


def _after(view: dict[str, Any], tokens: int) -> dict[str, Any]:
    """``meta["budget"]`` as it reads once ``tokens`` are charged (if nothing else is)."""
    return {"window": view["window"], "usable": view["usable"], "used": view["used"] + tokens,
            "remaining": max(0, view["remaining"] - tokens)}


def resolve_suggestions(suggestions: Suggestions) -> list[str] | None:
    """The suggestions of a refusal, working them out if they were given as a function."""
    if not callable(suggestions):
        return suggestions
    from scratch.errors import ScratchError
    try:
        return suggestions()
    except ScratchError:  # sizing an alternative failed: refuse without alternatives
        return []


ENVELOPE_TOKENS = 100  # the --json envelope around "data" (meta, budget, next): measured ~60-90


class EnvelopeMeter:
    """The exact token count of the --json envelope an answer will print, before it is priced.

    The envelope is built as :func:`scratch.result.envelope_ok` builds it: ``command``, the
    data, and a meta holding ``tokens`` and ``budget`` (then ``next`` when the data has one,
    then the warnings). The numbers that pricing fills in later are put at their widest (the
    count at ``cap``, ``used`` as if ``cap`` were charged), and a number of fewer digits never
    takes more tokens, so the envelope that is finally priced costs at most what was measured.
    """

    def __init__(self, ctx: Context, command: str, cap: int,
                 warnings: tuple[str, ...] = ()) -> None:
        self.spec = ctx.encoding()
        view = budget_for(ctx).status()
        self.command = command
        self.warnings = warnings
        self.meta = {"tokens": token_meta(max(cap, 0), self.spec),
                     "budget": {"window": view["window"], "usable": view["usable"],
                                "used": view["used"] + max(cap, 0),
                                "remaining": view["remaining"]}}

    def tokens(self, data: Any) -> int:
        from scratch.render import envelope_text
        from scratch.result import Result
        from scratch.tokens import count_text
        meta = dict(self.meta)
        if isinstance(data, dict) and data.get("next"):
            meta["next"] = data["next"]
        result = Result(self.command, data=data, meta=meta, warnings=self.warnings)
        return count_text(envelope_text(result), self.spec)


def largest_fitting(n: int, cost: Callable[[int], int], cap: int, guess: int | None = None
                    ) -> int:
    """The largest k in 0..n with ``cost(k) <= cap`` (0 when not even 1 fits), for a cost that
    grows with k; only a measured k is returned. Starts at ``guess`` (else ``n``), steps in
    proportion to what the last measure says, then bisects what is left."""
    lo, hi = 0, n + 1  # cost(lo) fits (or lo is 0); hi does not (or is past n)
    k = n if guess is None else max(1, min(n, guess))
    steps = 0
    while n > 0:
        c = cost(k)
        if c <= cap:
            lo = k
        else:
            hi = k
        if hi - lo <= 1:
            break
        steps += 1
        step = int(k * cap / c) if c > 0 and steps <= 3 else (lo + hi) // 2
        k = min(max(step, lo + 1), hi - 1)
    return lo


def shrink_to_fit(ctx: Context, cap: int, n: int, build: Callable[[int], Any], *,
                  command: str | None = None, warnings: tuple[str, ...] = (),
                  guess: int | None = None) -> int:
    """For --json answers under --fit: the largest k <= n whose answer ``build(k)`` fits
    ``cap``, measured as the whole envelope it prints (see :class:`EnvelopeMeter`).

    ``build(k)`` returns the data exactly as the answer will hold it, ``next`` included when
    there is one (it is echoed in meta); ``guess``: where to start measuring (the k an
    estimate gave). Callers that do not name their ``command`` (the data
    they build may lack ``next``) get a reserve for the command and a ``next`` repeating their
    data's strings twice. Human mode keeps ``n``: its price is the text's.
    """
    if not ctx.json_mode:
        return n
    meter = EnvelopeMeter(ctx, command or "", cap, warnings)
    if command is not None:
        return largest_fitting(n, lambda k: meter.tokens(build(k)), cap, guess)

    def cost(k: int) -> int:
        data = build(k)
        return meter.tokens(data) + _next_reserve(meter, data)

    return largest_fitting(n, cost, cap, guess)


def _next_reserve(meter: EnvelopeMeter, data: Any) -> int:
    """Room for a ``next`` not in the data: the data's short strings (name, path, fields), as
    data.next and meta.next repeat them, plus the command and its flags."""
    from scratch.tokens import count_text
    words: list[str] = []
    if isinstance(data, dict):
        for value in data.values():
            if isinstance(value, str) and len(value) <= 1000:
                words.append(value)
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                words.append(",".join(value))
    return 2 * (count_text(" ".join(words), meter.spec) + 30)
