"""read: the whole content of an entry, or with since_version what changed since then.

Invariants:
- ``read`` shows the stored bytes exactly when they fit the cap and budget; a refusal offers
  the schema at a depth that fits, the most first lines that fit (``head`` with K lines) and
  ``read`` with fit, which pages the entry by lines (see :mod:`scratch.answers.lines.ranges`).
- Binary content is priced as the ~4 bytes a token of text averages, so it cannot slip past
  the cap and the budget; it is not shown unless ``raw`` (on a terminal, to a model, or to an
  agent's pipe alike: an agent reads stdout through a pipe, and NUL bytes in its context are
  a dump, not an answer); its lines are shown escaped by head, tail and slice, and its bytes
  exactly by export.
- A diff is priced as :mod:`scratch.answers.lines.changes` says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import FIT, REF
from scratch.answers.kernel.candidate import FIT as FIT_STEP
from scratch.answers.kernel.candidate import SHRINK, Alternative, Candidate
from scratch.answers.kernel.result import Payload, Result, Words
from scratch.answers.kernel.target import Target, open_target, range_cost
from scratch.answers.lines import changes
from scratch.answers.lines.changes import CONTEXT
from scratch.answers.lines.ranges import LineRange, line_alternatives
from scratch.calls import Call
from scratch.declare import Arg, Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step
    from scratch.answers.kernel.context import Context


class WholeEntry(Candidate):
    """All of an entry's stored bytes (one unit: ``read`` without --fit does not cut)."""

    command = "read"
    code = "read_too_large"

    def __init__(self, target: Target, asked: Call) -> None:
        super().__init__(asked)
        self.target = target
        self.total = target.index.line_count
        self.shrink_units = self.total  # head -n K for K < the entry's lines
        self.binary = target.format == "binary" or target.binary

    def _price(self) -> int:
        if self.binary:  # bytes have no meaningful tokens: ~4 bytes a token, as text averages
            return (self.target.path.stat().st_size + 3) // 4
        return range_cost(self.target, 1, self.total, self.target.spec, numbers=False)

    def text_price(self, k: int) -> int | None:
        return self._price()

    def estimate(self, k: int) -> int | None:
        return self._price()

    def page(self, k: int) -> Result[Payload]:
        data = self.target.path.read_bytes()
        t = self.target
        if self.binary:
            info = {"name": t.name, "version": t.version, "binary": True, "bytes": len(data)}
            return Result("read", data=info, text=data, price=self._price())
        payload = {"name": t.name, "version": t.version, "lines": self.total,
                   "content": data.decode("utf-8", errors="replace")}
        return Result("read", data=payload, text=data, price=self._price())

    def shrunk(self, k: int) -> Candidate | None:
        return LineRange(self.target, 1, k, command="head", numbers=True, fit=False,
                         owner=False)

    def fit_call(self) -> Call | None:
        return None if self.binary else self.asked.with_args(fit=True)

    def fit_candidate(self) -> Candidate:
        if self.binary:
            return self
        return LineRange(self.target, 1, self.total, command="read", numbers=False, fit=True,
                         asked=self.asked.with_args(fit=True), owner=False)

    def plan(self) -> list[Step]:
        if self.binary:
            return [SHRINK]
        from scratch.answers.commands.schema import schema_candidate
        return [Alternative(candidate=lambda cap: schema_candidate(self.target), shrink=True),
                SHRINK, FIT_STEP, *line_alternatives(self.target, 1, unless_shrunk=True)]

    def details(self) -> dict[str, object]:
        return {"total_lines": self.total}

    def close(self) -> None:
        self.target.index.close()


SINCE_VERSION = Arg("Show only what changed since this version.", flags=("--since-version",),
                    metavar="N", minimum=1, show_default=False)
RAW = Arg("Show binary content as text.", flags=("--raw",))


def read(ctx: Context, ref: Annotated[str, REF],
         since_version: Annotated[int | None, SINCE_VERSION] = None,
         context: Annotated[int, CONTEXT] = 3, raw: Annotated[bool, RAW] = False,
         fit: Annotated[bool, FIT] = False, *, asked: Call) -> Candidate | Result[Payload]:
    if since_version is not None:
        return read_since(ctx, ref, since_version, context,
                          asked.with_args(raw=None, fit=None))
    asked = asked.with_args(context=None)  # diffs only: a whole entry has no context
    target = open_target(ctx, ref)
    if target.format == "binary" or target.binary:
        size = target.path.stat().st_size
        if not raw:
            target.index.close()
            info = {"name": target.name, "version": target.version, "binary": True,
                    "bytes": size}
            return Result("read", data=info, text=Words((
                f"{target.name}@{target.version}: binary content ({size:,} bytes) not shown "
                "as text; ", asked.with_args(raw=True), " shows it anyway\n")))
        return WholeEntry(target, asked)
    total = target.index.line_count
    if total == 0:
        target.index.close()
        return Result("read", data={"name": target.name, "version": target.version,
                                    "content": "", "lines": 0}, text=b"")
    if fit:
        return LineRange(target, 1, total, command="read", numbers=False, fit=True,
                         asked=asked)
    return WholeEntry(target, asked)


def read_since(ctx: Context, ref: str, since: int, context: int, asked: Call) -> Candidate:
    return changes.diff_candidate(changes.since_version(ctx, ref, since, context), asked,
                                  context, code="read_too_large")


COMMAND = Command(
    "read", "The whole content of REF (NAME or NAME@N) if it fits the per-call cap and budget, "
    "or with --since-version N what changed since version N as a compact diff.\n\n"
    "Binary content is not printed unless --raw (head, tail and slice show its lines "
    "escaped; export writes its bytes).\n\n"
    "Example: scratch read notes/plan.md --since-version 2",
    read,
    tools=(Tool("read", "A whole entry, if it fits (since_version: what changed).",
                names={"ref": "file"}, toolset="explore"),
           Tool("read_file", "The current content of a file (or path@VERSION), or with "
                "since_version only what changed since that version.", names={"ref": "path"},
                args=("ref", "since_version", "fit"), primary=False, toolset="files")))
