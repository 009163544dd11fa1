"""The entries page and an entry's page: its pointer, numbered lines (a long line cut, with a
page of its own to read it whole, in parts), grep, schema, versions and diffs, a log by
cursor. Every view is bounded (see :mod:`scratch.ui.pages`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlencode

from scratch.ui.figures import natural_key
from scratch.ui.html import Html, escape, highlight, href, join, number, render, scroll, tag
from scratch.ui.pages import (
    PAGE_BYTES,
    Missing,
    Query,
    _int,
    cut,
    entry_link,
    layout,
    lines_of,
    pager,
    pages_of,
    pattern_of,
    summary,
    when,
)
from scratch.ui.views import GREP_MATCHES, LINE_CHARS, LINE_PART, PAGE_LINES, PAGE_LOG, Site

if TYPE_CHECKING:
    import re

    from scratch.query.grep import GrepLine
    from scratch.store import EntryMeta
    from scratch.ui.views import EntryRow

ENTRIES_PAGE = 200  # entries a page of the entries page lists
SCHEMA_LINES = 2000  # lines of a schema tree shown
VERSIONS_PAGE = 100  # versions listed (the newest)
DIFF_LINES = 2000  # lines of a diff shown
BEFORE_MATCH = 200  # characters shown before a match in a cut line
SELECT_OPTIONS = 200  # choices a filter lists (more: a field to type a name in)


# -- the entries page -------------------------------------------------------------------------


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
    version = tag("a", r.version, href=href(base, "a", agent, "e", r.name, view="versions"),
                  title="its versions") if r.version else ""
    cells = [tag("a", agent, href=href(base, "a", agent)), entry_link(base, agent, r.name),
             r.kind, r.format, r.tool, version, number(r.bytes), number(r.lines),
             number(r.tokens), when(r.updated)]
    return tag("tr", join(tag("td", c) for c in cells), data_key=f"{agent}/{r.name}")


def entries_table(base: str, rows: list[tuple[str, EntryRow]], *, ident: str = "entries",
                  live: str | None = None, after: str = "") -> Html:
    head = tag("thead", tag("tr", join(tag("th", h) for h in ENTRY_HEAD)))
    return scroll(tag("table", head + tag("tbody", join(entry_row(base, a, r) for a, r in rows)),
                      class_="grid", id=ident, data_live=live,
                      data_order="newest-first" if live else None,
                      data_after=after if live else None))


def entries(site: Site, base: str, query: Query) -> Html:
    shown, tool, fmt, kind = _filters(site, query)
    every = [(a, r) for a in shown for r in site.entries(a)]
    rows = [(a, r) for a, r in every if not ((tool and r.tool != tool) or (fmt and r.format != fmt)
                                             or (kind and r.kind != kind))]
    rows.sort(key=lambda ar: ar[1].updated or "", reverse=True)
    form = filters(base, site.agents(), query.get("agent", ""),
                   sorted({r.tool for _, r in every} - {""}, key=natural_key), tool,
                   sorted({r.format for _, r in every} - {""}), fmt,
                   sorted({r.kind for _, r in every}), kind)
    pages = pages_of(len(rows), ENTRIES_PAGE)
    page = min(_int(query, "page", 1, 1), pages)
    live = href(base, "live", what="entries", agent=query.get("agent"), tool=tool,
                format=fmt, kind=kind) if page == 1 else None
    grid = entries_table(base, rows[(page - 1) * ENTRIES_PAGE:page * ENTRIES_PAGE], live=live,
                         after=max((r.updated or "" for _, r in rows), default=""))
    # data-count, data-empty-noun: the live script keeps the number true as rows arrive
    count = render('<p class="summary"><span data-count="{total}" data-one="entry" '
                   'data-many="entries">{n} {noun}</span>.</p>', total=len(rows),
                   n=number(len(rows)), noun="entry" if len(rows) == 1 else "entries") \
        if rows else \
        tag("p", "No entries match (yet: new ones appear here).", class_="empty",
            data_empty_noun="entries")
    args = {k: v for k, v in (("agent", query.get("agent")), ("tool", tool), ("format", fmt),
                              ("kind", kind)) if v}
    nav = pager(href(base, "entries") + ("?" + urlencode(args) if args else ""), page, pages)
    return layout(site, base, "Entries", join([form, count, nav, grid, nav]))


def live_entries(site: Site, base: str, query: Query) -> dict[str, object]:
    """The entries (matching the page's filters) updated at or after ``after``, oldest first;
    the page puts each in place of its row, or at the top when new."""
    shown, tool, fmt, kind = _filters(site, query)
    after = query.get("after", "")
    rows = [(a, r) for a in shown for r in site.entries(a, tool=tool, fmt=fmt, kind=kind)
            if (r.updated or "") >= after]
    rows.sort(key=lambda ar: ar[1].updated or "")
    rows = rows[-ENTRIES_PAGE:]
    return {"rows": str(join(entry_row(base, a, r) for a, r in rows)),
            "after": max([after, *(r.updated or "" for _, r in rows)])}


def _select(name: str, label: str, options: list[str], chosen: str) -> Html:
    """A filter: a list to choose from, or past :data:`SELECT_OPTIONS` choices a field to
    type the name in (10,000 agents would make a list of megabytes)."""
    if len(options) > SELECT_OPTIONS:
        return tag("label", join([label, " ", tag("input", type="search", name=name,
                                                  value=chosen, placeholder="any",
                                                  aria_label=label)]))
    opts = join([tag("option", "any", value=""),
                 *(tag("option", o, value=o, selected=o == chosen) for o in options)])
    return tag("label", join([label, " ", tag("select", opts, name=name)]))


def filters(base: str, agents: list[str], agent: str, tools: list[str], tool: str,
            formats: list[str], fmt: str, kinds: list[str], kind: str) -> Html:
    fields = join([_select("agent", "agent", agents, agent), _select("tool", "tool", tools, tool),
                   _select("format", "format", formats, fmt), _select("kind", "kind", kinds, kind),
                   tag("button", "Filter")], " ")
    return tag("form", fields, method="get", action=href(base, "entries"), class_="filters")


# -- an entry ---------------------------------------------------------------------------------


VIEWS = ("lines", "line", "grep", "schema", "versions", "diff", "log")


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
    parts: list[Html] = [facts(base, agent, meta), tag("nav", tabs, class_="tabs")]
    if view == "lines":
        parts.append(lines_view(site, agent, name, url, query))
    elif view == "line":
        parts.append(line_view(site, agent, name, url, query))
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
    if not is_log and view == "lines" and not query.get("v"):
        parts.insert(1, pointer_box(site, base, agent, name))
    return layout(site, base, f"{name} · {agent}", join(parts), heading=Html(render(
        "{name} <small>agent {agent}</small>", name=name,
        agent=tag("a", agent, href=href(base, "a", agent)))))


def pointer_box(site: Site, base: str, agent: str, name: str) -> Html:
    """The pointer, spelled for the interface of the call that stored the entry (the ledger
    says which): MCP tool calls for an MCP client or the proxy, shell lines otherwise."""
    from scratch.errors import ScratchError
    from scratch.ui.pages import call_url
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
                     link=tag("a", f"#{stored['seq']}",
                              href=call_url(base, agent, stored["seq"])))
    return tag("details", join([tag("summary", how), tag("pre", text, class_="pointer")]),
               open=True, id="pointer")


def facts(base: str, agent: str, m: EntryMeta) -> Html:
    items: list[tuple[str, object]]
    if m["kind"] == "log":
        items = [("kind", "log"), ("entries", number(m["log"]["count"])),
                 ("updated", when(m.get("updated")))]
    else:
        cur = m["versions"][-1]
        info = cur.get("info") or {}
        version = tag("a", cur["version"], href=href(base, "a", agent, "e", m["name"],
                                                     view="versions"), title="its versions")
        items = [("kind", m["kind"]), ("version", version),
                 ("format", info.get("format")), ("tool", info.get("tool")),
                 ("bytes", number(cur.get("bytes"))), ("lines", number(cur.get("lines"))),
                 ("tokens", number(info.get("tokens"))), ("updated", when(cur["time"]))]
    return tag("dl", join(tag("div", join([tag("dt", k), tag("dd", v)])) for k, v in items
                          if v not in (None, "")), class_="facts")


def _line_link(url: str, number_: int, version: int, at: int = 0) -> str:
    q: dict[str, object] = {"view": "line", "n": number_}
    if version:
        q["v"] = version
    if at:
        q["at"] = at
    return f"{url}?{urlencode(q)}"


def more_link(url: str, number_: int, version: int, more: int, at: int = 0,
              unit: str = "bytes") -> Html:
    return join([tag("span", f"… {more:,} more {unit}", class_="more"), " ",
                 tag("a", "whole line ›", href=_line_link(url, number_, version, at),
                     class_="whole")])


def lines_view(site: Site, agent: str, name: str, url: str, query: Query) -> Html:
    from scratch.errors import ScratchError
    start = _int(query, "from", 1, 1)
    version = _int(query, "v", 0)
    ref = f"{name}@{version}" if version else name
    try:
        page = site.lines(agent, ref, start)
    except ScratchError as exc:
        return tag("p", f"{exc.code}: {exc.message}", class_="error")
    total = page.total
    rows: list[Html] = []
    size = 0
    last = start - 1
    for ln in page.lines:
        shown, _ = cut(ln.text)
        cell = escape(shown)
        if ln.cut:
            more = ln.length - len(shown.encode("utf-8", "replace"))
            cell = join([cell, " ", more_link(url, ln.number, version, more)])
        size += len(cell)
        if size > PAGE_BYTES and rows:
            break
        rows.append(_numbered_row(ln.number, cell, url, version))
        last = ln.number
    first = start if page.lines else 0
    q = f"?v={version}&" if version else "?"
    links = []
    for label, at in (("« first", 1), ("‹ previous", max(start - PAGE_LINES, 1)),
                      ("next ›", last + 1), ("last »", max(total - PAGE_LINES + 1, 1))):
        ok = 1 <= at <= total and at != start
        links.append(tag("a", label, href=f"{url}{q}view=lines&from={at}",
                         rel=label.split()[-1]) if ok else tag("span", label, class_="off"))
    goto = tag("form", join([tag("input", type="hidden", name="view", value="lines"),
                             tag("input", type="hidden", name="v", value=version or None),
                             tag("label", join(["line ", tag("input", type="number",
                                                             name="from", min=1, max=total,
                                                             value=start)])),
                             tag("button", "Go")], " "), method="get", action=url,
               class_="goto")
    where = render('<p class="summary">lines {a}–{b} of {n}{of}</p>', a=number(first),
                   b=number(last), n=number(total),
                   of=f" (version {version})" if version else "")
    nav = tag("nav", join(links, " "), class_="pager")
    return join([where, join([nav, goto], " "), table_of(rows, "lines"), nav])


def _numbered_row(n: int, cell: Html, url: str, version: int, hit: bool = False) -> Html:
    q = f"?v={version}&" if version else "?"
    return tag("tr", join([tag("td", tag("a", n, href=f"{url}{q}view=lines&from={n}#L{n}"),
                               class_="n"), tag("td", cell, class_="t")]),
               id=f"L{n}", class_="hit" if hit else None)


def table_of(rows: list[Html], ident: str) -> Html:
    return tag("div", tag("table", join(rows), class_="lines", id=ident), class_="scroll")


def line_view(site: Site, agent: str, name: str, url: str, query: Query) -> Html:
    """One line whole, :data:`LINE_PART` bytes a page."""
    from scratch.errors import ScratchError
    number_ = _int(query, "n", 1, 1)
    version = _int(query, "v", 0)
    at = _int(query, "at", 0)
    ref = f"{name}@{version}" if version else name
    try:
        text, at, length = site.line_part(agent, ref, number_, at)
    except ScratchError as exc:
        return tag("p", f"{exc.code}: {exc.message}", class_="error")
    end = at + len(text.encode("utf-8", "replace"))
    links = []
    if at > 0:
        links.append(tag("a", "‹ previous part", href=_line_link(url, number_, version,
                                                                  max(at - LINE_PART, 0)),
                         rel="prev"))
    if end < length:
        links.append(tag("a", "next part ›", href=_line_link(url, number_, version, end),
                         rel="next"))
    q = f"?v={version}&" if version else "?"
    links.append(tag("a", "back to the lines", href=f"{url}{q}view=lines&from={number_}"
                     f"#L{number_}"))
    nav = tag("nav", join(links, " "), class_="pager")
    where = summary(f"line {number_:,}: bytes {at:,}–{end:,} of {length:,}"
                    + (f" (version {version})" if version else ""))
    return join([where, nav, tag("pre", text, class_="whole-line", id="line"), nav])


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


def shown_match(ln: GrepLine, rx: re.Pattern[str] | None) -> tuple[str, str, str, int, int]:
    """A matching line as a page shows it: (``…`` before, the text, ``…`` after, the byte of
    the line where the text starts, the bytes of the line not shown). A line longer than
    :data:`~scratch.ui.views.LINE_CHARS` characters is shown from a little before its first
    match (the engine gives a window of a very long line)."""
    text = ln.display()
    start_byte = ln.from_byte
    length = ln.line_bytes if ln.windowed else len(ln.text)
    if len(text) > LINE_CHARS:
        m = rx.search(text) if rx is not None else None
        first = max(0, (m.start() if m else 0) - BEFORE_MATCH)
        start_byte += len(text[:first].encode("utf-8", "replace"))
        text = text[first:first + LINE_CHARS]
    shown_bytes = len(text.encode("utf-8", "replace"))
    before = "…" if start_byte > 0 else ""
    after = "…" if start_byte + shown_bytes < length else ""
    return before, text, after, start_byte, length - shown_bytes


def match_row(ln: GrepLine, rx: re.Pattern[str] | None, url: str, version: int = 0) -> Html:
    before, text, after, at, more = shown_match(ln, rx)
    cell = join([before, highlight(text, rx)])
    if more > 0:
        cell = join([cell, " ", more_link(url, ln.lineno, version, more, at)])
    elif after:
        cell = join([cell, after])
    q = f"?v={version}&" if version else "?"
    return tag("tr", join([
        tag("td", tag("a", ln.lineno, href=f"{url}{q}view=lines&from={ln.lineno}"
                      f"#L{ln.lineno}"), class_="n"),
        tag("td", cell, class_="t")]))


def count_text(count: object, total_lines: int) -> str:
    """What a count says: the entry's matching lines, or how far counting got."""
    from scratch.ui.finding import Count
    assert isinstance(count, Count)
    if count.done:
        return f"{lines_of(count.matched)} in the entry"
    return (f"at least {lines_of(count.matched)}: counting stopped at line {count.line:,} of "
            f"{total_lines:,} (it goes on from there when this page is opened again)")


def grep_view(site: Site, agent: str, name: str, url: str, query: Query) -> Html:
    from scratch.errors import ScratchError
    from scratch.query.grep import GrepOptions
    pattern = query.get("q", "")
    ignore_case, fixed = query.get("i") == "1", query.get("f") == "1"
    parts = [grep_form(url, pattern, ignore_case, fixed)]
    if not pattern:
        return join(parts)
    start = _int(query, "from", 1, 1)
    try:
        found = site.find(agent, name, GrepOptions(pattern, ignore_case=ignore_case,
                                                    fixed=fixed),
                          from_line=start, show=GREP_MATCHES, deadline=site.deadline())
    except ScratchError as exc:
        return join([*parts, tag("p", f"{exc.code}: {exc.message}", class_="error")])
    rx = pattern_of(pattern, ignore_case, fixed)
    rows: list[Html] = []
    size = 0
    last = 0
    for ln in found.lines:
        row = match_row(ln, rx, url)
        size += len(row)
        if size > PAGE_BYTES and rows:
            break
        rows.append(row)
        last = ln.lineno
    parts.append(render('<p class="summary" id="grep-count">{count}; {n} shown{where}.</p>',
                        count=count_text(found.counted, found.total_lines),
                        n=number(len(rows)),
                        where=f", from line {start:,}" if start > 1 else ""))
    parts.append(table_of(rows, "matches"))
    links = []
    base_q = {"view": "grep", "q": pattern, **({"i": 1} if ignore_case else {}),
              **({"f": 1} if fixed else {})}
    if start > 1:
        links.append(tag("a", "« from the first", href=f"{url}?{urlencode(base_q)}"))
    if last and (len(rows) < len(found.lines) or len(found.lines) >= GREP_MATCHES):
        links.append(tag("a", "more matches ›",
                         href=f"{url}?{urlencode({**base_q, 'from': last + 1})}", rel="next"))
    if links:
        parts.append(tag("nav", join(links, " "), class_="pager"))
    return join(parts)


def schema_view(site: Site, agent: str, name: str) -> Html:
    from scratch.errors import ScratchError
    try:
        result = site.schema(agent, name)
    except ScratchError as exc:
        return tag("p", f"{exc.code}: {exc.message}", class_="error")
    text = result.text if isinstance(result.text, str) else ""
    lines = text.splitlines()
    out = tree([cut(line, LINE_CHARS)[0] for line in lines[:SCHEMA_LINES]])
    if len(lines) > SCHEMA_LINES:
        out = join([out, summary(f"The first {SCHEMA_LINES:,} of {len(lines):,} lines of the "
                                 "schema (scratch schema NAME --depth N shows less).")])
    return out


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
    versions = list(data.get("versions") or [])
    rows = []
    shown = versions[-VERSIONS_PAGE:]
    for v in reversed(shown):
        i = versions.index(v)
        prev = versions[i - 1]["version"] if i else None
        diff = tag("a", f"diff {prev}→{v['version']}",
                   href=f"{url}?view=diff&a={prev}&b={v['version']}") if prev else ""
        link = tag("a", v["version"], href=f"{url}?view=lines&v={v['version']}",
                   title="its lines")
        rows.append([link, when(v["time"]), number(v.get("bytes")), number(v.get("lines")),
                     tag("code", v.get("commit") or ""), cut(v.get("message") or "", 300)[0],
                     diff])
    head = ["version", "time", "bytes", "lines", "commit", "message", ""]
    out = scroll(tag("table", join([
        tag("thead", tag("tr", join(tag("th", h) for h in head))),
        tag("tbody", join(tag("tr", join(tag("td", c) for c in row)) for row in rows))]),
        class_="grid", id="versions"))
    if len(versions) > VERSIONS_PAGE:
        out = join([summary(f"The newest {VERSIONS_PAGE} of {len(versions):,} versions."), out])
    return out


def diff_view(site: Site, agent: str, name: str, query: Query) -> Html:
    from scratch.errors import ScratchError
    a, b = _int(query, "a", 1, 1), _int(query, "b", 2, 1)
    try:
        result = site.diff(agent, name, a, b)
    except ScratchError as exc:
        return tag("p", f"{exc.code}: {exc.message}", class_="error")
    text = result.text if isinstance(result.text, str) else ""
    rows = []
    lines = text.splitlines()
    for line in lines[:DIFF_LINES]:
        kind = ("meta" if line.startswith(("---", "+++", "@@")) else "add" if
                line.startswith("+") else "remove" if line.startswith("-") else "same")
        shown, more = cut(line)
        rows.append(tag("div", shown + (f" … ({more:,} more characters)" if more else ""),
                        class_=f"d {kind}"))
    out = tag("pre", join(rows), class_="diff", id="diff")
    if len(lines) > DIFF_LINES:
        out = join([out, summary(f"The first {DIFF_LINES:,} of {len(lines):,} lines of the "
                                 "diff.")])
    return out


def log_view(site: Site, agent: str, name: str, url: str, query: Query) -> Html:
    since = _int(query, "since", 0)
    result = site.log_page(agent, name, since)
    data = result.data if isinstance(result.data, dict) else {}
    entries_ = data.get("entries") or []
    from scratch.answers.kernel.result import compact_json
    rows = []
    for e in entries_:
        text = e["entry"] if isinstance(e["entry"], str) else compact_json(e["entry"])
        shown, more = cut(text)
        cell = join([tag("pre", shown), tag("span", f"… {more:,} more characters",
                                            class_="more") if more else ""])
        rows.append([e["id"], when(e["ts"]), cell])
    parts = [scroll(tag("table", join([
        tag("thead", tag("tr", join(tag("th", h) for h in ["id", "time", "entry"]))),
        tag("tbody", join(tag("tr", join(tag("td", c) for c in row)) for row in rows))]),
        class_="grid", id="log"))]
    links = [tag("a", "« first", href=f"{url}?view=log&since=0"),
             tag("a", "‹ previous", href=f"{url}?view=log&since={max(0, since - PAGE_LOG)}",
                 rel="prev")] if since else []
    if data.get("has_more"):
        links.append(tag("a", "next ›", href=f"{url}?view=log&since={data['next_since']}",
                         rel="next"))
    parts.append(tag("nav", join(links, " "), class_="pager"))
    return join(parts)

