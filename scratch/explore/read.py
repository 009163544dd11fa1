"""read: the whole entry when it fits the cap and budget; what changed since a version."""

from __future__ import annotations

import shlex
from collections.abc import Callable

from scratch.context import Context
from scratch.explore.lines import fit_cap, fitting_lines, range_suggestions, show_range
from scratch.explore.target import Target, open_target, range_cost
from scratch.pricing import EnvelopeMeter, charge_answer
from scratch.result import Result


def read(ctx: Context, ref: str, *, raw: bool, is_terminal: bool, fit: bool) -> Result:
    target = open_target(ctx, ref)
    if target.format == "binary" or target.binary:
        size = target.path.stat().st_size
        info = {"name": target.name, "version": target.version, "binary": True, "bytes": size}
        if is_terminal and not raw:
            target.index.close()
            return Result("read", data=info, text=(
                f"{target.name}@{target.version}: binary content ({size:,} bytes) not printed "
                f"to a terminal; use --raw, or redirect: scratch read {target.ref} > FILE\n"))
        # bytes have no meaningful tokens; price them as the ~4 bytes a token text averages,
        # so binary content cannot slip past the cap and the budget
        # (redirected or not, the same price: the only smaller answer is its first lines)
        meta = charge_answer(ctx, (size + 3) // 4, code="read_too_large",
                             suggestions=lambda: _binary_head(ctx, target))
        data = target.path.read_bytes()
        target.index.close()
        return Result("read", data=info, text=data, meta=meta)
    total = target.index.line_count
    if total == 0:
        target.index.close()
        return Result("read", data={"name": target.name, "version": target.version,
                                    "content": "", "lines": 0}, text=b"")
    if fit:
        target.index.close()
        result = show_range(ctx, ref, 1, total, command="read", code="read_too_large",
                            numbers=False, fit=True)
        return result
    spec = ctx.encoding()
    cost = range_cost(target, 1, total, spec, numbers=False)

    def suggestions() -> list[str]:
        from scratch.explore.structure import fitting_schema
        schema = fitting_schema(ctx, target)
        out = range_suggestions(ctx, target, 1, total, command="read", numbers=False, fit=False)
        return [schema, *out] if schema and schema not in out else out

    meta = charge_answer(ctx, cost, code="read_too_large", suggestions=suggestions,
                         details={"total_lines": total})
    data = target.path.read_bytes()
    target.index.close()
    payload = {"name": target.name, "version": target.version, "lines": total,
               "content": data.decode("utf-8", errors="replace")}
    return Result("read", data=payload, text=data, meta=meta)


def _binary_head(ctx: Context, target: Target) -> list[str]:
    """``head -n K`` with the most lines of binary content that fit (K >= 1), or nothing."""
    try:
        total = target.index.line_count
        k = fitting_lines(ctx, target, 1, total, fit_cap(ctx), command="head",
                          numbers=True) if total else 0
        return [f"scratch head {target.ref} -n {k}"] if k else []
    finally:
        target.index.close()


def read_since(ctx: Context, ref: str, since: int, context: int) -> Result:
    from scratch.ops import files
    return _priced_diff(ctx, lambda c: files.read_since(ctx, ref, since, c), context,
                        again=f"scratch read {shlex.quote(ref)} --since-version {since}",
                        code="read_too_large")


def diff(ctx: Context, name: str, a: int, b: int, context: int) -> Result:
    from scratch.ops import files
    return _priced_diff(ctx, lambda c: files.diff(ctx, name, a, b, c), context,
                        again=f"scratch diff {shlex.quote(name)} {a} {b}", code="diff_too_large")


def _priced_diff(ctx: Context, make: Callable[[int], Result], context: int, *, again: str,
                 code: str) -> Result:
    """A diff answer (``make(context)``) priced and held to the cap like any other."""
    from scratch.tokens import count_text
    result = make(context)
    text = result.text if isinstance(result.text, str) else ""
    cost = count_text(text, ctx.encoding()) if text else 0

    def suggestions() -> list[str]:
        """The same changes without context lines, when that fits."""
        if context == 0:
            return []
        bare = make(0)
        body = bare.text if isinstance(bare.text, str) else ""
        tokens = count_text(body, ctx.encoding()) if body else 0
        cap = fit_cap(ctx)
        if ctx.json_mode and tokens <= cap:
            tokens = max(tokens, EnvelopeMeter(ctx, bare.command, cap).tokens(bare.data))
        if tokens > cap:
            return []
        return [f"{again} -U 0"]

    meta = charge_answer(ctx, cost, code=code, suggestions=suggestions)
    return Result(result.command, data=result.data, text=result.text, meta=meta,
                  notices=result.notices, style=result.style)
