"""summarize: a deterministic local summary, or the answer of a configured command; cached.

Invariants:
- Local mode uses no network and no model: format and size, a depth-2 schema outline, value
  counts and ranges of the record arrays' fields (every field with up to
  :data:`MAX_DISTINCT` distinct values that repeat: its top :data:`TOP_VALUES` values and how
  many items the rest hold; numbers and timestamps as ranges), for Kubernetes objects what
  stands out in them (phases, restarts, non-zero exit codes, waiting/terminated reasons,
  Warning events: :mod:`scratch.index.kube`, shown as the pointer shows it), a parsed log's
  facet counts, log levels and time range, and a sample of error lines.
- With ``summarize.command`` set, the content is cut into pieces of at most
  ``budget.max_extraction_tokens`` tokens at line ends and each piece is piped to the command;
  the answers are joined in order.
- Both are cached per stored content (``cache/summaries/<blob>.<format>-<mode>-<encoding>...``,
  the key of the content's index): the same bytes stored as text and as JSON summarize
  differently. A local summary names the entry (and may give its REF in a note), so it is also
  keyed by the REF it was made for, and by :data:`LOCAL_VERSION` (what it shows changes with
  scratch); a command's answer is shared by every REF to the content.
- An entry smaller than :data:`SMALL_ENTRY_TOKENS` is refused with its token count: reading it
  costs less.
"""

from __future__ import annotations

import hashlib
import subprocess
from typing import TYPE_CHECKING, Annotated, Literal

from scratch.answers.commands._args import REF
from scratch.answers.commands.schema import schema_text
from scratch.answers.kernel.candidate import Alternative, Candidate, Fixed
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result
from scratch.answers.kernel.target import Target, open_target
from scratch.calls import call
from scratch.declare import Arg, Command, Tool
from scratch.errors import LimitExceeded, ScratchError
from scratch.store.locking import atomic_write
from scratch.words import plural

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scratch.answers.model_summary import SummaryModel, Unavailable
    from scratch.answers.rows.items import Info
    from scratch.query.summary import Summary

SMALL_ENTRY_TOKENS = 1000
LOCAL_VERSION = "v3"  # of the local summary's content (v3: request logs by status); in its key
ERROR_WORDS = r"error|fail|fatal|exception|denied|panic|refused|timed? ?out"
ERROR_LEVELS = ("FATAL", "CRITICAL", "ERROR", "SEVERE", "PANIC", "WARN", "WARNING")


# a model that was asked and did not answer (scratch.answers.model_summary)
MODEL_FAILURES = frozenset({"sampling_refused", "sampling_timeout", "sampling_failed",
                            "sampling_unavailable", "summary_model_failed"})

TOP_VALUES = 10  # value counts listed per field; the rest is one "N more" figure
MAX_DISTINCT = 1000  # a field with more distinct values is not a category


def _fields_text(summary: Summary, limit: int = 40) -> list[str]:
    out = []
    for f in summary["fields"]:
        if "values" in f:
            vals = ", ".join(f"{v if isinstance(v, str) else _j(v)} {c}" for v, c in f["values"])
            other = f.get("other")
            if other:
                vals += (f", … {other['count']:,} more in "
                         f"{plural(other['distinct'], 'value', grouped=True)}")
            out.append(f"  {f['path']}: {vals}")
        elif "min" in f:
            out.append(f"  {f['path']}: {f['min']} .. {f['max']} ({f['distinct']} distinct)")
        if len(out) >= limit:
            break
    return out


def _j(value: object) -> str:
    from scratch.jsonvalues import dumps  # JSON numbers exactly as stored
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
        from scratch.answers.values.rendered import not_json_warning
        from scratch.index.structure import lines_left_out
        # kept in the (cached) summary itself, so every reading of it says so
        lines += [f"note: {w}" for w in not_json_warning(target, lines_left_out(index))]
        if value is not None:
            from scratch.answers.pointer.counts import kube_lines
            from scratch.index.kube import kube_signals
            kube = kube_signals(value)  # what stands out, before the value counts
            if kube is not None:
                lines += kube_lines(dict(kube), detail=3)
            top = [a for a in find_record_arrays(value)
                   if not any(isinstance(seg, int) for seg in a["location"])]
            for arr in top[:2]:  # arrays inside items would be judged by their first item only
                items = value
                for seg in arr["location"]:
                    items = items[seg]
                summary = summarize_values(items, max_distinct=MAX_DISTINCT, top=TOP_VALUES)
                text = _fields_text(summary)
                if text:
                    lines.append(f"values in {arr['path']} ({plural(arr['length'], 'item')}):")
                    lines += text
    elif "column_info" in info or "header" in info:
        lines += _csv_summary(target, info)
    else:
        rec = _records(target)
        if rec is not None:
            lines += _records_summary(rec)
        for key in ("timestamp_format", "time_range", "levels", "columns", "headings"):
            if info.get(key):
                lines.append(f"{key}: {_j(info[key])}")
        if rec is not None:
            status = _status_summary(target, rec)
            if status is not None:  # requests fail by their status, not by words in a URL
                return "\n".join(lines + status) + "\n"
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


SAMPLE_LINES = 10  # error lines a summary shows


def _status_summary(target: Target, rec: Info) -> list[str] | None:
    """A request log's errors by HTTP status (its format's status field, see
    :class:`scratch.formats.logbase.Field`): the server errors (5xx) and the client errors
    (4xx) counted by code, and a sample of the 5xx lines. None when the format has no status
    field."""
    from scratch.answers.rows.log_records import LogRows
    rows = LogRows(target, rec)
    if rows.templates is not None:  # mined line templates: no format, so no status field
        return None
    field = next((f.name for f in rows.format.fields if f.status), None)
    if field is None:
        return None
    facet = (rec.get("facets") or {}).get(field) or {}
    counts: dict[int, int] = {}
    if facet.get("values"):
        for value, n in facet["values"]:
            if isinstance(value, int) and not isinstance(value, bool):
                counts[value] = counts.get(value, 0) + int(n)
    else:  # too many distinct values for a facet: count them here
        for row in rows.iter_rows(0, rows.total):
            value = row.get(field)
            if isinstance(value, int) and not isinstance(value, bool):
                counts[value] = counts.get(value, 0) + 1
    requests = sum(counts.values())
    out = []
    for low, label in ((500, "server errors (status 5xx)"), (400, "client errors (4xx)")):
        codes = sorted(((c, n) for c, n in counts.items() if low <= c < low + 100),
                       key=lambda p: (-p[1], p[0]))
        total = sum(n for _, n in codes)
        shown = ", ".join(f"{c} {n:,}" for c, n in codes) if codes else "none"
        out.append(f"{label}: {total:,} of {plural(requests, 'request', grouped=True)}"
                   + (f": {shown}" if codes else ""))
    sample = []
    for row in rows.iter_rows(0, rows.total):
        value = row.get(field)
        if isinstance(value, int) and value >= 500 and row.get("_line"):
            lineno = int(row["_line"])
            raw = target.index.read_lines(lineno, lineno)[0]
            sample.append(f"  {lineno}: {raw.decode('utf-8', errors='replace')[:200]}")
            if len(sample) >= SAMPLE_LINES:
                break
    if sample:
        out.append(f"error lines (sample, {field} 5xx):")
        out += sample
    return out


def _records(target: Target) -> Info | None:
    from scratch.answers.rows.log_records import parsed_log
    return parsed_log(target)


def _records_summary(rec: Info) -> list[str]:
    """A parsed log's format, record counts and the value counts of its facets (made when
    the index was built), top values first."""
    parsed, unparsed = rec.get("parsed", 0), rec.get("unparsed", 0)
    lines = [f"records: {rec.get('format')} ({rec.get('title')}), "
             f"{plural(int(rec.get('records', 0)), 'line', grouped=True)}: {parsed:,} parsed"
             + (f", {unparsed:,} unparsed" if unparsed else "")
             + (f", {rec['blank']:,} blank" if rec.get("blank") else "")
             + (", " + plural(int(rec["directives"]), "header line", grouped=True)
                if rec.get("directives") else "")]
    if rec.get("format") == "templates":  # a mined log: its templates, the commonest first
        templates = sorted(rec.get("templates") or [], key=lambda t: (-t[2], t[0]))
        lines.append(f"{plural(len(templates), 'line template', grouped=True)} (Drain), "
                     "the commonest (#id ×lines text):")
        lines += [f"  #{tid} ×{n:,} {text[:200]}" for tid, text, n in templates[:TOP_VALUES]]
        if len(templates) > TOP_VALUES:
            lines.append(f"  … {len(templates) - TOP_VALUES:,} more")
        return lines
    lines.append("values of " + ", ".join(f["name"] for f in rec.get("fields") or []
                                          if not f["name"].startswith("_")) + ":")
    for name, facet in (rec.get("facets") or {}).items():
        values = facet.get("values")
        if not values:
            continue
        top = values[:TOP_VALUES]
        text = ", ".join(f"{v if isinstance(v, str) else _j(v)} {c}" for v, c in top)
        rest = values[TOP_VALUES:]
        if rest:
            text += (f", … {sum(c for _, c in rest):,} more in "
                     f"{plural(len(rest), 'value', grouped=True)}")
        lines.append(f"  {name}: {text}")
    return lines


CSV_ROWS = 200_000  # rows read for value counts; a bigger table is summarized on this prefix


def _csv_summary(target: Target, info: Info) -> list[str]:
    """Value counts and ranges of a table's columns (numbers as numbers)."""
    import csv
    import itertools

    from scratch.query.summary import summarize_values

    def typed(value: str) -> int | float | str:
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
    summary = summarize_values(rows, max_distinct=MAX_DISTINCT, top=TOP_VALUES)
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

    def chunks() -> Iterator[bytes]:
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


BY_MODEL = Arg("A summary written by a model: the MCP client's own (sampling) when it offers "
               "one, else llm's (the llm extra); else the local one, saying why. Cached per "
               "version and model.", flags=("--by-model",))


def summarize(ctx: Context, ref: Annotated[str, REF],
              by_model: Annotated[bool, BY_MODEL] = False, *,
              client_model: SummaryModel | Unavailable | None = None) -> Candidate:
    """``client_model``: the model an interface offers for ``by_model`` (over MCP, the
    client's through sampling, or why it cannot); nothing is sent to any model without
    ``by_model``."""
    target = open_target(ctx, ref)
    try:
        return _summary(ctx, target, ref, client_model if by_model else False)
    except BaseException:
        target.index.close()
        raise


def _by_model(ctx: Context, target: Target, tokens: int,
              offered: SummaryModel | Unavailable | None
              ) -> Result[dict[str, object]] | list[Unavailable]:
    """The model-written summary's result, or why no model could write it."""
    from scratch.answers.model_summary import Unavailable, cached, write_summary
    if offered is not None and not isinstance(offered, Unavailable):
        chosen: SummaryModel = offered  # the client's own (sampling)
    else:  # else the user's, through llm
        from scratch.answers.llm_model import llm_model
        found_model = llm_model(ctx)
        if isinstance(found_model, Unavailable):
            return [offered, found_model] if offered is not None else [found_model]
        chosen = found_model
    found = cached(ctx, target, chosen)
    hit = found is not None
    if found is None:
        try:
            found = write_summary(ctx, target, chosen, tokens)
        except ScratchError as exc:  # the next step: the summary no model has to write
            if exc.code in MODEL_FAILURES:
                exc.details["suggestions"] = [call("summarize", ref=target.ref)]
            raise
    calls = plural(found["model_calls"], "model call")
    text = (f"{target.name}: summary by {found['model']} ({found['source']}, {calls}"
            + ("" if found["complete"] else
               f"; read lines {found['lines_read'][0]:,}-{found['lines_read'][1]:,} of "
               f"{found['lines']:,}") + ")\n" + found["summary"])
    warnings = [] if found["complete"] else [
        f"the model read lines {found['lines_read'][0]:,}-{found['lines_read'][1]:,} of "
        f"{found['lines']:,}: summarize.max_model_calls allows no more parts"]
    data = {"name": target.name, "version": target.version, "mode": "model",
            "summary": found["summary"], "cached": hit, "command": None,
            **{k: v for k, v in found.items() if k != "summary"}}
    return Result("summarize", data=data, text=text, meta={"cached": hit}, warnings=warnings)


def _summary(ctx: Context, target: Target, ref: str,
             offered: SummaryModel | Unavailable | None | Literal[False]) -> Candidate:
    spec = ctx.encoding()
    base = target.index.total_tokens(spec.base) or 0
    tokens = spec.scale(base)
    if tokens < SMALL_ENTRY_TOKENS:
        raise LimitExceeded(
            f"{target.name} is only {plural(tokens, 'token')}: reading it costs less than a "
            "summary",
            code="entry_too_small", tokens=tokens, limit=SMALL_ENTRY_TOKENS,
            suggestions=[call("read", ref=target.ref)])
    reasons: list[Unavailable] = []
    if offered is not False:
        made = _by_model(ctx, target, tokens, offered)
        if isinstance(made, Result):
            return _fixed(target, ref, made, by_model=True)
        reasons = made
    command = ctx.config["summarize.command"]
    mode = "local" if not command else "cmd-" + hashlib.sha1(command.encode()).hexdigest()[:12]
    key = f"{target.key}-{mode}-{spec.name}"
    if not command:  # LOCAL_VERSION: a local summary made by an older scratch is made again
        key += f"-{LOCAL_VERSION}-" + hashlib.sha1(target.ref.encode()).hexdigest()[:12]
    cache = target.store.cache_dir / "summaries" / f"{key}.txt"
    cached = cache.is_file()
    if cached:
        text = cache.read_text()
    else:
        text = (command_summary(ctx, target, command) if command
                else local_summary(target, tokens, spec.name))
        atomic_write(cache, text.encode(), fsync=False)
    data = {"name": target.name, "version": target.version, "mode": mode, "summary": text,
            "cached": cached, "command": command or None}
    warnings: list[str] = []
    if reasons:  # a model summary was asked and no model could write it
        data["no_model"] = [{"code": r.code, "reason": r.reason, "next": r.next}
                            for r in reasons]
        warnings = [f"{r.code}: no model summary: {r.reason}; next: {r.next}"
                    for r in reasons]
    result = Result("summarize", data=data, text=text, meta={"cached": cached},
                    warnings=warnings)
    return _fixed(target, ref, result)


def _fixed(target: Target, ref: str, result: Result[object], *, by_model: bool = False
           ) -> Candidate:
    """The summary as an answer: priced, with smaller answers when it does not fit."""
    from scratch.answers.commands.schema import schema_candidate
    from scratch.answers.lines.ranges import LineRange
    total = target.index.line_count
    smaller = [Alternative(candidate=lambda cap: schema_candidate(target), shrink=True)]
    if total:  # the most first lines that fit
        smaller.append(Alternative(candidate=lambda cap: LineRange(
            target, 1, total, command="head", numbers=True, fit=False, owner=False),
            shrink=True))
    return Fixed(call("summarize", ref=ref, by_model=by_model or None), result,
                 code="summarize_too_large",
                 alternatives=smaller, on_close=target.index.close)


COMMAND = Command(
    "summarize", "A deterministic local summary of REF, cached per version; or, with "
    "--by-model, one written by a model.\n\n"
    "Format, size, outline, value counts of low-cardinality fields, numeric and time "
    "ranges, log levels and sample error lines; or, with summarize.command configured, "
    "that command's answer over the content in pieces.\n\n"
    "With --by-model a model writes it: over MCP the client's own model (sampling), when the "
    "client declared that capability; else the model of the llm library (the llm extra: "
    "summarize.llm_model, else llm's default model); else the local summary, with the "
    "reason and the next step. Nothing is sent to a model without --by-model. Content larger "
    "than the model's window is summarized in parts that fit, then combined: at most "
    "summarize.max_model_calls calls. Cached per version and model; priced like any "
    "answer.\n\n"
    "Example: scratch summarize 1a2b --by-model",
    summarize,
    tools=(Tool("summarize", "A local summary of an entry: outline, value counts, ranges, "
                "errors; by_model: written by your own model (sampling).",
                names={"ref": "file"}, toolset="explore"),
           Tool("summarize_file", "A deterministic local summary of a file.",
                names={"ref": "path"}, args=("ref",), primary=False, toolset="files")))

__all__ = ["COMMAND", "summarize"]
