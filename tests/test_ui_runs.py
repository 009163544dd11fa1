"""`scratch ui`'s run pages (issue 29: a run's artifacts and usage events shown per run): the
runs, one run (iterations, workers, artifacts, usage events), an artifact's lines, versions
and grep; who may see which run; every link resolving; in Chromium at 1280 and 390 px.

One store for the module, made by real calls (the CLI, in-process): run r1 with workers w1,
w2 and w10 and a coordinator boss over two iterations, an artifact put twice, a wide one of
150 lines (one of 200,000 characters) read in place (a refusal, a grep), usage events from
``finish`` (102 of them, so their table pages); run r2 with worker ops; an agent solo in no
run that reads an artifact of r1 by its reference. A real ``scratch ui`` process serves it.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui_support import UiServer, scratch

pytestmark = pytest.mark.xdist_group("ui-runs")  # one worker builds the module's store

REPORT = b'{"pods": 60, "failed": ["cert-manager-5d7b", "loki-0"], "restarts": 185}\n'
REPORT2 = REPORT + b'{"pods": 61, "failed": [], "restarts": 186}\n'
LONG = 200_000  # characters of line 1 of the wide artifact
WIDE = (b'{"id": 0, "blob": "' + b"x" * LONG + b'"}\n' + b"".join(
    b'{"id": %d, "level": "%s"}\n' % (n, b"error" if n % 10 == 0 else b"info")
    for n in range(1, 150)))
EXTRA_EVENTS = 100  # more usage events of w2, so the run's table of them pages


def run_cli(home: Path, *args: str, input: bytes | None = None, code: int = 0) -> Any:
    from tests.helpers import cli
    done = cli(*args, input=input, env={"SCRATCH_HOME": str(home)})
    assert done.code == code, (args, done.err)
    return done


def seed_runs(home: Path) -> None:
    from scratch import runs

    def as_(agent: str, *args: str, run: str | None = "r1", input: bytes | None = None,
            extra: tuple[str, ...] = (), code: int = 0) -> Any:
        where = ("--run", run) if run else ()
        return run_cli(home, "--agent", agent, *where, *extra, *args, input=input, code=code)

    as_("w1", "artifact", "put", "r1", "report.json", input=REPORT)
    as_("w1", "artifact", "put", "r1", "report.json", input=REPORT2)
    as_("w2", "artifact", "put", "r1", "wide.ndjson", input=WIDE)
    as_("w2", "artifact", "read", "r1", "report.json")
    as_("boss", "artifact", "ls", "r1", extra=("--coordinator",))
    as_("boss", "runs", "iterate", "r1", extra=("--coordinator",))
    as_("w1", "head", "artifact:r1/wide.ndjson", "-n", "3", extra=("--iteration", "2"),
        code=3)  # refused: line 1 is over the per-call cap
    as_("w1", "grep", "artifact:r1/wide.ndjson", "error", "-m", "2", extra=("--iteration", "2"))
    as_("w1", "write", "notes", input=b"a note of w1\n", extra=("--iteration", "2"))
    as_("w1", "artifact", "read", "r1", "wide.ndjson", extra=("--iteration", "2"))  # a pointer
    as_("w1", "finish", extra=("--iteration", "2"))
    as_("w2", "finish")
    as_("w10", "artifact", "ls", "r1")  # sorts after w2, naturally
    as_("ops", "artifact", "put", "r2", "other.txt", run="r2", input=b"of run r2\n")
    as_("ops", "finish", run="r2")
    as_("solo", "head", "artifact:r1/report.json", "-n", "1", run=None)
    for _ in range(EXTRA_EVENTS):
        runs.finish_worker(home, agent="w2", session="default", run="r1", iteration=1)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("ui-runs") / "store"
    seed_runs(home)
    return home


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[UiServer]:
    srv = UiServer(home)
    yield srv
    srv.stop()


def rows(page: str, table_id: str) -> list[list[str]]:
    """The cells of a table's body rows, as text."""
    body = page.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    found = re.findall(r"<tr[ >].*?</tr>", body.split("<tbody", 1)[-1], flags=re.S)
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
             for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)] for r in found]


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def shown(home: Path, *args: str) -> Any:
    out = scratch(home, "--json", *args)
    return json.loads(out.stdout)["data"]


def tokens_of(home: Path, content: bytes) -> int:
    """What `scratch tokens` counts of ``content`` (the default agent's tokenizer)."""
    return int(json.loads(scratch(home, "--json", "tokens", input=content).stdout)["data"][
        "count"])


# -- the figures ------------------------------------------------------------------------------


def test_the_runs_page_lists_each_run_with_the_figures_scratch_runs_gives(server: UiServer,
                                                                         home: Path) -> None:
    listed = {r["run"]: r for r in shown(home, "runs")["runs"]}
    page = server.get("runs")
    assert page.status == 200
    got = {r[0]: r[1:6] for r in rows(page.text, "runs")}
    assert (listed["r1"]["iterations"], listed["r1"]["artifacts"],
            listed["r1"]["usage_events"]) == (2, 2, 2 + EXTRA_EVENTS)
    # iterations, workers (w1, w2, w10, boss; solo only read one of its artifacts),
    # artifacts, their bytes, usage events: as `scratch runs` gives them
    assert got == {"r1": ["2", "4", "2", f"{listed['r1']['bytes']:,}", f"{2 + EXTRA_EVENTS}"],
                   "r2": ["1", "1", "1", f"{listed['r2']['bytes']:,}", "1"]}
    assert (listed["r1"]["bytes"], listed["r2"]["bytes"]) == (len(REPORT2) + len(WIDE), 10)
    assert [r[0] for r in rows(page.text, "runs")][0] == "r1"  # the latest active first
    assert 'href="' + server.base + 'r/r2"' in page.text


def test_the_run_page_shows_what_runs_show_gives(server: UiServer, home: Path) -> None:
    info = shown(home, "runs", "show", "r1")
    page = server.get("r/r1")
    assert page.status == 200
    facts = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>",
                            page.text.split('id="run-facts"', 1)[1].split("</dl>", 1)[0]))
    assert facts == {"iterations": "2", "workers": "4", "artifacts": "2",
                     "artifact bytes": f"{len(REPORT2) + len(WIDE):,}",
                     "usage events": f"{2 + EXTRA_EVENTS}"}
    workers = rows(page.text, "run-workers")
    by_name = {w["agent"]: w for w in info["workers"]}
    assert list(by_name) == ["boss", "w1", "w10", "w2"]  # the CLI's order
    assert [[w[0], w[1], w[3], w[4], w[5], w[6]] for w in workers] == [
        [w["agent"] + (" (coordinator)" if w["coordinator"] else ""),
         ", ".join(map(str, w["iterations"])), str(w["calls"]), f"{w['tokens_intercepted']:,}",
         f"{w['tokens_extracted']:,}", str(w["finished"])]
        for w in (by_name[a] for a in ("boss", "w1", "w2", "w10"))]  # the page's: natural
    assert [by_name[a]["iterations"] for a in ("boss", "w1", "w2", "w10")] == [
        [1], [1, 2], [1, 2], [2]]
    for agent in ("boss", "w1", "w2", "w10"):  # each worker linked to its agent's page
        assert f'<a href="{server.base}a/{agent}">{agent}</a>' in page.text
    arts = rows(page.text, "run-artifacts")
    assert [a[:8] for a in arts] == [
        ["report.json", "2", f"{len(REPORT2):,}", "2", f"{tokens_of(home, REPORT2):,}", "w1",
         "1", arts[0][7]],
        ["wide.ndjson", "1", f"{len(WIDE):,}", "150", f"{tokens_of(home, WIDE):,}", "w2", "1",
         arts[1][7]]]
    assert [a[8] for a in arts] == ["artifact:r1/report.json", "artifact:r1/wide.ndjson"]
    assert [(a["name"], a["version"], a["bytes"], a["agent"]) for a in info["artifacts"]] == [
        ("report.json", 2, len(REPORT2), "w1"), ("wide.ndjson", 1, len(WIDE), "w2")]
    assert [a[7] for a in arts] == [a["updated"].replace("T", " ")[:19] + " UTC"
                                    for a in info["artifacts"]]
    # usage events, per worker: intercepted against extracted, summed over its events
    events = info["usage"]
    assert len(events) == 2 + EXTRA_EVENTS
    for agent in ("w1", "w2"):
        mine = [e for e in events if e["agent"] == agent]
        block = page.text.split(f'data-agent="{agent}"', 1)[1].split('class="keys"', 1)[1]
        keys = re.findall(r'<span class="k (\w+)">(.*?)</span>', block)[:2]
        assert keys == [
            ("intercepted", f"intercepted {sum(e['tokens_intercepted'] for e in mine):,}"),
            ("extracted", f"extracted {sum(e['tokens_extracted'] for e in mine):,}")]
    table = rows(page.text, "usage-events")
    assert len(table) == 100  # a page of them
    assert [r[1:8] for r in table[:2]] == [
        [e["agent"], str(e["iteration"]), e["session"], f"{e['tokens_intercepted']:,}",
         f"{e['tokens_extracted']:,}", str(e["calls"]), e["reason"]] for e in events[:2]]
    rest = rows(server.get("r/r1?usage=2").text, "usage-events")
    assert [r[1] for r in rest] == [e["agent"] for e in events[100:]]
    its = rows(page.text, "run-iterations")
    assert [(r[0], r[2], r[3]) for r in its] == [("2", "boss", "3"), ("1", "", "3")]
    assert its[1][1] == "with the run"


def test_an_artifact_page_shows_its_lines_within_the_entry_pages_bounds(server: UiServer
                                                                       ) -> None:
    page = server.get("r/r1/e/wide.ndjson")
    assert page.status == 200 and len(page.body) < 200_000  # line 1 is 200,000 characters
    lines = rows(page.text, "lines")
    assert [r[0] for r in lines] == [str(n) for n in range(1, 101)]
    first = lines[0][1]
    assert first.startswith('{"id": 0, "blob": "xxx') and first.endswith("whole line ›")
    more = LONG + len('{"id": 0, "blob": ""}') - 1000
    assert f"… {more:,} more bytes" in first
    assert lines[1][1] == '{"id": 1, "level": "info"}'
    whole = re.search(r'href="([^"]*view=line&amp;[^"]*)"', page.text)
    assert whole is not None
    part = server.get(html.unescape(whole.group(1))[len(server.base):])
    assert part.status == 200
    assert text_of(part.text.split('id="line">', 1)[1].split("</pre>", 1)[0]) == \
        WIDE[:65536].decode()
    nxt = server.get("r/r1/e/wide.ndjson?view=lines&from=101")
    assert [r[0] for r in rows(nxt.text, "lines")][-1] == "150"
    grep = server.get("r/r1/e/wide.ndjson?view=grep&q=error")
    assert "14 matching lines in the entry; 14 shown." in text_of(grep.text)
    versions = rows(server.get("r/r1/e/report.json?view=versions").text, "artifact-versions")
    assert [(v[0], v[2], v[3], v[4], v[5]) for v in versions] == [
        ("2", f"{len(REPORT2)}", "2", "w1", "1"), ("1", f"{len(REPORT)}", "1", "w1", "1")]
    old = server.get("r/r1/e/report.json?view=lines&v=1")
    assert [r[1] for r in rows(old.text, "lines")] == [REPORT.decode().strip()]
    assert "lines 1–1 of 1 (version 1)" in text_of(old.text)


# -- where runs are named ---------------------------------------------------------------------


def test_a_run_is_linked_wherever_it_is_named(server: UiServer, home: Path) -> None:
    from scratch.store import ledger
    over = server.get("")
    assert [r[0] for r in rows(over.text, "overview-runs")] == ["r1", "r2"]
    assert f'href="{server.base}runs"' in over.text  # and in the navigation
    head = [r for r in ledger.read(home, agent="w1") if r["command"] == "grep"][-1]
    call = server.get(f"a/w1/c/{head['seq']}").text
    assert re.search(r"<dt>run</dt><dd><a href=\"" + re.escape(server.base) +
                     r"r/r1\">r1</a> iteration 2</dd>", call)
    assert f'href="{server.base}r/r1/e/wide.ndjson?v=1"' in call  # the artifact it read
    assert f'href="{server.base}r/r1"' in server.get("a/w1").text  # its runs
    read = [r for r in ledger.read(home, agent="w1") if r["command"] == "artifact read"][-1]
    assert read["entry"] == "artifact:r1/wide.ndjson"  # read as a pointer: its reference
    assert f'href="{server.base}r/r1/e/wide.ndjson?v=1">artifact:r1/wide.ndjson@1</a>' in \
        server.get(f"a/w1/c/{read['seq']}").text
    put = [r for r in ledger.read(home, agent="w1") if r["command"] == "artifact put"][-1]
    assert f'href="{server.base}r/r1/e/report.json?v=2"' in \
        server.get(f"a/w1/c/{put['seq']}").text  # an artifact, not an entry of w1's
    solo = [r for r in ledger.read(home, agent="solo") if r["command"] == "head"][-1]
    assert f'href="{server.base}r/r1/e/report.json?v=2"' in \
        server.get(f"a/solo/c/{solo['seq']}").text


def _links(page: str, base: str) -> list[str]:
    found = []
    for raw in re.findall(r'href="([^"]+)"', page):
        url = html.unescape(raw).split("#", 1)[0]
        if url.startswith(base) and not url.startswith(base + "static/"):
            found.append(url[len(base):])
    return found


def test_every_link_of_the_run_pages_resolves(server: UiServer) -> None:
    seen: dict[str, int] = {}
    frontier = ["runs", "r/r1", "r/r2", "r/r1/e/report.json?view=versions"]
    for _depth in range(2):
        following = []
        for path in frontier:
            if path in seen:
                continue
            answer = server.get(path)
            seen[path] = answer.status
            if answer.headers["content-type"].startswith("text/html"):
                ids = re.findall(r' id="([^"]+)"', answer.text)
                assert len(ids) == len(set(ids)), path
                following += _links(answer.text, server.base)
        frontier = [p for p in dict.fromkeys(following) if p not in seen]
    assert [p for p, code in seen.items() if code != 200] == []
    assert {"a/w1", "a/w2", "a/w10", "a/boss", "r/r1/e/wide.ndjson", "r/r1?usage=2"} <= set(seen)


@pytest.mark.parametrize("path", ["r/nope", "r/..", "r/%2E%2E", "r/r1/e/nope",
                                  "r/r1/e/events", "r/r1/e/../../a/w1", "r/nope/e/report.json",
                                  "r/r2/e/report.json"])
def test_a_run_or_artifact_that_is_not_there_is_404(server: UiServer, path: str) -> None:
    assert server.get(path).status == 404


def test_reading_the_run_pages_writes_nothing(server: UiServer, home: Path) -> None:
    def state() -> dict[str, bytes]:
        found = {str(p.relative_to(home)): p.read_bytes() for top in ("state", "runs")
                 for p in sorted((home / top).rglob("*")) if p.is_file()
                 and not p.name.endswith(".lock")}
        found["HEAD"] = subprocess.run(["git", "-C", str(home), "rev-parse", "HEAD"],
                                       capture_output=True, check=True).stdout
        return found
    before = state()
    for path in ("runs", "r/r1", "r/r1?usage=2", "r/r1/e/wide.ndjson?view=grep&q=x",
                 "r/r1/e/report.json?view=versions"):
        assert server.get(path).status == 200
    assert state() == before


# -- who sees which run -----------------------------------------------------------------------


def test_a_token_shows_the_runs_of_its_agent_and_no_other_agent(home: Path) -> None:
    tokens = {a: scratch(home, "mcp", "token", "add", a).stdout.decode().strip()
              for a in ("w1", "ops", "solo")}
    srv = UiServer(home, "--host", "0.0.0.0")
    try:
        def get(agent: str, path: str) -> Any:
            return srv.get(path, base=f"/{tokens[agent]}/")
        listed = get("w1", "runs")
        assert [r[0] for r in rows(listed.text, "runs")] == ["r1"]
        assert [r[0] for r in rows(get("w1", "").text, "overview-runs")] == ["r1"]
        for path in ("r/r2", "r/r2/e/other.txt"):
            assert get("w1", path).status == 404, path
        page = get("w1", "r/r1")
        assert page.status == 200
        assert [r[0] for r in rows(page.text, "run-workers")] == ["w1"]
        assert {r[1] for r in rows(page.text, "usage-events")} == {"w1"}
        arts = rows(page.text, "run-artifacts")
        assert [(a[0], a[5]) for a in arts] == [("report.json", "w1"),
                                                ("wide.ndjson", "another worker")]
        for other in ("w2", "w10", "boss", "ops", "solo"):  # never named
            assert not re.search(rf"\b{other}\b", text_of(page.text)), other
        assert "another worker" in text_of(get("w1", "r/r1/e/wide.ndjson").text)
        assert get("ops", "r/r1").status == 404
        assert [r[0] for r in rows(get("ops", "runs").text, "runs")] == ["r2"]
        seen = get("solo", "r/r1")  # it read an artifact of r1 by name: the run is shown
        assert seen.status == 200
        assert "No worker of this run is shown" in text_of(seen.text)
        assert [a[0] for a in rows(seen.text, "run-artifacts")] == ["report.json",
                                                                      "wide.ndjson"]
        assert get("solo", "r/r2").status == 404
    finally:
        srv.stop()


# -- in the browser ---------------------------------------------------------------------------


RUN_PAGES = {"runs": "runs", "run": "r/r1", "run-usage-2": "r/r1?usage=2",
             "artifact": "r/r1/e/wide.ndjson", "artifact-line": "r/r1/e/wide.ndjson?view=line&n=1",
             "artifact-grep": "r/r1/e/wide.ndjson?view=grep&q=error",
             "artifact-versions": "r/r1/e/report.json?view=versions"}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from tests.test_ui_browser import CHROMIUM, SHOTS
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        except Exception as exc:  # a Chromium that cannot start here
            pytest.skip(f"Chromium does not start: {str(exc).splitlines()[0]}")
        yield b
        b.close()


@pytest.mark.parametrize("width", (1280, 390))
@pytest.mark.parametrize("name", list(RUN_PAGES))
def test_each_run_page_fits_is_bounded_and_is_kept_as_a_screenshot(
        browser: Any, server: UiServer, name: str, width: int) -> None:
    from tests.test_ui_browser import MAX_HTML, MAX_MS, Page
    p = Page(browser, server, width)  # the browser tests' own tab: its console kept
    try:
        answer = p.open(RUN_PAGES[name])
        assert answer.status == 200
        assert len(answer.body()) <= MAX_HTML
        ms = p.load_ms()
        if ms > MAX_MS:  # the machine may be busy: the bound holds when it is not, once more
            p.open(RUN_PAGES[name])
            ms = min(ms, p.load_ms())
        assert ms <= MAX_MS, f"{name}: {ms:.0f} ms to load"
        assert p.tab.evaluate("document.documentElement.scrollWidth") <= width, name
        ids = p.tab.eval_on_selector_all("[id]", "es => es.map(e => e.id)")
        assert len(ids) == len(set(ids))
        p.shot(f"{name}-{width}")
        assert [m for m in p.console if m.startswith(("error", "pageerror"))] == []
    finally:
        p.close()


def test_a_worker_of_the_run_page_opens_its_agent_page(browser: Any, server: UiServer) -> None:
    tab = browser.new_page()
    try:
        tab.goto(server.url + "r/r1")
        tab.click("#run-workers >> text=w2")
        tab.wait_for_url("**/a/w2")
        assert tab.inner_text("h1").startswith("w2")
        tab.goto(server.url + "r/r1")
        tab.click("#run-artifacts >> text=wide.ndjson")
        tab.wait_for_selector("#lines")
        assert tab.inner_text("#L2 td.t") == '{"id": 1, "level": "info"}'
    finally:
        tab.close()


def test_a_usage_event_is_kept_beside_the_calls_but_counts_as_none(server: UiServer,
                                                                   home: Path) -> None:
    from scratch.store import ledger
    workers = {w["agent"]: w for w in shown(home, "runs", "show", "r1")["workers"]}
    recorded = ledger.read(home, agent="w2")
    assert sum(1 for r in recorded if r.get("event")) == 1 + EXTRA_EVENTS
    over = server.get("")
    calls = {r[0]: r[1] for r in rows(over.text, "agents")}
    assert (calls["w1"], calls["w2"]) == (str(workers["w1"]["calls"]),
                                          str(workers["w2"]["calls"])) == ("7", "3")
    assert "scratchpad_usage" not in [r[0] for r in rows(over.text, "top-commands")]
    facts = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", server.get("a/w2").text))
    assert facts["calls"] == "3"


def test_a_workers_budget_in_each_run_and_iteration_is_its_own_bar(server: UiServer,
                                                                    home: Path) -> None:
    """A worker's calls in a run charge a budget of their own per run and iteration: its
    agent's page shows each (the latest charged first), named, with what the ledger says
    those calls charged; the session's page too."""
    from scratch.store import ledger
    mine = [r for r in ledger.read(home, agent="w1") if not r.get("event")]
    used = {it: sum(r["tokens"] for r in mine if r.get("iteration") == it) for it in (1, 2)}
    assert used[2] > 0 and used[1] == 0  # the refusal and the grep; the puts charged nothing
    for path in ("a/w1", "a/w1/s/default"):
        page = server.get(path).text
        where = [text_of(w) for w in re.findall(r'<div class="where">(.*?)</div>', page)]
        assert where == ["in run r1, iteration 2 (a worker's budget of its own)",
                         "in run r1, iteration 1 (a worker's budget of its own)"], path
        keys = re.findall(r'<span class="k used">used ([\d,]+)</span>', page)
        assert keys == [f"{used[2]:,}", f"{used[1]:,}"], path
        refused = re.findall(r'<span class="k refusal">(\d+) refused</span>', page)
        assert refused == ["1", "0"], path
