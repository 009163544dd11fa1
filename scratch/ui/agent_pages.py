"""An agent's pages: the agent (where its tokens went), a session's timeline, one call.

- ``/a/AGENT``: its figures and savings, its spend over time, each session's budget as a bar,
  its calls ranked by tokens charged, the entries that cost the most, its entries.
- ``/a/AGENT/s/SESSION``: the session's chart, budget and calls, paged.
- ``/a/AGENT/c/SEQ``: one call as the agent made it, its outcome, cost, and what it got back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.store.names import RUN_RE
from scratch.ui import figures
from scratch.ui.html import Html, bar, href, join, number, render, scroll, tag
from scratch.ui.pages import (
    PAGE_BYTES,
    Missing,
    Query,
    _int,
    agent_link,
    call_url,
    calls_table,
    chart,
    charts,
    cut,
    dropped_note,
    entry_link,
    grid,
    layout,
    outcome_cell,
    pager,
    pages_of,
    record_entry_link,
    session_link,
    skipped_note,
    spelled,
    summary,
    when,
)
from scratch.ui.views import PAGE_CALLS, Site

if TYPE_CHECKING:
    from scratch.store.ledger import Record
    from scratch.ui.views import Budget

RANKED_PAGE = 25  # calls per page of the ranking
SESSIONS_PAGE = 20  # sessions per page of the budgets
ENTRIES_SHOWN = 25  # entries listed on the agent's page (all on the entries page)
BY_ENTRY = 15  # entries in "where the tokens went"
BUDGETS_SHOWN = 10  # budgets of one session shown (a worker's: one per run and iteration)


def _agent(site: Site, agent: str) -> None:
    if not site.allowed(agent) or (agent not in site.agents()):
        raise Missing(f"no agent {agent!r}")


def facts(items: list[tuple[str, object]], ident: str | None = None) -> Html:
    return tag("dl", join(tag("div", join([tag("dt", k), tag("dd", v)])) for k, v in items
                          if v not in (None, "")), class_="facts", id=ident)


def budget_bar(b: Budget, records: list[Record]) -> Html:
    """A session's budget as a bar: used, left, the per-call cap (the most one answer may
    take, drawn from where the used tokens end), and a mark where each refusal came (the
    tokens the session had charged by then)."""
    usable = max(b.usable, 1)
    used = min(b.used, usable) / usable
    parts = [("used", 0.0, used), ("left", used, 1.0)]
    if b.cap > 0:
        parts.append(("cap", used, min(used + b.cap / usable, 1.0)))
    charged = 0
    marks = []
    refused = 0
    for r in records:
        charged += r["tokens"]
        if r["outcome"] == "refused":
            refused += 1
            marks.append(("refusal", min(charged, usable) / usable))
    label = (f"used {b.used:,} of {b.usable:,} tokens, {b.remaining:,} left; per-call cap "
             f"{b.cap:,}; {refused:,} refused")
    return join([bar(parts, marks[-200:], label), tag("div", join([
        tag("span", f"used {b.used:,}", class_="k used"),
        tag("span", f"left {b.remaining:,} of {b.usable:,}", class_="k left"),
        tag("span", f"per-call cap {b.cap:,}" if b.cap > 0 else "no per-call cap",
            class_="k cap"),
        tag("span", f"{refused:,} refused", class_="k refusal")], " "), class_="keys")])


def budgets_of(site: Site, base: str, name: str, session: str, records: list[Record]
               ) -> list[Html]:
    """The budgets ``records`` (calls of one session) were charged to, each as a bar: the
    session's own, and a worker's one per run and iteration it worked in (a budget of its
    own, scratch.runs), that one named."""
    from scratch.store.names import RUN_RE
    groups: dict[tuple[str | None, int | None], list[Record]] = {}
    for r in records:
        run = r.get("run")
        key = (run, r.get("iteration")) if run and RUN_RE.fullmatch(run) else (None, None)
        groups.setdefault(key, []).append(r)
    if not groups:
        groups[(None, None)] = []
    out = []
    latest = sorted(groups.items(), key=lambda kv: kv[1][-1]["time"] if kv[1] else "",
                    reverse=True)  # the budget charged last first
    for (run, iteration), recs in latest[:BUDGETS_SHOWN]:
        b = site.budget(name, session, run, iteration)
        where: Html = Html("")
        if run is not None:
            where = tag("div", join(["in run ", tag("a", run, href=href(base, "r", run)),
                                     f", iteration {iteration}" if iteration else "",
                                     " (a worker's budget of its own)"]), class_="where")
        out.append(join([where, budget_bar(b, recs),
                         tag("div", _budget_note(b), class_="note")]))
    if len(latest) > BUDGETS_SHOWN:
        out.append(summary(f"The {BUDGETS_SHOWN} budgets charged last of {len(latest):,} "
                           "(one per run and iteration this session worked in)."))
    return out


def _budget_note(b: Budget) -> str:
    base = (f"usable {b.usable:,}: the window {b.window:,} less a {b.margin:.0%} margin")
    return base if b.stored else base + " (no budget state yet: nothing charged)"


# -- the agent --------------------------------------------------------------------------------


def agent(site: Site, base: str, name: str, query: Query) -> Html:
    _agent(site, name)
    records = site.records(name)
    t = site.figure(name, "totals", figures.totals)
    size, bound = site.ledger_bytes(name)
    entries = site.entries(name)
    sessions = site.figure(name, "sessions", figures.sessions)
    parts: list[Html] = [skipped_note(site, [name]), dropped_note(site, [name])]
    parts.append(facts([
        ("calls", number(t.calls)), ("sessions", number(len(sessions))),
        ("entries", tag("a", number(len(entries)), href=href(base, "entries", agent=name))),
        ("tokens charged", number(t.charged)), ("intercepted", number(t.intercepted)),
        ("refused", number(t.refused)), ("errors", number(t.errors)),
        ("ledger", f"{size:,} of {bound:,} bytes (answers included)"),
        ("last call", when(records[-1]["time"]) if records else "")], "agent-facts"))
    parts.append(tag("h2", "Savings", id="savings"))
    parts.append(savings(t))
    if records:
        parts.append(tag("h2", "Tokens over time"))
        parts.append(charts([chart(site, base, name, None, f"{name}: every session")]))
    parts.append(tag("h2", "Budget per session", id="sessions"))
    parts.append(session_budgets(site, base, name, sessions, query))
    from scratch.ui.run_pages import agent_runs
    parts.append(agent_runs(site, base, name))
    parts.append(tag("h2", "Calls ranked by tokens charged", id="ranked"))
    parts.append(ranking(site, base, name, query))
    parts.append(tag("h2", "Where the tokens went, by entry", id="by-entry"))
    parts.append(by_entry(base, name, site.figure(name, "by_entry", figures.by_entry)))
    parts.append(tag("h2", "Entries", id="entries"))
    from scratch.ui.entry_pages import entries_table
    parts.append(entries_table(base, [(name, r) for r in entries[:ENTRIES_SHOWN]],
                               ident="agent-entries") if entries else
                 tag("p", "No entries: nothing stored in this agent's own namespace.",
                     class_="empty"))
    if len(entries) > ENTRIES_SHOWN:
        parts.append(tag("p", tag("a", f"all {len(entries):,} entries ›",
                                  href=href(base, "entries", agent=name))))
    return layout(site, base, f"Agent {name}", join(parts), heading=Html(render(
        "{name} <small>agent</small>", name=name)))


def savings(t: figures.Totals) -> Html:
    output = t.intercepted + t.pointers
    rows: list[tuple[str, object]] = [
        ("tokens intercepted", number(t.intercepted)),
        ("tokens extracted", number(t.extracted)),
        ("pointer tokens", number(t.pointers)),
        ("refusals and errors charged", number(t.failed)),
        ("outputs stored", f"{output:,} tokens"),
    ]
    if output:  # the README's share: pointer tokens against output tokens
        rows.append(("pointers against outputs", f"{t.pointers / output:.2%}"))
    text = (f"Outputs of {output:,} tokens were stored instead of shown; the agent read "
            f"{t.pointers:,} tokens of pointers in their place and {t.extracted:,} tokens of "
            f"answers: {t.intercepted:,} tokens intercepted against {t.extracted:,} extracted."
            if output else
            f"No output was stored instead of shown: {t.extracted:,} tokens extracted, none "
            "intercepted.")
    return join([facts(rows, "savings-facts"), tag("p", text, class_="lead"),
                 tag("p", figures.SAVINGS_RULE, class_="summary")])


def session_budgets(site: Site, base: str, name: str, sessions: list[figures.SessionRow],
                    query: Query) -> Html:
    if not sessions:
        return tag("p", "No calls recorded yet.", class_="empty")
    pages = pages_of(len(sessions), SESSIONS_PAGE)
    page = min(_int(query, "sessions", 1, 1), pages)
    rows = []
    for s in sessions[(page - 1) * SESSIONS_PAGE:page * SESSIONS_PAGE]:
        recs = site.calls(name, s.session)
        rows.append(tag("div", join([
            tag("div", join([session_link(base, name, s.session), " ",
                             tag("small", f"{s.totals.calls:,} calls · "
                                 f"{s.totals.charged:,} charged · "
                                 f"{s.totals.intercepted:,} intercepted · last ")
                             + when(s.last)]), class_="head"),
            *budgets_of(site, base, name, s.session, recs)]), class_="budget"))
    note = summary(f"{len(sessions):,} session{'' if len(sessions) == 1 else 's'}, the latest "
                   "first.")
    return join([note, tag("div", join(rows), class_="budgets", id="budgets"),
                 pager(href(base, "a", name) + "?", page, pages, key="sessions")])


def ranking(site: Site, base: str, name: str, query: Query) -> Html:
    ranked = site.figure(name, "ranked", figures.ranked)
    if not ranked:
        return tag("p", "No call charged any tokens yet.", class_="empty")
    pages = pages_of(len(ranked), RANKED_PAGE)
    page = min(_int(query, "ranked", 1, 1), pages)
    first = (page - 1) * RANKED_PAGE
    total = site.figure(name, "totals", figures.totals).charged
    rows = [[i, tag("a", f"#{r['seq']}", href=call_url(base, name, r["seq"])),
             session_link(base, name, r["session"]), spelled(site, r["command"], r["args"]),
             outcome_cell(site, r, suggestions=False), number(r["tokens"]),
             f"{r['tokens'] / total:.1%}", record_entry_link(base, r)]
            for i, r in enumerate(ranked[first:first + RANKED_PAGE], first + 1)]
    table = grid(["rank", "call", "session", "what", "outcome", "tokens", "share", "entry"],
                 rows, "ranked-calls", cards=True)
    return join([summary(f"{len(ranked):,} calls charged {total:,} tokens."), table,
                 pager(href(base, "a", name) + "?", page, pages, key="ranked")])


def by_entry(base: str, name: str, rows: list[figures.EntrySpend]) -> Html:
    if not rows:
        return tag("p", "No call touched an entry yet.", class_="empty")
    head = ["entry", "calls", "read from it", "pointers", "outputs stored", "intercepted"]
    body = [[entry_link(base, name, e.entry), number(e.calls), number(e.read),
             number(e.pointers), f"{e.output:,} ({e.stored:,})" if e.stored else "",
             number(e.intercepted)] for e in rows[:BY_ENTRY]]
    table = scroll(tag("table", join([
        tag("thead", tag("tr", join(tag("th", h) for h in head))),
        tag("tbody", join(tag("tr", join(tag("td", c) for c in cells)) for cells in body))]),
        class_="grid", id="by-entry-table"))
    more = summary(f"The {BY_ENTRY} of {len(rows):,} entries that cost the most.") \
        if len(rows) > BY_ENTRY else Html("")
    return join([table, more, summary(
        "Read from it: tokens extracted by the calls that touched the entry; pointers: the "
        "tokens of the pointers shown for the outputs stored under it (how many in brackets); "
        "intercepted: their tokens less the pointers.")])


# -- a session --------------------------------------------------------------------------------


def session(site: Site, base: str, name: str, sess: str, query: Query) -> Html:
    _agent(site, name)
    total = site.count(name, sess)
    if total == 0:
        raise Missing(f"no session {sess!r} of agent {name!r}")
    pages = pages_of(total, PAGE_CALLS)
    if "seq" in query:  # the page holding a call (seqs grow along the file: halve)
        seq, lo, hi = _int(query, "seq", 0), 0, total - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            probe = site.calls(name, sess, offset=mid, limit=1)
            if probe and probe[0]["seq"] <= seq:
                lo = mid
            else:
                hi = mid - 1
        page = lo // PAGE_CALLS + 1
    else:
        page = min(_int(query, "page", pages, 1), pages)
    records = site.calls(name, sess, offset=(page - 1) * PAGE_CALLS, limit=PAGE_CALLS)
    last = records[-1]["seq"] if records else 0
    live = href(base, "live", agent=name, session=sess) if page == pages else None
    dropped = site.dropped(name)
    count = render('<p class="summary"><span data-count="{total}" data-one="call" '
                   'data-many="calls">{n} {calls}</span>; page {page} of {pages} ({per} a '
                   'page).{gone}</p>', total=total, calls="call" if total == 1 else "calls",
                   n=number(total), page=page, pages=pages, per=PAGE_CALLS,
                   gone=f" The oldest {dropped:,} calls of this agent were dropped to keep "
                   "its ledger within ledger.max_bytes." if dropped else "")
    url = href(base, "a", name, "s", sess)
    nav = pager(url, page, pages)
    every = site.calls(name, sess)
    body = join([
        skipped_note(site, [name]),
        tag("div", join(budgets_of(site, base, name, sess, every)), class_="budget",
            id="budget"),
        charts([chart(site, base, name, sess, f"{name} / {sess}")]),
        count, nav, calls_table(site, base, records, live=live, after=last), nav])
    return layout(site, base, f"Session {sess} of {name}", body, heading=Html(render(
        "{sess} <small>session of {link}</small>", sess=sess, link=agent_link(base, name))))


# -- a call -----------------------------------------------------------------------------------


def call_page(site: Site, base: str, name: str, seq_text: str, query: Query) -> Html:
    _agent(site, name)
    if not seq_text.isdigit():
        raise Missing(f"no call {seq_text!r} of agent {name!r}")
    seq = int(seq_text)
    r = site.record(name, seq)
    if r is None:
        dropped = site.dropped(name)
        why = (f"; the ledger dropped its oldest {dropped:,} calls" if dropped else "")
        raise Missing(f"no call #{seq} of agent {name!r} in the ledger{why}")
    ranked = site.figure(name, "ranked", figures.ranked)
    rank = next((i for i, x in enumerate(ranked, 1) if x["seq"] == seq), None)
    parts: list[Html] = [facts([
        ("time", when(r["time"])), ("session", session_link(base, name, r["session"])),
        ("via", r["interface"]),
        ("run", join([tag("a", r["run"], href=href(base, "r", r["run"])),
                      f" iteration {r['iteration']}" if r.get("iteration") else "",
                      " (coordinator)" if r.get("coordinator") else ""])
         if r.get("run") and RUN_RE.fullmatch(r["run"]) else r.get("run", "")),
        ("outcome", join([tag("span", r["outcome"], class_=f"outcome {r['outcome']}"),
                          " ", r["code"] or ""])),
        ("tokens charged", number(r["tokens"])),
        ("intercepted", number(r["intercepted"]) if r["intercepted"] else ""),
        ("rank", f"{rank:,} of {len(ranked):,} by tokens" if rank else ""),
        ("ms", f"{r['ms']:.1f}"),
        ("entry", record_entry_link(base, r))], "call-facts")]
    parts.append(tag("h2", "The call"))
    parts.append(the_call(site, r))
    if r["outcome"] != "ok" or r["suggestions"]:
        parts.append(tag("h2", "Outcome"))
        parts.append(outcome_of(site, r))
    parts.append(tag("h2", "What the agent got back"))
    parts.append(answer_of(r))
    at = site._ledger(name).seqs
    i = at.index(seq)
    nav = []
    if i > 0:
        nav.append(tag("a", f"‹ call #{at[i - 1]}", href=call_url(base, name, at[i - 1]),
                       rel="prev"))
    if i + 1 < len(at):
        nav.append(tag("a", f"call #{at[i + 1]} ›", href=call_url(base, name, at[i + 1]),
                       rel="next"))
    nav.append(tag("a", "in its session's timeline",
                   href=href(base, "a", name, "s", r["session"], seq=seq) + f"#c{seq}"))
    parts.append(tag("nav", join(nav, " "), class_="pager"))
    return layout(site, base, f"Call #{seq} of {name}", join(parts), heading=Html(render(
        "Call #{seq} <small>{command} · agent {link}</small>", seq=seq, command=r["command"],
        link=agent_link(base, name))))


def the_call(site: Site, r: Record) -> Html:
    """The call as the agent's interface spelled it, then each argument as written."""
    from scratch.ui.pages import UPSTREAM
    mcp = r["interface"] != "cli"
    items: list[Html] = []
    if r["command"] == UPSTREAM:
        items.append(tag("p", f"The tool {r['args'].get('tool')} of the upstream server "
                              f"{r['args'].get('server')}, passed through the proxy (its "
                              "result was handed on as it came, not stored)."))
    else:
        shown = site.spell_record(r["command"], r["args"], r["interface"])
        how = "as an MCP tool call" if mcp else "as a command line"
        items.append(tag("p", f"{how}:", class_="summary"))
        items.append(tag("pre", shown.line, class_="call", id="call-line"))
        if mcp:
            shell = site.spell_record(r["command"], r["args"])
            items.append(tag("p", "the same as a command line:", class_="summary"))
            items.append(tag("pre", shell.line, class_="call"))
        if shown.bodies:
            items.append(tag("p", "what it stored, which the ledger does not keep: "
                             + ", ".join(shown.bodies), class_="summary"))
    rows = []
    for key, value in r["args"].items():
        text = value if isinstance(value, str) else _json(value)
        rows.append(tag("tr", join([tag("th", key), tag("td", tag("pre", text))])))
    if rows:
        items.append(tag("table", tag("tbody", join(rows)), class_="args", id="args"))
        items.append(summary("Arguments as the ledger keeps them: as written (a long value "
                             "cut to its first 200 characters)."))
    return join(items)


def _json(value: object) -> str:
    from scratch.answers.kernel.result import compact_json
    return compact_json(value)


def outcome_of(site: Site, r: Record) -> Html:
    items: list[Html] = [tag("p", join([tag("span", r["outcome"],
                                            class_=f"outcome {r['outcome']}"), " ",
                                        tag("code", r["code"] or "")]))]
    if r["message"]:
        items.append(tag("p", r["message"], class_="message"))
    if r["suggestions"]:
        items.append(tag("p", "It suggested:", class_="summary"))
        items.append(tag("ul", join(tag("li", spelled(site, s["command"], s["args"],
                                                      r["interface"]))
                                    for s in r["suggestions"]), class_="suggested"))
    return join(items)


def answer_of(r: Record) -> Html:
    text = r.get("answer")
    if text is None:
        why = ("a refusal or an error answers with its code, message and suggestions (above)"
               if r["outcome"] != "ok" else
               "this call was recorded without its answer (by a release that did not keep "
               "answers, or the proxy's passing an upstream result on)")
        return tag("p", f"Not kept: {why}.", class_="empty")
    shown, more = cut(text, PAGE_BYTES // 6)
    parts = [tag("pre", shown, class_="answer", id="answer")]
    if more:
        parts.append(summary(f"… {more:,} more characters of the answer not shown here."))
    parts.append(summary(f"{len(text):,} characters, as the {r['interface']} interface "
                         "handed them to the agent."))
    return join(parts)
