"""Line windows of a rendered value (get-in's --offset/--limit/--fit), priced and budgeted.

A rendered value is a sequence of lines; two sources provide them:

- :class:`TextLines`: lines of text rendered in memory (small values, JSONPath matches).
- :class:`ArrayItems`: the items of a non-empty array (in memory or stored): its units are
  items, and a window of them renders as the JSON array of those items, so --offset/--limit
  on an array count items and a refusal's --limit is at most the array's length.
- :class:`StoredContainer`: an object or array of a canonical JSON entry, read straight from
  the entry's lines. Canonical entries hold JSON exactly as get-in renders it (2-space
  indentation, one scalar or bracket per line; see :mod:`scratch.formats.jsontext`), so the
  container at lines ``start..end`` renders as those lines minus its own indentation, the
  ``"key": `` before its opening bracket and the comma after its closing one. A page of a
  100 MB subtree then reads the page's lines, not the subtree.

Invariants:
- Every rendered line is non-blank, so it costs at least one token: a window of more lines
  than the answer may cost is refused from its line count, before anything is read.
- :class:`ValueLines` is the candidate answer of a window of such lines: its units are lines
  (a negative ``offset`` counts from the end: ``-20`` is the last 20),
  ``next`` (with --fit) continues at the first line not shown (``--offset``), and a refusal's
  ``--limit K`` is the most lines that fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from scratch.answers.kernel.candidate import FIT, SHRINK, Alternative, Candidate
from scratch.answers.kernel.result import Result
from scratch.calls import Call
from scratch.errors import OutOfRange, UsageError, argument
from scratch.words import plural

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step
    from scratch.index import EntryIndex
    from scratch.index.reader import NodeInfo


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

    def __init__(self, index: EntryIndex, start: int, end: int, base: str,
                 info: NodeInfo) -> None:
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


class ArrayItems:
    """The items of an array, as windows of whole items: a window of ``count`` items from
    ``offset`` renders as the JSON array of those items (``render(offset, count)``), so
    --offset/--limit on an array count items, never the lines of its rendering."""

    unit = "item"

    def __init__(self, length: int, render: Callable[[int, int], str],
                 tokens: Callable[[int, int], int | None] | None = None) -> None:
        self._length = length
        self._render = render
        self._tokens = tokens

    def __len__(self) -> int:
        return self._length

    def window(self, offset: int, count: int) -> list[str]:
        count = min(count, self._length - offset)
        return self._render(offset, count).splitlines(keepends=True) if count > 0 else []

    def estimate(self, offset: int, count: int) -> int | None:
        count = min(count, self._length - offset)
        return self._tokens(offset, count) if self._tokens is not None and count > 0 else None


def items_of_list(value: Sequence[object], render: Callable[[Sequence[object]], str]
                  ) -> ArrayItems:
    """The items of an array in memory; ``render`` renders a slice of it as get-in shows the
    whole array."""
    return ArrayItems(len(value), lambda offset, count: render(value[offset:offset + count]))


def value_source(value: object) -> TextLines | ArrayItems:
    """The units of a rendered value: a non-empty array's items, else its lines."""
    from scratch.answers.values.rendered import render_value
    if isinstance(value, list) and value:
        return items_of_list(value, render_value)
    return TextLines(render_value(value))


def items_of_stored(index: EntryIndex, stored: StoredContainer,
                    segments: Sequence[str | int]) -> ArrayItems:
    """The items of an array of a canonical JSON entry, each read from its stored lines."""
    starts = index.item_starts(list(segments))
    first_line = stored.info.start_line
    last_line = stored.info.end_line - 1  # the line before the closing bracket

    def span(offset: int, count: int) -> tuple[int, int]:
        lo = starts[offset]
        hi = starts[offset + count] - 1 if offset + count < len(starts) else last_line
        return lo, hi

    def render(offset: int, count: int) -> str:
        lo, hi = span(offset, count)
        lines = stored.window(lo - first_line, hi - lo + 1)
        if lines and lines[-1].endswith(",\n"):
            lines[-1] = lines[-1][:-2] + "\n"
        return "[\n" + "".join(lines) + "]\n"

    def tokens(offset: int, count: int) -> int | None:
        lo, hi = span(offset, count)
        return stored.estimate(lo - first_line, hi - lo + 1)

    return ArrayItems(len(starts), render, tokens)


def stored_container(index: EntryIndex, segments: Sequence[str | int], base: str
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


LineSource = TextLines | StoredContainer | ArrayItems

# make_data(paging, body, windowed, fit, cut): the data of an answer that shows ``body`` with
# ``paging`` ({offset, lines, total_lines}), asked with a window (--offset/--limit) or not,
# with --fit or not; ``cut``: the answer stops before the end of what was asked
MakeData = Callable[[dict[str, int], str, bool, bool, bool], dict[str, object]]


class ValueLines(Candidate):
    """Lines ``offset..`` (at most ``limit``) of a rendered value, as ``asked`` shows them.

    ``alternatives``: other ways in offered before the smaller windows (the value's children);
    ``warnings``: carried by every page."""

    command = "get-in"
    code = "get_in_too_large"
    what = "the first line alone"

    def __init__(self, asked: Call, source: LineSource, *, offset: int, limit: int | None,
                 fit: bool, make_data: MakeData, warnings: tuple[str, ...] = (),
                 alternatives: Callable[[], list[Step]] | None = None,
                 on_close: Callable[[], None] | None = None) -> None:
        super().__init__(asked, fit=fit)
        total = len(source)
        if offset < 0:  # from the end: --offset -20 is the last 20 lines
            offset = max(0, total + offset)
        if limit is not None and limit < 1:
            raise UsageError(f"{argument('limit')} must be >= 1, not {limit}",
                             code="invalid_argument", argument="limit")
        self.unit = getattr(source, "unit", "line")
        if offset and offset >= total:
            error = OutOfRange(f"{argument('offset')} {offset} is past the end "
                               f"({plural(total, self.unit)})", offset=offset,
                               argument="offset")
            error.details[f"total_{self.unit}s"] = total
            raise error
        if self.unit == "item":
            self.what = "the first item alone"
        self.source = source
        self.offset = offset
        self.limit = limit
        self.total = total
        self.units = min(total - offset, limit) if limit else total - offset
        self.shrink_units = self.units
        self.make_data = make_data
        self.warnings = warnings
        self._alternatives = alternatives
        self._on_close = on_close
        self._window: list[str] = []

    def _lines(self, k: int) -> list[str]:
        if self.unit == "item":  # k items: their rendering, however many lines
            return self.source.window(self.offset, k)
        if len(self._window) < k:
            self._window = self.source.window(self.offset, k)
        return self._window[:k]

    def page(self, k: int) -> Result[dict[str, object]]:
        lines = self._lines(k)
        body = "".join(lines)
        if self.unit == "item":
            paging = {"offset": self.offset, "items": min(k, self.total - self.offset),
                      "total_items": self.total}
        else:
            paging = {"offset": self.offset, "lines": len(lines), "total_lines": self.total}
        data = self.make_data(paging, body, bool(self.offset or self.limit), self.fit,
                              k < self.units)
        return Result(self.command, data=data, text=body, warnings=self.warnings)

    def estimate(self, k: int) -> int | None:
        return k  # every rendered line is non-blank: at least one token each

    def about(self, k: int) -> int | None:
        return self.source.estimate(self.offset, k)

    def resume(self, k: int) -> Call | None:
        stop = self.offset + k
        if k >= self.units:
            return None
        rest = self.offset + self.limit - stop if self.limit else None
        return self.asked.with_args(offset=stop, limit=rest, fit=True)

    def fit_call(self) -> Call | None:
        return self.asked.with_args(fit=True)

    def shrunk(self, k: int) -> Candidate | None:
        return ValueLines(self.asked.with_args(limit=k, fit=None), self.source,
                          offset=self.offset, limit=k, fit=False, make_data=self.make_data,
                          warnings=self.warnings)

    def plan(self) -> list[Step]:
        extra = self._alternatives() if self._alternatives is not None else []
        return [*extra, SHRINK, FIT]

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()


__all__ = ["Alternative", "ArrayItems", "LineSource", "StoredContainer", "TextLines",
           "ValueLines", "items_of_list", "items_of_stored", "stored_container", "value_source"]
