"""What the pages show, read from the store, its indexes and the call ledger; nothing written.

Invariants:
- Every answer about an entry (its lines, grep, schema, versions, diffs, log pages) is the
  answers layer's own: the call is ``describe``d and a page of its candidate built, exactly
  the page ``head``/``slice``/``grep``... would show, but never delivered, so no budget is
  charged and no operation counted (the page is read-only).
- Lines come from the index (a page of a 100 MB entry reads that page's lines only).
- Calls are the ledger's records (:mod:`scratch.ledger`), read by offset and limit: a long
  timeline is paged, never loaded into a page whole.
- ``Site.agents`` bounds what is shown: every agent of the store, or (a page opened with an
  MCP token) the token's agent only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from scratch.answers.kernel.rendering import Rendering
from scratch.calls import Call, call

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.answers.kernel.result import Result
    from scratch.answers.kernel.target import Target
    from scratch.answers.sources.items import Info
    from scratch.errors import ScratchError
    from scratch.ledger import Record
    from scratch.store import EntryMeta
    from scratch.store.records import ListRow
    from scratch.tokens import EncodingSpec

Speller = Callable[[Call], str]

PAGE_LINES = 100  # lines of an entry per page of the viewer
PAGE_CALLS = 100  # calls per page of a session's timeline
PAGE_LOG = 100  # log entries per page
GREP_MATCHES = 100  # matching lines per page of grep
SEARCH_MATCHES = 200  # matching lines shown by a search across entries
CHART_POINTS = 1000  # points of a session's chart at most
STORING = ("ingest", "run")  # the commands that store an output and answer with its pointer


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


class Site:
    """The store the page shows, and whom to: read-only views over it."""

    def __init__(self, root: Path, spell: Speller, *, agents: Iterable[str] | None = None
                 ) -> None:
        self.root = root
        from scratch.mcp.rendering import spell_call
        self.rendering = PageRendering(spell)
        self.mcp_rendering = PageRendering(spell_call)  # calls as an MCP client is shown them
        self.only = None if agents is None else frozenset(agents)
        self._contexts: dict[str, Context] = {}
        self._ledgers: dict[str, tuple[tuple[int, int, int], list[Record]]] = {}
        self._charts: dict[tuple[str, str], tuple[object, dict[str, list[float]]]] = {}
        # a version's checked error grep (it reads up to 16 MiB): (agent, name, version) -> it
        self._error_lines: dict[tuple[str, str, int | None], Info | None] = {}

    def warm_up(self) -> None:
        """Load now what the first page of an entry needs, not on the first request: every
        command's module, the pointer's, each agent's tokenizer and call ledger."""
        import scratch.answers.kernel.fitting
        import scratch.answers.pointer
        import scratch.answers.sizing
        import scratch.formats.jsontext
        import scratch.index.jsonskel
        import scratch.index.reader
        import scratch.index.structure
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
        """The agents with entries or calls (or the one agent the page is limited to)."""
        from scratch import ledger
        found: set[str] = set(ledger.agents(self.root))
        try:
            found.update(p.name for p in (self.root / "agents").iterdir() if p.is_dir())
        except OSError:
            pass
        if self.only is not None:
            return sorted(self.only)
        return sorted(found)

    def allowed(self, agent: str) -> bool:
        from scratch.names import validate_agent
        try:
            validate_agent(agent)
        except Exception:
            return False
        return self.only is None or agent in self.only

    def context(self, agent: str) -> Context:
        ctx = self._contexts.get(agent)
        if ctx is None:
            from scratch.answers.kernel.context import Context
            from scratch.config import load_config
            ctx = Context(self.root, "--store", agent, "default",
                          load_config(self.root, agent=agent))
            self._contexts[agent] = ctx
        return ctx

    def has_entries(self, agent: str) -> bool:
        return (self.root / "agents" / agent / "meta").is_dir()

    # -- calls (the ledger) -------------------------------------------------------------------

    def records(self, agent: str) -> list[Record]:
        """Every record of ``agent``'s ledger, oldest first, read again only when the file
        changed (a warm page reads its ledger once, not on every poll)."""
        from scratch import ledger
        try:
            st = os.stat(ledger.ledger_file(self.root, agent))
            stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        except OSError:
            return []
        known = self._ledgers.get(agent)
        if known is None or known[0] != stamp:
            known = (stamp, ledger.read(self.root, agent=agent))
            self._ledgers[agent] = known
        return known[1]

    def dropped(self, agent: str) -> int:
        """How many of ``agent``'s oldest calls the ledger dropped to stay in its bound."""
        from scratch import ledger
        return ledger.dropped(self.root, agent)

    def chart(self, agent: str, session: str) -> dict[str, list[float]]:
        """:func:`series` of a session's calls, made again only when the ledger changed."""
        found = self.records(agent)
        stamp = self._ledgers[agent][0] if agent in self._ledgers else None
        known = self._charts.get((agent, session))
        if known is None or known[0] != stamp:
            known = (stamp, series([r for r in found if r["session"] == session]))
            self._charts[(agent, session)] = known
        return known[1]

    def sessions(self, agent: str) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.records(agent):
            seen.setdefault(r["session"], None)
        return list(seen)

    def _of(self, agent: str, session: str | None) -> list[Record]:
        found = self.records(agent)
        return found if session is None else [r for r in found if r["session"] == session]

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

    # -- entries --------------------------------------------------------------------------

    def entries(self, agent: str, *, tool: str = "", fmt: str = "", kind: str = ""
                ) -> list[EntryRow]:
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

    def answer(self, agent: str, c: Call) -> Result:
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

    def lines(self, agent: str, ref: str, start: int, count: int = PAGE_LINES) -> Result:
        return self.answer(agent, call("slice", ref=ref, start=start, end=start + count - 1))

    def grep(self, agent: str, ref: str, pattern: str, *, ignore_case: bool, fixed: bool,
             from_line: int = 1) -> Result:
        return self.answer(agent, call("grep", ref=ref, pattern=pattern, context=0,
                                       ignore_case=ignore_case or None, fixed=fixed or None,
                                       max_count=GREP_MATCHES, from_line=from_line))

    def schema(self, agent: str, ref: str) -> Result:
        return self.answer(agent, call("schema", ref=ref))

    def history(self, agent: str, name: str) -> Result:
        return self.answer(agent, call("history", name=name))

    def diff(self, agent: str, name: str, a: int, b: int) -> Result:
        return self.answer(agent, call("diff", name=name, a=a, b=b))

    def log_page(self, agent: str, name: str, since: int) -> Result:
        return self.answer(agent, call("log read", name=name, since=since, limit=PAGE_LOG))

    def search(self, agent: str, pattern: str, *, ignore_case: bool, fixed: bool) -> Result:
        return self.answer(agent, call("grep", all=True, pattern=pattern,
                                       ignore_case=ignore_case or None, fixed=fixed or None,
                                       max_count=SEARCH_MATCHES))

    def stored_by(self, agent: str, name: str) -> Record | None:
        """The ledger's record of the call that stored ``name``'s latest output (ingest, run,
        or the proxy's interception), if the ledger still holds it."""
        for r in reversed(self.records(agent)):
            if r["entry"] == name and r["command"] in STORING and r["outcome"] == "ok":
                return r
        return None

    def _checked_grep(self, agent: str, target: Target, fmt: str) -> Info | None:
        """The pointer's checked error grep of this version, once per version (it is the
        slow part of an entry's first page)."""
        from scratch.answers.pointer_grep import error_lines_for
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
        from scratch.answers.pointer import build_pointer, fit_pointer
        from scratch.answers.pointer_binary import binary_for
        from scratch.answers.pointer_snapshot import snapshot_for
        from scratch.answers.sizing import EntrySizer
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


def _entry_row(listed: ListRow, meta: EntryMeta) -> EntryRow:
    """The entries page's row: the ``ls`` row, with what the entry's last version tells of
    its output (format, tool, tokens)."""
    info = (meta["versions"][-1].get("info") or {}) if meta["kind"] != "log" else {}
    tokens = info.get("tokens")
    return EntryRow(listed["name"], listed["kind"], listed["version"], listed["bytes"],
                    listed["lines"], listed["updated"],
                    "log" if meta["kind"] == "log" else str(info.get("format") or ""),
                    str(info.get("tool") or ""), tokens if isinstance(tokens, int) else None)


class Totals(NamedTuple):
    """A command's calls, the tokens they charged and stored, and how many were refused."""

    command: str
    calls: int
    tokens: int
    intercepted: int
    refused: int


def top_commands(records: Iterable[Record], most: int = 10) -> list[Totals]:
    by: dict[str, list[int]] = {}
    for r in records:
        t = by.setdefault(r["command"], [0, 0, 0, 0])
        t[0] += 1
        t[1] += r["tokens"]
        t[2] += r["intercepted"]
        t[3] += r["outcome"] == "refused"
    rows = [Totals(c, *t) for c, t in by.items()]
    rows.sort(key=lambda t: (-(t.tokens + t.intercepted), -t.calls, t.command))
    return rows[:most]


def series(records: Iterable[Record], most: int = CHART_POINTS) -> dict[str, list[float]]:
    """A session's tokens over time, cumulative, for the chart: seconds since the epoch, then
    tokens extracted (charged into the context), intercepted (stored instead of shown), and
    the number of refused calls. At most ``most`` points (evenly spaced ones of the calls,
    the first and last kept: the sums are cumulative, so none is lost)."""
    out = _series(records)
    n = len(out["t"])
    if n <= most:
        return out
    picked = sorted({round(i * (n - 1) / (most - 1)) for i in range(most)})
    return {k: [v[i] for i in picked] for k, v in out.items()}


def _series(records: Iterable[Record]) -> dict[str, list[float]]:
    from datetime import datetime
    out: dict[str, list[float]] = {"t": [], "extracted": [], "intercepted": [], "refused": []}
    extracted = intercepted = refused = 0
    for r in records:
        if not out["t"]:  # the session starts from nothing, a second before its first call
            try:
                first = datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp()
            except ValueError:
                continue
            for key, value in (("t", round(first - 1, 3)), ("extracted", 0),
                               ("intercepted", 0), ("refused", 0)):
                out[key].append(value)
        try:
            when = datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp()
        except ValueError:
            continue
        extracted += r["tokens"]
        intercepted += r["intercepted"]
        refused += r["outcome"] == "refused"
        out["t"].append(round(when, 3))
        out["extracted"].append(extracted)
        out["intercepted"].append(intercepted)
        out["refused"].append(refused)
    return out
