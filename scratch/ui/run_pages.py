"""A run's pages (issue 29: a run's artifacts and usage shown per run): the runs, one run, and
one artifact of it.

- ``/runs``: the runs shown, the latest active first, paged.
- ``/r/RUN``: its workers (each linked to its agent's page), its artifacts (name, version,
  bytes, tokens, who put it), its iterations and its usage events (``scratchpad_usage``:
  tokens intercepted against extracted, per worker).
- ``/r/RUN/e/NAME``: an artifact as an entry is shown: its lines (paged, a long line cut with
  a page to read it whole), grep, and its versions; the entry pages' own views, so the same
  bounds hold.

Invariants:
- Who sees what follows the agents the page shows (:meth:`Site.agents`): on a page opened
  with an MCP token (one agent), a run is shown only when that agent worked in it (its ledger
  names the run), and of the run only that agent's calls and usage events; another agent is
  never named (an artifact it put says "another worker"). The run's artifacts are shown, as
  any worker of the run reads them. A run not shown is answered 404 exactly as one that does
  not exist.
- Figures are those ``scratch runs show`` gives (:func:`scratch.runs.views.workers_of` on the
  ledger records the page holds); nothing is written, no budget charged.
- Every list is paged (:data:`PER_PAGE`), so no page grows with the run; names sort
  naturally (``w2`` before ``w10``).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from scratch.ui.figures import natural_key
from scratch.ui.html import Html, bar, href, join, number, render, tag
from scratch.ui.pages import (
    Missing,
    Query,
    _int,
    agent_link,
    grid,
    layout,
    pager,
    pages_of,
    session_link,
    summary,
    when,
)
from scratch.ui.views import Site

if TYPE_CHECKING:
    from scratch.runs import ArtifactRow, UsageEvent, Worker
    from scratch.store import EntryMeta
    from scratch.store.ledger import Record

PER_PAGE = 100  # runs, workers, artifacts, usage events, iterations a page lists
ON_OVERVIEW = 10  # runs the overview lists (the latest active)
SESSIONS_NAMED = 3  # sessions named in a worker's row
COUNT_BYTES = 4_000_000  # an artifact the run's page counts the tokens of (its own page: any)


# -- which runs, seen by whom -----------------------------------------------------------------


def _by_run(records: list[Record]) -> dict[str, list[Record]]:
    from scratch.store.names import RUN_RE
    out: dict[str, list[Record]] = {}
    for r in records:
        run = r.get("run")
        if isinstance(run, str) and RUN_RE.fullmatch(run):
            out.setdefault(run, []).append(r)
    return out


def _read_from(records: list[Record]) -> dict[str, str]:
    """The runs whose artifacts the calls named (``artifact:RUN/NAME``: a reader in no run
    may), each with the latest such call's time."""
    from scratch.store.names import RUN_RE
    from scratch.ui.figures import entry_of
    out: dict[str, str] = {}
    for r in records:
        entry = entry_of(r)
        if entry and entry.startswith("artifact:"):
            run = entry[len("artifact:"):].partition("/")[0]
            if RUN_RE.fullmatch(run):
                out[run] = max(out.get(run, ""), r["time"])
    return out


def run_records(site: Site, agent: str) -> dict[str, list[Record]]:
    """``agent``'s ledger records of each run it worked in (made again only when its ledger
    changed)."""
    return site.figure(agent, "runs", _by_run)


def _mtime(path: os.PathLike[str] | str) -> str:
    try:
        t = os.stat(path).st_mtime
    except OSError:
        return ""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def visible_runs(site: Site) -> list[tuple[str, str]]:
    """The runs the page shows, each with its latest activity, the latest first: the runs
    the shown agents' ledgers name (worked in, or read an artifact of), and (a page of every
    agent) every run of the store."""
    from scratch.runs import run_dir, runs_in
    latest: dict[str, str] = {}
    for agent in site.agents():
        for run, recs in run_records(site, agent).items():
            latest[run] = max(latest.get(run, ""), recs[-1]["time"])
        for run, last in site.figure(agent, "runs read", _read_from).items():
            latest[run] = max(latest.get(run, ""), last)
    if site.only is None:
        for run in runs_in(site.root):
            where = run_dir(site.root, run)
            latest[run] = max(latest.get(run, ""), _mtime(where / "meta"),
                              _mtime(where / "logs" / "events.jsonl"))
    order = sorted(latest, key=natural_key)
    order.sort(key=lambda r: latest[r], reverse=True)
    return [(r, latest[r]) for r in order]


def _run(site: Site, run: str) -> None:
    if run not in {r for r, _ in visible_runs(site)}:
        raise Missing(f"no run {run!r}")


def run_link(base: str, run: str, label: str | None = None) -> Html:
    return tag("a", run if label is None else label, href=href(base, "r", run))


class RunView(NamedTuple):
    """What the page shows of one run."""

    run: str
    iterations: int
    started: list[tuple[int, str, str | None]]  # (iteration, time, by whom: None if not shown)
    workers: list[Worker]
    artifacts: list[ArtifactRow]
    usage: list[UsageEvent]


def run_view(site: Site, run: str) -> RunView:
    from scratch.runs import list_artifacts, read_events, usage_events
    from scratch.runs.views import workers_of
    _run(site, run)
    shown = set(site.agents())
    by_agent = {a: run_records(site, a)[run] for a in shown if run in run_records(site, a)}
    usage = [e for e in usage_events(site.root, run) if site.allowed(e["agent"])]
    started: list[tuple[int, str, str | None]] = [(1, "", None)]
    for e in read_events(site.root, run):
        n, who = e.get("iteration"), e.get("agent")
        if e.get("event") == "iteration" and isinstance(n, int) and not isinstance(n, bool):
            started.append((n, str(e.get("time") or ""),
                            who if isinstance(who, str) and site.allowed(who) else None))
    iterations = max(n for n, _, _ in started)
    workers = sorted(workers_of(by_agent, usage), key=lambda w: natural_key(w["agent"]))
    artifacts = sorted(list_artifacts(site.root, run), key=lambda a: natural_key(a["name"]))
    return RunView(run, iterations, started, workers, artifacts, usage)


def who(site: Site, base: str, agent: str | None) -> Html:
    """An agent named on a run's page: linked to its page when shown, else not named."""
    if agent is None:
        return Html("")
    if not site.allowed(agent):
        return tag("span", "another worker", class_="summary")
    return agent_link(base, agent) if agent in site.agents() else tag("span", agent)


# -- the runs ---------------------------------------------------------------------------------


def runs_table(site: Site, base: str, rows: list[tuple[str, str]], ident: str = "runs"
               ) -> Html:
    from scratch.runs import latest_iteration, list_artifacts, usage_events
    body = []
    for run, last in rows:
        arts = list_artifacts(site.root, run)
        events = [e for e in usage_events(site.root, run) if site.allowed(e["agent"])]
        workers = {a for a in site.agents() if run in run_records(site, a)}
        workers |= {e["agent"] for e in events}
        body.append([run_link(base, run), number(latest_iteration(site.root, run)),
                     number(len(workers)), number(len(arts)),
                     number(sum(a["bytes"] or 0 for a in arts)), number(len(events)),
                     when(last)])
    return grid(["run", "iterations", "workers", "artifacts", "bytes", "usage events",
                 "last active"], body, ident, cards=True)


def runs(site: Site, base: str, query: Query) -> Html:
    found = visible_runs(site)
    if not found:
        return layout(site, base, "Runs", tag(
            "p", "No runs yet: a worker joins one with --run RUN (or $SCRATCH_RUN; over MCP, "
            "the server's --run or a token made with --run).", class_="empty"))
    pages = pages_of(len(found), PER_PAGE)
    page = min(_int(query, "page", 1, 1), pages)
    shown = found[(page - 1) * PER_PAGE:page * PER_PAGE]
    nav = pager(href(base, "runs"), page, pages)
    return layout(site, base, "Runs", join([
        summary(f"{len(found):,} run{'' if len(found) == 1 else 's'}, the latest active "
                "first."), nav, runs_table(site, base, shown), nav]))


def overview_runs(site: Site, base: str) -> Html:
    """The overview's runs: the latest active, and a link to the rest (nothing when none)."""
    found = visible_runs(site)
    if not found:
        return Html("")
    parts = [tag("h2", "Runs"), runs_table(site, base, found[:ON_OVERVIEW], "overview-runs")]
    if len(found) > ON_OVERVIEW:
        parts.append(tag("p", tag("a", f"all {len(found):,} runs ›", href=href(base, "runs"))))
    return join(parts)


def agent_runs(site: Site, base: str, agent: str) -> Html:
    """The runs ``agent`` worked in, for its page (nothing when none)."""
    mine = run_records(site, agent)
    if not mine:
        return Html("")
    order = sorted(mine, key=lambda r: mine[r][-1]["time"], reverse=True)
    links = join((run_link(base, r) for r in order[:PER_PAGE]), ", ")
    more = f" (the latest {PER_PAGE} of {len(order):,})" if len(order) > PER_PAGE else ""
    return join([tag("h2", "Runs", id="runs"),
                 tag("p", join([f"Worked in {len(order):,} run"
                                f"{'' if len(order) == 1 else 's'}{more}: ", links]))])


# -- one run ----------------------------------------------------------------------------------


def _page(query: Query, key: str, total: int) -> tuple[int, int, slice]:
    pages = pages_of(total, PER_PAGE)
    page = min(_int(query, key, 1, 1), pages)
    return page, pages, slice((page - 1) * PER_PAGE, page * PER_PAGE)


def run(site: Site, base: str, name: str, query: Query) -> Html:
    from scratch.errors import ScratchError
    from scratch.store.names import validate_run
    try:
        validate_run(name)
    except ScratchError:
        raise Missing(f"no run {name!r}") from None
    view = run_view(site, name)
    url = href(base, "r", name)
    arts = view.artifacts
    parts: list[Html] = [tag("dl", join(tag("div", join([tag("dt", k), tag("dd", v)]))
                                        for k, v in [
        ("iterations", number(view.iterations)), ("workers", number(len(view.workers))),
        ("artifacts", number(len(arts))),
        ("artifact bytes", number(sum(a["bytes"] or 0 for a in arts))),
        ("usage events", number(len(view.usage)))]), class_="facts", id="run-facts")]
    parts += [tag("h2", "Workers", id="workers"), workers(site, base, view, query, url)]
    parts += [tag("h2", "Artifacts", id="artifacts"), artifacts(site, base, view, query, url)]
    parts += [tag("h2", "Iterations", id="iterations"), iterations(site, base, view)]
    parts += [tag("h2", "Usage events", id="usage"), usage(site, base, view, query, url)]
    return layout(site, base, f"Run {name}", join(parts), heading=Html(render(
        "{run} <small>run</small>", run=name)))


def workers(site: Site, base: str, view: RunView, query: Query, url: str) -> Html:
    if not view.workers:
        return tag("p", "No worker of this run is shown: none made a call here.",
                   class_="empty")
    page, pages, part = _page(query, "workers", len(view.workers))
    rows = []
    for w in view.workers[part]:
        named = [session_link(base, w["agent"], s) for s in w["sessions"][:SESSIONS_NAMED]]
        if len(w["sessions"]) > SESSIONS_NAMED:
            named.append(Html(f"+{len(w['sessions']) - SESSIONS_NAMED:,} more"))
        rows.append([join([who(site, base, w["agent"]),
                           " (coordinator)" if w["coordinator"] else ""]),
                     ", ".join(map(str, w["iterations"])) or "",
                     join(named, ", ") if w["agent"] in site.agents() else "",
                     number(w["calls"]), number(w["tokens_intercepted"]),
                     number(w["tokens_extracted"]), number(w["finished"]), when(w["last"])])
    return join([grid(["worker", "iterations", "sessions", "calls", "tokens intercepted",
                       "tokens extracted", "usage events", "last"], rows, "run-workers",
                      cards=True),
                 pager(url, page, pages, key="workers"),
                 summary("Calls, tokens intercepted and extracted: the worker's calls in this "
                         "run as this store's call ledger holds them, counted as scratch stats "
                         "and scratch runs show count them.")])


def artifacts(site: Site, base: str, view: RunView, query: Query, url: str) -> Html:
    if not view.artifacts:
        return tag("p", "No artifacts yet (scratch artifact put RUN NAME).", class_="empty")
    page, pages, part = _page(query, "artifacts", len(view.artifacts))
    rows = []
    for a in view.artifacts[part]:
        tokens = artifact_tokens(site, view.run, a["name"], a["version"]) \
            if (a["bytes"] or 0) <= COUNT_BYTES else None
        rows.append([tag("a", a["name"], href=href(base, "r", view.run, "e", a["name"])),
                     tag("a", a["version"], href=href(base, "r", view.run, "e", a["name"],
                                                      view="versions"), title="its versions"),
                     number(a["bytes"]), number(a["lines"]),
                     number(tokens) if tokens is not None else tag(
                         "a", "open it to count", href=href(base, "r", view.run, "e",
                                                           a["name"])),
                     who(site, base, a["agent"]), number(a["iteration"]), when(a["updated"]),
                     tag("code", a["ref"])])
    return join([grid(["artifact", "version", "bytes", "lines", "tokens", "put by",
                       "iteration", "updated", "read as"], rows, "run-artifacts", cards=True),
                 pager(url, page, pages, key="artifacts"),
                 summary(f"Tokens in {_reader(site)}'s tokenizer (counted here for "
                         f"artifacts up to {COUNT_BYTES:,} bytes; a bigger one's page counts "
                         "it). Read as: the name every read command takes.")])


def usage(site: Site, base: str, view: RunView, query: Query, url: str) -> Html:
    if not view.usage:
        return tag("p", "No usage event yet: a worker records one when it finishes (scratch "
                   "finish, an MCP session closing, a hook's SubagentStop or Stop).",
                   class_="empty")
    per: dict[str, list[int]] = {}
    for e in view.usage:
        got = per.setdefault(e["agent"], [0, 0, 0])
        got[0] += e["tokens_intercepted"]
        got[1] += e["tokens_extracted"]
        got[2] += 1
    order = sorted(per, key=natural_key)
    bars = []
    for agent in order[:PER_PAGE]:
        kept, read, count = per[agent]
        whole = max(kept + read, 1)
        label = f"{agent}: {kept:,} tokens intercepted, {read:,} extracted"
        bars.append(tag("div", join([
            tag("div", join([who(site, base, agent), " ",
                             tag("small", f"{count:,} event{'' if count == 1 else 's'}")]),
                class_="head"),
            bar([("intercepted", 0.0, kept / whole), ("extracted", kept / whole, 1.0)],
                label=label),
            tag("div", join([tag("span", f"intercepted {kept:,}", class_="k intercepted"),
                             tag("span", f"extracted {read:,}", class_="k extracted")], " "),
                class_="keys")]), class_="budget", data_agent=agent))
    page, pages, part = _page(query, "usage", len(view.usage))
    rows = [[when(e["time"]), who(site, base, e["agent"]), number(e["iteration"]),
             session_link(base, e["agent"], e["session"]) if e["agent"] in site.agents()
             and e["session"] else e["session"],
             number(e["tokens_intercepted"]), number(e["tokens_extracted"]), number(e["calls"]),
             e["reason"], e["interface"]] for e in view.usage[part]]
    return join([
        summary("Per worker, over its usage events: the tokens its calls kept out of its "
                "context (intercepted: outputs stored instead of shown, less their pointers) "
                "against those they put into it (extracted)."),
        tag("div", join(bars), class_="budgets", id="usage-workers"),
        grid(["time", "worker", "iteration", "session", "tokens intercepted",
              "tokens extracted", "calls", "reason", "via"], rows, "usage-events", cards=True),
        pager(url, page, pages, key="usage")])


def iterations(site: Site, base: str, view: RunView) -> Html:
    counts: dict[int, int] = {}
    for w in view.workers:
        for n in w["iterations"]:
            counts[n] = counts.get(n, 0) + 1
    first: dict[int, tuple[str, str | None]] = {}
    for n, t, by in view.started:
        if n not in first or (t and t < first[n][0]):
            first[n] = (t, by)
    numbers = list(range(view.iterations, 0, -1))
    rows = [[number(n), when(first[n][0]) if n in first and first[n][0] else
             ("with the run" if n == 1 else ""),
             who(site, base, first[n][1]) if n in first else "", number(counts.get(n, 0))]
            for n in numbers[:PER_PAGE]]
    more = summary(f"The latest {PER_PAGE} of {view.iterations:,} iterations.") \
        if view.iterations > PER_PAGE else Html("")
    return join([grid(["iteration", "started", "by", "workers"], rows, "run-iterations",
                      cards=True), more])


# -- an artifact ------------------------------------------------------------------------------


def _reader(site: Site) -> str:
    """The agent the page reads artifacts as (its tokenizer prices them): the one agent a
    token shows, else the default one."""
    from scratch.store.names import DEFAULT_AGENT
    return sorted(site.only)[0] if site.only else DEFAULT_AGENT


def _artifact_meta(site: Site, run: str, name: str) -> EntryMeta | None:
    from scratch.errors import ScratchError
    from scratch.runs import RunStore, check_artifact_name
    try:
        check_artifact_name(name)
        space = RunStore(site.root, run, _reader(site), site.context(_reader(site)).config)
        meta = space.load_meta(name)
    except ScratchError:
        return None
    if meta is None or meta.get("deleted") or meta["kind"] == "log":
        return None
    return meta


def artifact_tokens(site: Site, run: str, name: str, version: int) -> int | None:
    """The tokens of version ``version`` of the artifact, in the reader's tokenizer, counted
    from its index (built on first use, as an entry's page builds its), once per version."""
    from scratch.errors import ScratchError
    from scratch.store.names import artifact_ref
    reader = _reader(site)
    key = (str(site.root), reader, run, name, version)
    if key not in _TOKENS:
        try:
            target = site.target(reader, artifact_ref(run, name, version))
        except ScratchError:
            return None
        try:
            spec = site.context(reader).encoding()
            total = target.index.total_tokens(spec.base)
        finally:
            target.index.close()
        if len(_TOKENS) > 4096:
            _TOKENS.clear()
        _TOKENS[key] = spec.scale(total) if total is not None else None
    return _TOKENS[key]


_TOKENS: dict[tuple[str, str, str, str, int], int | None] = {}  # a version's tokens never change

VIEWS = ("lines", "line", "grep", "versions")


def artifact(site: Site, base: str, run_name: str, name: str, query: Query) -> Html:
    from scratch.store.names import artifact_ref
    from scratch.ui import entry_pages
    _run(site, run_name)
    meta = _artifact_meta(site, run_name, name)
    if meta is None:
        raise Missing(f"no artifact {name!r} in run {run_name!r}")
    view = query.get("view") or "lines"
    view = view if view in VIEWS else "lines"
    url = href(base, "r", run_name, "e", name)
    ref = artifact_ref(run_name, name)
    reader = _reader(site)
    tabs = join((tag("a", v, href=f"{url}?view={v}", class_="tab on" if v == view else "tab")
                 for v in ("lines", "grep", "versions")), " ")
    cur = meta["versions"][-1]
    info = cur.get("info") or {}
    put_by = info.get("agent")
    facts = [("run", run_link(base, run_name)),
             ("version", tag("a", cur["version"], href=f"{url}?view=versions")),
             ("format", info.get("format")), ("bytes", number(cur.get("bytes"))),
             ("lines", number(cur.get("lines"))),
             ("tokens", number(artifact_tokens(site, run_name, name, int(cur["version"])))),
             ("put by", who(site, base, put_by if isinstance(put_by, str) else None)),
             ("iteration", number(info.get("iteration"))), ("updated", when(cur["time"])),
             ("read as", tag("code", ref))]
    parts: list[Html] = [tag("dl", join(tag("div", join([tag("dt", k), tag("dd", v)]))
                                        for k, v in facts if v not in (None, "")),
                             class_="facts", id="artifact-facts"),
                         tag("nav", tabs, class_="tabs")]
    if view == "lines":
        parts.append(entry_pages.lines_view(site, reader, ref, url, query))
    elif view == "line":
        parts.append(entry_pages.line_view(site, reader, ref, url, query))
    elif view == "grep":
        parts.append(entry_pages.grep_view(site, reader, ref, url, query))
    else:
        parts.append(versions(site, base, meta, url))
    return layout(site, base, f"{name} · run {run_name}", join(parts), heading=Html(render(
        "{name} <small>artifact of run {run}</small>", name=name,
        run=run_link(base, run_name))))


def versions(site: Site, base: str, meta: EntryMeta, url: str) -> Html:
    every = meta["versions"]
    rows = []
    for v in reversed(every[-PER_PAGE:]):
        info = v.get("info") or {}
        by = info.get("agent")
        rows.append([tag("a", v["version"], href=f"{url}?view=lines&v={v['version']}",
                         title="its lines"), when(v["time"]), number(v.get("bytes")),
                     number(v.get("lines")), who(site, base, by if isinstance(by, str) else None),
                     number(info.get("iteration"))])
    more = summary(f"The newest {PER_PAGE} of {len(every):,} versions.") \
        if len(every) > PER_PAGE else Html("")
    return join([more, grid(["version", "time", "bytes", "lines", "put by",
                             "iteration"], rows, "artifact-versions", cards=True)])
