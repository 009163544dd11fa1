"""grep over stored entries: linear-time matching (re2), priced regions, --fit paging.

Invariants:
- The content is searched through an mmap with the index's line offsets, so memory stays flat
  and line numbers are a bisect away.
- Output lines are ``N:text`` for selected lines and ``N-text`` for context, regions separated
  by ``--`` (as grep -n prints); with ``--all`` each line is prefixed ``name:``.
- ``--fit`` stops before the first region that would not fit; ``next`` resumes the search at
  that region's first line with the remaining ``-m`` count: following it covers all matches
  with no gap and no overlap. With --json what must fit is the whole envelope printed.
- A refusal suggests a smaller ``-m`` (the answer for the first K matches is a prefix of the
  refused one plus the trailing context of the K-th, so its cost is known without searching
  again), --fit when its first piece fits, and -C 0 when the matches alone fit: each sized to
  the cap and budget as they stand, none the refused command itself.
"""

from __future__ import annotations

import functools
import mmap
import shlex
from collections.abc import Callable
from typing import Any

from scratch.context import Context
from scratch.errors import InvalidPattern, UsageError
from scratch.explore.lines import fit_cap, line_alternatives, too_big_to_fit
from scratch.explore.target import Target, numbers_cost, open_target, range_cost
from scratch.pricing import EnvelopeMeter, charge_answer, largest_fitting, shrink_to_fit
from scratch.result import Result


def _options(pattern: str, context: int, ignore_case: bool, fixed: bool, max_count: int | None,
             invert: bool) -> Any:
    from scratch.query.grep import GrepOptions
    if context < 0 or (max_count is not None and max_count < 0):
        raise UsageError("-C and -m must be >= 0", code="invalid_argument")
    return GrepOptions(pattern=pattern, ignore_case=ignore_case, fixed=fixed, invert=invert,
                       max_count=max_count, context=context)


def _regions(target: Target, options: Any, from_line: int) -> list[Any]:
    from scratch.query.grep import grep_buffer
    index = target.index
    if index.line_count == 0 or from_line > index.line_count:
        return []
    with open(target.path, "rb") as fh:
        size = index.meta["bytes"]
        if size == 0:
            return []
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            start = index.line_offset(from_line)
            return list(grep_buffer(buf, options, start=start, first_lineno=from_line,
                                    line_starts=index.line_starts()))
        finally:
            buf.close()


def _region_cost(target: Target, region: Any, spec: Any, prefix: str) -> int:
    first, last = region.first_lineno, region.last_lineno
    cost = range_cost(target, first, last, spec, numbers=True)
    if prefix:
        cost += spec.scale((last - first + 1) * max(1, len(prefix) // 4))
    return cost + 1  # the "--" separator


def _flags(options: Any, max_count: int | None) -> str:
    out = []
    if options.context:
        out.append(f"-C {options.context}")
    if options.ignore_case:
        out.append("-i")
    if options.fixed:
        out.append("-F")
    if options.invert:
        out.append("-v")
    if max_count is not None:
        out.append(f"-m {max_count}")
    return (" " + " ".join(out)) if out else ""


def _render(regions: list[Any], prefix: str = "") -> str:
    """``N:line`` for matches, ``N-line`` for context; like GNU grep, ``--`` separates regions
    only when they carry context (numbered match lines alone already show the gaps)."""
    out: list[str] = []
    separate = any(not line.match for region in regions for line in region.lines)
    for i, region in enumerate(regions):
        if i and separate:
            out.append("--")
        for line in region.lines:
            out.append(f"{prefix}{line.lineno}{':' if line.match else '-'}{line.display()}")
    return "\n".join(out) + ("\n" if out else "")


def _data(regions: list[Any]) -> list[dict[str, Any]]:
    return [{"start": r.first_lineno, "end": r.last_lineno,
             "lines": [{"line": ln.lineno, "text": ln.display(), "match": ln.match}
                       for ln in r.lines]} for r in regions]


def _resume(target: Target, pattern: str, options: Any, line: int, shown: int) -> str:
    """The ``next`` of a --fit answer that showed ``shown`` matches and stopped before
    ``line``."""
    left = None if options.max_count is None else options.max_count - shown
    return (f"scratch grep {target.ref} {shlex.quote(pattern)}{_flags(options, left)} "
            f"--from-line {line} --fit")


def _fit_regions(ctx: Context, target: Target, regions: list[Any], cap: int, spec: Any,
                 next_for: Callable[[int, int], str]) -> tuple[list[Any], int | None, int,
                                                               str | None]:
    """The longest prefix of the answer that fits ``cap``, cut only where resuming the search
    (``--from-line``) repeats and skips nothing: between regions, or just before a selected
    line (its before-context was shown). Returns the regions, the line to resume at (None if
    all fit), the cost and ``next`` (``next_for(line, matches shown)``). With --json the
    measure is the envelope, ``next`` included."""
    from scratch.query.grep import Region
    units = [(ri, ln) for ri, region in enumerate(regions) for ln in region.lines]
    costs = [range_cost(target, ln.lineno, ln.lineno, spec, numbers=True)
             + (1 if ri and i == 0 else 0)
             for ri, region in enumerate(regions) for i, ln in enumerate(region.lines)]

    def can_cut(p: int) -> bool:
        return p == len(units) or units[p][1].match or units[p][0] != units[p - 1][0]

    def prefix(p: int) -> list[Any]:
        out: list[Any] = []
        for ri, ln in units[:p]:
            if not out or out[-1][0] != ri:
                out.append((ri, Region()))
            out[-1][1].lines.append(ln)
        return [r for _, r in out]

    def resume(p: int) -> int | None:
        return units[p][1].lineno if p < len(units) else None

    # the cut points whose lines' estimate fits (with --json, the envelope must fit too)
    cuts: list[int] = []
    used = 0
    for p in range(1, len(units) + 1):
        used += costs[p - 1]
        if used > cap:
            break
        if can_cut(p):
            cuts.append(p)

    def data(k: int) -> dict[str, Any]:
        shown = prefix(cuts[k - 1])
        out = {"name": target.name, "version": target.version,
               "matches": sum(r.match_count for r in shown), "regions": _data(shown)}
        line = resume(cuts[k - 1])
        if line is not None:
            out["next"] = next_for(line, out["matches"])
        return out

    keep = shrink_to_fit(ctx, cap, len(cuts), data, command="grep")
    best = cuts[keep - 1] if keep else 0
    shown = prefix(best)
    line = resume(best)
    nxt = next_for(line, sum(r.match_count for r in shown)) if line is not None else None
    return shown, line, sum(costs[:best]), nxt


def _first_matches(regions: list[Any], k: int, after: int) -> list[Any]:
    """The regions ``-m k`` answers, from those of a search that went further: its lines up to
    the k-th selected one, then up to ``after`` lines of trailing context (lines that follow
    at once, shown as context even when they match, as grep -m does)."""
    from scratch.query.grep import GrepLine, Region
    out: list[Any] = []
    seen = 0
    for region in regions:
        lines: list[Any] = []
        for ln in region.lines:
            if seen >= k:
                if len(lines) >= 1 and after > 0 and ln.lineno == lines[-1].lineno + 1:
                    lines.append(GrepLine(ln.lineno, ln.text, False))
                    after -= 1
                    continue
                break
            lines.append(ln)
            seen += ln.match
        if lines:
            out.append(Region(lines))
        if seen >= k:
            break
    return out


def _only_matches(regions: list[Any]) -> list[Any]:
    """The regions -C 0 answers: the selected lines, adjacent ones together."""
    from scratch.query.grep import Region
    out: list[Any] = []
    for region in regions:
        for ln in region.lines:
            if not ln.match:
                continue
            if out and out[-1].last_lineno + 1 == ln.lineno:
                out[-1].lines.append(ln)
            else:
                out.append(Region([ln]))
    return out


class _Pricer:
    """What a grep answer costs as this mode prices it: its lines (human mode), or its
    envelope (--json)."""

    def __init__(self, ctx: Context, target: Target, cap: int) -> None:
        self.target = target
        self.spec = ctx.encoding()
        self.cap = cap
        self.meter = EnvelopeMeter(ctx, "grep", cap) if ctx.json_mode else None

    def cost(self, regions: list[Any]) -> int:
        costs = [_region_cost(self.target, r, self.spec, "") for r in regions]
        estimate = max(0, sum(costs) - 1)
        if self.meter is None or estimate > self.cap:  # --json checks the estimate first
            return estimate
        return max(estimate, self.meter.tokens({
            "name": self.target.name, "version": self.target.version,
            "matches": sum(r.match_count for r in regions), "regions": _data(regions)}))


def grep(ctx: Context, ref: str, pattern: str, *, context: int = 0, ignore_case: bool = False,
         fixed: bool = False, max_count: int | None = None, invert: bool = False,
         fit: bool = False, from_line: int = 1) -> Result:
    options = _options(pattern, context, ignore_case, fixed, max_count, invert)
    target = open_target(ctx, ref, logs=True)
    if from_line < 1:
        raise UsageError("--from-line must be >= 1", code="invalid_argument")
    try:
        regions = _regions(target, options, from_line)
    except InvalidPattern as exc:
        exc.details.setdefault("suggestions", [
            f"scratch grep {target.ref} {shlex.quote(pattern)} -F"])
        raise
    spec = ctx.encoding()
    costs = [_region_cost(target, r, spec, "") for r in regions]
    cost = max(0, sum(costs) - 1) if costs else 0
    matches = sum(r.match_count for r in regions)
    nxt = None
    next_for = functools.partial(_resume, target, pattern, options)
    if fit:
        cap = fit_cap(ctx)
        if cost > cap or ctx.json_mode:
            regions, cut_at, cost, nxt = _fit_regions(ctx, target, regions, cap, spec, next_for)
            if not regions and cut_at is not None:
                line = cut_at
                raise too_big_to_fit(ctx, "grep_too_large", f"line {line} alone",
                                     range_cost(target, line, line, spec, numbers=True),
                                     lambda: line_alternatives(ctx, target, line))
    shown_regions = regions
    meta = charge_answer(ctx, cost, code="grep_too_large", details={"matches": matches},
                         suggestions=lambda: grep_suggestions(
                             ctx, target, pattern, options, shown_regions, fit=fit,
                             from_line=from_line))
    data: dict[str, Any] = {"name": target.name, "version": target.version,
                            "matches": sum(r.match_count for r in regions),
                            "regions": _data(regions)}
    notices: tuple[str, ...] = ()
    if nxt:
        data["next"] = meta["next"] = nxt
        notices = (f"more: {nxt}",)
    elif not regions:
        notices = ("no matches",)
    target.index.close()
    return Result("grep", data=data, text=_render(regions), meta=meta, notices=notices)


def grep_suggestions(ctx: Context, target: Target, pattern: str, options: Any,
                     regions: list[Any], *, fit: bool, from_line: int) -> list[str]:
    """Commands that answer part of a refused grep within the cap and budget as they stand."""
    try:
        return _grep_suggestions(ctx, target, pattern, options, regions, fit=fit,
                                 from_line=from_line)
    finally:
        target.index.close()


def _grep_suggestions(ctx: Context, target: Target, pattern: str, options: Any,
                      regions: list[Any], *, fit: bool, from_line: int) -> list[str]:
    cap = fit_cap(ctx)
    pricer = _Pricer(ctx, target, cap)
    base = f"scratch grep {target.ref} {shlex.quote(pattern)}"
    start = f" --from-line {from_line}" if from_line != 1 else ""
    shown = sum(r.match_count for r in regions)
    after = options.after_lines
    out: list[str] = []
    # fewer matches: the most whose answer fits (fewer than were refused)
    spec = ctx.encoding()
    used = guess = 0
    for region in regions:
        for ln in region.lines:
            used += range_cost(target, ln.lineno, ln.lineno, spec, numbers=True)
            if used > cap:
                break
            guess += ln.match
        if used > cap:
            break
    k = largest_fitting(shown - 1, lambda m: pricer.cost(_first_matches(regions, m, after)), cap,
                        guess=guess)
    if k:
        out.append(f"{base}{_flags(options, k)}{start}")
    if not fit and regions:
        first, _, _, _ = _fit_regions(ctx, target, regions, cap, spec,
                                      functools.partial(_resume, target, pattern, options))
        if first:
            out.append(f"{base}{_flags(options, options.max_count)}{start} --fit")
    if options.context and pricer.cost(_only_matches(regions)) <= cap:
        flags = _flags(options, options.max_count).replace(f"-C {options.context}", "-C 0")
        out.append(f"{base}{flags}{start}")
    if not out and regions:
        first_match = next(ln.lineno for r in regions for ln in r.lines if ln.match)
        out = line_alternatives(ctx, target, first_match)
    return out


def grep_all(ctx: Context, pattern: str, *, context: int = 0, ignore_case: bool = False,
             fixed: bool = False, max_count: int | None = None, invert: bool = False) -> Result:
    options = _options(pattern, context, ignore_case, fixed, max_count, invert)
    spec = ctx.encoding()
    store = ctx.store()
    parts: list[str] = []
    entries: list[dict[str, Any]] = []
    found: list[tuple[str, list[Any]]] = []  # the entries' names and regions (suggestions)
    cost = 0
    for row in store.list(""):
        target = open_target(ctx, row["name"], logs=True)
        regions = _regions(target, options, 1)
        if regions:
            prefix = f"{row['name']}:"
            cost += sum(_region_cost(target, r, spec, prefix) for r in regions)
            found.append((row["name"], regions))
            parts.append(_render(regions, prefix))
            entries.append({"name": row["name"], "regions": _data(regions),
                            "matches": sum(r.match_count for r in regions)})
        target.index.close()
    meta = charge_answer(ctx, cost, code="grep_too_large",
                         suggestions=lambda: grep_all_suggestions(ctx, pattern, options, found))
    data = {"pattern": pattern, "entries": entries,
            "matches": sum(e["matches"] for e in entries)}
    return Result("grep", data=data, text="--\n".join(parts), meta=meta,
                  notices=() if entries else ("no matches",))


def grep_all_suggestions(ctx: Context, pattern: str, options: Any,
                         found: list[tuple[str, list[Any]]]) -> list[str]:
    """A smaller -m for every entry, and --fit on the entries whose first piece fits."""
    cap = fit_cap(ctx)
    spec = ctx.encoding()
    qp = shlex.quote(pattern)
    meter = EnvelopeMeter(ctx, "grep", cap) if ctx.json_mode else None
    targets: dict[str, Target] = {}

    def target_of(name: str) -> Target:
        if name not in targets:
            targets[name] = open_target(ctx, name, logs=True)
        return targets[name]

    def cost(m: int) -> int:
        total = 0
        entries = []
        for name, regions in found:
            cut = _first_matches(regions, m, options.after_lines)
            target = target_of(name)
            total += sum(_region_cost(target, r, spec, f"{name}:") for r in cut)
            entries.append({"name": name, "regions": _data(cut),
                            "matches": sum(r.match_count for r in cut)})
        if meter is None or total > cap:  # --json checks the estimate first
            return total
        return max(total, meter.tokens({"pattern": pattern, "entries": entries,
                                        "matches": sum(e["matches"] for e in entries)}))

    out: list[str] = []
    try:
        most = max((sum(r.match_count for r in regions) for _, regions in found), default=0)
        k = largest_fitting(most - 1, cost, cap, guess=min(most - 1, 5))
        if k:
            out.append(f"scratch grep --all {qp}{_flags(options, k)}")
        for name, regions in found:
            if len(out) >= 4:
                break
            target = target_of(name)
            if _fit_regions(ctx, target, regions, cap, spec,
                            functools.partial(_resume, target, pattern, options))[0]:
                out.append(f"scratch grep {target.ref} {qp}{_flags(options, options.max_count)}"
                           " --fit")
    finally:
        for target in targets.values():
            target.index.close()
    return out


__all__ = ["grep", "grep_all", "numbers_cost"]
