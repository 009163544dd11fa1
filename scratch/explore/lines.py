"""head, tail and slice: line ranges of an entry, priced from the index, paged with --fit.

Every line-range answer goes through :func:`show_range`. Invariants:
- Lines are 1-indexed and inclusive; only the bytes of the shown lines are read (one seek).
- The cost is estimated from the index before anything is read; over the per-call cap or the
  budget the answer is refused (exit 3) with runnable suggestions, or with ``fit`` cut to the
  largest prefix that fits plus ``next``, a command that continues exactly after it.
- A refusal's suggestions are sized from the index's per-line token sums (and, with --json,
  the exact envelope of the lines they would show): each fits the cap and budget as they stand,
  and none repeats the refused command.
- Under --json, --fit measures the whole envelope it prints (name, ``next``, meta included).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scratch.context import Context
from scratch.errors import BudgetExceeded, LimitExceeded, OutOfRange, ScratchError, UsageError
from scratch.explore.target import Target, open_target, range_cost
from scratch.pricing import (
    Suggestions,
    budget_for,
    charge_answer,
    resolve_suggestions,
    shrink_to_fit,
)
from scratch.result import Result


def format_lines(lines: list[bytes], start: int, numbers: bool) -> str:
    out = []
    for i, raw in enumerate(lines):
        text = raw.decode("utf-8", errors="replace")
        out.append(f"{start + i}:{text}" if numbers else text)
    return "\n".join(out) + ("\n" if out else "")


def plural(n: int, word: str, *, grouped: bool = False) -> str:
    """``1 line``, ``2 lines`` (``1,000 lines`` when ``grouped``): a count and its noun,
    agreeing."""
    return (f"{n:,} " if grouped else f"{n} ") + (word if n == 1 else word + "s")


def fit_cap(ctx: Context) -> int:
    """What one answer may cost now: the per-call cap or what is left of the budget."""
    view = budget_for(ctx).status()
    cap = ctx.config["budget.max_extraction_tokens"]
    return min(cap, view["remaining"]) if cap > 0 else view["remaining"]


def too_big_to_fit(ctx: Context, code: str, what: str, estimated: int,
                   suggestions: Suggestions) -> ScratchError:
    """The refusal when not even the first piece of an answer fits: the budget's own code
    when what is left of the budget (not the per-call cap) is the limit."""
    view = budget_for(ctx).status()
    cap = ctx.config["budget.max_extraction_tokens"]
    if cap <= 0 or view["remaining"] < cap:
        return BudgetExceeded(
            f"{what} costs ~{plural(estimated, 'token')}; {view['remaining']} are left of the "
            "budget",
            estimated_tokens=estimated, remaining=view["remaining"], usable=view["usable"],
            used=view["used"], suggestions=["scratch budget", "scratch budget reset"])
    return LimitExceeded(f"{what} costs ~{plural(estimated, 'token')}, over the per-call cap "
                         f"of {cap}",
                         code=code, estimated_tokens=estimated, limit=cap,
                         suggestions=resolve_suggestions(suggestions) or [])


def most(n: int, fits: Callable[[int], bool]) -> int:
    """The largest k in 0..n with ``fits(k)``, for a test that holds up to some k and not
    after (a bisection: the costs come from prefix sums)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def fitting_lines(ctx: Context, target: Target, start: int, end: int, cap: int, *,
                  command: str, numbers: bool, from_end: bool = False,
                  next_for: Callable[[int], str | None] | None = None) -> int:
    """How many lines of ``start..end`` (the first ones, or with ``from_end`` the last ones)
    an answer of ``command`` shows within ``cap``, priced as this mode prices it: the index's
    estimate in human mode; with --json the exact envelope (``next_for(k)``: the ``next`` of
    an answer of k lines)."""
    spec = ctx.encoding()

    def span(k: int) -> tuple[int, int]:
        return (end - k + 1, end) if from_end else (start, start + k - 1)

    def within(limit: int, nums: bool) -> Callable[[int], bool]:
        return lambda k: range_cost(target, *span(k), spec, numbers=nums) <= limit

    n = end - start + 1
    if not ctx.json_mode:
        return most(n, within(cap, numbers))
    # --json answers are checked on the lines' estimate (no numbers: the data has none), then
    # priced on the envelope: both must fit
    upper = most(n, within(cap, False))
    if upper == 0:
        return 0
    lo, hi = span(upper)
    lines = target.index.read_lines(lo, hi)
    total = target.index.line_count

    def data(k: int) -> dict[str, Any]:
        first, last = span(k)
        out = _data(target, first, last, total, lines[len(lines) - k:] if from_end else lines[:k])
        nxt = next_for(k) if next_for else None
        if nxt:
            out["next"] = nxt
        return out

    return shrink_to_fit(ctx, cap, upper, data, command=command, guess=upper)


def show_range(ctx: Context, ref: str, start: int, end: int | None, *, command: str,
               code: str, numbers: bool, fit: bool, from_byte: int | None = None) -> Result:
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
        raise OutOfRange(f"{target.name} has {plural(total, 'line')}; line {start} is past "
                         "the end",
                         total_lines=total, start=start,
                         suggestions=[f"scratch tail {target.ref} -n 50"] if total else [])
    end = min(end, total)  # a range running past the end is cut there, not refused
    if from_byte is not None:  # the rest of line START, from a byte offset: piece by piece
        from scratch.explore.linepart import line_piece
        return line_piece(ctx, target, start, end, from_byte, command=command, code=code,
                          numbers=numbers)
    spec = ctx.encoding()
    flags = "" if numbers else " --no-numbers"
    priced = numbers and not ctx.json_mode  # --json data has no line numbers
    cost = range_cost(target, start, end, spec, numbers=priced)
    asked = end
    nxt = None
    if fit:
        cap = fit_cap(ctx)

        def next_for(k: int) -> str | None:
            last = start + k - 1
            return (f"scratch slice {target.ref} {last + 1} {asked} --fit{flags}"
                    if last < asked else None)

        if cost > cap or ctx.json_mode:
            keep = fitting_lines(ctx, target, start, end, cap, command=command,
                                 numbers=numbers, next_for=next_for)
            if keep == 0:  # the first line alone is over the cap: read it in pieces
                from scratch.explore.linepart import line_piece
                return line_piece(ctx, target, start, asked, 0, command=command, code=code,
                                  numbers=numbers)
            end = start + keep - 1
            nxt = next_for(keep)
            cost = range_cost(target, start, end, spec, numbers=priced)
    meta = charge_answer(ctx, cost, code=code, details={"total_lines": total, "start": start,
                                                        "end": end},
                         suggestions=lambda: range_suggestions(
                             ctx, target, start, end, command=command, numbers=numbers,
                             fit=fit))
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


def range_suggestions(ctx: Context, target: Target, start: int, end: int, *, command: str,
                      numbers: bool, fit: bool) -> list[str]:
    """Commands that show part of the refused lines ``start..end`` within the cap and budget
    as they stand: the same command asking for fewer lines, and (when the first line fits)
    the command with --fit; when no line fits, other ways in (see :func:`line_alternatives`)."""
    try:
        return _range_suggestions(ctx, target, start, end, command=command, numbers=numbers,
                                  fit=fit)
    finally:
        target.index.close()


def _range_suggestions(ctx: Context, target: Target, start: int, end: int, *, command: str,
                       numbers: bool, fit: bool) -> list[str]:
    cap = fit_cap(ctx)
    ref = target.ref
    flags = "" if numbers else " --no-numbers"
    out: list[str] = []
    if command == "read":  # the whole entry: its first lines, numbered as head prints them
        k = fitting_lines(ctx, target, 1, end, cap, command="head", numbers=True)
        if k:
            out.append(f"scratch head {ref} -n {k}")
    elif command == "tail":
        k = fitting_lines(ctx, target, start, end, cap, command="tail", numbers=numbers,
                          from_end=True)
        if k and k < end - start + 1:
            out.append(f"scratch tail {ref} -n {k}{flags}")
    else:
        k = fitting_lines(ctx, target, start, end, cap, command=command, numbers=numbers)
        if k and k < end - start + 1:
            out.append(f"scratch head {ref} -n {k}{flags}" if command == "head" and start == 1
                       else f"scratch slice {ref} {start} {start + k - 1}{flags}")
    again = f"read {ref}" if command == "read" else command_again(command, ref, start, end)
    fit_cmd = f"scratch {again} --fit{flags if command != 'read' else ''}"
    if not fit and _first_fits(ctx, target, start, end, cap, command, numbers):
        out.append(fit_cmd)
    elif not out:
        if not fit:
            out.append(fit_cmd)  # the first line, too long for one answer, comes in pieces
        out += line_alternatives(ctx, target, start)
    return list(dict.fromkeys(out))


def _first_fits(ctx: Context, target: Target, start: int, end: int, cap: int, command: str,
                numbers: bool) -> bool:
    """Whether --fit over ``start..end`` answers at least line ``start``."""
    flags = "" if numbers else " --no-numbers"
    return fitting_lines(ctx, target, start, min(start, end), cap, command=command,
                         numbers=numbers, next_for=lambda k: (
                             f"scratch slice {target.ref} {start + 1} {end} --fit{flags}"
                             if start < end else None)) > 0


def line_alternatives(ctx: Context, target: Target, line: int) -> list[str]:
    """Ways into an entry whose line ``line`` alone is over the cap: that line in pieces
    (slice --fit), the item it holds (an NDJSON line, paged with --fit), and the schema at a
    depth that fits."""
    from scratch.explore.structure import fitting_schema
    out = [f"scratch slice {target.ref} {line} {line} --fit"]
    if target.format == "ndjson":
        from bisect import bisect_right

        try:
            starts = target.index.item_starts([])
            i = bisect_right(starts, line) - 1
            if i >= 0 and starts[i] == line:
                out.append(f"scratch get-in {target.ref} {i} --fit")
        except ScratchError:
            pass
    schema = fitting_schema(ctx, target)
    if schema:
        out.append(schema)
    return out


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


def slice_(ctx: Context, ref: str, start: int, end: int, *, numbers: bool, fit: bool,
           from_byte: int | None = None) -> Result:
    return show_range(ctx, ref, start, end, command="slice", code="slice_too_large",
                      numbers=numbers, fit=fit, from_byte=from_byte)
