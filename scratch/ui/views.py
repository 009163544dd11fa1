"""What the pages show, read from the store, its indexes and the call ledger; nothing written.

Invariants:
- Answers about an entry that a command gives (its pointer, schema, versions, diffs, log
  pages) are the answers layer's own: the call is ``describe``d and a page of its candidate
  built, exactly what the command would show, but never delivered, so no budget is charged
  and no operation counted (the page is read-only).
- Lines come from the index, each read no further than the page shows of it
  (:data:`LINE_BYTES`): a page of a 100 MB entry, or of a 100 MB line, reads that page's
  bytes only. Grep and search run grep's engine within a time limit (:mod:`scratch.ui.finding`).
- Calls are the ledger's well-formed records (:func:`scratch.store.ledger.scan`; a malformed line is
  skipped and counted, never fatal), read again only when the file changed, and shown a page
  at a time.
- ``Site.agents`` bounds what is shown: every agent of the store, or (a page opened with an
  MCP token) the token's agent only.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from scratch.answers.kernel.rendering import Rendering
from scratch.calls import Call, call
from scratch.ui import figures
from scratch.ui.figures import natural_key

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result
    from scratch.answers.kernel.target import Target
    from scratch.answers.rows.items import Info
    from scratch.errors import ScratchError
    from scratch.store import EntryMeta
    from scratch.store.ledger import ArgPreview, Record
    from scratch.store.records import ListRow
    from scratch.tokens import EncodingSpec
    from scratch.ui.finding import Found

Speller = Callable[[Call], str]
T = TypeVar("T")

PAGE_LINES = 100  # lines of an entry per page of the viewer
PAGE_CALLS = 100  # calls per page of a session's timeline
PAGE_LOG = 100  # log entries per page
GREP_MATCHES = 100  # matching lines per page of an entry's grep
LINE_BYTES = 2048  # bytes of a line read for a page (the page shows LINE_CHARS of them)
LINE_CHARS = 1000  # characters of a line a page shows before it cuts the line
LINE_PART = 65536  # bytes of a long line shown per page of the whole-line view
SEARCH_SECONDS = 0.5  # time a request may spend counting matches
CHART_POINTS = figures.CHART_POINTS
# what a write or an ingest stores: the ledger keeps only its size, so the call spelled on the
# page leaves it out and says where it came from
BODIES = ("content", "entry", "entries", "stream")


class PageRendering(Rendering):
    """How the page spells calls (as the CLI does: the speller it is given) and prices them
    (plain text, as the CLI prints its answers)."""

    name = "ui"

    def __init__(self, spell: Speller) -> None:
        self._spell = spell

    def spell(self, c: Call) -> str:
        """``c`` as the speller writes it; what a recorded call's previews cannot be written
        as follows as a comment (as ``scratch calls`` writes it)."""
        from scratch.answers.commands.calls import spell_recorded
        return spell_recorded(c, self._spell)

    def error_cost(self, command: str, error: ScratchError, spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        return count_text(f"{error.code}: {error.message}\n", spec)


class EntryRow(NamedTuple):
    """One entry of the entries page."""

    name: str
    kind: str
    version: int | None
    bytes: int | None
    lines: int | None
    updated: str | None
    format: str
    tool: str
    tokens: int | None


class Line(NamedTuple):
    """A line as a page shows it: its number, its first bytes as text, its length in bytes."""

    number: int
    text: str
    length: int

    @property
    def cut(self) -> bool:
        return len(self.text) > LINE_CHARS or len(self.text.encode("utf-8", "replace")) < \
            self.length


class LinePage(NamedTuple):
    total: int
    lines: list[Line]


class Spelled(NamedTuple):
    """A recorded call as a page writes it: the line, and what it stored that the ledger does
    not keep (``content: 6 bytes``), said apart."""

    line: str
    bodies: list[str]


class Budget(NamedTuple):
    """A session's budget as its state file holds it (``stored`` False: none yet, a fresh
    one), and the per-call cap."""

    window: int
    usable: int
    used: int
    remaining: int
    cap: int
    stored: bool
    margin: float


class Ledger(NamedTuple):
    stamp: tuple[int, int, int]
    records: list[Record]
    skipped: int
    seqs: list[int]


class Site:
    """The store the page shows, and whom to: read-only views over it."""

    def __init__(self, root: Path, spell: Speller, *, agents: Iterable[str] | None = None
                 ) -> None:
        self.root = root
        from scratch.mcp.rendering import spell_call
        self.rendering = PageRendering(spell)
        self.mcp_rendering = PageRendering(spell_call)  # calls as an MCP client is shown them
        self.only = None if agents is None else frozenset(agents)
        self._contexts: dict[tuple[str, str], Context] = {}
        self._ledgers: dict[str, Ledger] = {}
        self._series: dict[tuple[str, str | None, int],
                           tuple[object, dict[str, list[object]]]] = {}
        self._figures: dict[tuple[str, str], tuple[object, object]] = {}
        # a version's checked error grep (it reads up to 16 MiB): (agent, name, version) -> it
        self._error_lines: dict[tuple[str, str, int | None], Info | None] = {}

    def warm_up(self) -> None:
        """Load now what the first page of an entry needs, not on the first request: every
        command's module, the pointer's, each agent's tokenizer and call ledger."""
        import scratch.answers.kernel.fitting
        import scratch.answers.pointer.build
        import scratch.answers.pointer.sizing
        import scratch.formats.jsontext
        import scratch.index.jsonskel
        import scratch.index.reader
        import scratch.index.structure
        import scratch.query.grep
        import scratch.query.paths
        import scratch.reindent
        import scratch.tokens.budget  # noqa: F401  (each imported to load it)
        from scratch.answers.kernel.catalogue import every_command
        from scratch.tokens import count_text
        every_command()
        self.rendering.spell(call("head", ref="warm-up", lines=10))
        sample = ('stored kubectl/x (version 1): json, 1,234 bytes\n  {"name": "pod-1", '
                  '"phase": "Running", "n": 12}\n  scratch get-in x items.0 --fit\n')
        for agent in self.agents() or ["default"]:
            count_text(sample, self.context(agent).encoding())
            self.records(agent)

    # -- who --------------------------------------------------------------------------------

    def agents(self) -> list[str]:
        """The agents with entries or calls (or the one agent the page is limited to), in
        natural order (t2 before t10)."""
        from scratch.store import ledger
        if self.only is not None:
            return sorted(self.only, key=natural_key)
        found: set[str] = set(ledger.agents(self.root))
        try:
            found.update(p.name for p in (self.root / "agents").iterdir() if p.is_dir())
        except OSError:
            pass
        return sorted((a for a in found if self.allowed(a)), key=natural_key)

    def allowed(self, agent: str) -> bool:
        from scratch.store.names import validate_agent
        try:
            validate_agent(agent)
        except Exception:
            return False
        return self.only is None or agent in self.only

    def context(self, agent: str, session: str = "default") -> Context:
        ctx = self._contexts.get((agent, session))
        if ctx is None:
            from scratch.answers.kernel.context import Context
            from scratch.store.config import load_config
            base = self._contexts.get((agent, "default"))
            config = base.config if base is not None else load_config(self.root, agent=agent)
            ctx = Context(self.root, "--store", agent, session, config)
            if len(self._contexts) > 4096:
                self._contexts.clear()
            self._contexts[(agent, session)] = ctx
        return ctx

    def has_entries(self, agent: str) -> bool:
        return (self.root / "agents" / agent / "meta").is_dir()

    # -- calls (the ledger) -------------------------------------------------------------------

    def _ledger(self, agent: str) -> Ledger:
        """``agent``'s ledger, read again only when the file changed (a warm page reads its
        ledger once, not on every poll)."""
        from scratch.store import ledger
        try:
            st = os.stat(ledger.ledger_file(self.root, agent))
            stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        except OSError:
            return Ledger((0, 0, 0), [], 0, [])
        known = self._ledgers.get(agent)
        if known is None or known.stamp != stamp:
            records, skipped = ledger.scan(self.root, agent)
            records = [r for r in records if r["agent"] == agent]  # a line moved in by hand
            records.sort(key=lambda r: r["seq"])
            known = Ledger(stamp, records, skipped, [r["seq"] for r in records])
            self._ledgers[agent] = known
        return known

    def records(self, agent: str) -> list[Record]:
        """Every well-formed record of ``agent``'s ledger, by seq."""
        return self._ledger(agent).records

    def skipped(self, agent: str) -> int:
        """Lines of ``agent``'s ledger skipped as malformed (not a record)."""
        return self._ledger(agent).skipped

    def ledger_bytes(self, agent: str) -> tuple[int, int]:
        """The size of ``agent``'s ledger (answers included) and its bound."""
        from scratch.store import ledger
        size = self._ledger(agent).stamp[0]
        bound = int(self.context(agent).config.get("ledger.max_bytes", ledger.DEFAULT_MAX_BYTES))
        return size, bound

    def dropped(self, agent: str) -> int:
        """How many of ``agent``'s oldest calls the ledger dropped to stay in its bound."""
        from scratch.store import ledger
        return ledger.dropped(self.root, agent)

    def record(self, agent: str, seq: int) -> Record | None:
        """``agent``'s call ``seq``, if the ledger holds it."""
        found = self._ledger(agent)
        at = bisect_left(found.seqs, seq)
        return found.records[at] if at < len(found.seqs) and found.seqs[at] == seq else None

    def chart(self, agent: str, session: str | None = None, most: int = CHART_POINTS
              ) -> dict[str, list[object]]:
        """:func:`figures.series` of an agent's calls (in ``session``) in at most ``most``
        points, made again only when the ledger changed."""
        found = self._ledger(agent)
        key = (agent, session, most)
        known = self._series.get(key)
        if known is None or known[0] != found.stamp:
            if len(self._series) > 512:
                self._series.clear()
            known = (found.stamp, figures.series(self._of(agent, session), most))
            self._series[key] = known
        return known[1]

    def figure(self, agent: str, what: str, compute: Callable[[list[Record]], T]) -> T:
        """``compute(records)`` of ``agent``'s calls (totals, rankings, sessions ...), made
        again only when the ledger changed: a page polled or paged does not add up 10,000
        calls each time."""
        found = self._ledger(agent)
        known = self._figures.get((agent, what))
        if known is None or known[0] != found.stamp:
            if len(self._figures) > 1024:
                self._figures.clear()
            known = (found.stamp, compute(found.records))
            self._figures[(agent, what)] = known
        return known[1]  # type: ignore[return-value]

    def sessions(self, agent: str) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.records(agent):
            seen.setdefault(r["session"], None)
        return list(seen)

    def _of(self, agent: str, session: str | None) -> list[Record]:
        if session is None:
            return self.records(agent)
        return self.figure(agent, "session " + session,
                           lambda found: [r for r in found if r["session"] == session])

    def calls(self, agent: str, session: str | None = None, *, offset: int = 0,
              limit: int | None = None) -> list[Record]:
        """The calls of ``agent`` (in ``session``), oldest first, from the ``offset``-th."""
        found = self._of(agent, session)
        return found[offset:] if limit is None else found[offset:offset + limit]

    def count(self, agent: str, session: str | None = None) -> int:
        return len(self._of(agent, session))

    def calls_after(self, agent: str | None, session: str | None, seq: int) -> list[Record]:
        """The calls of ``agent`` (every agent shown: None) numbered after ``seq``."""
        out: list[Record] = []
        for who in ([agent] if agent else self.agents()):
            found = self._of(who, session)
            at = len(found)
            while at > 0 and found[at - 1]["seq"] > seq:  # the new ones are the last ones
                at -= 1
            out += found[at:]
        out.sort(key=lambda r: r["time"])
        return out

    def budget(self, agent: str, session: str, run: str | None = None,
               iteration: int | None = None) -> Budget:
        """``session``'s budget (a worker's in ``run`` and ``iteration``: a budget of its own)
        as its state file holds it, read without writing anything."""
        from scratch.answers.kernel.prices import budget_for
        ctx = self.context(agent, session)
        if run is not None:
            from scratch.answers.kernel.context import Context
            ctx = Context(self.root, "--store", agent, session, ctx.config, run=run,
                          iteration=iteration)
        found = budget_for(ctx)
        view = found.peek()
        return Budget(int(view["window"]), int(view["usable"]), int(view["used"]),
                      int(view["remaining"]), found.max_extraction_tokens, bool(view["stored"]),
                      float(view["margin"]))

    def spell_record(self, command: str, args: dict[str, ArgPreview], interface: str = "cli"
                     ) -> Spelled:
        """A recorded call as the page writes it: as the CLI would (an MCP call too, so every
        call reads alike; ``interface`` mcp: as the MCP tool call), what it stored said apart."""
        from scratch.answers.commands.calls import recorded_call
        bodies = [_body_text(k, args[k]) for k in BODIES if k in args]
        kept = {k: v for k, v in args.items() if k not in BODIES}
        rendering = self.mcp_rendering if interface.startswith("mcp") or interface == "proxy" \
            else self.rendering
        return Spelled(rendering.spell(recorded_call(command, kept)), bodies)

    # -- entries --------------------------------------------------------------------------

    def entries(self, agent: str, *, tool: str = "", fmt: str = "", kind: str = ""
                ) -> list[EntryRow]:
        """The agent's live entries (matching the filters), the latest updated first."""
        if not self.has_entries(agent):
            return []
        store = self.context(agent).store(create=False)
        rows = []
        for meta in store.live_meta():
            row = _entry_row(store.row_of(meta), meta)
            if ((tool and row.tool != tool) or (fmt and row.format != fmt)
                    or (kind and row.kind != kind)):
                continue
            rows.append(row)
        rows.sort(key=lambda r: natural_key(r.name))
        rows.sort(key=lambda r: r.updated or "", reverse=True)
        return rows

    def meta(self, agent: str, name: str) -> EntryMeta | None:
        from scratch.errors import ScratchError
        if not self.has_entries(agent):
            return None
        try:
            meta = self.context(agent).store(create=False).load_meta(name)
        except ScratchError:
            return None
        return None if meta is None or meta.get("deleted") else meta

    def answer(self, agent: str, c: Call) -> Result[object]:
        """The whole first page of ``c`` as the answers layer builds it, charged to no one."""
        from scratch.answers.kernel.candidate import Candidate
        from scratch.answers.kernel.catalogue import describe
        produced = describe(self.context(agent), c, self.rendering)
        if not isinstance(produced, Candidate):
            return produced
        try:
            return produced.page(produced.units)
        finally:
            produced.close()

    def target(self, agent: str, ref: str, *, logs: bool = True) -> Target:
        from scratch.answers.kernel.target import open_target
        return open_target(self.context(agent), ref, logs=logs)

    def lines(self, agent: str, ref: str, start: int, count: int = PAGE_LINES) -> LinePage:
        """Lines ``start`` on of ``ref`` (at most ``count``), each read to :data:`LINE_BYTES`
        bytes at most."""
        target = self.target(agent, ref)
        try:
            index = target.index
            total = index.line_count
            out = []
            for n in range(max(start, 1), min(start + count - 1, total) + 1):
                length = index.line_length(n)
                raw = index.read_line_part(n, 0, LINE_BYTES)
                out.append(Line(n, _text(raw, cut=length > len(raw)), length))
            return LinePage(total, out)
        finally:
            target.index.close()

    def line_part(self, agent: str, ref: str, number: int, at: int) -> tuple[str, int, int]:
        """Line ``number`` of ``ref`` from its byte ``at`` (moved back to a character's start):
        :data:`LINE_PART` bytes of it as text, the byte it starts at, the line's length."""
        target = self.target(agent, ref)
        try:
            index = target.index
            length = index.line_length(number)
            at = max(0, min(at, length))
            head = index.read_line_part(number, at, 4) if at else b""
            while head and 0x80 <= head[0] < 0xC0 and at > 0:  # inside a character
                at -= 1
                head = index.read_line_part(number, at, 4)
            raw = index.read_line_part(number, at, LINE_PART)
            return _text(raw, cut=at + len(raw) < length), at, length
        finally:
            target.index.close()

    def find(self, agent: str, ref: str, options: object, *, from_line: int, show: int,
             deadline: float) -> Found:
        from scratch.query.grep import GrepOptions
        from scratch.ui.finding import find
        assert isinstance(options, GrepOptions)
        target = self.target(agent, ref)
        try:
            return find(target, options, from_line=from_line, show=show, deadline=deadline)
        finally:
            target.index.close()

    @staticmethod
    def deadline(seconds: float = SEARCH_SECONDS) -> float:
        return time.monotonic() + seconds

    def schema(self, agent: str, ref: str) -> Result[object]:
        return self.answer(agent, call("schema", ref=ref))

    def history(self, agent: str, name: str) -> Result[object]:
        return self.answer(agent, call("history", name=name))

    def diff(self, agent: str, name: str, a: int, b: int) -> Result[object]:
        return self.answer(agent, call("diff", name=name, a=a, b=b))

    def log_page(self, agent: str, name: str, since: int) -> Result[object]:
        return self.answer(agent, call("log read", name=name, since=since, limit=PAGE_LOG))

    def stored_by(self, agent: str, name: str) -> Record | None:
        """The ledger's record of the call that stored ``name``'s latest output (ingest, run,
        or the proxy's interception), if the ledger still holds it."""
        for r in reversed(self.records(agent)):
            if r["entry"] == name and r["command"] in figures.STORING and r["outcome"] == "ok":
                return r
        return None

    def _checked_grep(self, agent: str, target: Target, fmt: str) -> Info | None:
        """The pointer's checked error grep of this version, once per version (it is the
        slow part of an entry's first page)."""
        from scratch.answers.pointer.grep import error_lines_for
        key = (agent, target.name, target.version)
        if key not in self._error_lines:
            if len(self._error_lines) > 256:
                self._error_lines.clear()
            self._error_lines[key] = error_lines_for(target, fmt, target.index.info)
        return self._error_lines[key]

    def pointer(self, agent: str, name: str, *, mcp: bool = False) -> str:
        """The pointer to the entry's current version, built as ``ingest`` builds the one
        it shows (from the index; the next calls sized to the cap), its calls spelled as the
        CLI does, or with ``mcp`` as MCP tool calls."""
        from scratch.answers.kernel.fitting import Meter
        from scratch.answers.kernel.target import open_target
        from scratch.answers.pointer.binary import binary_for
        from scratch.answers.pointer.build import build_pointer, fit_pointer
        from scratch.answers.pointer.sizing import EntrySizer
        from scratch.answers.pointer.snapshot import snapshot_for
        from scratch.tokens import count_text
        ctx = self.context(agent)
        spec = ctx.encoding()
        rendering = self.mcp_rendering if mcp else self.rendering
        target = open_target(ctx, name)
        try:
            info = target.info
            total = target.index.total_tokens(spec.base)
            tokens = spec.scale(total) if total is not None else 0
            prefix = name + "."
            companions = [r.name for r in self.entries(agent)
                          if r.name.startswith(prefix) and "/" not in r.name[len(prefix):]]
            warnings = info.get("warnings")
            fmt = str(info.get("format") or target.index.info.get("format") or "text")
            pointer = build_pointer(
                name=target.name, version=target.version or 0, fmt=fmt,
                size=os.path.getsize(target.path), lines=target.index.line_count,
                tokens=tokens, encoding=spec.name, exact=spec.exact, info=target.index.info,
                companions=sorted(companions),
                warnings=[str(w) for w in warnings] if isinstance(warnings, list) else [],
                partial=bool(info.get("partial")),
                sizer=EntrySizer(Meter(ctx, rendering), target),
                error_lines=self._checked_grep(agent, target, fmt),
                snapshot=snapshot_for(target, target.index.info),
                binary=binary_for(target, fmt))
            text, _, _ = fit_pointer(pointer, tokens, lambda t: count_text(t, spec),
                                     rendering.spell)
            return text
        finally:
            target.index.close()


def _text(raw: bytes, *, cut: bool) -> str:
    """Bytes of a line as text; a character the cut split is left out."""
    text = raw.decode("utf-8", errors="replace")
    if cut:
        while text.endswith("\ufffd"):
            text = text[:-1]
    return text


def _body_text(key: str, value: ArgPreview) -> str:
    """What a call stored, as the ledger noted it (``<82234 bytes>``): ``content: 82,234
    bytes``; an input stream: ``stdin``."""
    text = str(value)
    if key == "stream":
        return "the output on stdin"
    inner = text[1:-1] if text.startswith("<") and text.endswith(">") else text
    number, _, unit = inner.partition(" ")
    if number.isdigit():
        inner = f"{int(number):,} {unit}"
    return f"{key}: {inner}"


def _entry_row(listed: ListRow, meta: EntryMeta) -> EntryRow:
    """The entries page's row: the ``ls`` row, with what the entry's last version tells of
    its output (format, tool, tokens)."""
    info = (meta["versions"][-1].get("info") or {}) if meta["kind"] != "log" else {}
    tokens = info.get("tokens")
    return EntryRow(listed["name"], listed["kind"], listed["version"], listed["bytes"],
                    listed["lines"], listed["updated"],
                    "log" if meta["kind"] == "log" else str(info.get("format") or ""),
                    str(info.get("tool") or ""), tokens if isinstance(tokens, int) else None)
