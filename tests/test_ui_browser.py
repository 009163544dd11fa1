"""`scratch ui` in a real browser: headless Chromium (the system's) driven by Playwright.

Opens the overview (its charts drawn by uPlot), a session, an entry (paged, grepped), the
search; sees a call made while the page is open appear on it; and has the door refuse a page
without the token (401), one reached under another host name (421, a DNS rebinding as the
browser does it) and a fetch from another site (403). Screenshots of every page are saved
under build/ui-screenshots/ (named at the end of the test run). Skips, saying why, without
Chromium or Playwright.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui_support import REPO, UiServer, seed

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "build" / "ui-screenshots"

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed "
                               "(pip install playwright; it drives the system's Chromium)")
if not CHROMIUM.exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("ui-browser") / "store"
    seed(home)
    return home


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[UiServer]:
    srv = UiServer(home)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser(server: UiServer) -> Iterator[Any]:
    SHOTS.mkdir(parents=True, exist_ok=True)
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

    def __init__(self, browser: Any, server: UiServer) -> None:
        self.tab = browser.new_page(viewport={"width": 1280, "height": 900})
        self.server = server
        self.console: list[str] = []
        self.tab.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.tab.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def open(self, path: str = "") -> Any:
        answer = self.tab.goto(self.server.url + path)
        self.tab.wait_for_load_state("load")
        return answer

    def shot(self, name: str) -> None:
        self.tab.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    def rows(self, table: str) -> list[list[str]]:
        return self.tab.eval_on_selector_all(
            f"#{table} tbody tr, table#{table} > tr",
            "rows => rows.map(r => [...r.cells].map(c => c.innerText))")

    def close(self) -> None:
        self.tab.close()


@pytest.fixture
def page(browser: Any, server: UiServer) -> Iterator[Page]:
    p = Page(browser, server)
    yield p
    assert [m for m in p.console if m.startswith(("error", "pageerror"))] == []
    p.close()


def test_the_overview_draws_a_chart_per_session(page: Page) -> None:
    assert page.open().status == 200
    page.tab.wait_for_selector("#charts .uplot canvas")
    titles = page.tab.eval_on_selector_all("#charts .uplot .u-title",
                                           "ts => ts.map(t => t.innerText)")
    assert titles == ["default / default", "default / long", "default / s1", "ops / default"]
    legend = page.tab.eval_on_selector_all("#charts figure:first-child .u-legend .u-label",
                                           "ls => ls.map(l => l.innerText)")
    assert legend == ["Time", "extracted", "intercepted", "refused"]
    agents = {r[0]: r for r in page.rows("agents")}
    assert set(agents) == {"default", "ops"}
    assert page.rows("top-commands")[0][0] in ("ingest", "slice")
    page.shot("overview")


def test_a_session_pages_back_through_its_calls(page: Page) -> None:
    page.open("a/default/s/long")
    page.tab.wait_for_selector("#charts .uplot canvas")  # the session's own chart
    assert len(page.rows("calls")) == 50
    page.tab.click("nav.pager >> text=‹ previous")
    page.tab.wait_for_url("**/a/default/s/long?page=2")
    calls = page.rows("calls")
    assert len(calls) == 100 and calls[0][3] == "scratch slice app/lines 101 101"
    page.shot("session-long")
    page.open("a/default/s/s1")
    refused = page.rows("calls")[0]
    assert refused[4].startswith("refused get_in_too_large")
    assert "try:" in refused[4] and "scratch get-in pods items --fit" in refused[4]
    page.shot("session-refusal")


def test_an_entry_opens_pages_and_greps(page: Page) -> None:
    page.open("a/default/e/app/lines")
    assert page.tab.inner_text("#pointer pre").startswith("stored app/lines (version 1)")
    assert page.rows("lines")[0] == ["1", "line 1 ok"]
    page.shot("entry")
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
    page.shot("entry-grep")
    page.open("a/default/e/pods?view=schema")
    page.tab.wait_for_selector("#schema details")
    page.shot("entry-schema")
    page.open("a/default/e/notes?view=versions")
    page.tab.click("text=diff 1→2")
    page.tab.wait_for_selector("#diff .d.add")
    assert page.tab.inner_text("#diff .d.remove") == "-b"
    page.shot("entry-diff")
    page.open("a/default/e/events")
    page.tab.click("nav.pager >> text=next ›")
    page.tab.wait_for_url("**view=log&since=100")
    assert page.rows("log")[0][0] == "101"
    page.shot("entry-log")


def test_markup_in_an_entry_stays_text(page: Page) -> None:
    page.open("a/default/e/markup")
    assert page.rows("lines") == [["1", "<script>alert('x')</script> & \"quoted\""]]
    assert page.tab.evaluate("document.querySelectorAll('main script').length") == 0


def test_search_from_the_header(page: Page) -> None:
    page.open()
    page.tab.fill("header form.search input[name=q]", "disk full")
    page.tab.press("header form.search input[name=q]", "Enter")
    page.tab.wait_for_selector("#found")
    assert page.tab.inner_text("#found") == "5 matching lines."
    assert page.tab.eval_on_selector_all("section.hits mark", "ms => ms.map(m => m.innerText)"
                                         ) == ["disk full"] * 5
    page.shot("search")
    page.tab.click("section.hits td.n a >> text=150")
    page.tab.wait_for_selector("#L150")
    assert page.tab.evaluate("location.hash") == "#L150"
    page.shot("search-hit")


def test_a_call_made_while_the_page_is_open_appears(page: Page, home: Path) -> None:
    from scratch import ledger
    from tests.helpers import cli
    page.open("a/default/s/s1")
    before = len(page.rows("calls"))
    done = cli("--session", "s1", "grep", "app/lines", "disk", "-m", "1",
               env={"SCRATCH_HOME": str(home)})
    assert done.code == 0, done.err
    seq = ledger.read(home, agent="default", session="s1")[-1]["seq"]
    row = page.tab.wait_for_selector(f'#calls tr[data-seq="{seq}"]', timeout=20_000)
    assert "scratch grep app/lines disk -m 1" in row.inner_text()
    assert len(page.rows("calls")) == before + 1
    assert page.tab.inner_text("p.summary").startswith(f"{before + 1} calls; page 1 of 1")
    page.shot("session-live")
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
    assert page.tab.inner_text("p.summary") == f"{before} entries."
    done = cli("write", "live/new", input=b"fresh\n", env={"SCRATCH_HOME": str(home)})
    assert done.code == 0, done.err
    page.tab.wait_for_selector('#entries tr[data-key="default/live/new"]', timeout=20_000)
    assert page.rows("entries")[0][1:3] == ["live/new", "file"]  # newest first
    cli("write", "notes", input=b"a\nB\nc\nd\ne\n", env={"SCRATCH_HOME": str(home)})
    page.tab.wait_for_selector('#entries tr[data-key="default/notes"] td:nth-child(6) >> '
                               'text="3"', timeout=20_000)
    assert [r[1] for r in page.rows("entries")][:2] == ["notes", "live/new"]  # once, on top
    assert page.tab.inner_text("p.summary") == f"{before + 1} entries."  # kept true
    page.shot("entries-live")


def test_the_door_refuses_a_page_without_its_token(browser: Any, server: UiServer) -> None:
    tab = browser.new_page()
    try:
        answer = tab.goto(f"{server.origin}/")
        assert answer.status == 401
        assert tab.inner_text("body").startswith("this page needs the URL")
        assert tab.goto(f"{server.origin}/{server.token[:-2]}/").status == 401
    finally:
        tab.close()


def test_the_door_refuses_a_rebound_host_name(browser: Any, server: UiServer) -> None:
    tab = browser.new_page()
    try:  # rebound.test resolves to the server's address (the browser's resolver rules)
        answer = tab.goto(f"http://rebound.test:{server.port}{server.base}")
        assert answer.status == 421
        assert tab.inner_text("body") == "Invalid Host header"
    finally:
        tab.close()


def test_the_door_refuses_a_fetch_from_another_site(browser: Any, server: UiServer) -> None:
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
        tab.route(server.url + "live", relay)
        tab.goto("http://evil.example/")
        outcome = tab.evaluate("""url => fetch(url).then(r => 'read ' + r.status,
                                                      e => 'blocked')""",
                               server.url + "live")
        # the browser sent the other site's Origin, and the door answered 403 (the relay
        # fulfils the request, so the page sees that status rather than a CORS failure)
        assert seen == [(403, "http://evil.example")]
        assert outcome == "read 403"
    finally:
        tab.close()
