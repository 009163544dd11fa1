"""`scratch ui` in a real browser: headless Chromium (the system's) driven by Playwright.

One store for the module: :func:`tests.ui_support.seed` and :func:`seed_more` (sessions
through the CLI and MCP, a refusal, agents t1 ... t12, a session named with "/", a space and
unicode, malformed ledger lines, SQL with quotes), a 100 MB entry (one 19 MB line, 53,000 of
1.6 KB), and an agent "acct" whose calls the test makes itself to check the figures.

Every page is opened at 1280 and 390 px: it fits (``scrollWidth`` no wider than the window),
its HTML is at most 1 MB, it loads within 2 s, its ids are unique, its script says nothing on
the console; a screenshot of each is kept in build/ui-screenshots/ (named at the end of the
run), with each page's HTML bytes and load time in pages.tsv there. Then what the pages do: charts drawn and redrawn live, paging, grep, search counts, the
agent's and a call's exact figures, a call made while the page is open, and the door's
refusals (no token: 401; a rebound host name: 421; a fetch from another site: 403). Skips,
saying why, without Chromium or Playwright.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from scratch.ui.search_page import SEARCH_PAGE
from tests.ui_support import (
    BIG,
    BIG_WORDS,
    NATURAL,
    ODD_SESSION,
    REPO,
    SQL,
    UiServer,
    big_entry,
    seed,
    seed_more,
)

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "build" / "ui-screenshots"
WIDTHS = (1280, 390)
MAX_HTML = 1_000_000  # bytes of a page's HTML at most
MAX_MS = 2000  # a page's load in the browser at most (navigation start to the load event)

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed "
                               "(pip install playwright; it drives the system's Chromium)")
if not CHROMIUM.exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("ui-browser")  # one worker builds the module's store


class Built:
    """The module's store and what the tests need to know of it."""

    def __init__(self, home: Path, big_lines: int, acct: dict[str, Any]) -> None:
        self.home = home
        self.big_lines = big_lines
        self.acct = acct

    def seq(self, agent: str, command: str, **match: object) -> int:
        from scratch.store import ledger
        found = [r for r in ledger.read(self.home, agent=agent) if r["command"] == command
                 and all(r.get(k) == v for k, v in match.items())]  # type: ignore[misc]
        return int(found[-1]["seq"])


def _json(done: Any) -> dict[str, Any]:
    return json.loads(done.out)  # type: ignore[no-any-return]


def _acct(home: Path) -> dict[str, Any]:
    """Agent "acct" makes its calls (session "work", --json): it stores pods, reads five
    lines, is refused a whole array, runs SQL with quotes; what each answered, exactly, and
    the counters `scratch stats` reports (read from its file: asking the CLI would be one
    more call)."""
    from scratch.store import stats
    from tests.helpers import cli
    env = {"SCRATCH_HOME": str(home), "SCRATCH_AGENT": "acct", "SCRATCH_SESSION": "work"}
    pods = json.dumps({"items": [{"name": f"pod-{i}", "phase": "Failed" if i % 3 == 0 else
                                  "Running"} for i in range(2000)]})
    out: dict[str, Any] = {}
    for key, args, stdin, code in (
            ("ingest", ("--json", "ingest", "pods", "--tool", "kubectl"), pods, 0),
            ("head", ("--json", "head", "pods", "-n", "5"), None, 0),
            ("refused", ("--json", "get-in", "pods", "items"), None, 3),
            ("sql", ("--json", "sql", "pods", SQL), None, 0)):
        done = cli(*args, input=stdin, env=env)
        assert done.code == code, done.err
        out[key] = {"stdout": done.text, "json": _json(done)}
    out["stats"] = stats.load(home, "acct")
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    work = tmp_path_factory.mktemp("ui-browser")
    home = work / "store"
    seed(home)
    seed_more(home)
    lines = big_entry(home, work)
    return Built(home, lines, _acct(home))


@pytest.fixture(scope="module")
def home(built: Built) -> Path:
    return built.home


@pytest.fixture(scope="module")
def server(built: Built) -> Iterator[UiServer]:
    srv = UiServer(built.home)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser(server: UiServer) -> Iterator[Any]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "pages.tsv").write_text("page\twidth\thtml bytes\tload ms\n")
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=str(CHROMIUM), args=[
                "--no-sandbox", f"--host-resolver-rules=MAP rebound.test {server.host}"])
        except Exception as exc:  # a Chromium that cannot start here
            pytest.skip(f"Chromium does not start: {str(exc).splitlines()[0]}")
        yield b
        b.close()


class Page:
    """A browser tab on the page, keeping what its console said (CSP violations, errors)."""

    def __init__(self, browser: Any, server: UiServer, width: int = 1280) -> None:
        self.tab = browser.new_page(viewport={"width": width, "height": 900})
        self.width = width
        self.server = server
        self.console: list[str] = []
        self.tab.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.tab.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def open(self, path: str = "") -> Any:
        answer = self.tab.goto(self.server.url + path)
        self.tab.wait_for_load_state("load")
        return answer

    def load_ms(self) -> float:
        """The page's load in the browser: navigation start to the end of its load event."""
        return float(self.tab.evaluate(
            "performance.getEntriesByType('navigation')[0].loadEventEnd"))

    def shot(self, name: str) -> None:
        """A screenshot of the whole page (a page taller than 4,000 px: its first 4,000)."""
        height = self.tab.evaluate("document.documentElement.scrollHeight")
        if height <= 4000:
            self.tab.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
            return
        self.tab.set_viewport_size({"width": self.width, "height": 4000})
        self.tab.screenshot(path=str(SHOTS / f"{name}.png"))
        self.tab.set_viewport_size({"width": self.width, "height": 900})

    def rows(self, table: str) -> list[list[str]]:
        return self.tab.eval_on_selector_all(
            f"#{table} tbody tr, table#{table} > tr",
            "rows => rows.map(r => [...r.cells].map(c => c.innerText))")

    def text(self, selector: str) -> str:
        return str(self.tab.inner_text(selector))

    def close(self) -> None:
        self.tab.close()


@pytest.fixture
def page(browser: Any, server: UiServer) -> Iterator[Page]:
    p = Page(browser, server)
    yield p
    assert [m for m in p.console if m.startswith(("error", "pageerror"))] == []
    p.close()


# -- every page, at both widths ---------------------------------------------------------------


PAGES = {  # name: path ("{seq:AGENT:COMMAND}" is that agent's last call of the command)
    "overview": "",
    "agent": "a/default",
    "agent-acct": "a/acct",
    "agent-t2-malformed": "a/t2",
    "session": "a/default/s/s1",
    "session-long": "a/default/s/long",
    "session-odd-name": "a/t3/s/" + quote(ODD_SESSION),
    "call-ingest": "a/acct/c/{seq:acct:ingest}",
    "call-refused": "a/acct/c/{seq:acct:get-in}",
    "call-sql": "a/acct/c/{seq:acct:sql}",
    "call-mcp": "a/default/c/{seq:default:head}",
    "entries": "entries",
    "entry": "a/default/e/app/lines",
    "entry-grep": "a/default/e/app/lines?view=grep&q=error&i=1",
    "entry-schema": "a/default/e/pods?view=schema",
    "entry-versions": "a/default/e/notes?view=versions",
    "entry-diff": "a/default/e/notes?view=diff&a=1&b=2",
    "entry-log": "a/default/e/events",
    "search": "search?q=disk+full",
    "big-entry": f"a/default/e/{BIG}",
    "big-line": f"a/default/e/{BIG}?view=line&n=1&at=5000000",
    "big-grep": f"a/default/e/{BIG}?view=grep&q=.",
    "big-search": "search?q=.",
    "not-found": "a/default/e/no/such/entry",
}


def _path(built: Built, path: str) -> str:
    def seq(m: re.Match[str]) -> str:
        agent, command = m.group(1).split(":")
        return str(built.seq(agent, command))
    return re.sub(r"\{seq:([^}]+)\}", seq, path)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_fits_is_bounded_and_is_kept_as_a_screenshot(
        browser: Any, server: UiServer, built: Built, name: str, width: int) -> None:
    p = Page(browser, server, width)
    try:
        answer = p.open(_path(built, PAGES[name]))
        assert answer.status == (404 if name == "not-found" else 200)
        html = answer.body()
        assert len(html) <= MAX_HTML, f"{name}: {len(html):,} bytes of HTML"
        ms = p.load_ms()
        if ms > MAX_MS:  # the machine may be busy: the bound holds when it is not, once more
            p.open(_path(built, PAGES[name]))
            ms = min(ms, p.load_ms())
        assert ms <= MAX_MS, f"{name}: {ms:.0f} ms to load"
        assert p.tab.evaluate("document.documentElement.scrollWidth") <= width, name
        ids = p.tab.eval_on_selector_all("[id]", "es => es.map(e => e.id)")
        assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
        if "data-charts" in html.decode():
            p.tab.wait_for_selector("#charts .uplot canvas")
        p.shot(f"{name}-{width}")
        with open(SHOTS / "pages.tsv", "a") as fh:  # what each page measured, beside its shot
            fh.write(f"{name}\t{width}\t{len(html)}\t{ms:.0f}\n")
        said = [m for m in p.console if m.startswith(("error", "pageerror"))]
        if name == "not-found":  # the browser says so of a 404 document itself
            said.remove("error: Failed to load resource: the server responded with a status "
                        "of 404 (Not Found)")
        assert said == []
    finally:
        p.close()


# -- what the pages do ------------------------------------------------------------------------


def test_the_overview_charts_each_agents_spend_on_its_own_axes(page: Page) -> None:
    assert page.open().status == 200
    page.tab.wait_for_selector("#charts .uplot canvas")
    titles = page.tab.eval_on_selector_all("#charts figure .title", "ts => ts.map(t => t.innerText)")
    assert titles == ["acct", "default", "t3"]  # the agents that spent tokens, naturally
    assert "5 agents charged no tokens and stored no output: not charted." in page.text("main")
    legend = page.tab.eval_on_selector_all("#charts figure:first-child .u-legend .u-label",
                                           "ls => ls.map(l => l.innerText)")
    assert legend == ["time (UTC)", "charged", "intercepted", "refused"]
    drawn = page.tab.evaluate("""() => { const u = window.scratchCharts[0].plot;
        return [u.series.map(s => s.scale), u.axes.map(a => [a.scale, a.label])]; }""")
    assert drawn == [["x", "tok", "int", "tok"], [["x", "time (UTC)"], ["tok", "tokens charged"],
                                                 ["int", "intercepted"]]]  # each its own axis
    agents = [r[0] for r in page.rows("agents")]
    assert agents == ["acct", "default", "ops", *NATURAL]


def test_a_point_of_a_chart_opens_its_call(page: Page, built: Built) -> None:
    page.open("a/acct")
    page.tab.wait_for_selector("#charts .uplot canvas")
    over = page.tab.query_selector("#charts .u-over")
    box = over.bounding_box()
    page.tab.mouse.move(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)
    page.tab.mouse.click(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)
    page.tab.wait_for_url(re.compile(r".*/a/acct/c/\d+$"))
    assert page.tab.url.endswith(f"/a/acct/c/{built.seq('acct', 'sql')}")  # the last call


def _facts(page: Page, selector: str) -> dict[str, str]:
    """A facts list as {name: value} (each ``<div><dt>name</dt><dd>value</dd></div>``)."""
    items = page.tab.eval_on_selector_all(
        f"{selector} div", "ds => ds.map(d => [d.querySelector('dt').innerText, "
                           "d.querySelector('dd').innerText])")
    return {k: v for k, v in items}


def test_the_agent_page_has_the_figures_scratch_stats_and_budget_give(page: Page,
                                                                        built: Built) -> None:
    acct = built.acct
    tokens = {k: acct[k]["json"]["meta"]["tokens"]["count"] for k in ("ingest", "head", "sql")}
    budget = acct["sql"]["json"]["meta"]["budget"]  # the budget after the last call
    refusal = budget["used"] - sum(tokens.values())  # what the refusal printed was charged
    assert refusal > 0
    page.open("a/acct")
    facts = _facts(page, "#agent-facts")
    assert (facts["calls"], facts["sessions"], facts["refused"], facts["errors"]) == (
        "4", "1", "1", "0")
    assert facts["tokens charged"] == f"{budget['used']:,}"
    assert facts["intercepted"] == f"{acct['ingest']['json']['meta']['intercepted']:,}"
    savings = _facts(page, "#savings-facts")
    counters = acct["stats"]  # what scratch stats reports
    assert counters["tokens_intercepted"] == acct["ingest"]["json"]["meta"]["intercepted"]
    assert counters["tokens_extracted"] == tokens["head"] + tokens["sql"]  # not the refusal
    output = acct["ingest"]["json"]["data"]["tokens"]  # the stored output's own tokens
    assert savings == {
        "tokens intercepted": f"{counters['tokens_intercepted']:,}",
        "tokens extracted": f"{counters['tokens_extracted']:,}",
        "pointer tokens": f"{tokens['ingest']:,}",
        "refusals and errors charged": f"{refusal:,}",
        "outputs stored": f"{output:,} tokens",
        "pointers against outputs": f"{tokens['ingest'] / output:.2%}"}
    assert output == counters["tokens_intercepted"] + tokens["ingest"]
    assert "scratch stats reports" in page.text("#savings ~ p.summary")
    cap = acct["refused"]["json"]["error"]["limit"]
    keys = page.tab.eval_on_selector_all("#budgets .keys span", "s => s.map(x => x.innerText)")
    assert keys == [f"used {budget['used']:,}",
                    f"left {budget['remaining']:,} of {budget['usable']:,}",
                    f"per-call cap {cap:,}", "1 refused"]
    ranked = [(r[1], r[5]) for r in page.rows("ranked-calls")]
    by_tokens = sorted([("ingest", tokens["ingest"]), ("head", tokens["head"]),
                        ("get-in", refusal), ("sql", tokens["sql"])], key=lambda c: -c[1])
    assert ranked == [(f"#{built.seq('acct', c)}", f"{n:,}") for c, n in by_tokens]


def test_a_call_page_shows_the_call_as_written_and_what_the_agent_got(page: Page,
                                                                       built: Built) -> None:
    from scratch.store import ledger
    acct = built.acct
    page.open(f"a/acct/c/{built.seq('acct', 'sql')}")
    assert page.text("#call-line") == f'scratch sql pods "{SQL}"'  # as written, not re-quoted
    assert "'\"'\"'" not in page.tab.content()
    assert page.text("#answer") == acct["sql"]["stdout"]  # the --json document it read
    facts = _facts(page, "#call-facts")
    assert facts["tokens charged"] == f"{acct['sql']['json']['meta']['tokens']['count']:,}"
    assert (facts["session"], facts["via"], facts["outcome"]) == ("work", "cli", "ok")
    spent = sorted((r["tokens"] for r in ledger.read(built.home, agent="acct")), reverse=True)
    assert facts["rank"] == f"{spent.index(int(facts['tokens charged'])) + 1} of 4 by tokens"
    page.open(f"a/acct/c/{built.seq('acct', 'ingest')}")  # read from stdin: said, not spelled
    assert page.text("#call-line") == "scratch ingest pods --tool kubectl"
    assert "BufferedReader" not in page.tab.content() and "# stream" not in page.tab.content()
    assert page.text("#answer") == acct["ingest"]["stdout"]
    assert _facts(page, "#call-facts")["intercepted"] == \
        f"{acct['ingest']['json']['meta']['intercepted']:,}"
    page.open(f"a/acct/c/{built.seq('acct', 'get-in')}")
    assert _facts(page, "#call-facts")["outcome"] == "refused get_in_too_large"
    assert page.text("p.message") == acct["refused"]["json"]["error"]["message"]
    # the suggestions as a terminal shows them: the JSON envelope's shell lines end in the
    # --json the call was made with, which the ledger does not keep (no flag of a call is)
    assert page.tab.eval_on_selector_all("ul.suggested li", "ls => ls.map(l => l.innerText)") \
        == [s["shell"].removesuffix(" --json")
            for s in acct["refused"]["json"]["error"]["suggestions"]]
    page.open(f"a/default/c/{built.seq('default', 'head')}")  # through MCP: a tool call
    assert page.text("#call-line") == '{"name":"head","arguments":{"file":"notes","lines":2}}'


def test_a_session_pages_back_through_its_calls(page: Page) -> None:
    page.open("a/default/s/long")
    page.tab.wait_for_selector("#charts .uplot canvas")  # the session's own chart
    assert len(page.rows("calls")) == 50
    page.tab.click("nav.pager >> text=‹ previous")
    page.tab.wait_for_url("**/a/default/s/long?page=2")
    calls = page.rows("calls")
    assert len(calls) == 100 and calls[0][3] == "scratch slice app/lines 101 101"
    page.open("a/default/s/s1")
    refused = page.rows("calls")[0]
    assert refused[4].startswith("refused get_in_too_large")
    assert "try:" in refused[4] and "scratch get-in pods items --fit" in refused[4]


def test_a_session_named_with_a_slash_a_space_and_unicode_opens(page: Page) -> None:
    page.open("a/t3")
    page.tab.click(f"#budgets a >> text={ODD_SESSION}")
    page.tab.wait_for_selector("#calls")
    assert page.text("h1").startswith(ODD_SESSION)
    assert page.rows("calls")[0][3] == "scratch head note -n 1"


def test_a_malformed_ledger_line_is_skipped_and_counted(page: Page) -> None:
    assert page.open("a/t2").status == 200
    assert page.text("#skipped") == ("Malformed lines skipped in the call ledger (not JSON, or "
                                     "not a record): t2 2.")
    assert page.open().status == 200
    assert "t2 2" in page.text("#skipped")


def test_an_entry_opens_pages_and_greps(page: Page) -> None:
    page.open("a/default/e/app/lines")
    assert page.text("#pointer pre").startswith("stored app/lines (version 1)")
    assert page.rows("lines")[0] == ["1", "line 1 ok"]
    page.tab.click("nav.pager >> text=next ›")
    page.tab.wait_for_selector("#L101")
    assert page.rows("lines")[0] == ["101", "line 101 ok"]
    page.tab.fill("form.goto input[name=from]", "241")
    page.tab.click("form.goto button")
    page.tab.wait_for_selector("#L250")
    assert [r[0] for r in page.rows("lines")] == [str(n) for n in range(241, 251)]
    page.tab.click("nav.tabs >> text=grep")
    page.tab.fill("form.grep input[name=q]", "error")
    page.tab.check("form.grep input[name=i]")
    page.tab.click("form.grep button")
    page.tab.wait_for_selector("#matches mark")
    marks = page.tab.eval_on_selector_all("#matches mark", "ms => ms.map(m => m.innerText)")
    assert marks == ["ERROR"] * 5
    assert page.text("#grep-count") == "5 matching lines in the entry; 5 shown."
    page.open("a/default/e/notes?view=versions")
    page.tab.click("text=diff 1→2")
    page.tab.wait_for_selector("#diff .d.add")
    assert page.text("#diff .d.remove") == "-b"
    page.open("a/default/e/events")
    page.tab.click("nav.pager >> text=next ›")
    page.tab.wait_for_url("**view=log&since=100")
    assert page.rows("log")[0][0] == "101"


def test_a_long_line_is_cut_and_read_whole_in_parts(page: Page, built: Built) -> None:
    page.open(f"a/default/e/{BIG}")
    first = page.rows("lines")[0]
    assert first[0] == "1" and first[1].startswith('{"id": 0, "blob": "alpha,beta,')
    assert re.search(r"… [\d,]+ more bytes whole line ›$", first[1])
    assert len(first[1]) < 1100
    assert page.text("p.summary") == f"lines 1–100 of {built.big_lines:,}"
    page.tab.click("#L1 a.whole")
    page.tab.wait_for_selector("#line")
    whole = page.text("#line")
    assert whole.startswith('{"id": 0, "blob": "alpha,beta,') and len(whole) == 65536
    where = page.text("p.summary")
    assert re.fullmatch(r"line 1: bytes 0–65,536 of [\d,]+", where)
    line = b'{"id": 0, "blob": "' + b",".join(BIG_WORDS[i % len(BIG_WORDS)]
                                              for i in range(30_000))
    assert whole == line[:65536].decode()
    page.tab.click("text=next part ›")
    page.tab.wait_for_url("**at=65536")
    assert page.text("#line") == line[65536:131072].decode()
    assert page.text("p.summary").startswith("line 1: bytes 65,536–131,072 of ")


def counted(page: Page) -> str:
    """The search's summary once its count is whole: a count a request could not finish (on a
    busy machine) goes on from there, each time the page is opened again."""
    found = page.text("#found")
    for _ in range(60):
        if not found.startswith("at least"):
            return found
        page.tab.click("text=count on ›")
        page.tab.wait_for_load_state("load")
        found = page.text("#found")
    raise AssertionError(f"the count did not finish: {found}")


def test_a_search_matching_every_line_counts_them_all_and_pages(page: Page,
                                                                  built: Built) -> None:
    from scratch.ui.views import Site
    site = Site(built.home, str)
    total = sum(r.lines or 0 for a in site.agents() for r in site.entries(a))
    entries = sum(1 for a in site.agents() for r in site.entries(a) if r.lines)
    page.open("search?q=.")
    found = counted(page)
    assert found == f"{total:,} matching lines in {entries:,} entries of {entries:,}."
    sections = page.tab.eval_on_selector_all("section.hits h3", "hs => hs.map(h => h.innerText)")
    assert len(sections) == SEARCH_PAGE  # a page of entries
    assert f"{BIG} agent default · {built.big_lines:,} matching lines in the entry" in sections
    assert "pods agent acct · 8,004 matching lines in the entry" in sections
    page.tab.click("text=next entries ›")
    page.tab.wait_for_load_state("load")
    more = page.tab.eval_on_selector_all("section.hits h3", "hs => hs.map(h => h.innerText)")
    assert more and not set(more) & set(sections)
    assert page.text("#found") == found  # the same true total on every page


def test_markup_in_an_entry_stays_text(page: Page) -> None:
    page.open("a/default/e/markup")
    assert page.rows("lines") == [["1", "<script>alert('x')</script> & \"quoted\""]]
    assert page.tab.evaluate("document.querySelectorAll('main script').length") == 0


def test_search_from_the_header(page: Page) -> None:
    page.open()
    page.tab.fill("header form.search input[name=q]", "disk full")
    page.tab.press("header form.search input[name=q]", "Enter")
    page.tab.wait_for_selector("#found")
    assert counted(page) == "5 matching lines in 1 entry of 14."
    assert page.tab.eval_on_selector_all("section.hits mark", "ms => ms.map(m => m.innerText)"
                                         ) == ["disk full"] * 5
    assert "5 matching lines in the entry" in page.text("section.hits h3")
    page.tab.click("section.hits td.n a >> text=150")
    page.tab.wait_for_selector("#L150")
    assert page.tab.evaluate("location.hash") == "#L150"


def test_a_call_made_while_the_page_is_open_appears_and_is_charted(page: Page,
                                                                    home: Path) -> None:
    from scratch.store import ledger
    from tests.helpers import cli
    page.open("a/default/s/s1")
    page.tab.wait_for_selector("#charts figure[data-points]")
    points = int(page.tab.get_attribute("#charts figure", "data-points"))
    before = len(page.rows("calls"))
    done = cli("--session", "s1", "grep", "app/lines", "disk", "-m", "1",
               env={"SCRATCH_HOME": str(home)})
    assert done.code == 0, done.err
    seq = ledger.read(home, agent="default", session="s1")[-1]["seq"]
    row = page.tab.wait_for_selector(f'#calls tr[data-seq="{seq}"]', timeout=20_000)
    assert "scratch grep app/lines disk -m 1" in row.inner_text()
    assert len(page.rows("calls")) == before + 1
    assert page.text("p.summary").startswith(f"{before + 1} calls; page 1 of 1")
    page.tab.wait_for_selector(f'#charts figure[data-points="{points + 1}"]', timeout=20_000)
    page.open()  # the overview's latest calls take new ones too
    cli("--agent", "ops", "ls", env={"SCRATCH_HOME": str(home)})
    seq = ledger.read(home, agent="ops")[-1]["seq"]
    page.tab.wait_for_selector(f'#calls tr[data-agent="ops"][data-seq="{seq}"]',
                               timeout=20_000)


def test_an_entry_stored_while_the_page_is_open_appears(page: Page, home: Path) -> None:
    from tests.helpers import cli
    page.open("entries?agent=default")
    names = [r[1] for r in page.rows("entries")]
    assert "notes" in names and "live/new" not in names
    before = len(names)
    assert page.text("p.summary") == f"{before} entries."
    done = cli("write", "live/new", input=b"fresh\n", env={"SCRATCH_HOME": str(home)})
    assert done.code == 0, done.err
    page.tab.wait_for_selector('#entries tr[data-key="default/live/new"]', timeout=20_000)
    assert page.rows("entries")[0][1:3] == ["live/new", "file"]  # newest first
    cli("write", "notes", input=b"a\nB\nc\nd\ne\n", env={"SCRATCH_HOME": str(home)})
    page.tab.wait_for_selector('#entries tr[data-key="default/notes"] td:nth-child(6) >> '
                               'text="3"', timeout=20_000)
    assert [r[1] for r in page.rows("entries")][:2] == ["notes", "live/new"]  # once, on top
    assert page.text("p.summary") == f"{before + 1} entries."  # kept true


# -- the door ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["", "a/default", "a/default/c/1", "series?agent=default"])
def test_the_door_refuses_a_page_without_its_token(browser: Any, server: UiServer,
                                                   path: str) -> None:
    tab = browser.new_page()
    try:
        answer = tab.goto(f"{server.origin}/{path}")
        assert answer.status == 401
        assert tab.inner_text("body").startswith("this page needs the URL")
        assert tab.goto(f"{server.origin}/{server.token[:-2]}/{path}").status == 401
    finally:
        tab.close()


def test_the_door_refuses_a_rebound_host_name(browser: Any, server: UiServer) -> None:
    tab = browser.new_page()
    try:  # rebound.test resolves to the server's address (the browser's resolver rules)
        for path in ("", "a/default/c/1"):
            answer = tab.goto(f"http://rebound.test:{server.port}{server.base}{path}")
            assert answer.status == 421
            assert tab.inner_text("body") == "Invalid Host header"
    finally:
        tab.close()


@pytest.mark.parametrize("path", ["live", "series?agent=default"])
def test_the_door_refuses_a_fetch_from_another_site(browser: Any, server: UiServer,
                                                    path: str) -> None:
    tab = browser.new_page()
    seen: list[tuple[int, str | None]] = []

    def relay(route: Any) -> None:  # the browser's own request, headers and all, passed on
        answer = route.fetch()
        seen.append((answer.status, route.request.headers.get("origin")))
        route.fulfill(response=answer)

    try:
        evil = "<!doctype html><title>evil</title><p id=done>"
        tab.route("http://evil.example/", lambda route: route.fulfill(
            status=200, content_type="text/html", body=evil))
        tab.route(server.url + path, relay)
        tab.goto("http://evil.example/")
        outcome = tab.evaluate("""url => fetch(url).then(r => 'read ' + r.status,
                                                      e => 'blocked')""",
                               server.url + path)
        # the browser sent the other site's Origin, and the door answered 403 (the relay
        # fulfils the request, so the page sees that status rather than a CORS failure)
        assert seen == [(403, "http://evil.example")]
        assert outcome == "read 403"
    finally:
        tab.close()
