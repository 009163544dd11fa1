"""grep over stored entries as candidate answers: linear-time matching (re2), priced regions.

Invariants:
- The content is searched through an mmap with the index's line offsets, so memory stays flat
  and line numbers are a bisect away; a warm process (its indexes kept) keeps the maps of the
  few files it searched last (:class:`_KeptMaps`), by file identity.
- Output lines are ``N:text`` for selected lines and ``N-text`` for context, regions with
  context separated by ``--`` (as grep -n prints); with ``all`` each line is prefixed ``name:``.
- Priced in human mode from the index's per-line token sums (plus the ``N:`` prefixes and the
  separators), with --json on the envelope.
- A --fit page stops only where resuming the search (``from_line``) repeats and skips nothing:
  between regions, or just before a selected line; ``next`` resumes there with the remaining
  ``max_count``: following it covers all matches with no gap and no overlap.
- A line longer than :data:`WINDOW_OVER` bytes is shown as a window around its first match
  (``line_part`` in the data, a notice naming the ``slice --from-byte --fit`` call that reads
  it in pieces), priced by counting the window: a match on a 50 MB line costs a scan and a
  window, never a copy of the line.
- When ``-m`` stopped the search, ``meta.total_matches`` is the number of matching lines in the
  whole entry (a second pass without context, counted, not shown).
- ``--count`` and ``--count-by GROUP`` are counting answers
  (:mod:`scratch.answers.lines.grep_counts`).
- A refusal offers a smaller ``max_count`` (the answer for the first K matches is a prefix of
  the refused one plus the K-th's trailing context, so it is known without searching again),
  --fit when its first piece fits, and context 0 when the matches alone fit; when none fits,
  the ways into the first matching line.
"""

from __future__ import annotations

import itertools
import mmap
import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import FIT as FIT_ARG
from scratch.answers.commands._args import REF
from scratch.answers.kernel.candidate import FIT, SHRINK, Alternative, Candidate
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Meta, Result
from scratch.answers.kernel.target import Target, line_prefix_cost, open_target, range_cost
from scratch.answers.lines.ranges import line_alternatives
from scratch.calls import Call, call
from scratch.declare import Arg, Command, Tool
from scratch.errors import InvalidPattern, UsageError, argument
from scratch.words import plural

WINDOW_OVER = 1 << 18  # bytes of a line over which a match shows a window of it: ~64k tokens,
# more than a default cap could show whole

if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypedDict

    from scratch.answers.kernel.candidate import Step
    from scratch.answers.kernel.result import Words
    from scratch.query.grep import GrepLine, GrepOptions, Region

    class EntryMatches(TypedDict):
        """One entry of grep --all's data."""

        name: str
        regions: list[dict[str, object]]
        matches: int


ALL_FIT_ENTRIES = 4  # entries whose --fit grep a refused grep over all entries offers
# whole-entry totals of versions a warm process has read or counted, by index directory and
# question: the directory is the version's (its blob), whose content never changes, so the
# total is that of the file beside the index (countcache), read once per process, not per call
_TOTALS: dict[tuple[str, tuple[object, ...]], int] = {}


def _options(pattern: str, context: int, ignore_case: bool, fixed: bool, max_count: int | None,
             invert: bool) -> GrepOptions:
    from scratch.query.grep import GrepOptions
    if context < 0 or (max_count is not None and max_count < 0):
        raise UsageError(f"{argument('context')} and {argument('max_count')} must be >= 0",
                         code="invalid_argument",
                         argument="context" if context < 0 else "max_count")
    return GrepOptions(pattern=pattern, ignore_case=ignore_case, fixed=fixed, invert=invert,
                       max_count=max_count, context=context)


class _KeptMaps:
    """Maps of the content files a warm process searched last, by file identity.

    Mapping a file anew each call makes the search fault in every page it reads again (~60 us
    a grep on 100 MB). A version's content file is never rewritten (a new version is a new
    file), so a map of the file with this device, inode, size and modification time is that
    content; a log that grew is another size, so another map. Maps pushed out are not closed
    here (a parallel search may be reading one): the last reference going closes them."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.maps: OrderedDict[tuple[int, int, int, int], mmap.mmap] = OrderedDict()

    def get(self, path: Path) -> mmap.mmap | None:
        st = os.stat(path)
        if st.st_size == 0:
            return None
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        with self.lock:
            found = self.maps.get(key)
            if found is not None:
                self.maps.move_to_end(key)
                return found
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_ino != st.st_ino:  # replaced since the stat
                return None
            made = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        with self.lock:
            self.maps[key] = made
            while len(self.maps) > self.size:
                self.maps.popitem(last=False)
        return made


_MAPS = _KeptMaps(4)


def _regions(target: Target, options: GrepOptions, from_line: int) -> list[Region]:
    from scratch.answers.kernel.kept_indexes import KeptIndex
    from scratch.query.grep import grep_buffer
    index = target.index
    if index.line_count == 0 or from_line > index.line_count:
        return []
    size = index.meta["bytes"]
    if size == 0:
        return []
    start = index.line_offset(from_line)
    kept = _MAPS.get(target.path) if isinstance(index, KeptIndex) else None  # warm only
    if kept is not None and len(kept) == size:
        return list(grep_buffer(kept, options, start=start, first_lineno=from_line,
                                line_starts=index.line_starts(), window_over=WINDOW_OVER))
    with open(target.path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            return list(grep_buffer(buf, options, start=start, first_lineno=from_line,
                                    line_starts=index.line_starts(), window_over=WINDOW_OVER))
        finally:
            buf.close()


def _line_tokens(target: Target, ln: GrepLine) -> int:
    """Base tokens of a shown line: the index's count, or a window's own (with its marks)."""
    if ln.windowed:
        from scratch.tokens.tokenizer import get_tokenizer
        return get_tokenizer(target.spec.base).count(_marked(ln))
    return target.index.range_tokens(ln.lineno, ln.lineno, target.spec.base) or 0


def _marked(ln: GrepLine, binary: bool = False) -> str:
    """A line as shown: a window of a long line with ``…`` where the line goes on; a line of
    binary content escaped and bounded (:func:`scratch.words.escape_bytes`)."""
    if binary:
        from scratch.words import escape_bytes
        text = escape_bytes(ln.text)
    else:
        text = ln.display()
    if not ln.windowed:
        return text
    return ("…" if ln.from_byte else "") + text + ("…" if ln.to_byte < ln.line_bytes else "")


def _window_notices(target: Target, regions: list[Region], invert: bool) -> tuple[Words, ...]:
    from scratch.answers.kernel.result import Words
    out: list[Words] = []
    for region in regions:
        for ln in region.lines:
            if ln.windowed:
                out.append(Words((
                    f"line {ln.lineno} has {ln.line_bytes:,} bytes: shown are bytes "
                    f"{ln.from_byte:,}-{ln.to_byte:,}"
                    + (" around the match" if ln.match and not invert else "")
                    + "; in pieces: ",
                    call("slice", ref=target.ref, start=ln.lineno, end=ln.lineno,
                         from_byte=ln.from_byte or None, fit=True))))
    return tuple(out)


def _region_cost(target: Target, region: Region, prefix: str, numbers: bool = True) -> int:
    spec = target.spec
    first, last = region.first_lineno, region.last_lineno
    if any(ln.windowed for ln in region.lines):
        cost = spec.scale(sum(_line_tokens(target, ln) + line_prefix_cost(ln.lineno)
                              for ln in region.lines))
    else:
        cost = range_cost(target, first, last, spec, numbers=numbers)
    if prefix:
        cost += spec.scale((last - first + 1) * max(1, len(prefix) // 4))
    return cost + 1  # the "--" separator


def render_regions(regions: list[Region], prefix: str = "", binary: bool = False) -> str:
    """``N:line`` for matches, ``N-line`` for context; like GNU grep, ``--`` separates regions
    only when they carry context (numbered match lines alone already show the gaps).
    ``binary``: the lines are binary content, shown escaped."""
    out: list[str] = []
    separate = any(not line.match for region in regions for line in region.lines)
    for i, region in enumerate(regions):
        if i and separate:
            out.append("--")
        for line in region.lines:
            out.append(f"{prefix}{line.lineno}{':' if line.match else '-'}"
                       f"{_marked(line, binary)}")
    return "\n".join(out) + ("\n" if out else "")


def regions_data(regions: list[Region], binary: bool = False) -> list[dict[str, object]]:
    return [{"start": r.first_lineno, "end": r.last_lineno,
             "lines": [_line_data(ln, binary) for ln in r.lines]} for r in regions]


def _line_data(ln: GrepLine, binary: bool = False) -> dict[str, object]:
    text = _marked(ln, binary) if binary else ln.display()
    out: dict[str, object] = {"line": ln.lineno, "text": text, "match": ln.match}
    if ln.windowed:  # a window of a long line: which bytes of it (as slice --from-byte counts)
        out["line_part"] = {"line": ln.lineno, "from_byte": ln.from_byte, "to_byte": ln.to_byte,
                            "line_bytes": ln.line_bytes}
    return out


def first_matches(regions: list[Region], k: int, after: int) -> list[Region]:
    """The regions ``-m k`` answers, from those of a search that went further: its lines up to
    the k-th selected one, then up to ``after`` lines of trailing context (lines that follow
    at once, shown as context even when they match, as grep -m does)."""
    from scratch.query.grep import Region
    out: list[Region] = []
    seen = 0
    for region in regions:
        lines: list[GrepLine] = []
        for ln in region.lines:
            if seen >= k:
                if len(lines) >= 1 and after > 0 and ln.lineno == lines[-1].lineno + 1:
                    lines.append(ln._replace(match=False))
                    after -= 1
                    continue
                break
            lines.append(ln)
            seen += ln.match
        if lines:
            out.append(Region(lines))
        if seen >= k:
            break
    return out


def only_matches(regions: list[Region]) -> list[Region]:
    """The regions -C 0 answers: the selected lines, adjacent ones together."""
    from scratch.query.grep import Region
    out: list[Region] = []
    for region in regions:
        for ln in region.lines:
            if not ln.match:
                continue
            if out and out[-1].last_lineno + 1 == ln.lineno:
                out[-1].lines.append(ln)
            else:
                out.append(Region([ln]))
    return out


class GrepAnswer(Candidate):
    """The regions of a search of one entry; units are the places a --fit page may stop."""

    command = "grep"
    code = "grep_too_large"

    def __init__(self, target: Target, regions: list[Region], options: GrepOptions, *,
                 from_line: int,
                 fit: bool, asked: Call, owner: bool = True,
                 details: dict[str, object] | None = None) -> None:
        super().__init__(asked, fit=fit)
        self.target = target
        self.regions = regions
        self.options = options
        self.from_line = from_line
        self._owner = owner
        from scratch.answers.lines.ranges import is_binary
        self.binary = is_binary(target)  # its lines shown escaped, priced as shown
        self.matches = sum(r.match_count for r in regions)  # asked for by most steps
        self._details = details or {"matches": self.matches}
        self.lines = [(ri, ln) for ri, region in enumerate(regions) for ln in region.lines]
        spec = target.spec
        # each line's tokens read from the index once: with its number (the text's price) and
        # without (the estimate), summed as prefixes, since fitting asks for many page sizes
        self.costs = []
        plain = [0]
        counted = target.index.line_tokens(
            [ln.lineno for _, ln in self.lines], spec.base) or [0] * len(self.lines)
        at = 0
        for ri, region in enumerate(regions):
            for i, ln in enumerate(region.lines):
                tokens = _line_tokens(target, ln) if ln.windowed else counted[at]
                at += 1
                self.costs.append(int(spec.scale(tokens + line_prefix_cost(ln.lineno)))
                                  + (1 if ri and i == 0 else 0))
                plain.append(plain[-1] + int(spec.scale(tokens)))
        self._plain_sums = plain
        self._cost_sums = list(itertools.accumulate(self.costs, initial=0))
        # a page may stop before a selected line, between regions, or at the end
        self.cuts = [p for p in range(1, len(self.lines) + 1)
                     if p == len(self.lines) or self.lines[p][1].match
                     or self.lines[p][0] != self.lines[p - 1][0]]
        self.units = max(1, len(self.cuts))
        self.shrink_units = self.matches
        first = next((ln.lineno for _, ln in self.lines), from_line)
        self.what = f"line {first} alone"
        self._total_matches: int | None = None

    def _prefix(self, k: int) -> list[Region]:
        """The regions of the first k units."""
        from scratch.query.grep import Region
        if not self.cuts:
            return []
        if k >= len(self.cuts):
            return self.regions
        out: list[tuple[int, Region]] = []
        for ri, ln in self.lines[:self.cuts[k - 1]]:
            if not out or out[-1][0] != ri:
                out.append((ri, Region()))
            out[-1][1].lines.append(ln)
        return [r for _, r in out]

    def page(self, k: int) -> Result[dict[str, object]]:
        regions = self._prefix(k)
        data: dict[str, object] = {"name": self.target.name, "version": self.target.version,
                                "matches": self.matches if regions is self.regions
                                else sum(r.match_count for r in regions),
                                "regions": regions_data(regions, self.binary)}
        notices: tuple[str, ...] = ("no matches",) if not regions and self.resume(k) is None \
            else ()
        meta: Meta = {}
        total = self._total()
        if total is not None:  # -m cut the answer: how many the whole entry has
            meta["total_matches"] = total
            notices = (f"{plural(total, 'matching line', grouped=True)} in the whole entry; "
                       f"this search stops at the first {self.options.max_count}",)
        return Result("grep", data=data, text=render_regions(regions, binary=self.binary),
                      notices=notices + _window_notices(self.target, regions,
                                                         self.options.invert),
                      price=self.text_price(k), meta=meta)

    def _total(self) -> int | None:
        """The selected lines of the whole entry when -m stopped this search, else None."""
        m = self.options.max_count
        if m is None or self.matches < m:
            return None
        if self._total_matches is None:
            from dataclasses import replace

            from scratch.answers.lines.grep_counts import count_matches
            from scratch.index.countcache import cached_total
            o = self.options
            # one answer per version: a warm server (or the next call) reads it back instead of
            # scanning the whole entry again
            key = ("grep_total", o.pattern, o.ignore_case, o.fixed, o.invert)
            where = str(self.target.index.index_dir)
            from scratch.answers.kernel.kept_indexes import KeptIndex
            # a warm process (its indexes kept) keeps the totals of versions (a log's content
            # grows under its name)
            version = self.target.kind != "log" and isinstance(self.target.index, KeptIndex)
            total = _TOTALS.get((where, key)) if version else None
            if total is None:
                total = cached_total(
                    self.target.index.index_dir, key,
                    lambda: count_matches(self.target, replace(o, max_count=None)))
                if version:
                    if len(_TOTALS) >= 256:
                        _TOTALS.clear()
                    _TOTALS[(where, key)] = total
            self._total_matches = total
        return self._total_matches

    def text_price(self, k: int) -> int | None:
        if not self.cuts:
            return 0
        if self.binary:  # escaped: priced as shown, not from the index's counts of the bytes
            return None
        return max(0, self._cost_sums[self.cuts[min(k, len(self.cuts)) - 1]] - 1)

    def estimate(self, k: int) -> int | None:
        if not self.cuts:
            return 0
        return self._plain_sums[self.cuts[min(k, len(self.cuts)) - 1]]

    def resume(self, k: int) -> Call | None:
        if not self.cuts or k >= len(self.cuts):
            return None
        line = self.lines[self.cuts[k - 1]][1].lineno
        shown = sum(r.match_count for r in self._prefix(k))
        left = None if self.options.max_count is None else self.options.max_count - shown
        return self.asked.with_args(max_count=left, from_line=line, fit=True)

    def fit_call(self) -> Call | None:
        return self.asked.with_args(fit=True)

    def shrunk(self, k: int) -> Candidate | None:
        regions = first_matches(self.regions, k, self.options.after_lines)
        return GrepAnswer(self.target, regions, self.options, from_line=self.from_line,
                          fit=False, asked=self.asked.with_args(max_count=k, fit=None),
                          owner=False)

    def plan(self) -> list[Step]:
        steps: list[Step] = [SHRINK, FIT]
        if self.options.context:
            steps.append(Alternative(candidate=lambda cap: GrepAnswer(
                self.target, only_matches(self.regions), self.options,
                from_line=self.from_line, fit=False, owner=False,
                asked=self.asked.with_args(context=0, fit=None))))
        first = next((ln.lineno for _, ln in self.lines if ln.match), None)
        if first is not None:
            steps += [a._replace(last_resort=True)
                      for a in line_alternatives(self.target, first)]
        return steps

    def details(self) -> dict[str, object]:
        return self._details

    def close(self) -> None:
        if self._owner:
            self.target.index.close()


PATTERN = Arg("RE2 regex (with fixed: plain text).",
              metavar="PATTERN", max_length=1024)
CONTEXT = Arg("Context lines around a match.",
              flags=("-C", "--context"), metavar="N", minimum=0)
IGNORE_CASE = Arg("Ignore case.", flags=("-i", "--ignore-case"))
FIXED = Arg("The pattern is plain text.", flags=("-F", "--fixed-strings"))
INVERT = Arg("The lines that do not match.", flags=("-v", "--invert-match"))
MAX_COUNT = Arg("At most this many matches.", flags=("-m", "--max-count"),
                metavar="MAX", minimum=1)
ALL = Arg("Search every entry of the agent (then the only word given is the pattern).",
          flags=("--all",), mcp=False)
FROM_LINE = Arg("First line searched.", flags=("--from-line",), metavar="N",
                minimum=1)
COUNT = Arg("Just the number of matching lines.",
            flags=("--count",))
COUNT_BY = Arg("Count the values of this capture group (number or name).", flags=("--count-by",),
               metavar="GROUP", max_length=255)
OFFSET = Arg("With count_by: skip this many values; negative: from the end.",
             flags=("--offset",), metavar="N")
LIMIT = Arg("With count_by: at most this many values.", flags=("--limit",),
            metavar="N", minimum=1)


def grep(ctx: Context, ref: Annotated[str | None, REF] = None,
         pattern: Annotated[str | None, PATTERN] = None,
         context: Annotated[int, CONTEXT] = 0, ignore_case: Annotated[bool, IGNORE_CASE] = False,
         fixed: Annotated[bool, FIXED] = False, invert: Annotated[bool, INVERT] = False,
         max_count: Annotated[int | None, MAX_COUNT] = None, all: Annotated[bool, ALL] = False,
         from_line: Annotated[int, FROM_LINE] = 1, count: Annotated[bool, COUNT] = False,
         count_by: Annotated[str | None, COUNT_BY] = None, offset: Annotated[int, OFFSET] = 0,
         limit: Annotated[int | None, LIMIT] = None, fit: Annotated[bool, FIT_ARG] = False,
         *, asked: Call) -> Candidate:
    if count or count_by is not None:
        from scratch.answers.lines.grep_counts import counting
        return counting(ctx, ref, pattern, all=all, count=count, count_by=count_by,
                        ignore_case=ignore_case, fixed=fixed, max_count=max_count,
                        invert=invert, fit=fit, from_line=from_line, offset=offset,
                        limit=limit, context=context, asked=asked)
    if offset or limit is not None:
        raise UsageError(f"{argument('offset')} and {argument('limit')} page the values of "
                         f"{argument('count_by')} (matches: {argument('max_count')}, "
                         f"{argument('from_line')})", code="invalid_argument",
                         argument="offset" if offset else "limit")
    if all:
        if fit or from_line != 1:
            raise UsageError(f"{argument('fit')} and {argument('from_line')} work on one entry, "
                             f"not with {argument('all')}; narrow with {argument('max_count')} "
                             "or grep one entry", code="invalid_argument",
                             argument="fit" if fit else "from_line")
        if pattern is None:
            raise UsageError(f"grep needs {argument('pattern')}", code="invalid_argument",
                             argument="pattern")
        return grep_all(ctx, pattern, context=context, ignore_case=ignore_case, fixed=fixed,
                        max_count=max_count, invert=invert, asked=asked)
    if ref is None or pattern is None:
        missing = "ref" if ref is None else "pattern"
        raise UsageError(f"grep needs {argument(missing)}", code="invalid_argument",
                         argument=missing)
    options = _options(pattern, context, ignore_case, fixed, max_count, invert)
    if from_line < 1:
        raise UsageError(f"{argument('from_line')} must be >= 1, not {from_line}",
                         code="invalid_argument", argument="from_line")
    target = open_target(ctx, ref, logs=True)
    try:
        regions = _regions(target, options, from_line)
    except InvalidPattern as exc:
        target.index.close()
        exc.details.setdefault("suggestions", [asked.with_args(fixed=True)])
        raise
    except BaseException:
        target.index.close()
        raise
    return GrepAnswer(target, regions, options, from_line=from_line, fit=fit, asked=asked)


class GrepAll(Candidate):
    """The matches of a search of every entry of the agent (one unit)."""

    command = "grep"
    code = "grep_too_large"

    def __init__(self, ctx: Context, pattern: str, options: GrepOptions,
                 found: list[tuple[Target, list[Region]]],
                 asked: Call) -> None:
        super().__init__(asked)
        self.ctx = ctx
        self.pattern = pattern
        self.options = options
        self.found = found
        self.shrink_units = max((sum(r.match_count for r in regions) for _, regions in found),
                                default=0)

    def page(self, k: int) -> Result[dict[str, object]]:
        parts: list[str] = []
        entries: list[EntryMatches] = []
        from scratch.answers.lines.ranges import is_binary
        for target, regions in self.found:
            binary = is_binary(target)
            parts.append(render_regions(regions, f"{target.name}:", binary))
            entries.append({"name": target.name, "regions": regions_data(regions, binary),
                            "matches": sum(r.match_count for r in regions)})
        data = {"pattern": self.pattern, "entries": entries,
                "matches": sum(e["matches"] for e in entries)}
        return Result("grep", data=data, text="--\n".join(parts), price=self.text_price(k),
                      notices=() if entries else ("no matches",))

    def text_price(self, k: int) -> int | None:
        from scratch.answers.lines.ranges import is_binary
        if any(is_binary(t) for t, _ in self.found):
            return None  # escaped binary lines: priced as shown
        return sum(_region_cost(t, r, f"{t.name}:") for t, regions in self.found
                   for r in regions)

    def shrunk(self, k: int) -> Candidate | None:
        cut = [(t, first_matches(regions, k, self.options.after_lines))
               for t, regions in self.found]
        return GrepAll(self.ctx, self.pattern, self.options, cut,
                       self.asked.with_args(max_count=k))

    def plan(self) -> list[Step]:
        steps: list[Step] = [SHRINK]
        args = {k: v for k, v in self.asked.args.items() if k not in ("all", "pattern")}
        for target, regions in self.found[:ALL_FIT_ENTRIES * 2]:
            one = call("grep", ref=target.name, pattern=self.pattern, **args)
            steps.append(Alternative(candidate=GrepAnswer(target, regions, self.options,
                                                          from_line=1, fit=False, asked=one,
                                                          owner=False), fit=True))
        return steps[:1 + ALL_FIT_ENTRIES]

    def close(self) -> None:
        for target, _ in self.found:
            target.index.close()


def grep_all(ctx: Context, pattern: str, *, context: int = 0, ignore_case: bool = False,
             fixed: bool = False, max_count: int | None = None, invert: bool = False,
             asked: Call) -> Candidate:
    options = _options(pattern, context, ignore_case, fixed, max_count, invert)
    found: list[tuple[Target, list[Region]]] = []
    try:
        for row in ctx.store().list(""):
            target = open_target(ctx, row["name"], logs=True)
            regions = _regions(target, options, 1)
            if regions:
                found.append((target, regions))
            else:
                target.index.close()
    except BaseException:
        for target, _ in found:
            target.index.close()
        raise
    return GrepAll(ctx, pattern, options, found, asked)



_GREP_ARGS = ("pattern", "context", "ignore_case", "fixed", "max_count", "invert")

COMMAND = Command(
    "grep", "Lines of REF matching PATTERN (linear-time regex engine), with context; matches "
    "'N:', context 'N-', regions with context separated by '--'. With --all, search every "
    "entry of the agent (then the first argument is the PATTERN).\n\n"
    "When -m stops the search, the whole entry's number of matching lines is reported too. "
    "--count gives just the number of matching lines; --count-by 1 (or a group's name) the "
    "counts of the values a capture group took, biggest first.\n\n"
    "Example: scratch grep app-log 'error|timeout' -i -C 2 -m 20\n\n"
    "Example: scratch grep access '\" (\\d{3}) ' --count-by 1",
    grep,
    tools=(Tool("grep", "Numbered lines of an entry matching pattern, with context.",
                names={"ref": "file"},
                args=("ref", *_GREP_ARGS, "from_line", "count", "count_by", "offset", "limit",
                      "fit"),
                defaults={"context": 3}, default_unless={"context": ("count", "count_by")},
                required=("ref", "pattern"), toolset="explore"),
           Tool("grep_all", "Search every entry of this agent for a pattern.", args=_GREP_ARGS,
                defaults={"context": 3}, default_unless={"context": ("count", "count_by")},
                fixed={"all": True}, required=("pattern",), toolset="files")),
    layouts={"all": ("pattern",)})
