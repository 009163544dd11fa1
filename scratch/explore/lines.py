"""head, tail and slice: line ranges of an entry, priced from the index, paged with --fit.

Every line-range answer goes through :func:`show_range`. Invariants:
- Lines are 1-indexed and inclusive; only the bytes of the shown lines are read (one seek).
- The cost is estimated from the index before anything is read; over the per-call cap or the
  budget the answer is refused (exit 3) with runnable suggestions, or with ``fit`` cut to the
  largest prefix that fits plus ``next``, a command that continues exactly after it.
"""

from __future__ import annotations

from typing import Any

from scratch.context import Context
from scratch.errors import BudgetExceeded, LimitExceeded, OutOfRange, ScratchError, UsageError
from scratch.explore.target import Target, line_prefix_cost, open_target, range_cost
from scratch.pricing import budget_for, charge_answer, shrink_to_fit
from scratch.result import Result


def format_lines(lines: list[bytes], start: int, numbers: bool) -> str:
    out = []
    for i, raw in enumerate(lines):
        text = raw.decode("utf-8", errors="replace")
        out.append(f"{start + i}:{text}" if numbers else text)
    return "\n".join(out) + ("\n" if out else "")


def fit_cap(ctx: Context) -> int:
    """What one answer may cost now: the per-call cap or what is left of the budget."""
    view = budget_for(ctx).status()
    cap = ctx.config["budget.max_extraction_tokens"]
    return min(cap, view["remaining"]) if cap > 0 else view["remaining"]


def too_big_to_fit(ctx: Context, code: str, what: str, estimated: int,
                   suggestions: list[str]) -> ScratchError:
    """The refusal when not even the first piece of an answer fits: the budget's own code
    when what is left of the budget (not the per-call cap) is the limit."""
    view = budget_for(ctx).status()
    cap = ctx.config["budget.max_extraction_tokens"]
    if cap <= 0 or view["remaining"] < cap:
        return BudgetExceeded(
            f"{what} costs ~{estimated} tokens; {view['remaining']} are left of the budget",
            estimated_tokens=estimated, remaining=view["remaining"], usable=view["usable"],
            used=view["used"], suggestions=["scratch budget", "scratch budget reset"])
    return LimitExceeded(f"{what} costs ~{estimated} tokens, over the per-call cap of {cap}",
                         code=code, estimated_tokens=estimated, limit=cap,
                         suggestions=suggestions)


def last_fitting(target: Target, start: int, end: int, cap: int, spec: Any,
                 numbers: bool) -> int:
    """The last line L in start-1..end such that lines start..L cost at most ``cap``."""
    overhead = line_prefix_cost(end) if numbers else 0
    last = target.index.lines_fitting(start, spec.base_limit(cap), spec.base,
                                      per_line_overhead=overhead)
    last = min(last, end)
    while last >= start and range_cost(target, start, last, spec, numbers=numbers) > cap:
        last -= 1
    return last


def show_range(ctx: Context, ref: str, start: int, end: int | None, *, command: str,
               code: str, numbers: bool, fit: bool) -> Result:
    target = open_target(ctx, ref, logs=True)
    total = target.index.line_count
    if total == 0 and command in ("head", "tail"):
        return Result(command, data={"name": target.name, "version": target.version,
                                     "start": 1, "end": 0, "total_lines": 0, "lines": []},
                      text="")
    if end is None:
        end = total
    if start < 1 or end < start:
        raise UsageError(f"need 1 <= START <= END, got {start}..{end}", code="invalid_argument",
                         start=start, end=end)
    if start > total:
        raise OutOfRange(f"{target.name} has {total} lines; line {start} is past the end",
                         total_lines=total, start=start,
                         suggestions=[f"scratch tail {target.ref} -n 50"] if total else [])
    end = min(end, total)  # a range running past the end is cut there, not refused
    spec = ctx.encoding()
    flags = "" if numbers else " --no-numbers"
    cost = range_cost(target, start, end, spec, numbers=numbers)
    nxt = None
    if fit:
        cap = fit_cap(ctx)
        if cost > cap:
            last = last_fitting(target, start, end, cap, spec, numbers)
            if last < start:
                raise too_big_to_fit(ctx, code, f"line {start} alone",
                                     range_cost(target, start, start, spec, numbers=numbers),
                                     [f"scratch schema {target.ref}",
                                      f"scratch summarize {target.ref}"])
            end_of_range = end
            end = last
            cost = range_cost(target, start, end, spec, numbers=numbers)
        else:
            end_of_range = end
        keep = shrink_to_fit(ctx, cap, end - start + 1, lambda k: _data(
            target, start, start + k - 1, total, target.index.read_lines(start, start + k - 1)))
        if keep == 0:
            raise too_big_to_fit(ctx, code, f"line {start} alone", cost,
                                 [f"scratch schema {target.ref}",
                                  f"scratch summarize {target.ref}"])
        end = start + keep - 1
        if end < end_of_range:
            nxt = f"scratch slice {target.ref} {end + 1} {end_of_range} --fit{flags}"
            cost = range_cost(target, start, end, spec, numbers=numbers)
    half = start + max(0, (end - start) // 2 - 1)
    smaller = (f"scratch tail {target.ref} -n {max(1, (end - start + 1) // 2)}{flags}"
               if command == "tail" else f"scratch slice {target.ref} {start} {half}{flags}")
    suggestions = [smaller,
                   f"scratch {command_again(command, target.ref, start, end)} --fit{flags}"]
    meta = charge_answer(ctx, cost, code=code, suggestions=suggestions,
                         details={"total_lines": total, "start": start, "end": end})
    lines = target.index.read_lines(start, end)
    text = format_lines(lines, start, numbers)
    data = _data(target, start, end, total, lines)
    notices: tuple[str, ...] = ()
    if nxt:
        data["next"] = nxt
        meta["next"] = nxt
        notices = (f"more: {nxt}",)
    target.index.close()
    return Result(command, data=data, text=text, meta=meta, notices=notices)


def _data(target: Target, start: int, end: int, total: int, lines: list[bytes]
          ) -> dict[str, Any]:
    return {"name": target.name, "version": target.version, "start": start, "end": end,
            "total_lines": total, "lines": [b.decode("utf-8", errors="replace") for b in lines]}


def command_again(command: str, ref: str, start: int, end: int) -> str:
    if command == "head":
        return f"head {ref} -n {end}"
    if command == "tail":
        return f"tail {ref} -n {end - start + 1}"
    return f"slice {ref} {start} {end}"


def head(ctx: Context, ref: str, n: int, *, numbers: bool, fit: bool) -> Result:
    if n < 1:
        raise UsageError("-n must be >= 1", code="invalid_argument", n=n)
    return show_range(ctx, ref, 1, n, command="head", code="head_too_large", numbers=numbers,
                      fit=fit)


def tail(ctx: Context, ref: str, n: int, *, numbers: bool, fit: bool) -> Result:
    if n < 1:
        raise UsageError("-n must be >= 1", code="invalid_argument", n=n)
    target = open_target(ctx, ref, logs=True)
    total = target.index.line_count
    target.index.close()
    return show_range(ctx, ref, max(1, total - n + 1), total, command="tail",
                      code="tail_too_large", numbers=numbers, fit=fit)


def slice_(ctx: Context, ref: str, start: int, end: int, *, numbers: bool, fit: bool
           ) -> Result:
    return show_range(ctx, ref, start, end, command="slice", code="slice_too_large",
                      numbers=numbers, fit=fit)
