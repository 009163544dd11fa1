"""grep over stored entries: linear-time matching (re2), priced regions, --fit paging.

Invariants:
- The content is searched through an mmap with the index's line offsets, so memory stays flat
  and line numbers are a bisect away.
- Output lines are ``N:text`` for selected lines and ``N-text`` for context, regions separated
  by ``--`` (as grep -n prints); with ``--all`` each line is prefixed ``name:``.
- ``--fit`` stops before the first region that would not fit; ``next`` resumes the search at
  that region's first line with the remaining ``-m`` count: following it covers all matches
  with no gap and no overlap.
"""

from __future__ import annotations

import mmap
import shlex
from typing import Any

from scratch.context import Context
from scratch.errors import InvalidPattern, UsageError
from scratch.explore.lines import fit_cap, too_big_to_fit
from scratch.explore.target import Target, numbers_cost, open_target, range_cost
from scratch.pricing import charge_answer, shrink_to_fit
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
    out: list[str] = []
    for i, region in enumerate(regions):
        if i:
            out.append("--")
        for line in region.lines:
            out.append(f"{prefix}{line.lineno}{':' if line.match else '-'}{line.display()}")
    return "\n".join(out) + ("\n" if out else "")


def _data(regions: list[Any]) -> list[dict[str, Any]]:
    return [{"start": r.first_lineno, "end": r.last_lineno,
             "lines": [{"line": ln.lineno, "text": ln.display(), "match": ln.match}
                       for ln in r.lines]} for r in regions]


def _fit_regions(ctx: Context, target: Target, regions: list[Any], cap: int, spec: Any
                 ) -> tuple[list[Any], int | None, int]:
    """The longest prefix of the answer that fits ``cap``, cut only where resuming the search
    (``--from-line``) repeats and skips nothing: between regions, or just before a selected
    line (its before-context was shown). Returns the regions, the line to resume at (None if
    all fit) and the cost."""
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

    best, used = 0, 0
    for p in range(1, len(units) + 1):
        used += costs[p - 1]
        if used > cap:
            break
        if can_cut(p):
            best = p
    cuts = [p for p in range(1, best + 1) if can_cut(p)]
    keep = shrink_to_fit(ctx, cap, len(cuts), lambda k: {
        "name": target.name, "version": target.version, "matches": k,
        "regions": _data(prefix(cuts[k - 1]))})
    best = cuts[keep - 1] if keep else 0
    resume = units[best][1].lineno if best < len(units) else None
    return prefix(best), resume, sum(costs[:best])


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
    qp = shlex.quote(pattern)
    if fit:
        cap = fit_cap(ctx)
        if cost > cap or ctx.json_mode:
            regions, cut_at, cost = _fit_regions(ctx, target, regions, cap, spec)
            if not regions and cut_at is not None:
                raise too_big_to_fit(ctx, "grep_too_large", f"line {cut_at} alone",
                                     range_cost(target, cut_at, cut_at, spec, numbers=True),
                                     [f"scratch slice {target.ref} {cut_at} {cut_at} --fit"])
            if cut_at is not None:
                shown = sum(r.match_count for r in regions)
                left = None if max_count is None else max_count - shown
                nxt = (f"scratch grep {target.ref} {qp}{_flags(options, left)} "
                       f"--from-line {cut_at} --fit")
    fits = 0
    running = 0
    for c in costs:
        if running + c > ctx.config["budget.max_extraction_tokens"]:
            break
        running += c
        fits += 1
    suggestions = [f"scratch grep {target.ref} {qp}{_flags(options, max_count)} --fit"]
    if not fit and regions:
        first_matches = sum(r.match_count for r in regions[:max(fits, 1)])
        suggestions.insert(0, f"scratch grep {target.ref} {qp}"
                              f"{_flags(options, max(1, first_matches))}")
        if options.context:
            no_context = _flags(options, max_count).replace(f"-C {options.context}", "-C 0")
            suggestions.append(f"scratch grep {target.ref} {qp}{no_context}")
    meta = charge_answer(ctx, cost, code="grep_too_large", suggestions=suggestions,
                         details={"matches": matches})
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


def grep_all(ctx: Context, pattern: str, *, context: int = 0, ignore_case: bool = False,
             fixed: bool = False, max_count: int | None = None, invert: bool = False) -> Result:
    options = _options(pattern, context, ignore_case, fixed, max_count, invert)
    spec = ctx.encoding()
    store = ctx.store()
    parts: list[str] = []
    entries: list[dict[str, Any]] = []
    cost = 0
    for row in store.list(""):
        target = open_target(ctx, row["name"], logs=True)
        regions = _regions(target, options, 1)
        if regions:
            prefix = f"{row['name']}:"
            cost += sum(_region_cost(target, r, spec, prefix) for r in regions)
            parts.append(_render(regions, prefix))
            entries.append({"name": row["name"], "regions": _data(regions),
                            "matches": sum(r.match_count for r in regions)})
        target.index.close()
    qp = shlex.quote(pattern)
    suggestions = [f"scratch grep --all {qp} -m 5"] + [
        f"scratch grep {shlex.quote(e['name'])} {qp} --fit" for e in entries[:3]]
    meta = charge_answer(ctx, cost, code="grep_too_large", suggestions=suggestions)
    data = {"pattern": pattern, "entries": entries,
            "matches": sum(e["matches"] for e in entries)}
    return Result("grep", data=data, text="--\n".join(parts), meta=meta,
                  notices=() if entries else ("no matches",))


__all__ = ["grep", "grep_all", "numbers_cost"]
