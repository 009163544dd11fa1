"""read: the whole entry when it fits the cap and budget; what changed since a version."""

from __future__ import annotations

from scratch.context import Context
from scratch.explore.lines import show_range
from scratch.explore.target import open_target, range_cost
from scratch.pricing import charge_answer
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
        meta = charge_answer(ctx, (size + 3) // 4, code="read_too_large", suggestions=[
            f"scratch head {target.ref} -n 5", f"scratch read {target.ref} --raw > FILE"])
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
    half = max(1, total // 2)
    meta = charge_answer(ctx, cost, code="read_too_large", suggestions=[
        f"scratch schema {target.ref}", f"scratch head {target.ref} -n 50",
        f"scratch slice {target.ref} 1 {half}", f"scratch read {target.ref} --fit"],
        details={"total_lines": total})
    data = target.path.read_bytes()
    target.index.close()
    payload = {"name": target.name, "version": target.version, "lines": total,
               "content": data.decode("utf-8", errors="replace")}
    return Result("read", data=payload, text=data, meta=meta)


def read_since(ctx: Context, ref: str, since: int, context: int) -> Result:
    from scratch.ops import files
    from scratch.tokens import count_text
    result = files.read_since(ctx, ref, since, context)
    text = result.text if isinstance(result.text, str) else ""
    cost = count_text(text, ctx.encoding()) if text else 0
    meta = charge_answer(ctx, cost, code="read_too_large", suggestions=[
        f"scratch read {ref} --since-version {since} -U 0",
        f"scratch diff {ref.split('@')[0]} {since} N"])
    return Result(result.command, data=result.data, text=result.text, meta=meta,
                  notices=result.notices, style=result.style)
