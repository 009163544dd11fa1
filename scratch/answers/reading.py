"""read, read --since-version, diff and export: whole entries and what changed.

Invariants:
- ``read`` shows the stored bytes exactly when they fit the cap and budget; a refusal offers
  the schema at a depth that fits, the most first lines that fit (``head -n K``) and
  ``read --fit``, which pages the entry by lines (see :mod:`scratch.answers.line_ranges`).
- Binary content is priced as the ~4 bytes a token of text averages, so it cannot slip past
  the cap and the budget; it is not printed to a terminal unless ``raw``.
- A diff (``read --since-version``, ``diff``) is priced on its text like any other answer; a
  refusal offers the same changes without context lines (``-U 0``) when that fits, else the
  newer version read page by page.
- ``export`` is for people: the stored bytes of a version exactly, to a file or stdout, with
  no cap and no charge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scratch.answers.kernel.candidate import FIT, SHRINK, Alternative, Candidate, Fixed
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result, Words
from scratch.answers.kernel.target import Target, open_target, range_cost
from scratch.answers.line_ranges import LineRange, line_alternatives
from scratch.calls import Call, call
from scratch.errors import UsageError


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

    def page(self, k: int) -> Result:
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

    def plan(self) -> list[Any]:
        if self.binary:
            return [SHRINK]
        from scratch.answers.commands.schema import schema_candidate
        return [Alternative(candidate=lambda cap: schema_candidate(self.target), shrink=True),
                SHRINK, FIT, *line_alternatives(self.target, 1, unless_shrunk=True)]

    def details(self) -> dict[str, Any]:
        return {"total_lines": self.total}

    def close(self) -> None:
        self.target.index.close()


def read(ctx: Context, ref: str, since_version: int | None = None, context: int = 3,
         raw: bool = False, fit: bool = False, terminal: bool = False
         ) -> Candidate | Result:
    if since_version is not None:
        return read_since(ctx, ref, since_version, context)
    asked = call("read", ref=ref, raw=raw or None, fit=fit or None)
    target = open_target(ctx, ref)
    if target.format == "binary" or target.binary:
        size = target.path.stat().st_size
        if terminal and not raw:
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


def read_since(ctx: Context, ref: str, since: int, context: int = 3) -> Candidate:
    from scratch.answers import entries
    asked = call("read", ref=ref, since_version=since, context=None if context == 3 else context)
    return _diff_candidate(entries.read_since(ctx, ref, since, context), asked, context,
                           code="read_too_large")


def diff(ctx: Context, name: str, a: int, b: int, context: int = 3) -> Candidate:
    from scratch.answers import entries
    asked = call("diff", name=name, a=a, b=b, context=None if context == 3 else context)
    return _diff_candidate(entries.diff(ctx, name, a, b, context), asked, context,
                           code="diff_too_large")


def _diff_candidate(result: Result, asked: Call, context: int, *, code: str) -> Candidate:
    """A diff answer, priced and held to the cap like any other; refused, it offers the same
    changes without context lines, else the newer version paged by lines."""
    alternatives = [Alternative(call=asked.with_args(context=0))] if context else []
    data = result.data or {}
    if data.get("name") and data.get("to_version"):
        newer = call("read", ref=f"{data['name']}@{data['to_version']}", fit=True)
        alternatives.append(Alternative(call=newer, last_resort=True))
    return Fixed(asked, result, code=code, alternatives=alternatives)


def export(ctx: Context, ref: str, output: str | None = None) -> Result:
    """The stored bytes of REF exactly, to ``output`` or stdout: no cap, no charge."""
    from scratch.answers.kernel.target import resolve_name
    from scratch.names import split_ref
    store = ctx.store()
    name, version = split_ref(ref)
    name = resolve_name(store, name)
    meta = store.require(name, allow_deleted=version is not None)
    if meta["kind"] == "log":
        path = store.content_path(name, "log")
        shown_version = None
    else:
        ver = store.resolve(name, version)
        path = store.version_file(ver)
        shown_version = ver.version
    data = path.read_bytes()
    info: dict[str, Any] = {"name": name, "version": shown_version, "bytes": len(data)}
    if output is None:  # the bytes on stdout; --json carries them as text when they are
        try:
            info["content"] = data.decode("utf-8")
        except UnicodeDecodeError:
            info.update(content=None, binary=True)
        return Result("export", data=info, text=data)
    target = Path(output)
    if target.is_dir():
        raise UsageError(f"{output} is a directory; give a file name", code="invalid_argument",
                         output=output)
    try:
        target.write_bytes(data)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}", code="cannot_write",
                         output=output) from None
    info["output"] = str(target)
    return Result("export", data=info,
                  text=f"{name}: wrote {len(data):,} bytes to {output}\n")
