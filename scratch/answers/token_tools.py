"""`scratch tokens` and `scratch budget` operations."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result
from scratch.errors import UsageError

SPLIT_DELIMITER = "\x1e"  # ASCII record separator between --split chunks on stdout


def _spec_dict(ctx: Context) -> dict[str, Any]:
    spec = ctx.encoding()
    return {"encoding": spec.name, "model": spec.model, "exact": spec.exact}


def count(ctx: Context, chunks: Iterable[bytes]) -> Result:
    from scratch.tokens import count_stream
    spec = ctx.encoding()
    n = count_stream(chunks, spec)
    data = {"count": n, **_spec_dict(ctx)}
    notices = () if spec.exact else (f"claude count is an estimate: ceil(cl100k_base x "
                                     f"{spec.factor})",)
    return Result("tokens", data=data, text=f"{n}\n", notices=notices)


def token_ids(ctx: Context, chunks: Iterable[bytes]) -> Result:
    from scratch.tokens.stream import ids_stream
    spec = ctx.encoding()
    if not spec.exact:
        raise UsageError("the claude encoding is an estimate and has no token ids; use "
                         "--encoding cl100k_base", code="no_token_ids")
    out: list[int] = []
    for part in ids_stream(chunks, spec):
        out.extend(part)
    return Result("tokens", data={"ids": out, "count": len(out), **_spec_dict(ctx)},
                  text=" ".join(map(str, out)) + "\n")


def truncate_text(ctx: Context, chunks: Iterable[bytes], n: int, *, tail: bool) -> Result:
    from scratch.tokens import tail_stream, truncate_stream
    spec = ctx.encoding()
    pieces = (tail_stream if tail else truncate_stream)(chunks, n, spec)
    data = b"".join(pieces)
    payload = {"text": data.decode("utf-8", errors="replace"), "limit": n,
               "bytes": len(data), **_spec_dict(ctx)}
    return Result("tokens", data=payload, text=data)


def split_text(ctx: Context, chunks: Iterable[bytes], n: int, split_dir: Path | None,
          delimiter: str) -> Result | Iterator[bytes]:
    from scratch.tokens import split_stream
    spec = ctx.encoding()
    pieces = split_stream(chunks, n, spec)
    if split_dir is None:
        parts = list(pieces)
        sep = delimiter.encode("utf-8")
        data = {"chunks": [p.decode("utf-8", errors="replace") for p in parts],
                "count": len(parts), "max_tokens": n, **_spec_dict(ctx)}
        return Result("tokens", data=data, text=sep.join(parts))
    stale = sorted(split_dir.glob("chunk-*.txt")) if split_dir.is_dir() else []
    if stale:  # mixing two splits would make the chunks join to neither input
        from scratch.errors import UsageError
        raise UsageError(f"{split_dir} already holds {len(stale)} chunk file(s) of an earlier "
                         "split; remove them or choose another --split-dir",
                         code="split_dir_not_empty", split_dir=str(split_dir),
                         first=stale[0].name)
    split_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for i, piece in enumerate(pieces, start=1):
        path = split_dir / f"chunk-{i:05d}.txt"
        path.write_bytes(piece)
        files.append(str(path))
    data = {"files": files, "count": len(files), "max_tokens": n, **_spec_dict(ctx)}
    return Result("tokens", data=data, text=f"wrote {len(files)} chunks to {split_dir}\n")


def tokens(ctx: Context, chunks: Iterable[bytes], truncate: int | None = None,
           tail: int | None = None, split: int | None = None, split_dir: Path | None = None,
           delimiter: str = SPLIT_DELIMITER, ids: bool = False) -> Result | Iterator[bytes]:
    """``scratch tokens``: count, or one of truncate / tail / split / ids."""
    chosen = [name for name, v in (("--truncate", truncate), ("--tail", tail),
                                   ("--split", split), ("--ids", ids or None)) if v is not None]
    if len(chosen) > 1:
        raise UsageError(f"choose one of {', '.join(chosen)}", code="invalid_argument")
    if split_dir is not None and split is None:
        raise UsageError("--split-dir goes with --split N", code="invalid_argument")
    if truncate is not None:
        return truncate_text(ctx, chunks, truncate, tail=False)
    if tail is not None:
        return truncate_text(ctx, chunks, tail, tail=True)
    if split is not None:
        return split_text(ctx, chunks, split, split_dir, delimiter)
    if ids:
        return token_ids(ctx, chunks)
    return count(ctx, chunks)


def budget_show(ctx: Context) -> Result:
    return _budget(ctx, "show")


def budget_reset(ctx: Context) -> Result:
    return _budget(ctx, "reset")


def budget_used(ctx: Context, tokens: int) -> Result:
    return _budget(ctx, "used", tokens)


def budget_set_window(ctx: Context, tokens: int) -> Result:
    return _budget(ctx, "set-window", tokens or None)


def _budget(ctx: Context, action: str, value: int | None = None) -> Result:
    from scratch.answers.kernel.prices import budget_for
    budget = budget_for(ctx)
    if action == "reset":
        view = budget.reset()
    elif action == "used":
        view = budget.report_used(int(value or 0))
    elif action == "set-window":
        view = budget.set_window(value)
    else:
        view = budget.status()
    spec = ctx.encoding()
    data = {"agent": ctx.agent, "session": ctx.session, "model": ctx.config["model"] or None,
            "tokenizer": spec.name, "exact": spec.exact, **view}
    warnings = tuple(view.get("warnings", ()))
    data.pop("warnings", None)
    rows = [("model", data["model"] or "(none: o200k_base)"), ("tokenizer", spec.name),
            ("window", f"{data['window']:,} ({data['window_source']})"),
            ("usable", f"{data['usable']:,} (margin {data['margin']:.0%})"),
            ("used", f"{data['used']:,}"), ("remaining", f"{data['remaining']:,}"),
            ("intercepted", f"{data['intercepted']:,}"), ("extracted", f"{data['extracted']:,}"),
            ("per-call cap", f"{data['max_extraction_tokens']:,}"),
            ("session", f"{ctx.agent}/{ctx.session}")]
    text = "".join(f"{k:<13}{v}\n" for k, v in rows)
    return Result(f"budget {action}" if action != "show" else "budget", data=data, text=text,
                  warnings=warnings)
