"""The search across entries: every entry of the agents shown (in natural order) is searched
with grep's engine; the page lists the entries that match, :data:`SEARCH_PAGE` a page, each
with its true count and its first :data:`LINES_PER_ENTRY` matching lines, and the total over
every entry.

Counting is bounded by time (:data:`~scratch.ui.views.SEARCH_SECONDS` a request): when it
stops, the page says where, and what it counted stays counted (:mod:`scratch.ui.finding`), so
opening the page again counts on from there.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from scratch.ui.entry_pages import count_text, grep_form, match_row
from scratch.ui.figures import natural_key
from scratch.ui.html import Html, href, join, tag
from scratch.ui.pages import (
    PAGE_BYTES,
    Missing,
    Query,
    agent_link,
    layout,
    lines_of,
    pattern_of,
    summary,
)
from scratch.ui.views import Site

if TYPE_CHECKING:
    from scratch.ui.finding import Found

SEARCH_PAGE = 10  # entries with matches a page shows
LINES_PER_ENTRY = 5  # matching lines shown of each


def _select(name: str, label: str, options: list[str], chosen: str) -> Html:
    from scratch.ui.entry_pages import _select as select
    return select(name, label, options, chosen)


def search(site: Site, base: str, query: Query) -> Html:
    from scratch.errors import ScratchError
    from scratch.query.grep import GrepOptions
    pattern = query.get("q", "")
    ignore_case, fixed = query.get("i") == "1", query.get("f") == "1"
    agent = query.get("agent", "")
    if agent and not site.allowed(agent):
        raise Missing(f"no agent {agent!r}")
    after = query.get("after", "")
    parts = [grep_form(href(base, "search"), pattern, ignore_case, fixed, view="",
                       button="Search", extra=_select("agent", "agent", site.agents(), agent))]
    if not pattern:
        return layout(site, base, "Search", join(parts))
    options = GrepOptions(pattern, ignore_case=ignore_case, fixed=fixed)
    rx = pattern_of(pattern, ignore_case, fixed)
    deadline = site.deadline()
    started = time.monotonic()
    names = [(who, r.name) for who in ([agent] if agent else site.agents())
             for r in sorted(site.entries(who), key=lambda r: natural_key(r.name))]
    who_after, _, name_after = after.partition("/")
    cursor = (natural_key(who_after), natural_key(name_after))
    total = 0
    complete = True
    matched = 0
    reached = 0  # entries looked at (counted, or counting begun)
    sections: list[Html] = []
    size = 0
    last_shown = ""
    more_after = False
    for who, name in names:
        if time.monotonic() > deadline:
            complete = False
            break
        key = f"{who}/{name}"
        on_page = (natural_key(who), natural_key(name)) > cursor if after else True
        want = on_page and len(sections) < SEARCH_PAGE and size < PAGE_BYTES
        try:
            found = site.find(who, name, options, from_line=1,
                              show=LINES_PER_ENTRY if want else 0, deadline=deadline)
        except ScratchError as exc:
            parts.append(tag("p", f"{exc.code}: {exc.message}", class_="error"))
            return layout(site, base, f"Search {pattern}", join(parts))
        reached += 1
        total += found.counted.matched
        complete = complete and found.counted.done
        if found.counted.matched == 0 and found.counted.done:
            continue
        matched += 1
        if not on_page:
            continue
        if not want:
            more_after = True
            continue
        section = _section(base, who, name, found, rx, query)
        size += len(section)
        sections.append(section)
        last_shown = key
    seconds = time.monotonic() - started
    said = (f"{lines_of(total)} in {_entries(matched)} of {len(names):,}"
            if complete else
            f"at least {lines_of(total)} in {_entries(matched)}: counting "
            f"stopped after {seconds:.1f} s, {reached:,} of {len(names):,} entries reached "
            "(it goes on from there when this page is opened again)")
    parts.insert(1, tag("p", said + ".", class_="summary", id="found"))
    if after:
        parts.insert(2, summary(f"Entries after {after}."))
    parts += sections
    q = {"q": pattern, **({"i": 1} if ignore_case else {}), **({"f": 1} if fixed else {}),
         **({"agent": agent} if agent else {})}
    links = []
    if after:
        links.append(tag("a", "« first page", href=f"{href(base, 'search')}?{urlencode(q)}"))
    if more_after:
        links.append(tag("a", "next entries ›", rel="next", href=f"{href(base, 'search')}?"
                         f"{urlencode({**q, 'after': last_shown})}"))
    if not complete:
        links.append(tag("a", "count on ›", href=f"{href(base, 'search')}?"
                         f"{urlencode({**q, **({'after': after} if after else {})})}"))
    if links:
        parts.append(tag("nav", join(links, " "), class_="pager"))
    return layout(site, base, f"Search {pattern}", join(parts))


def _entries(n: int) -> str:
    return f"{n:,} entr{'y' if n == 1 else 'ies'}"


def _section(base: str, who: str, name: str, found: Found, rx: object, query: Query) -> Html:
    import re
    pattern = rx if isinstance(rx, re.Pattern) else None
    url = href(base, "a", who, "e", name)
    rows = [match_row(ln, pattern, url) for ln in found.lines]
    q = {"view": "grep", "q": query.get("q", ""), **({"i": 1} if query.get("i") == "1" else {}),
         **({"f": 1} if query.get("f") == "1" else {})}
    more = []
    if found.counted.matched > len(found.lines) or not found.counted.done:
        more.append(tag("a", "all its matches ›", href=f"{url}?{urlencode(q)}"))
    return tag("section", join([
        tag("h3", join([tag("a", name, href=url), " ",
                        tag("small", join(["agent ", agent_link(base, who), " · ",
                                           count_text(found.counted, found.total_lines)]))])),
        tag("div", tag("table", join(rows), class_="lines"), class_="scroll"),
        tag("p", join(more), class_="more") if more else ""]), class_="hits")
