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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from scratch.context import Context
from scratch.errors import OutOfRange, UsageError
from scratch.explore.lines import fit_cap, too_big_to_fit
from scratch.pricing import charge_answer, shrink_to_fit


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


def page(ctx: Context, source: LineSource, *, offset: int, limit: int | None, fit: bool,
         code: str, again: str, suggestions: list[str], spec: Any,
         data_base: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Cut ``source`` by line window and/or budget; charge it. Returns text, meta, paging."""
    from scratch.tokens import count_lines, count_text

    total = len(source)
    if offset < 0 or (limit is not None and limit < 1):
        raise UsageError("--offset must be >= 0 and --limit >= 1", code="invalid_argument")
    if offset and offset >= total:
        raise OutOfRange(f"--offset {offset} is past the end ({total} lines)",
                         total_lines=total, offset=offset)
    wanted = min(total - offset, limit) if limit else total - offset
    refuse = suggestions + [f"{again} --fit"]
    cap = fit_cap(ctx)
    if fit:
        size = min(wanted, cap + 1)  # lines cost >= 1 token each: more never fit
    else:
        if wanted > cap:  # refused before a line is read
            estimate = max(source.estimate(offset, wanted) or 0, wanted)
            charge_answer(ctx, estimate, code=code, suggestions=refuse)
        size = wanted
    window = source.window(offset, size)
    end = offset + len(window)
    paging: dict[str, Any] = {"offset": offset, "lines": len(window), "total_lines": total}
    body = "".join(window)
    cost = count_text(body, spec)
    nxt = None
    if fit:
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
        keep = shrink_to_fit(ctx, cap, keep, _fit_data(data_base, offset, total, window))
        if keep == 0:
            raise too_big_to_fit(ctx, code, "the first line alone", cost, suggestions)
        if keep < len(window):
            window = window[:keep]
            body = "".join(window)
            cost = count_text(body, spec)
            end = offset + keep
            paging["lines"] = keep
        if end < offset + wanted:
            rest = f" --limit {offset + limit - end}" if limit else ""
            nxt = f"{again} --offset {end}{rest} --fit"
            paging["next"] = nxt
    meta = charge_answer(ctx, cost, code=code, suggestions=refuse)
    if nxt:
        meta["next"] = nxt
    return body, meta, paging


def _fit_data(data_base: dict[str, Any], offset: int, total: int, window: list[str]
              ) -> Callable[[int], dict[str, Any]]:
    """The --json data of a page of ``k`` lines (shrink_to_fit prices its envelope)."""
    return lambda k: {**data_base, "offset": offset, "lines": k, "total_lines": total,
                      "text": "".join(window[:k])}
