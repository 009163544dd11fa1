"""Line windows of a rendered value (get-in's --offset/--limit/--fit), priced and budgeted.

A rendered value is a sequence of lines; two sources provide them:

- :class:`TextLines`: lines of text rendered in memory (small values, JSONPath matches).
- :class:`StoredContainer`: an object or array of a canonical JSON entry, read straight from
  the entry's lines. Canonical entries hold JSON exactly as get-in renders it (2-space
  indentation, one scalar or bracket per line; see :mod:`scratch.formats.jsontext`), so the
  container at lines ``start..end`` renders as those lines minus its own indentation, the
  ``"key": `` before its opening bracket and the comma after its closing one. A page of a
  100 MB subtree then reads the page's lines, not the subtree.

Invariants:
- Every rendered line is non-blank, so it costs at least one token: a window of more lines
  than the answer may cost is refused from its line count, before anything is read.
- ``next`` (with --fit) names the command that continues exactly where a page stopped.
- Under --fit --json a page is cut until its whole envelope fits (``make_data`` builds the data
  the answer prints); a refusal's ``--limit`` and ``--fit`` suggestions are sized the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from scratch.context import Context
from scratch.errors import OutOfRange, UsageError
from scratch.explore.lines import fit_cap, most, plural, too_big_to_fit
from scratch.pricing import (
    EnvelopeMeter,
    Suggestions,
    charge_answer,
    largest_fitting,
    shrink_to_fit,
)


class TextLines:
    """The lines of a rendered text."""

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines(keepends=True)

    def __len__(self) -> int:
        return len(self._lines)

    def window(self, offset: int, count: int) -> list[str]:
        return self._lines[offset:offset + count]

    def estimate(self, offset: int, count: int) -> int | None:
        return None


class StoredContainer:
    """The rendered lines of the container stored at lines ``start..end`` of a canonical
    entry (see the module docstring)."""

    def __init__(self, index: Any, start: int, end: int, base: str, info: Any = None) -> None:
        self.info = info  # the index's NodeInfo of the container (type, keys, length)
        self._index = index
        self._start = start
        self._end = end
        self._base = base
        first = index.read_lines(start, start)[0]
        self._indent = len(first) - len(first.lstrip(b" "))
        self._open = first.rstrip()[-1:].decode()  # "{" or "[" after an optional key

    def __len__(self) -> int:
        return self._end - self._start + 1

    def window(self, offset: int, count: int) -> list[str]:
        lo = self._start + offset
        hi = min(self._end, lo + count - 1)
        if hi < lo:
            return []
        out = []
        cut = self._indent
        for lineno, raw in enumerate(self._index.read_lines(lo, hi), lo):
            if lineno == self._start:
                line = self._open
            else:
                line = raw[cut:].decode("utf-8", "surrogateescape")
                if lineno == self._end and line.endswith(","):
                    line = line[:-1]
            out.append(line + "\n")
        return out

    def estimate(self, offset: int, count: int) -> int | None:
        """Tokens of the stored lines of the window (the rendered ones, dedented, cost a
        little less): what a refusal reports as "about"."""
        lo = self._start + offset
        hi = min(self._end, lo + count - 1)
        return self._index.range_tokens(lo, hi, self._base) if hi >= lo else 0


def stored_container(index: Any, segments: Sequence[Any], base: str
                     ) -> StoredContainer | None:
    """The stored lines of the object or array at ``segments`` of a canonical JSON entry, or
    None when that shortcut does not apply (another layout, a scalar, an empty container, a
    missing path: the caller materialises the value as usual)."""
    if getattr(index, "layout", None) != "canonical":
        return None
    from scratch.errors import FormatError, KeyPathNotFound
    try:
        info = index.node(segments)
    except (KeyPathNotFound, FormatError):
        return None  # materialising says what is wrong, as for any other entry
    if (info is None or not info.complete or info.type not in ("object", "array")
            or info.end_line <= info.start_line):
        return None
    first = index.read_lines(info.start_line, info.start_line)[0].rstrip()
    if not first.endswith((b"{", b"[")):
        return None
    return StoredContainer(index, info.start_line, info.end_line, base, info)


LineSource = TextLines | StoredContainer


# make_data(paging, body, offset, limit, fit): the data of an answer that shows ``body`` with
# ``paging`` ({offset, lines, total_lines[, next]}), asked with those options
MakeData = Callable[[dict[str, Any], str, int, int | None, bool], dict[str, Any]]


def page(ctx: Context, source: LineSource, *, offset: int, limit: int | None, fit: bool,
         code: str, again: str, suggestions: Suggestions, spec: Any, make_data: MakeData,
         warnings: tuple[str, ...] = ()) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Cut ``source`` by line window and/or budget; charge it. Returns text, meta, paging.

    ``make_data`` builds the answer's data exactly (--fit --json measures its envelope);
    ``suggestions`` is worked out on refusal, or, given as a list, gets ``--fit`` added."""
    from scratch.tokens import count_lines, count_text

    if isinstance(suggestions, list):
        suggestions = [*suggestions, f"{again} --fit"]

    total = len(source)
    if offset < 0 or (limit is not None and limit < 1):
        raise UsageError("--offset must be >= 0 and --limit >= 1", code="invalid_argument")
    if offset and offset >= total:
        raise OutOfRange(f"--offset {offset} is past the end ({plural(total, 'line')})",
                         total_lines=total, offset=offset)
    wanted = min(total - offset, limit) if limit else total - offset
    cap = fit_cap(ctx)
    if fit:
        size = min(wanted, cap + 1)  # lines cost >= 1 token each: more never fit
    else:
        if wanted > cap:  # refused before a line is read
            estimate = max(source.estimate(offset, wanted) or 0, wanted)
            charge_answer(ctx, estimate, code=code, suggestions=suggestions)
        size = wanted
    window = source.window(offset, size)
    end = offset + len(window)
    paging: dict[str, Any] = {"offset": offset, "lines": len(window), "total_lines": total}
    body = "".join(window)
    cost = count_text(body, spec)
    nxt = None
    if fit:
        def next_for(k: int) -> str | None:
            stop = offset + k
            if stop >= offset + wanted:
                return None
            rest = f" --limit {offset + limit - stop}" if limit else ""
            return f"{again} --offset {stop}{rest} --fit"

        if cost > cap:
            # estimate from per-line counts, then confirm with the exact count of the cut text
            per_line = count_lines([w.rstrip("\n") for w in window], spec.base)
            used = keep = 0
            for c in per_line:
                if spec.scale(used + c + 1) > cap:
                    break
                used += c + 1
                keep += 1
            while keep > 0 and count_text("".join(window[:keep]), spec) > cap:
                keep -= 1
        else:
            keep = len(window)
        if ctx.json_mode:
            keep = shrink_to_fit(ctx, cap, keep, lambda k: make_data(
                _paging(offset, k, total, next_for(k)), "".join(window[:k]), offset, limit, fit),
                command="get-in", warnings=warnings, guess=keep)
        if keep == 0:
            raise too_big_to_fit(ctx, code, "the first line alone", cost, suggestions)
        if keep < len(window):
            window = window[:keep]
            body = "".join(window)
            cost = count_text(body, spec)
            end = offset + keep
            paging["lines"] = keep
        nxt = next_for(end - offset)
        if nxt:
            paging["next"] = nxt
    meta = charge_answer(ctx, cost, code=code, suggestions=suggestions)
    if nxt:
        meta["next"] = nxt
    return body, meta, paging


def _paging(offset: int, k: int, total: int, nxt: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"offset": offset, "lines": k, "total_lines": total}
    if nxt:
        out["next"] = nxt
    return out


def page_suggestions(ctx: Context, source: LineSource, *, offset: int, limit: int | None,
                     fit: bool, again: str, spec: Any, make_data: MakeData,
                     warnings: tuple[str, ...] = ()) -> list[str]:
    """For a refused page: ``--limit K`` with the most lines that fit, and --fit when its first
    page holds a line; both at the refused ``--offset`` and sized to the cap and budget as they
    stand (with --json, to the envelope)."""
    from scratch.tokens import count_lines, count_text

    total = len(source)
    wanted = min(total - offset, limit) if limit else total - offset
    if wanted <= 0:
        return []
    cap = fit_cap(ctx)
    window = source.window(offset, min(wanted, cap + 1))
    meter = EnvelopeMeter(ctx, "get-in", cap, warnings) if ctx.json_mode else None

    def cost(k: int, nxt: str | None, asked: int | None, with_fit: bool) -> int:
        body = "".join(window[:k])
        text = count_text(body, spec)
        if meter is None or text > cap:  # --json checks the text's count first
            return text
        return max(text, meter.tokens(make_data(_paging(offset, k, total, nxt), body, offset,
                                                asked, with_fit)))

    per_line = count_lines([w.rstrip("\n") for w in window], spec.base)
    sums = [0]
    for c in per_line:
        sums.append(sums[-1] + c + 1)
    guess = most(len(window), lambda k: spec.scale(sums[k]) <= cap)
    at = f" --offset {offset}" if offset else ""
    out = []
    k = largest_fitting(len(window), lambda k: cost(k, None, k, False), cap, guess)
    if 0 < k < wanted:
        out.append(f"{again}{at} --limit {k}")
    if not fit:  # --fit shows at least the first line, with a next after it
        nxt = None
        if wanted > 1:
            nxt = f"{again} --offset {offset + 1}{f' --limit {limit - 1}' if limit else ''} --fit"
        if cost(1, nxt, limit, True) <= cap:
            out.append(f"{again}{at}{f' --limit {limit}' if limit else ''} --fit")
    return out
