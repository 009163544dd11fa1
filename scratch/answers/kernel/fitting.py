"""The one place that decides what an answer may cost, what of it is shown, and what it costs.

Every priced answer, in every interface, goes through :func:`deliver`:

1. The limits: the per-call cap (``budget.max_extraction_tokens``) and what is left of the
   budget of (agent, session), read once.
2. The cut: without ``--fit`` the whole candidate answer must fit, checked on its estimate
   before it is built, then on its exact price; with ``--fit`` the most units that fit are
   shown (the estimate bounds the search, the exact price decides) and ``next`` is the call
   that continues after them. When not even one unit fits, the candidate's ``pieces()`` answer
   instead (one long line, in pieces), or the answer is refused.
3. The price: the exact count of what the rendering prints (the text, the index's price of the
   lines, or the whole ``--json`` envelope, which states its own count), then the charge, in
   one locked check-and-record of the budget.
4. A refusal: a :class:`~scratch.errors.LimitExceeded` (the per-call cap) or
   :class:`~scratch.errors.BudgetExceeded` (the budget) whose suggestions are calls sized, in
   the same rendering, to fit what is left once the refusal itself is charged (an agent reads
   a refusal, so it costs what it prints). None repeats the refused call. When the budget is
   what binds and nothing of the answer fits, the suggestions are the budget commands, which
   always run.

Sizing a suggestion or a page builds candidate answers and measures them; only the final
answer (or the refusal) is charged. Nothing else in scratch charges the budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, NoReturn

from scratch.answers.kernel.candidate import FIT, SHRINK, Alternative, Candidate, Some, Step
from scratch.answers.kernel.prices import (
    BudgetView,
    Limits,
    after,
    budget_for,
    budget_meta,
    budget_view,
    limits_for,
    token_meta,
)
from scratch.errors import BudgetExceeded, LimitExceeded, ScratchError

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.rendering import Rendering
    from scratch.answers.kernel.result import Meta, Result
    from scratch.calls import Call
    from scratch.tokens import EncodingSpec

MAX_SUGGESTIONS = 6


class Meter:
    """Measures answers as ``rendering`` prints them, against ``limits``."""

    def __init__(self, ctx: Context, rendering: Rendering, limits: Limits | None = None) -> None:
        self.ctx = ctx
        self.rendering = rendering
        self.spec = ctx.encoding()
        self.limits = limits if limits is not None else limits_for(ctx)

    @property
    def cap(self) -> int:
        return self.limits.cap

    def tighter(self, tokens: int) -> Meter:
        return Meter(self.ctx, self.rendering, self.limits.less(tokens))

    def cost(self, result: Result[object]) -> int:
        """What ``result`` costs as printed, its meta at its widest (the count at the cap,
        the budget as if the cap were charged): a number of fewer digits never costs more."""
        if self.rendering.states_meta:
            widest = max(self.cap, 0)
            result = result.with_meta({"tokens": token_meta(widest, self.spec),
                                       "budget": after(self.limits.view, widest)})
        return self.rendering.cost(result, self.spec)

    def answer_cost(self, c: Candidate, k: int, *, with_next: bool
                    ) -> tuple[int, Result[object] | None]:
        """The cost of ``c.page(k)`` (with ``next`` when asked), and the page when it was
        built: an estimate over the cap, or the index's price of its text, decides without
        building it (the cost then reported is the closer of the candidate's guesses)."""
        estimate = c.estimate(k)
        if estimate is not None and estimate > self.cap:
            return max(estimate, c.about(k) or 0), None
        if self.rendering.text_prices:
            price = c.text_price(k)
            if price is not None:
                return price, None
        result = c.page(k)
        if with_next:
            result = replace(result, next=c.resume(k))
        return self.cost(result), result

    def fits(self, c: Candidate) -> bool:
        """Whether the whole answer of ``c`` fits."""
        return self.answer_cost(c, c.units, with_next=False)[0] <= self.cap

    def most_units(self, c: Candidate) -> int:
        """The most units of ``c`` a --fit page shows within the cap (0 when not one)."""
        n = c.units
        if n <= 0:
            return 0
        upper = _bisect(n, lambda k: (c.estimate(k) or 0) <= self.cap)
        if upper == 0:
            return 0
        if self.rendering.text_prices and c.text_price(1) is not None:
            return _bisect(upper, lambda k: (c.text_price(k) or 0) <= self.cap)
        about = c.about(upper)  # a sample's guess: start there, not at the most there can be
        guess = min(upper, max(1, int(self.cap * upper / about))) if about else upper
        return largest_fitting(upper, lambda k: self.answer_cost(c, k, with_next=True)[0],
                               self.cap, guess=guess)

    def first_fits(self, c: Candidate) -> bool:
        """Whether a --fit page of ``c`` shows at least its first unit."""
        return c.units > 0 and self.answer_cost(c, 1, with_next=True)[0] <= self.cap

    def largest_shrunk(self, c: Candidate) -> Call | None:
        """The call of ``c.shrunk(k)`` with the largest k that fits (k < c.shrink_units).
        Only the candidate of the best k so far is kept (each holds what it read)."""
        n = c.shrink_units - 1
        if n < 1:
            return None
        best: list[tuple[int, Call]] = []  # the largest k that fitted so far, and its call

        def cost(k: int) -> int:
            s = c.shrunk(k)
            if s is None:
                return self.cap + 1
            spent = self.answer_cost(s, s.units, with_next=False)[0]
            if spent <= self.cap and k > (best[0][0] if best else 0):
                best[:] = [(k, s.asked)]
            if s is not c:
                s.close()
            return spent

        k = largest_fitting(n, cost, self.cap, guess=_guess(n, c, self.cap))
        return best[0][1] if k and best else None


def _guess(n: int, c: Candidate, cap: int) -> int | None:
    """Where the search for the largest shrunk answer starts: from what the whole is said to
    cost (a sample's guess), else from the units' estimate (line windows), else at n."""
    if c.shrink_units != c.units:
        return None
    about = c.about(c.units)
    if about:
        return max(1, int(cap * c.units / about))
    if c.estimate(1) is not None:
        return _bisect(n, lambda k: (c.estimate(k) or 0) <= cap) or 1
    return None


def _bisect(n: int, fits: Callable[[int], bool]) -> int:
    """The largest k in 0..n with ``fits(k)``, for a test that holds up to some k only."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


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


# -- delivering an answer -------------------------------------------------------------------

def deliver(ctx: Context, rendering: Rendering, c: Candidate) -> Result[object]:
    """The answer of ``c`` that fits, priced and charged; or a refusal (see the module)."""
    from scratch.tokens.budget import StaleBudget
    try:
        try:
            return _deliver(Meter(ctx, rendering), c)
        except StaleBudget:  # sized on a kept budget state that changed meanwhile: again
            return _deliver(Meter(ctx, rendering, limits_for(ctx, fresh=True)), c)
    finally:
        c.close()


def charge_result(ctx: Context, rendering: Rendering, result: Result[object]) -> Result[object]:
    """:func:`charge` of an answer that is no candidate (its text is final)."""
    from scratch.tokens.budget import StaleBudget
    try:
        return charge(Meter(ctx, rendering), result)
    except StaleBudget:
        return charge(Meter(ctx, rendering, limits_for(ctx, fresh=True)), result)


def _deliver(meter: Meter, c: Candidate) -> Result[object]:
    if c.fit:
        k = meter.most_units(c)
        if k == 0:
            pieces = c.pieces()
            if pieces is not None:
                try:
                    return _deliver(meter, pieces)
                finally:
                    pieces.close()
            cost = meter.answer_cost(c, 1, with_next=True)[0] if c.units else 0
            refuse(meter, c, cost, what=c.what)
        result = replace(c.page(k), next=c.resume(k))
    else:
        cost, built = meter.answer_cost(c, c.units, with_next=False)
        if cost > meter.cap:
            refuse(meter, c, cost)
        result = built if built is not None else c.page(c.units)
    return charge(meter, result, c)


def charge(meter: Meter, result: Result[object], c: Candidate | None = None) -> Result[object]:
    """Price ``result`` exactly as printed and record it in the budget (refused, with ``c``'s
    suggestions, when it does not fit after all). An answer about an entry whose values were
    redacted at capture (or that was stored unredacted) says so under ``meta["redacted"]``,
    priced with the rest, when the candidate holds its target (else
    :func:`scratch.answers.kernel.recording.redaction_meta` adds it, unpriced)."""
    told = redaction_summary(getattr(getattr(c, "target", None), "info", None))
    if told is not None and "redacted" not in result.meta:
        result = result.with_meta({"redacted": told})
    from scratch.answers.kernel.result import ANSWER
    how = result.charge or ANSWER
    spec = meter.spec
    budget = budget_for(meter.ctx)
    view: BudgetView = meter.limits.view
    tokens = _settle(meter, result, view, how.stored)
    expect = meter.limits.basis
    if how.enforce:
        per_call = meter.limits.per_call
        if (per_call > 0 and tokens > per_call) or meter.limits.over_budget(tokens):
            if c is None:
                if expect is not None:  # refused on a kept state: only a fresh one may refuse
                    budget.check(0, expect=expect)
                raise LimitExceeded(f"this answer costs ~{tokens} tokens, over the limit",
                                    code="answer_too_large", estimated_tokens=tokens)
            refuse(meter, c, tokens)
        try:
            view = budget_view(budget.charge(tokens, kind=how.kind, expect=expect,
                                             enforce=not meter.limits.person))
        except BudgetExceeded:  # spent meanwhile by a parallel call
            if c is None:
                raise
            refuse(Meter(meter.ctx, meter.rendering, limits_for(meter.ctx, fresh=True)), c,
                   tokens)
    else:
        view = budget_view(budget.charge(tokens, kind=how.kind, enforce=False, expect=expect))
    meta: Meta = {"tokens": token_meta(tokens, spec), "budget": budget_meta(view)}
    if how.stored:
        intercepted = max(0, how.stored - tokens)
        budget.record_intercepted(intercepted)
        meta["intercepted"] = intercepted
    return result.with_meta(meta)


def redaction_summary(info: object) -> dict[str, object] | None:
    """What a version's info (or a log's) says of its redaction, when there is something to
    say: values redacted, or stored unredacted."""
    kept = info.get("redaction") if isinstance(info, dict) else None
    if not isinstance(kept, dict):
        return None
    from scratch.redact.records import summary
    told = summary(kept)
    if told is None or (not told.get("count") and "unredacted" not in told):
        return None
    told.pop("carried", None)
    return told


def _meta(result: Result[object], spec: EncodingSpec, view: BudgetView, tokens: int,
          stored: int) -> Result[object]:
    """``result`` with its meta as it will read once ``tokens`` are charged."""
    meta: Meta = {"tokens": token_meta(tokens, spec), "budget": after(view, tokens)}
    if stored:
        meta["intercepted"] = max(0, stored - tokens)
    return result.with_meta(meta)


def _settle(meter: Meter, result: Result[object], view: BudgetView, stored: int = 0) -> int:
    """The exact price of ``result``. An output that states its own count and the budget after
    it (the --json envelope) is counted until the count it states is the count it has."""
    rendering, spec = meter.rendering, meter.spec
    if not rendering.states_meta:
        return rendering.cost(result, spec)
    tokens = rendering.cost(_meta(result, spec, view, 0, stored), spec)
    for attempt in range(4):
        again = rendering.cost(_meta(result, spec, view, tokens, stored), spec)
        if again == tokens:
            break
        tokens = again if attempt < 3 else max(again, tokens)
    return tokens


# -- refusals -------------------------------------------------------------------------------

def refuse(meter: Meter, c: Candidate, estimated: int, *, what: str | None = None) -> NoReturn:
    """Raise the refusal of ``c`` (estimated at ``estimated`` tokens), its suggestions sized to
    fit once the refusal itself is charged, after charging it."""
    limits = meter.limits
    err = _limit_error(meter, c, estimated, what)
    err.details.update(c.details())
    err.details["encoding"] = meter.spec.name
    rendering, spec = meter.rendering, meter.spec
    # sized to fit once the refusal is charged: first against what is left after its bare
    # text, then (when that leaves less than the cap) after its text with them
    cost = rendering.error_cost(c.command, err, spec)
    ours = _sized_suggestions(meter, c, cost)
    err.details["suggestions"] = ours
    with_them = rendering.error_cost(c.command, err, spec)
    if ours and limits.less(with_them).cap < limits.less(cost).cap:
        ours = _sized_suggestions(meter, c, with_them)
    if not ours and (isinstance(err, BudgetExceeded) or limits.less(with_them).cap <= 0):
        ours = budget_calls(limits.view)
    err.details["suggestions"] = ours
    cost = rendering.error_cost(c.command, err, spec)
    view = budget_for(meter.ctx).charge(cost, kind="refusal", enforce=False,
                                        expect=limits.basis)
    # what the refusal cost, for a footer (not part of the error object it was priced as)
    err.charged = {"tokens": token_meta(cost, spec), "budget": budget_meta(budget_view(view))}
    raise err


def _sized_suggestions(meter: Meter, c: Candidate, refusal_tokens: int) -> list[Call]:
    room = meter.tighter(refusal_tokens)
    return suggest(room, c) if room.cap > 0 else []


def _limit_error(meter: Meter, c: Candidate, estimated: int, what: str | None) -> ScratchError:
    """The per-call cap's refusal (code ``c.code``) when the cap is what the answer is over,
    else the budget's (``budget_exceeded``). ``what`` names a first unit that alone does not
    fit (--fit): then whichever of the two is smaller is the limit."""
    from scratch.words import plural
    limits = meter.limits
    view = limits.view
    if what is not None:
        over_cap = not limits.budget_binds
    else:
        over_cap = limits.per_call > 0 and estimated > limits.per_call
    subject = what or "this answer"
    if over_cap:
        return LimitExceeded(
            f"{subject} costs ~{plural(estimated, 'token')}, over the per-call cap of "
            f"{limits.per_call} (budget.max_extraction_tokens)",
            code=c.code, estimated_tokens=estimated, limit=limits.per_call)
    return BudgetExceeded(
        f"{subject} costs ~{plural(estimated, 'token')} but only {view['remaining']} of the "
        f"{view['usable']}-token budget remain",
        estimated_tokens=estimated, remaining=view["remaining"], usable=view["usable"],
        used=view["used"], window=view["window"])


def budget_calls(view: BudgetView) -> list[Call]:
    """What always runs when the budget is spent: see it, record the model's own count, reset
    it after the context was cleared, or give the real window."""
    from scratch.calls import call
    return [call("budget"), call("budget used", tokens=int(view["used"])),
            call("budget reset"), call("budget set-window", tokens=int(view["window"]))]


def suggest(meter: Meter, c: Candidate) -> list[Call]:
    """The calls that answer part of ``c`` within ``meter``'s cap, in ``c.plan()`` order."""
    from scratch.calls import unique
    out: list[Call] = []
    shrunk = False
    regular = 0  # calls found by steps that are not last resorts
    for step in c.plan():
        if len(out) >= MAX_SUGGESTIONS:
            break
        if isinstance(step, Some):
            found = [f for f in _some(meter, c, step, shrunk) if f is not None]
            out += found
            regular += len(found)
            continue
        last_resort = isinstance(step, Alternative) and step.last_resort
        if last_resort and regular:
            continue
        found1 = _tried(meter, c, step, shrunk)
        if found1 is not None:
            out.append(found1)
            shrunk = shrunk or step == SHRINK
            regular += not last_resort
    return unique(out, without=c.asked)[:MAX_SUGGESTIONS]


def _tried(meter: Meter, c: Candidate, step: Step, shrunk: bool) -> Call | None:
    try:
        return _step(meter, c, step, shrunk)
    except ScratchError:  # sizing that way in failed: offer the others
        return None


def _some(meter: Meter, c: Candidate, step: Some, shrunk: bool) -> list[Call | None]:
    out: list[Call | None] = []
    for option in step.options:
        if len(out) >= step.most:
            break
        found = _tried(meter, c, option, shrunk)
        if found is not None:
            out.append(found)
    if not out:
        for option in step.otherwise:
            found = _tried(meter, c, option, shrunk)
            if found is not None:
                return [found]
    return out


def _step(meter: Meter, c: Candidate, step: Step, shrunk: bool) -> Call | None:
    if step == SHRINK:
        return meter.largest_shrunk(c)
    if step == FIT:
        if c.fit:
            return None
        # --fit in pieces (a first line too long for any answer) only when no smaller
        # answer of the same command fits
        return _fit_call(meter, c, pieces=not shrunk)
    assert isinstance(step, Alternative)
    if step.unless_shrunk and shrunk:
        return None
    other = step.candidate(meter.cap) if callable(step.candidate) else step.candidate
    if other is None and step.call is not None:
        from scratch.answers.kernel.catalogue import describe_candidate
        other = describe_candidate(meter.ctx, step.call)
    if other is None:
        return None
    try:
        if step.shrink:
            return other.asked if meter.fits(other) else meter.largest_shrunk(other)
        if step.fit:
            return None if other.fit else _fit_call(meter, other)
        return (step.call or other.asked) if answers(meter, other) else None
    finally:
        if other is not c:
            other.close()


def answers(meter: Meter, c: Candidate) -> bool:
    """Whether the call of ``c`` answers as it stands: all of it fits, or (asked with --fit)
    its first page shows something."""
    return shows_something(meter, c) if c.fit else meter.fits(c)


def shows_something(meter: Meter, c: Candidate) -> bool:
    """Whether a --fit page of ``c`` shows its first unit, or the first piece of a line too
    long for one answer."""
    if meter.first_fits(c):
        return True
    pieces = c.pieces()
    if pieces is None:
        return False
    try:
        return shows_something(meter, pieces)
    finally:
        pieces.close()


def _fit_call(meter: Meter, c: Candidate, *, pieces: bool = True) -> Call | None:
    """``c``'s --fit call, when a --fit page of it would show its first unit (or, with
    ``pieces``, the first piece of a line too long for one answer)."""
    fit = c.fit_call()
    if fit is None:
        return None
    paged = c.fit_candidate()
    try:
        if pieces:
            return fit if shows_something(meter, paged) else None
        return fit if meter.first_fits(paged) else None
    finally:
        if paged is not c:
            paged.close()
