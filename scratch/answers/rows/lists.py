"""A list of rows under a header line, as a candidate answer: value counts, SQL rows, keys.

The list is computed in full before anything is priced (a ranking, a query's rows, an
object's keys); the answer shows rows ``offset..`` of it, at most ``limit``.

Invariants:
- The text is tab-separated: the header, one line per row shown, then any ``tail`` lines
  (an ``other`` bucket); a cell holding a tab or a line break is written as a JSON string,
  so each row stays one line.
- Units are rows: a row costs at least one token, so ``estimate(k) = k``; ``--fit`` shows the
  most rows that fit and ``next`` continues at the first row not shown (``offset``), with what
  is left of ``limit``; following it shows every row of the window once. ``shrunk(k)`` is the
  same list with ``limit`` k.
- A negative ``offset`` counts from the end of the list (``-5``: the last five rows).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from scratch.answers.kernel.candidate import FIT, SHRINK, Alternative, Candidate
from scratch.answers.kernel.result import Result, Table, Words
from scratch.calls import Call

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step


def cell_text(value: object) -> str:
    """One table cell: text as it is (JSON-quoted when it holds a tab or a line break),
    anything else as compact JSON."""
    if value is None:
        return "null"
    if isinstance(value, str):
        if "\t" in value or "\n" in value or "\r" in value:  # would break the table's lines
            return json.dumps(value, ensure_ascii=False)
        return value
    from scratch.answers.kernel.result import compact_json
    try:
        return compact_json(value)
    except TypeError:
        return str(value)


def tsv(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    return "\n".join("\t".join(r) for r in [list(columns), *rows]) + "\n"


R = TypeVar("R")  # one row as the list holds it

# (rows shown, position of the first, how many): the answer's data
MakeData = Callable[[list[R], int, int], dict[str, object]]


class RowList(Candidate, Generic[R]):
    """Rows ``offset..`` (at most ``limit``) of ``rows``; see the module docstring.

    ``cells(row)``: the row's cells as text; ``tail(end)``: lines after the rows shown when
    they end before position ``end`` of the list; ``notices(start, k)``: human-only lines."""

    what = "one row alone"

    def __init__(self, asked: Call, *, command: str, code: str, columns: Sequence[str],
                 rows: Sequence[R], offset: int, limit: int | None, fit: bool,
                 cells: Callable[[R], list[str]], make_data: MakeData[R],
                 tail: Callable[[int], list[list[str]]] | None = None,
                 notices: Callable[[int, int], tuple[str | Words, ...]] | None = None,
                 warnings: tuple[str, ...] = (), alternatives: Iterable[Alternative] = (),
                 on_close: Callable[[], None] | None = None) -> None:
        from scratch.query.aggregate import resolve_window
        super().__init__(asked, fit=fit)
        self.command = command
        self.code = code
        self.columns = list(columns)
        self.rows = rows
        self.limit = limit
        self.start, self.stop = resolve_window(offset, limit, len(rows))
        self.units = self.stop - self.start
        self.shrink_units = self.units
        self.cells = cells
        self.make_data = make_data
        self.tail = tail
        self.notices = notices
        self.warnings = warnings
        self._alternatives = list(alternatives)
        self._on_close = on_close
        self._kw = dict(command=command, code=code, columns=columns, rows=rows, cells=cells,
                        make_data=make_data, tail=tail, notices=notices, warnings=warnings)

    def _lines(self, k: int) -> tuple[list[R], list[list[str]]]:
        shown = list(self.rows[self.start:self.start + k])
        lines = [self.cells(r) for r in shown]
        if self.tail is not None:
            lines += self.tail(self.start + k)
        return shown, lines

    def page(self, k: int) -> Result[dict[str, object]]:
        shown, lines = self._lines(k)
        columns = self.columns
        data = self.make_data(shown, self.start, k)
        notices = self.notices(self.start, k) if self.notices is not None else ()
        return Result(self.command, data=data, text=tsv(columns, lines),
                      table=Table(columns, lines), notices=notices, warnings=self.warnings)

    def estimate(self, k: int) -> int | None:
        return k  # every row is a non-blank line: at least one token

    def resume(self, k: int) -> Call | None:
        if k >= self.units:
            return None
        left = None if self.limit is None and self.stop == len(self.rows) else self.units - k
        return self.asked.with_args(offset=self.start + k, limit=left, fit=True)

    def fit_call(self) -> Call | None:
        return self.asked.with_args(fit=True)

    def shrunk(self, k: int) -> Candidate | None:
        return RowList(self.asked.with_args(limit=k, fit=None), offset=self.start, limit=k,
                       fit=False, **self._kw)  # type: ignore[arg-type]

    def plan(self) -> list[Step]:
        return [SHRINK, FIT, *self._alternatives]

    def details(self) -> dict[str, object]:
        return {"rows": len(self.rows)}

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()
