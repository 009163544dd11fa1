"""The pages, server-rendered with :mod:`scratch.ui.html` (every value escaped unless Html).

Each page function takes the :class:`~scratch.ui.views.Site`, the base URL of the page (which
holds its token) and the request's query values, and returns the page's Html; a missing thing
raises :class:`Missing` (404). Links are built with :func:`~scratch.ui.html.href`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from scratch.ui.html import Html, escape, href, join, number, render, table, tag
from scratch.ui.views import GREP_MATCHES, PAGE_CALLS, PAGE_LINES, PAGE_LOG, Site, top_commands

if TYPE_CHECKING:
    from scratch.answers.kernel.result import Result
    from scratch.ledger import ArgPreview, Record
    from scratch.store import EntryMeta
    from scratch.ui.views import EntryRow

Query = Mapping[str, str]


UPSTREAM = "upstream"  # the ledger's command for a call the proxy passed to an upstream
CHARTS = 12  # sessions charted on the overview (those with the latest calls)


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
<nav><a href="{base}/">Overview</a> <a href="{base}/entries">Entries</a></nav>
<form class="search" method="get" action="{base}/search"><input type="search" name="q"
 placeholder="Search every entry (regex)" aria-label="Search every entry">
<button>Search</button></form>
</header>
<main>
<h1>{heading}</h1>
{body}
</main>
<footer>read-only view of store {store}</footer>
</body></html>
"""


def layout(site: Site, base: str, title: str, body: Html, heading: object = None) -> Html:
    return render(LAYOUT, title=title, heading=title if heading is None else heading,
                  base=base, body=body, store=str(site.root))


def spelled(site: Site, command: str, args: Mapping[str, ArgPreview]) -> str:
    """A recorded call as the CLI writes it (a record's previews may not spell: then plain).
    A record's arguments are the JSON of a call's (the ledger's previews of them); a call the
    proxy passed to an upstream server is named by its server and tool."""
    if command == UPSTREAM:
        return f"{args.get('server')}: {args.get('tool')} (upstream tool, through the proxy)"
    from scratch.answers.commands.calls import recorded_call
    return site.rendering.spell(recorded_call(command, args))


def _int(query: Query, key: str, default: int, least: int = 0) -> int:
    try:
        return max(int(query.get(key, default)), least)
    except ValueError:
        return default


def _when(iso: str | None) -> Html:
    if not iso:
        return Html("")
    return tag("time", iso.replace("T", " ").rstrip("Z")[:19], datetime=iso)


def entry_link(base: str, agent: str, name: str | None, version: int | None = None) -> Html:
    if not name:
        return Html("")
    label = f"{name}@{version}" if version else name
    return tag("a", label, href=href(base, "a", agent, "e", name, v=version))


# -- the overview -----------------------------------------------------------------------------


def overview(site: Site, base: str, query: Query) -> Html:
    parts: list[Html] = []
    agents = site.agents()
    charts: list[dict[str, object]] = []
    every: list[Record] = []
    rows = []
    for agent in agents:
        entries = site.entries(agent)
        sessions = site.sessions(agent)
        calls = site.calls(agent)
        every += calls
        links = join((tag("a", s, href=href(base, "a", agent, "s", s)) for s in sessions), ", ")
        rows.append([tag("a", agent, href=href(base, "entries", agent=agent)), number(len(entries)),
                     number(len(calls)), number(sum(r["tokens"] for r in calls)),
                     number(sum(r["intercepted"] for r in calls)),
                     number(sum(r["outcome"] == "refused" for r in calls)), links])
        by_session: dict[str, list[Record]] = {}
        for r in calls:
            by_session.setdefault(r["session"], []).append(r)
        for session, recs in by_session.items():
            charts.append({"title": f"{agent} / {session}", "last": recs[-1]["time"],
                           **site.chart(agent, session)})
    parts.append(tag("h2", "Agents"))
    gone = [(a, site.dropped(a)) for a in agents]
    if any(n for _, n in gone):
        parts.append(tag("p", "Older calls dropped to keep the ledger within "
                         "ledger.max_bytes: " + ", ".join(f"{a} {n:,}" for a, n in gone if n)
                         + " (not counted below).", class_="summary", id="dropped"))
    parts.append(table(["agent", "entries", "calls", "tokens extracted", "tokens intercepted",
                        "refused", "sessions"], rows, class_="grid", id="agents")
                 if rows else tag("p", "No agents yet: nothing is stored and no call was "
                                  "made.", class_="empty"))
    parts.append(tag("h2", "Tokens over time, per session"))
    if charts:
        charts.sort(key=lambda c: str(c["last"]))
        if len(charts) > CHARTS:
            parts.append(tag("p", f"The {CHARTS} sessions with the latest calls, of "
                                  f"{len(charts)}.", class_="summary"))
        shown = sorted(charts[-CHARTS:], key=lambda c: str(c["title"]))
        parts.append(tag("div", "", id="charts", class_="charts"))
        parts.append(json_block("chart-data", shown))
    else:
        parts.append(tag("p", "No calls recorded yet.", class_="empty"))
    parts.append(tag("h2", "Top commands by tokens"))
    top = top_commands(every)
    parts.append(table(["command", "calls", "tokens extracted", "tokens intercepted", "refused"],
                       [[t.command, number(t.calls), number(t.tokens), number(t.intercepted),
                         number(t.refused)] for t in top], class_="grid", id="top-commands")
                 if top else tag("p", "No calls recorded yet.", class_="empty"))
    parts.append(tag("h2", "Latest calls"))
    every.sort(key=lambda r: r["time"])
    latest = every[-20:]
    parts.append(calls_table(site, base, latest, live=href(base, "live"),
                             after=cursor(every), show_agent=True))
    return layout(site, base, "Overview", join(parts))


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


def json_block(ident: str, value: object) -> Html:
    """Data for the page's script (not run: CSP allows scripts from the page's own files
    only); ``<`` is written ``\\u003c`` so no text in it can end the block."""
    import orjson
    text = orjson.dumps(value).decode().replace("<", "\\u003c")
    return Html(f'<script type="application/json" id="{escape(ident)}">{text}</script>')


# -- calls ------------------------------------------------------------------------------------


CALL_HEAD = ["#", "time", "via", "call", "outcome", "tokens", "stored", "ms", "entry"]


def call_row(site: Site, base: str, r: Record, *, show_agent: bool = False) -> Html:
    outcome = [tag("span", r["outcome"], class_=f"outcome {r['outcome']}")]
    if r["code"]:
        outcome.append(tag("code", r["code"]))
    if r["message"]:
        outcome.append(tag("div", r["message"], class_="message"))
    if r["suggestions"]:
        outcome.append(tag("div", join([tag("span", "try:", class_="label"), join(
            (tag("code", spelled(site, s["command"], s["args"])) for s in r["suggestions"]),
            Html("<br>"))]), class_="suggestions"))
    who = f"{r['agent']}/{r['session']}" if show_agent else r["session"]
    cells = [tag("a", r["seq"], href=href(base, "a", r["agent"], "s", r["session"],
                                          seq=r["seq"]) + f"#c{r['seq']}"),
             _when(r["time"]), join([r["interface"], Html("<br>"), tag("small", who)]),
             tag("code", spelled(site, r["command"], r["args"])), join(outcome, " "),
             number(r["tokens"]), number(r["intercepted"]), f"{r['ms']:.1f}",
             entry_link(base, r["agent"], r["entry"], r["version"])]
    return tag("tr", join(tag("td", c) for c in cells), id=f"c{r['seq']}", data_seq=r["seq"],
               data_agent=r["agent"], class_=f"call {r['outcome']}")


def calls_table(site: Site, base: str, records: list[Record], *, live: str | None = None,
                after: int | str = 0, show_agent: bool = False) -> Html:
    """The calls; with ``live``, the page asks that URL for the calls after ``after`` (a seq,
    or over every agent a :func:`cursor`) and adds them (static/ui.js)."""
    body = join(call_row(site, base, r, show_agent=show_agent) for r in records)
    head = tag("thead", tag("tr", join(tag("th", h) for h in CALL_HEAD)))
    return tag("table", head + tag("tbody", body, id="calls-body"), class_="grid calls",
               id="calls", data_live=live, data_after=after if live else None)


def session(site: Site, base: str, agent: str, name: str, query: Query) -> Html:
    if not site.allowed(agent):
        raise Missing(f"no agent {agent!r}")
    total = site.count(agent, name)
    if total == 0 and name not in site.sessions(agent):
        raise Missing(f"no session {name!r} of agent {agent!r}")
    pages = max((total + PAGE_CALLS - 1) // PAGE_CALLS, 1)
    if "seq" in query:  # the page holding a call (seqs grow along the file: halve)
        seq, lo, hi = _int(query, "seq", 0), 0, total - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            probe = site.calls(agent, name, offset=mid, limit=1)
            if probe and probe[0]["seq"] <= seq:
                lo = mid
            else:
                hi = mid - 1
        page = lo // PAGE_CALLS + 1
    else:
        page = min(_int(query, "page", pages, 1), pages)
    records = site.calls(agent, name, offset=(page - 1) * PAGE_CALLS, limit=PAGE_CALLS)
    last = records[-1]["seq"] if records else 0
    live = href(base, "live", agent=agent, session=name) if page == pages else None
    dropped = site.dropped(agent)
    summary = render('<p class="summary"><span data-count="{total}">{n}</span> calls; page '
                     '{page} of {pages} ({per} a page).{gone}</p>', total=total,
                     n=number(total), page=page, pages=pages, per=PAGE_CALLS,
                     gone=f" The oldest {dropped:,} calls of this agent were dropped to keep "
                     "its ledger within ledger.max_bytes." if dropped else "")
    nav = pager(href(base, "a", agent, "s", name), page, pages)
    chart = join([tag("div", "", id="charts", class_="charts"), json_block(
        "chart-data", [{"title": f"{agent} / {name}", **site.chart(agent, name)}])])
    body = join([chart, summary, nav, calls_table(site, base, records, live=live, after=last),
                 nav])
    return layout(site, base, f"Session {name} of {agent}", body)


def pager(url: str, page: int, pages: int, key: str = "page") -> Html:
    if pages <= 1:
        return Html("")
    links = []
    for label, p in (("« first", 1), ("‹ previous", page - 1), ("next ›", page + 1),
                     ("last »", pages)):
        ok = 1 <= p <= pages and p != page
        links.append(tag("a", label, href=f"{url}?{key}={p}", rel=label.split()[-1]
                         if ok else None) if ok else tag("span", label, class_="off"))
    return tag("nav", join(links, " "), class_="pager")


def live(site: Site, base: str, query: Query) -> dict[str, object]:
    """The calls made since the page was built: after seq ``after`` of one agent's session,
    or (no agent) after each agent's seq in the cursor ``after``; the rows as Html, and the
    ``after`` to ask with next."""
    if query.get("what") == "entries":
        return live_entries(site, base, query)
    agent = query.get("agent") or None
    sess = query.get("session") or None
    if agent is not None:
        if not site.allowed(agent):
            raise Missing(f"no agent {agent!r}")
        seen = _int(query, "after", 0)
        recs = site.calls_after(agent, sess, seen)
        return {"rows": str(join(call_row(site, base, r) for r in recs)),
                "after": max([seen, *(r["seq"] for r in recs)])}
    seen_by = _cursor_of(query.get("after", ""))
    recs = [r for a in site.agents() for r in site.calls_after(a, None, seen_by.get(a, 0))]
    recs.sort(key=lambda r: r["time"])
    for r in recs:
        seen_by[r["agent"]] = max(seen_by.get(r["agent"], 0), r["seq"])
    return {"rows": str(join(call_row(site, base, r, show_agent=True) for r in recs)),
            "after": ",".join(f"{a}:{n}" for a, n in sorted(seen_by.items()))}


# -- entries ----------------------------------------------------------------------------------


ENTRY_HEAD = ["agent", "entry", "kind", "format", "tool", "version", "bytes", "lines", "tokens",
              "updated"]


def _filters(site: Site, query: Query) -> tuple[list[str], str, str, str]:
    """The agents shown and the tool, format and kind asked for (an agent not shown: 404)."""
    agent = query.get("agent", "")
    if agent and not site.allowed(agent):
        raise Missing(f"no agent {agent!r}")
    return ([agent] if agent else site.agents(), query.get("tool", ""),
            query.get("format", ""), query.get("kind", ""))


def entry_row(base: str, agent: str, r: EntryRow) -> Html:
    cells = [agent, entry_link(base, agent, r.name), r.kind, r.format, r.tool, r.version or "",
             number(r.bytes), number(r.lines), number(r.tokens), _when(r.updated)]
    return tag("tr", join(tag("td", c) for c in cells), data_key=f"{agent}/{r.name}")


def entries(site: Site, base: str, query: Query) -> Html:
    shown, tool, fmt, kind = _filters(site, query)
    rows = [(a, r) for a in shown for r in site.entries(a, tool=tool, fmt=fmt, kind=kind)]
    rows.sort(key=lambda ar: ar[1].updated or "", reverse=True)
    every = [r for a in shown for r in site.entries(a)]
    form = filters(base, site.agents(), query.get("agent", ""),
                   sorted({r.tool for r in every} - {""}), tool,
                   sorted({r.format for r in every} - {""}), fmt,
                   sorted({r.kind for r in every}), kind)
    head = tag("thead", tag("tr", join(tag("th", h) for h in ENTRY_HEAD)))
    live = href(base, "live", what="entries", agent=query.get("agent"), tool=tool,
                format=fmt, kind=kind)
    grid = tag("table", head + tag("tbody", join(entry_row(base, a, r) for a, r in rows)),
               class_="grid", id="entries", data_live=live, data_order="newest-first",
               data_after=max((r.updated or "" for _, r in rows), default=""))
    # data-count, data-empty-noun: the live script keeps the number true as rows arrive
    count = render('<p class="summary"><span data-count="{total}">{n}</span> entries.</p>',
                   total=len(rows), n=number(len(rows))) if rows else \
        tag("p", "No entries match (yet: new ones appear here).", class_="empty",
            data_empty_noun="entries")
    return layout(site, base, "Entries", join([form, count, grid]))


def live_entries(site: Site, base: str, query: Query) -> dict[str, object]:
    """The entries (matching the page's filters) updated at or after ``after``, oldest first;
    the page puts each in place of its row, or at the top when new."""
    shown, tool, fmt, kind = _filters(site, query)
    after = query.get("after", "")
    rows = [(a, r) for a in shown for r in site.entries(a, tool=tool, fmt=fmt, kind=kind)
            if (r.updated or "") >= after]
    rows.sort(key=lambda ar: ar[1].updated or "")
    return {"rows": str(join(entry_row(base, a, r) for a, r in rows)),
            "after": max([after, *(r.updated or "" for _, r in rows)])}


def _select(name: str, label: str, options: list[str], chosen: str) -> Html:
    opts = join([tag("option", "any", value=""),
                 *(tag("option", o, value=o, selected=o == chosen) for o in options)])
    return tag("label", join([label, " ", tag("select", opts, name=name)]))


def filters(base: str, agents: list[str], agent: str, tools: list[str], tool: str,
            formats: list[str], fmt: str, kinds: list[str], kind: str) -> Html:
    fields = join([_select("agent", "agent", agents, agent), _select("tool", "tool", tools, tool),
                   _select("format", "format", formats, fmt), _select("kind", "kind", kinds, kind),
                   tag("button", "Filter")], " ")
    return tag("form", fields, method="get", action=href(base, "entries"), class_="filters")


VIEWS = ("lines", "grep", "schema", "versions", "diff", "log")


def entry(site: Site, base: str, agent: str, name: str, query: Query) -> Html:
    if not site.allowed(agent):
        raise Missing(f"no agent {agent!r}")
    meta = site.meta(agent, name)
    if meta is None:
        raise Missing(f"no entry {name!r} of agent {agent!r}")
    is_log = meta["kind"] == "log"
    view = query.get("view") or ("log" if is_log else "lines")
    if view not in VIEWS or (is_log and view in ("versions", "diff", "schema")):
        view = "log" if is_log else "lines"
    url = href(base, "a", agent, "e", name)
    tabs = join((tag("a", v, href=f"{url}?view={v}", class_="tab on" if v == view else "tab")
                 for v in (("log", "grep") if is_log else ("lines", "grep", "schema",
                                                           "versions"))), " ")
    parts: list[Html] = [facts(meta), tag("nav", tabs, class_="tabs")]
    if view == "lines":
        parts.append(lines_view(site, base, agent, name, url, query))
    elif view == "grep":
        parts.append(grep_view(site, agent, name, url, query))
    elif view == "schema":
        parts.append(schema_view(site, agent, name))
    elif view == "versions":
        parts.append(versions_view(site, agent, name, url))
    elif view == "diff":
        parts.append(diff_view(site, agent, name, query))
    else:
        parts.append(log_view(site, agent, name, url, query))
    if not is_log and view == "lines":
        parts.insert(1, pointer_box(site, base, agent, name))
    return layout(site, base, f"{name} · {agent}", join(parts), heading=Html(render(
        "{name} <small>agent {agent}</small>", name=name, agent=agent)))


def pointer_box(site: Site, base: str, agent: str, name: str) -> Html:
    """The pointer, spelled for the interface of the call that stored the entry (the ledger
    says which): MCP tool calls for an MCP client or the proxy, shell lines otherwise."""
    from scratch.errors import ScratchError
    stored = site.stored_by(agent, name)
    mcp = stored is not None and stored["interface"] not in ("cli", "hook")  # hook: shell
    try:
        text = site.pointer(agent, name, mcp=mcp)
    except ScratchError as exc:  # an entry whose index gives no pointer
        text = f"(no pointer: {exc.code}: {exc.message})"
    if stored is None:
        how = Html("The pointer to this version, its calls as the CLI writes them")
    else:
        how = render("The pointer, as the agent saw it: stored by call {link} ({via}, "
                     "{tokens} tokens)", via=stored["interface"], tokens=number(stored["tokens"]),
                     link=tag("a", f"#{stored['seq']}", href=href(
                         base, "a", agent, "s", stored["session"], seq=stored["seq"])
                         + f"#c{stored['seq']}"))
    return tag("details", join([tag("summary", how), tag("pre", text, class_="pointer")]),
               open=True, id="pointer")


def facts(m: EntryMeta) -> Html:
    items: list[tuple[str, object]]
    if m["kind"] == "log":
        items = [("kind", "log"), ("entries", number(m["log"]["count"])),
                 ("updated", _when(m.get("updated")))]
    else:
        cur = m["versions"][-1]
        info = cur.get("info") or {}
        items = [("kind", m["kind"]), ("version", cur["version"]),
                 ("format", info.get("format")), ("tool", info.get("tool")),
                 ("bytes", number(cur.get("bytes"))), ("lines", number(cur.get("lines"))),
                 ("tokens", number(info.get("tokens"))), ("updated", _when(cur["time"]))]
    return tag("dl", join(join([tag("dt", k), tag("dd", v)]) for k, v in items
                          if v not in (None, "")), class_="facts")


def lines_view(site: Site, base: str, agent: str, name: str, url: str, query: Query) -> Html:
    start = _int(query, "from", 1, 1)
    version = _int(query, "v", 0)
    ref = f"{name}@{version}" if version else name
    from scratch.errors import ScratchError
    try:
        result = site.lines(agent, ref, start)
    except ScratchError as exc:
        return tag("p", f"{exc.code}: {exc.message}", class_="error")
    if version:
        url = href(url, v=version) + "&"
    else:
        url += "?"
    data = result.data if isinstance(result.data, dict) else {}
    total = int(data.get("total_lines") or 0)
    first = int(data.get("start") or start)
    lines = data.get("lines") or []
    body = numbered(first, [str(t) for t in lines])
    last = first + len(lines) - 1
    pages = []
    for label, at in (("« first", 1), ("‹ previous", max(first - PAGE_LINES, 1)),
                      ("next ›", last + 1), ("last »", max(total - PAGE_LINES + 1, 1))):
        ok = 1 <= at <= total and at != first
        pages.append(tag("a", label, href=f"{url}view=lines&from={at}",
                         rel=label.split()[-1]) if ok else tag("span", label, class_="off"))
    goto = tag("form", join([tag("input", type="hidden", name="view", value="lines"),
                             tag("input", type="hidden", name="v", value=version or None),
                             tag("label", join(["line ", tag("input", type="number",
                                                             name="from", min=1, max=total,
                                                             value=first)])),
                             tag("button", "Go")], " "), method="get", action=url.rstrip("?&"),
               class_="goto")
    where = render('<p class="summary">lines {a}–{b} of {n}{of}</p>', a=number(first),
                   b=number(last), n=number(total),
                   of=f" (version {version})" if version else "")
    nav = tag("nav", join(pages, " "), class_="pager")
    return join([where, join([nav, goto], " "), body, nav])


def numbered(first: int, lines: list[str], marks: set[int] | None = None,
             pattern: re.Pattern[str] | None = None) -> Html:
    rows = []
    for i, text in enumerate(lines):
        n = first + i
        cell = highlight(text, pattern) if pattern is not None else escape(text)
        rows.append(tag("tr", join([tag("td", n, class_="n"), tag("td", cell, class_="t")]),
                        id=f"L{n}", class_="hit" if marks and n in marks else None))
    return tag("table", join(rows), class_="lines", id="lines")


def highlight(text: str, pattern: re.Pattern[str] | None) -> Html:
    if pattern is None:
        return escape(text)
    out, at = [], 0
    for m in pattern.finditer(text):
        if m.end() == m.start():
            continue
        out += [escape(text[at:m.start()]), tag("mark", m.group(0))]
        at = m.end()
    out.append(escape(text[at:]))
    return join(out)


def _pattern(pattern: str, ignore_case: bool, fixed: bool) -> re.Pattern[str] | None:
    """The pattern for highlighting the matches grep found (Python's engine reads the RE2
    syntax grep takes for nearly every pattern; one it cannot is not highlighted)."""
    try:
        return re.compile(re.escape(pattern) if fixed else pattern,
                          re.IGNORECASE if ignore_case else 0)
    except re.error:
        return None


def grep_form(url: str, pattern: str, ignore_case: bool, fixed: bool, view: str = "grep",
              button: str = "Grep", extra: Html = Html("")) -> Html:
    hidden = tag("input", type="hidden", name="view", value=view) if view else Html("")
    return tag("form", join([hidden, extra, tag("input", type="search", name="q", value=pattern,
                                         placeholder="regex", aria_label="pattern"),
                             tag("label", join([tag("input", type="checkbox", name="i",
                                                    value="1", checked=ignore_case),
                                                " ignore case"])),
                             tag("label", join([tag("input", type="checkbox", name="f",
                                                    value="1", checked=fixed), " fixed"])),
                             tag("button", button)], " "),
               method="get", action=url, class_="grep")


def grep_view(site: Site, agent: str, name: str, url: str, query: Query) -> Html:
    pattern = query.get("q", "")
    ignore_case, fixed = query.get("i") == "1", query.get("f") == "1"
    parts = [grep_form(url, pattern, ignore_case, fixed)]
    if not pattern:
        return join(parts)
    from scratch.errors import ScratchError
    start = _int(query, "from", 1, 1)
    try:
        result = site.grep(agent, name, pattern, ignore_case=ignore_case, fixed=fixed,
                           from_line=start)
    except ScratchError as exc:
        return join([*parts, tag("p", f"{exc.code}: {exc.message}", class_="error")])
    data = result.data if isinstance(result.data, dict) else {}
    regions = data.get("regions") or []
    rx = _pattern(pattern, ignore_case, fixed)
    rows = []
    last = 0
    for region in regions:
        for ln in region.get("lines") or []:
            rows.append((int(ln["line"]), str(ln["text"]), bool(ln.get("match"))))
            last = int(ln["line"])
    body = tag("table", join(tag("tr", join([
        tag("td", tag("a", n, href=f"{url}?view=lines&from={n}#L{n}"), class_="n"),
        tag("td", highlight(text, rx) if hit else escape(text), class_="t")]))
        for n, text, hit in rows), class_="lines", id="matches")
    shown = int(data.get("matches") or 0)
    total = max(meta_total(result), shown)
    parts.append(render('<p class="summary">{n} shown{of}{where}.</p>',
                        n=lines_of(shown), of=f" of {total:,} in the entry" if total > shown
                        else "", where=f", from line {start:,}" if start > 1 else ""))
    parts.append(body)
    if shown >= GREP_MATCHES and total > shown and last:  # cut at the page's size: go on
        from urllib.parse import urlencode
        q = {"view": "grep", "q": pattern, "from": last + 1, **({"i": 1} if ignore_case else {}),
             **({"f": 1} if fixed else {})}
        parts.append(tag("nav", tag("a", "more matches ›", href=f"{url}?{urlencode(q)}",
                                    rel="next"), class_="pager"))
    return join(parts)


def lines_of(n: int) -> str:
    return f"{n:,} matching line{'' if n == 1 else 's'}"


def meta_total(result: Result) -> int:
    data = result.data if isinstance(result.data, dict) else {}
    total = result.meta.get("total_matches") or data.get("total_matches") or data.get("matches")
    return int(total) if isinstance(total, int) else 0


def schema_view(site: Site, agent: str, name: str) -> Html:
    from scratch.errors import ScratchError
    try:
        result = site.schema(agent, name)
    except ScratchError as exc:
        return tag("p", f"{exc.code}: {exc.message}", class_="error")
    text = result.text if isinstance(result.text, str) else ""
    return tree(text.splitlines())


class Node(NamedTuple):
    label: str
    kids: list[Node]


def tree(lines: list[str]) -> Html:
    """Indented lines (two spaces a level) as nested lists, each level folding."""
    root = Node("", [])
    stack: list[tuple[int, Node]] = [(-1, root)]
    for line in lines:
        depth = (len(line) - len(line.lstrip(" "))) // 2
        while stack[-1][0] >= depth:
            stack.pop()
        node = Node(line.strip(), [])
        stack[-1][1].kids.append(node)
        stack.append((depth, node))

    def show(nodes: list[Node]) -> Html:
        items = []
        for node in nodes:
            label = tag("code", node.label)
            items.append(tag("li", tag("details", join([tag("summary", label), show(node.kids)]),
                                       open=True) if node.kids else label))
        return tag("ul", join(items))
    return tag("div", show(root.kids), class_="tree", id="schema")


def versions_view(site: Site, agent: str, name: str, url: str) -> Html:
    result = site.history(agent, name)
    data = result.data if isinstance(result.data, dict) else {}
    versions = data.get("versions") or []
    rows = []
    for i, v in enumerate(versions):
        prev = versions[i - 1]["version"] if i else None
        diff = tag("a", f"diff {prev}→{v['version']}",
                   href=f"{url}?view=diff&a={prev}&b={v['version']}") if prev else ""
        rows.append([v["version"], _when(v["time"]), number(v.get("bytes")),
                     number(v.get("lines")), tag("code", v.get("commit") or ""),
                     v.get("message") or "", diff])
    return table(["version", "time", "bytes", "lines", "commit", "message", ""], rows,
                 class_="grid", id="versions")


def diff_view(site: Site, agent: str, name: str, query: Query) -> Html:
    from scratch.errors import ScratchError
    a, b = _int(query, "a", 1, 1), _int(query, "b", 2, 1)
    try:
        result = site.diff(agent, name, a, b)
    except ScratchError as exc:
        return tag("p", f"{exc.code}: {exc.message}", class_="error")
    text = result.text if isinstance(result.text, str) else ""
    rows = []
    for line in text.splitlines():
        kind = ("meta" if line.startswith(("---", "+++", "@@")) else "add" if
                line.startswith("+") else "remove" if line.startswith("-") else "same")
        rows.append(tag("div", line, class_=f"d {kind}"))
    return tag("pre", join(rows), class_="diff", id="diff")


def log_view(site: Site, agent: str, name: str, url: str, query: Query) -> Html:
    since = _int(query, "since", 0)
    result = site.log_page(agent, name, since)
    data = result.data if isinstance(result.data, dict) else {}
    entries_ = data.get("entries") or []
    from scratch.answers.kernel.result import compact_json
    rows = [[e["id"], _when(e["ts"]), tag("pre", e["entry"] if isinstance(e["entry"], str)
                                              else compact_json(e["entry"]))] for e in entries_]
    parts = [table(["id", "time", "entry"], rows, class_="grid", id="log")]
    links = [tag("a", "« first", href=f"{url}?view=log&since=0"),
             tag("a", "‹ previous", href=f"{url}?view=log&since={max(0, since - PAGE_LOG)}",
                 rel="prev")] if since else []
    if data.get("has_more"):
        links.append(tag("a", "next ›", href=f"{url}?view=log&since={data['next_since']}",
                         rel="next"))
    parts.append(tag("nav", join(links, " "), class_="pager"))
    return join(parts)


# -- search -----------------------------------------------------------------------------------


def search(site: Site, base: str, query: Query) -> Html:
    from scratch.errors import ScratchError
    pattern = query.get("q", "")
    ignore_case, fixed = query.get("i") == "1", query.get("f") == "1"
    agent = query.get("agent", "")
    if agent and not site.allowed(agent):
        raise Missing(f"no agent {agent!r}")
    parts = [grep_form(href(base, "search"), pattern, ignore_case, fixed, view="",
                       button="Search", extra=_select("agent", "agent", site.agents(), agent))]
    if pattern:
        rx = _pattern(pattern, ignore_case, fixed)
        found = 0
        for who in [agent] if agent else site.agents():
            if not site.has_entries(who):
                continue
            try:
                result = site.search(who, pattern, ignore_case=ignore_case, fixed=fixed)
            except ScratchError as exc:
                parts.append(tag("p", f"{exc.code}: {exc.message}", class_="error"))
                break
            data = result.data if isinstance(result.data, dict) else {}
            for hit in data.get("entries") or []:
                rows = [(int(ln["line"]), str(ln["text"])) for region in hit["regions"]
                        for ln in region["lines"]]
                found += len(rows)
                link = href(base, "a", who, "e", hit["name"])
                parts.append(tag("section", join([
                    tag("h3", join([tag("a", hit["name"], href=link), " ",
                                    tag("small", f"agent {who} · "
                                        f"{lines_of(hit['matches'])}")])),
                    tag("table", join(tag("tr", join([
                        tag("td", tag("a", n, href=f"{link}?view=lines&from={n}#L{n}"),
                            class_="n"),
                        tag("td", highlight(t, rx), class_="t")])) for n, t in rows),
                        class_="lines")]), class_="hits"))
        parts.insert(1, render('<p class="summary" id="found">{n}.</p>', n=lines_of(found)))
    return layout(site, base, f"Search {pattern}" if pattern else "Search", join(parts))
