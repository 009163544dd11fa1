"""summarize: a deterministic local summary, or the answer of a configured command; cached.

Invariants:
- Local mode uses no network and no model: format and size, a depth-2 schema outline, value
  counts and ranges of the record arrays' fields (low-cardinality values counted, numbers and
  timestamps as ranges), log levels and time range, and a sample of error lines.
- With ``summarize.command`` set, the content is cut into pieces of at most
  ``budget.max_extraction_tokens`` tokens at line ends and each piece is piped to the command;
  the answers are joined in order.
- Both are cached per stored content (``cache/summaries/<blob>.<format>-<mode>-<encoding>...``,
  the key of the content's index): the same bytes stored as text and as JSON summarize
  differently. A local summary names the entry (and may give its REF in a note), so it is also
  keyed by the REF it was made for; a command's answer is shared by every REF to the content.
- An entry smaller than :data:`SMALL_ENTRY_TOKENS` is refused with its token count: reading it
  costs less.
"""

from __future__ import annotations

import hashlib
import subprocess
from typing import Any

from scratch.context import Context
from scratch.errors import LimitExceeded, ScratchError
from scratch.explore.lines import plural
from scratch.explore.structure import schema_text
from scratch.explore.target import Target, open_target
from scratch.locking import atomic_write
from scratch.pricing import charge_answer
from scratch.result import Result

SMALL_ENTRY_TOKENS = 1000
ERROR_WORDS = r"error|fail|fatal|exception|denied|panic|refused|timed? ?out"
ERROR_LEVELS = ("FATAL", "CRITICAL", "ERROR", "SEVERE", "PANIC", "WARN", "WARNING")


def _fields_text(summary: dict[str, Any], limit: int = 40) -> list[str]:
    out = []
    for f in summary["fields"]:
        if "values" in f:
            vals = ", ".join(f"{v if isinstance(v, str) else _j(v)} {c}" for v, c in f["values"])
            out.append(f"  {f['path']}: {vals}")
        elif "min" in f:
            out.append(f"  {f['path']}: {f['min']} .. {f['max']} ({f['distinct']} distinct)")
        if len(out) >= limit:
            break
    return out


def _j(value: Any) -> str:
    from scratch.formats.jsonnum import dumps  # JSON numbers exactly as stored
    return dumps(value).decode("utf-8", errors="backslashreplace")


def local_summary(target: Target, tokens: int, encoding: str) -> str:
    from scratch.query.summary import find_record_arrays, summarize_values
    index = target.index
    info = index.info
    sizes = [plural(index.meta["bytes"], "byte", grouped=True),
             plural(index.line_count, "line", grouped=True),
             plural(tokens, "token", grouped=True)]
    lines = [f"{target.name}: {target.format}, {', '.join(sizes)} ({encoding})"]
    if isinstance(info.get("schema"), dict):
        lines.append("outline:")
        lines += ["  " + row for row in schema_text(info, 2).splitlines()]
        try:
            value = index.value_at([])
        except ScratchError:
            value = None
        from scratch.explore.structure import not_json_warning
        from scratch.index.structure import lines_left_out
        # kept in the (cached) summary itself, so every reading of it says so
        lines += [f"note: {w}" for w in not_json_warning(target, lines_left_out(index))]
        if value is not None:
            top = [a for a in find_record_arrays(value)
                   if not any(isinstance(seg, int) for seg in a["location"])]
            for arr in top[:2]:  # arrays inside items would be judged by their first item only
                items = value
                for seg in arr["location"]:
                    items = items[seg]
                summary = summarize_values(items)
                text = _fields_text(summary)
                if text:
                    lines.append(f"values in {arr['path']} ({plural(arr['length'], 'item')}):")
                    lines += text
    elif "column_info" in info or "header" in info:
        lines += _csv_summary(target, info)
    else:
        for key in ("timestamp_format", "time_range", "levels", "columns", "headings"):
            if info.get(key):
                lines.append(f"{key}: {_j(info[key])}")
    sample: list[str] = []
    for level in ERROR_LEVELS:
        section = index.section(f"level:{level}")
        if section:
            for lineno in list(section)[:10 - len(sample)]:
                raw = index.read_lines(int(lineno), int(lineno))[0]
                sample.append(f"  {lineno}: {raw.decode('utf-8', errors='replace')[:200]}")
        if len(sample) >= 10:
            break
    if not sample and not isinstance(info.get("schema"), dict) and "header" not in info:
        sample = _error_word_lines(target)
    if sample:
        lines.append("error lines (sample):")
        lines += sample
    return "\n".join(lines) + "\n"


CSV_ROWS = 200_000  # rows read for value counts; a bigger table is summarized on this prefix


def _csv_summary(target: Target, info: dict[str, Any]) -> list[str]:
    """Value counts and ranges of a table's columns (numbers as numbers)."""
    import csv
    import itertools

    from scratch.query.summary import summarize_values

    def typed(value: str) -> Any:
        for cast in (int, float):
            try:
                return cast(value)
            except ValueError:
                pass
        return value

    with open(target.path, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.DictReader(fh, delimiter=info.get("delimiter") or ",")
        rows = [{k: typed(v) for k, v in row.items() if k is not None and v not in (None, "")}
                for row in itertools.islice(reader, CSV_ROWS)]
    summary = summarize_values(rows)
    cut = f" (first {CSV_ROWS:,})" if len(rows) == CSV_ROWS else ""
    return [f"values in {plural(len(rows), 'row', grouped=True)}{cut}:", *_fields_text(summary)]


def _error_word_lines(target: Target, limit: int = 10) -> list[str]:
    """Lines with error words, for logs whose lines carry no level field."""
    import mmap

    from scratch.query.grep import GrepOptions, grep_buffer
    if target.index.meta["bytes"] == 0:
        return []
    options = GrepOptions(pattern=ERROR_WORDS, ignore_case=True, max_count=limit)
    out = []
    with open(target.path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            for region in grep_buffer(buf, options, line_starts=target.index.line_starts()):
                out += [f"  {ln.lineno}: {ln.display()[:200]}" for ln in region.lines]
        finally:
            buf.close()
    return out[:limit]


def command_summary(ctx: Context, target: Target, command: str) -> str:
    from scratch.tokens import split_stream
    spec = ctx.encoding()
    piece_tokens = max(500, ctx.config["budget.max_extraction_tokens"])

    def chunks():
        with open(target.path, "rb") as fh:
            while block := fh.read(1 << 20):
                yield block

    answers = []
    pieces = list(split_stream(chunks(), piece_tokens, spec))
    for i, piece in enumerate(pieces, start=1):
        try:
            proc = subprocess.run(command, shell=True, input=piece, capture_output=True,
                                  timeout=600)
        except subprocess.TimeoutExpired:
            raise ScratchError(f"summarize.command timed out on piece {i}",
                               code="summarize_command_failed") from None
        if proc.returncode != 0:
            raise ScratchError(
                f"summarize.command exited {proc.returncode} on piece {i}/{len(pieces)}: "
                f"{proc.stderr.decode(errors='replace').strip()[:300]}",
                code="summarize_command_failed", command=command)
        answer = proc.stdout.decode("utf-8", errors="replace").strip()
        answers.append(answer if len(pieces) == 1 else f"[part {i}/{len(pieces)}]\n{answer}")
    return "\n\n".join(answers) + "\n"


def summarize(ctx: Context, ref: str) -> Result:
    from scratch.tokens import count_text
    target = open_target(ctx, ref)
    spec = ctx.encoding()
    base = target.index.total_tokens(spec.base) or 0
    tokens = spec.scale(base)
    if tokens < SMALL_ENTRY_TOKENS:
        raise LimitExceeded(
            f"{target.name} is only {plural(tokens, 'token')}: reading it costs less than a "
            "summary",
            code="entry_too_small", tokens=tokens, limit=SMALL_ENTRY_TOKENS,
            suggestions=[f"scratch read {target.ref}"])
    command = ctx.config["summarize.command"]
    mode = "local" if not command else "cmd-" + hashlib.sha1(command.encode()).hexdigest()[:12]
    key = f"{target.key}-{mode}-{spec.name}"
    if not command:
        key += "-" + hashlib.sha1(target.ref.encode()).hexdigest()[:12]
    cache = target.store.cache_dir / "summaries" / f"{key}.txt"
    cached = cache.is_file()
    if cached:
        text = cache.read_text()
    else:
        text = (command_summary(ctx, target, command) if command
                else local_summary(target, tokens, spec.name))
        atomic_write(cache, text.encode(), fsync=False)
    cost = count_text(text, spec)
    meta = charge_answer(ctx, cost, code="summarize_too_large",
                         suggestions=lambda: _smaller(ctx, target))
    meta["cached"] = cached
    data = {"name": target.name, "version": target.version, "mode": mode, "summary": text,
            "cached": cached, "command": command or None}
    target.index.close()
    return Result("summarize", data=data, text=text, meta=meta)


__all__ = ["summarize"]


def _smaller(ctx: Context, target: Target) -> list[str]:
    """For a summary over the cap: the schema at a depth that fits, and the most first lines
    that fit."""
    from scratch.explore.lines import fit_cap, fitting_lines
    from scratch.explore.structure import fitting_schema
    try:
        out = [s for s in (fitting_schema(ctx, target),) if s]
        total = target.index.line_count
        k = fitting_lines(ctx, target, 1, total, fit_cap(ctx), command="head",
                          numbers=True) if total else 0
        if k:
            out.append(f"scratch head {target.ref} -n {k}")
        return out
    finally:
        target.index.close()
