"""The pages, server-rendered with :mod:`scratch.ui.html` (every value escaped unless Html):
the layout every page shares, the pieces several pages show (calls, charts, times, links,
cut lines), the overview and the live endpoints. The agent, session and call pages are in
:mod:`scratch.ui.agent_pages`, the entries in :mod:`scratch.ui.entry_pages`, the search in
:mod:`scratch.ui.search_page`, the runs in :mod:`scratch.ui.run_pages`.

Each page function takes the :class:`~scratch.ui.views.Site`, the base URL of the page (which
holds its token) and the request's query values, and returns the page's Html; a missing thing
raises :class:`Missing` (404). Links are built with :func:`~scratch.ui.html.href`.

Invariants (every page):
- Bounded: lists are paged, a line is cut at :data:`~scratch.ui.views.LINE_CHARS` characters
  with a link to see it whole (a page of its own, itself paged), and a page that would pass
  :data:`PAGE_BYTES` of shown text stops and offers the rest on the next page.
- Times are UTC and say so; names sort naturally (``t2`` before ``t10``).
- Ids are unique in a page (a table of several agents' calls gives its rows none).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from scratch.store.names import RUN_RE
from scratch.ui import figures
from scratch.ui.html import Html, escape, href, join, number, render, scroll, tag
from scratch.ui.views import CHART_POINTS, LINE_CHARS, PAGE_CALLS, Site

if TYPE_CHECKING:
    from scratch.store.ledger import Record

Query = Mapping[str, str]

UPSTREAM = "upstream"  # the ledger's command for a call the proxy passed to an upstream
CHARTS = 12  # agents charted on the overview (those with the latest calls)
# points of each of the overview's charts (half a row wide: 1,000 would be more than its
# pixels, and 12 of them with an agent's long name made a page of 1.9 MB)
OVERVIEW_POINTS = 300
AGENTS_PAGE = 100  # agents a page of the overview lists
SESSION_LINKS = 3  # sessions named in an agent's row of the overview (the latest)
PAGE_BYTES = 600_000  # shown text a page holds at most before it offers the rest
# The navigation: (label, path under the base). A page of its own is one more pair here.
NAV: tuple[tuple[str, str], ...] = (("Overview", ""), ("Entries", "entries"), ("Runs", "runs"),
                                    ("Search", "search"))


class Missing(Exception):
    """What the page asks for does not exist (answered 404)."""


LAYOUT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>{title} · scratch</title>
<link rel="stylesheet" href="{base}/static/uPlot.min.css">
<link rel="stylesheet" href="{base}/static/ui.css">
<script src="{base}/static/uPlot.iife.min.js" defer></script>
<script src="{base}/static/ui.js" defer></script>
</head><body>
<header><a class="brand" href="{base}/">scratch</a>
<nav class="main">{nav}</nav>
<form class="search" method="get" action="{base}/search"><input type="search" name="q"
 placeholder="Search every entry (regex)" aria-label="Search every entry">
<button>Search</button></form>
</header>
<main>
<h1>{heading}</h1>
{body}
</main>
<footer>read-only view of store {store} · times are UTC</footer>
</body></html>
"""


def layout(site: Site, base: str, title: str, body: Html, heading: object = None) -> Html:
    nav = join((tag("a", label, href=href(base, path) if path else base + "/")
                for label, path in NAV), " ")
    return render(LAYOUT, title=title, heading=title if heading is None else heading,
                  base=base, body=body, store=str(site.root), nav=nav)


# -- small pieces -----------------------------------------------------------------------------


def _int(query: Query, key: str, default: int, least: int = 0) -> int:
    try:
        return max(int(query.get(key, default)), least)
    except ValueError:
        return default


def when(iso: str | None) -> Html:
    """A ledger or store time, as UTC and saying so."""
    if not iso:
        return Html("")
    text = iso.replace("T", " ")[:19]
    return tag("time", f"{text} UTC", datetime=iso, title=iso)


def agent_link(base: str, agent: str) -> Html:
    return tag("a", agent, href=href(base, "a", agent))


def session_link(base: str, agent: str, session: str, label: str | None = None) -> Html:
    return tag("a", session if label is None else label, href=href(base, "a", agent, "s",
                                                                  session))


def call_url(base: str, agent: str, seq: int) -> str:
    return href(base, "a", agent, "c", str(seq))


def entry_link(base: str, agent: str, name: str | None, version: int | None = None) -> Html:
    """A link to an entry of ``agent``'s, or to a run's artifact (``artifact:RUN/NAME``)."""
    if not name:
        return Html("")
    label = f"{name}@{version}" if version else name
    if name.startswith("artifact:"):
        run, _, rest = name[len("artifact:"):].partition("/")
        return tag("a", label, href=href(base, "r", run, "e", rest, v=version))
    return tag("a", label, href=href(base, "a", agent, "e", name, v=version))


def record_entry_link(base: str, r: Record) -> Html:
    """The entry (or artifact) a recorded call touched, linked."""
    return entry_link(base, r["agent"], figures.entry_of(r), r["version"])


def cut(text: str, limit: int = LINE_CHARS) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters, and how many were left out."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def grid(head: list[str], rows: Iterable[Iterable[object]], ident: str, *,
         cards: bool = False) -> Html:
    """A table in its own scrolling box; with ``cards``, each row a card on a narrow screen
    (every cell named by its column)."""
    body = join(tag("tr", join(tag("td", c, data_label=h if cards and h else None)
                               for h, c in zip(head, row, strict=True))) for row in rows)
    return scroll(tag("table", join([tag("thead", tag("tr", join(tag("th", h) for h in head))),
                                     tag("tbody", body)]),
                      class_="grid cards" if cards else "grid", id=ident))


def summary(text: str, **attrs: object) -> Html:
    return tag("p", text, class_="summary", **attrs)


def json_block(ident: str, value: object) -> Html:
    """Data for the page's script (not run: CSP allows scripts from the page's own files
    only); ``<`` is written ``\\u003c`` so no text in it can end the block."""
    import orjson
    text = orjson.dumps(value).decode().replace("<", "\\u003c")
    return Html(f'<script type="application/json" id="{escape(ident)}">{text}</script>')


def pager(url: str, page: int, pages: int, key: str = "page") -> Html:
    if pages <= 1:
        return Html("")
    sep = "&" if "?" in url else "?"
    links = []
    for label, p in (("« first", 1), ("‹ previous", page - 1), ("next ›", page + 1),
                     ("last »", pages)):
        ok = 1 <= p <= pages and p != page
        links.append(tag("a", label, href=f"{url}{sep}{key}={p}", rel=label.split()[-1])
                     if ok else tag("span", label, class_="off"))
    links.append(tag("span", f"page {page:,} of {pages:,}", class_="where"))
    return tag("nav", join(links, " "), class_="pager")


def pages_of(total: int, per: int) -> int:
    return max((total + per - 1) // per, 1)


def skipped_note(site: Site, agents: list[str]) -> Html:
    """What the ledgers of ``agents`` hold that is no record: skipped, and said."""
    bad = [(a, site.skipped(a)) for a in agents]
    bad = [(a, n) for a, n in bad if n]
    if not bad:
        return Html("")
    return tag("p", "Malformed lines skipped in the call ledger (not JSON, or not a record): "
               + ", ".join(f"{a} {n:,}" for a, n in bad) + ".", class_="warning", id="skipped")


def dropped_note(site: Site, agents: list[str]) -> Html:
    gone = [(a, site.dropped(a)) for a in agents]
    gone = [(a, n) for a, n in gone if n]
    if not gone:
        return Html("")
    return tag("p", "Older calls dropped to keep the ledger within ledger.max_bytes: "
               + ", ".join(f"{a} {n:,}" for a, n in gone) + " (not counted here).",
               class_="summary", id="dropped")


# -- calls ------------------------------------------------------------------------------------


def spelled(site: Site, command: str, args: Mapping[str, object], interface: str = "cli"
            ) -> Html:
    """A recorded call as the page writes it (``code``), what it stored said after it; a call
    the proxy passed to an upstream server is named by its server and tool."""
    if command == UPSTREAM:
        return tag("code", f"{args.get('server')}: {args.get('tool')}") + tag(
            "span", " upstream tool, through the proxy", class_="body")
    shown = site.spell_record(command, dict(args), interface)  # type: ignore[arg-type]
    line, more = cut(shown.line)
    out = tag("code", line + ("…" if more else ""))
    if shown.bodies:
        out += tag("span", " " + ", ".join(shown.bodies), class_="body")
    return out


CALL_HEAD = ["#", "time", "via", "call", "outcome", "tokens", "intercepted", "ms", "entry"]


def outcome_cell(site: Site, r: Record, *, suggestions: bool = True) -> Html:
    outcome = [tag("span", r["outcome"], class_=f"outcome {r['outcome']}")]
    if r["code"]:
        outcome.append(tag("code", r["code"]))
    if r["message"]:
        outcome.append(tag("div", r["message"], class_="message"))
    if suggestions and r["suggestions"]:
        outcome.append(tag("div", join([tag("span", "try:", class_="label"), join(
            (spelled(site, s["command"], s["args"]) for s in r["suggestions"][:8]),
            Html("<br>"))]), class_="suggestions"))
    return join(outcome, " ")


def call_row(site: Site, base: str, r: Record, *, show_agent: bool = False) -> Html:
    who = join([agent_link(base, r["agent"]), " / ",
                session_link(base, r["agent"], r["session"])]) if show_agent else \
        session_link(base, r["agent"], r["session"])
    run = r.get("run")
    if run and RUN_RE.fullmatch(run):  # a worker's call: its run named, and linked
        who = join([who, Html("<br>"), tag("small", join([
            "run ", tag("a", run, href=href(base, "r", run))]))])
    cells = [tag("a", r["seq"], href=call_url(base, r["agent"], r["seq"]),
                 title="open this call"),
             when(r["time"]), join([r["interface"], Html("<br>"), tag("small", who)]),
             spelled(site, r["command"], r["args"]), outcome_cell(site, r),
             number(r["tokens"]), number(r["intercepted"]), f"{r['ms']:.1f}",
             record_entry_link(base, r)]
    return tag("tr", join(tag("td", c, data_label=h) for h, c in zip(CALL_HEAD, cells,
                                                                  strict=True)),
               id=None if show_agent else f"c{r['seq']}", data_seq=r["seq"],
               data_agent=r["agent"], class_=f"call {r['outcome']}")


def calls_table(site: Site, base: str, records: list[Record], *, live: str | None = None,
                after: int | str = 0, show_agent: bool = False, ident: str = "calls") -> Html:
    """The calls; with ``live``, the page asks that URL for the calls after ``after`` (a seq,
    or over every agent a :func:`cursor`) and adds them (static/ui.js)."""
    body = join(call_row(site, base, r, show_agent=show_agent) for r in records)
    head = tag("thead", tag("tr", join(tag("th", h) for h in CALL_HEAD)))
    return scroll(tag("table", head + tag("tbody", body), class_="grid calls cards", id=ident,
                      data_live=live, data_after=after if live else None))


def cursor(records: list[Record]) -> str:
    """Where a page over every agent's calls is: each agent's last seq (``ops:4,dev:9``)."""
    last: dict[str, int] = {}
    for r in records:
        last[r["agent"]] = max(last.get(r["agent"], 0), r["seq"])
    return ",".join(f"{a}:{n}" for a, n in sorted(last.items()))


def _cursor_of(text: str) -> dict[str, int]:
    out = {}
    for part in text.split(","):
        agent, _, seq = part.rpartition(":")
        if agent and seq.isdigit():
            out[agent] = int(seq)
    return out


# -- charts -----------------------------------------------------------------------------------


def chart(site: Site, base: str, agent: str, session: str | None, title: str,
          link: str | None = None, points: int = CHART_POINTS) -> dict[str, object]:
    """One chart for the page's script: its title and link, its agent (a point opens that
    agent's call), the URL it is drawn again from when new calls arrive, and the series (at
    most ``points``)."""
    return {"title": title, "link": link, "agent": agent,
            "src": href(base, "series", agent=agent, session=session,
                        points=points if points != CHART_POINTS else None),
            "base": base + "/", "series": site.chart(agent, session, points)}


def charts(blocks: list[dict[str, object]], ident: str = "charts") -> Html:
    """The charts' place and their data (static/ui.js draws them, and redraws them live)."""
    return join([tag("div", "", id=ident, class_="charts", data_charts=f"{ident}-data"),
                 json_block(f"{ident}-data", blocks)])


def series(site: Site, base: str, query: Query) -> dict[str, object]:
    """The series of a chart, as the page's script asks for it again."""
    agent = query.get("agent", "")
    if not site.allowed(agent):
        raise Missing(f"no agent {agent!r}")
    points = min(max(_int(query, "points", CHART_POINTS), 2), CHART_POINTS)
    return {"series": site.chart(agent, query.get("session") or None, points)}


# -- the overview -----------------------------------------------------------------------------


def overview(site: Site, base: str, query: Query, runs: Html = Html("")) -> Html:
    """The overview; ``runs``: its runs' section (:func:`scratch.ui.run_pages.overview_runs`,
    given by the app: the run pages build on this module)."""
    agents = site.agents()
    every: list[Record] = []
    rows = []
    for agent in agents:
        calls = site.records(agent)
        every += calls[-20:]  # the latest calls of every agent are among these
        t = site.figure(agent, "totals", figures.totals)
        sessions = site.figure(agent, "sessions", figures.sessions)
        links = join((session_link(base, agent, s.session) for s in sessions[:SESSION_LINKS]),
                     ", ")
        if len(sessions) > SESSION_LINKS:
            links += join([" ", tag("a", f"+{len(sessions) - SESSION_LINKS:,} more",
                                    href=href(base, "a", agent) + "#sessions")])
        spent = t.charged + t.intercepted
        rows.append((agent, calls[-1]["time"] if calls and spent else "", [
            agent_link(base, agent), number(t.calls), number(t.charged),
            number(t.intercepted), number(t.refused), number(t.errors),
            number(len(site.entries(agent))), join([number(len(sessions)), " ",
                                                    tag("small", links)]),
            when(calls[-1]["time"]) if calls else ""]))
    parts: list[Html] = [skipped_note(site, agents), tag("h2", "Agents"),
                         dropped_note(site, agents)]
    pages = pages_of(len(rows), AGENTS_PAGE)
    page = min(_int(query, "page", 1, 1), pages)
    shown = rows[(page - 1) * AGENTS_PAGE:page * AGENTS_PAGE]
    if shown:
        head = ["agent", "calls", "tokens charged", "intercepted", "refused", "errors",
                "entries", "sessions (latest)", "last call"]
        parts.append(scroll(tag("table", join([
            tag("thead", tag("tr", join(tag("th", h) for h in head))),
            tag("tbody", join(tag("tr", join(tag("td", c) for c in cells))
                              for _, _, cells in shown))]), class_="grid", id="agents")))
        parts.append(pager(base + "/", page, pages))
        parts.append(summary("Tokens charged: what the calls put into the agent's context "
                             "(answers and pointers: the budget's used). Intercepted: tokens "
                             "of outputs stored instead of shown, less their pointers."))
    else:
        parts.append(tag("p", "No agents yet: nothing is stored and no call was made.",
                         class_="empty"))
    parts.append(tag("h2", "Tokens over time, per agent"))
    spending = [r for r in rows if r[1]]  # agents whose calls charged or stored tokens
    active = sorted(spending, key=lambda r: r[1])[-CHARTS:]
    if active:
        idle = len(rows) - len(spending)
        if len(spending) > CHARTS or idle:
            parts.append(summary(
                (f"The {CHARTS} agents with the latest calls, of {len(spending):,}. "
                 if len(spending) > CHARTS else "")
                + (f"{idle:,} agent{'' if idle == 1 else 's'} charged no tokens and stored "
                   "no output: not charted." if idle else "")))
        blocks = [chart(site, base, a, None, a, href(base, "a", a), OVERVIEW_POINTS)
                  for a, _, _ in sorted(active, key=lambda r: figures.natural_key(r[0]))]
        parts.append(charts(blocks))
    else:
        parts.append(tag("p", "No calls recorded yet.", class_="empty"))
    parts.append(runs)
    parts.append(tag("h2", "Top commands by tokens"))
    top = figures.top_commands(site.figure(a, "commands", figures.per_command) for a in agents)
    parts.append(scroll(tag("table", join([
        tag("thead", tag("tr", join(tag("th", h) for h in [
            "command", "calls", "tokens charged", "intercepted", "refused"]))),
        tag("tbody", join(tag("tr", join(tag("td", c) for c in [
            t.key, number(t.calls), number(t.charged), number(t.intercepted),
            number(t.refused)])) for t in top))]), class_="grid", id="top-commands"))
        if top else tag("p", "No calls recorded yet.", class_="empty"))
    parts.append(tag("h2", "Latest calls"))
    every.sort(key=lambda r: r["time"])
    parts.append(calls_table(site, base, every[-20:], live=href(base, "live"),
                             after=cursor(every), show_agent=True))
    return layout(site, base, "Overview", join(parts))


def live(site: Site, base: str, query: Query) -> dict[str, object]:
    """The calls made since the page was built: after seq ``after`` of one agent (in a
    session), or (no agent) after each agent's seq in the cursor ``after``; the rows as Html,
    and the ``after`` to ask with next. (The entries page's, ``what=entries``, is
    :func:`scratch.ui.entry_pages.live_entries`.)"""
    agent = query.get("agent") or None
    sess = query.get("session") or None
    if agent is not None:
        if not site.allowed(agent):
            raise Missing(f"no agent {agent!r}")
        seen = _int(query, "after", 0)
        recs = site.calls_after(agent, sess, seen)[-PAGE_CALLS:]
        return {"rows": str(join(call_row(site, base, r) for r in recs)),
                "after": max([seen, *(r["seq"] for r in recs)])}
    seen_by = _cursor_of(query.get("after", ""))
    recs = [r for a in site.agents() for r in site.calls_after(a, None, seen_by.get(a, 0))]
    recs.sort(key=lambda r: r["time"])
    for r in recs:
        seen_by[r["agent"]] = max(seen_by.get(r["agent"], 0), r["seq"])
    return {"rows": str(join(call_row(site, base, r, show_agent=True)
                             for r in recs[-PAGE_CALLS:])),
            "after": ",".join(f"{a}:{n}" for a, n in sorted(seen_by.items()))}


# -- lines ------------------------------------------------------------------------------------


def pattern_of(pattern: str, ignore_case: bool, fixed: bool) -> re.Pattern[str] | None:
    """The pattern for highlighting the matches grep found (Python's engine reads the RE2
    syntax grep takes for nearly every pattern; one it cannot is not highlighted), as runs of
    matches: ``(?:P)+`` finds touching matches in one go (``.`` marks a line with one match,
    not one per character)."""
    flags = re.IGNORECASE if ignore_case else 0
    plain = re.escape(pattern) if fixed else pattern
    for text in (f"(?:{plain})+", plain):
        try:
            return re.compile(text, flags)
        except re.error:
            continue
    return None


def lines_of(n: int) -> str:
    return f"{n:,} matching line{'' if n == 1 else 's'}"
