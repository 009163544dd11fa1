"""`scratch ui` over plain HTTP (no browser): its door's refusals and status codes, the
pages' content and paging, escaping, and the live endpoint; a real server process each."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.ui_support import (
    NATURAL,
    ODD_SESSION,
    SCRATCH,
    UiServer,
    env_for,
    scratch,
    seed,
    seed_more,
)

pytestmark = pytest.mark.xdist_group("ui-http")  # one worker builds the module's store

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")


def ledger_of(home: Path, session: str | None = None) -> list[dict[str, object]]:
    from scratch.store import ledger
    return ledger.read(home, agent="default", session=session)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    home = tmp_path_factory.mktemp("ui-http") / "store"
    got = seed(home)
    seed_more(home)
    return home, got


@pytest.fixture(scope="module")
def home(seeded: tuple[Path, dict[str, str]]) -> Path:
    return seeded[0]


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[UiServer]:
    srv = UiServer(home)
    yield srv
    srv.stop()


def rows(html: str, table_id: str) -> list[str]:
    body = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr[ >].*?</tr>", body.split("<tbody", 1)[-1], flags=re.S)


def text_of(html: str) -> str:
    """The page's text, without its tags."""
    return re.sub(r"<[^>]+>", "", html)


def cells(row: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


# -- the door ---------------------------------------------------------------------------------


def test_the_url_is_loopback_with_a_random_token(server: UiServer) -> None:
    assert server.host == "127.0.0.1"
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", server.token)


def test_a_page_carries_a_strict_csp_and_no_referrer(server: UiServer) -> None:
    answer = server.get("")
    assert answer.status == 200
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert answer.headers["content-security-policy"] == CSP
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("base", ["/", "/wrong-token/", "/static/", "/ping"])
def test_without_the_token_every_path_is_401(server: UiServer, base: str) -> None:
    answer = server.get("", base=base)
    assert answer.status == 401
    assert answer.headers["www-authenticate"] == 'Bearer realm="scratch ui"'
    assert b"<html" not in answer.body and server.token.encode() not in answer.body


def test_a_token_one_character_off_is_401(server: UiServer) -> None:
    other = server.token[:-1] + ("A" if server.token[-1] != "A" else "B")
    assert server.get("", base=f"/{other}/").status == 401
    assert server.get("", base=f"/{server.token}x/").status == 401


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.nip.io:9"])
def test_a_foreign_host_header_is_421(server: UiServer, host: str) -> None:
    answer = server.get("", headers={"Host": host})
    assert (answer.status, answer.text) == (421, "Invalid Host header")


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "127.0.0.1"])
def test_a_loopback_host_header_is_served(server: UiServer, host: str) -> None:
    assert server.get("", headers={"Host": host.format(port=server.port)}).status == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "https://attacker.test:8443",
                                    "null"])
def test_a_foreign_origin_is_403(server: UiServer, origin: str) -> None:
    assert server.get("live", headers={"Origin": origin}).status == 403


def test_the_pages_own_origin_is_served(server: UiServer) -> None:
    answer = server.get("live", headers={"Origin": server.origin})
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_the_page_is_read_only(server: UiServer, method: str) -> None:
    answer = server.get("", method=method)
    assert (answer.status, answer.headers["allow"]) == (405, "GET, HEAD")


def test_head_answers_without_a_body(server: UiServer) -> None:
    answer = server.get("", method="HEAD")
    assert (answer.status, answer.body) == (200, b"")
    assert answer.headers["content-security-policy"] == CSP


def test_static_files_and_the_ping(server: UiServer) -> None:
    js = server.get("static/uPlot.iife.min.js")
    assert js.status == 200 and js.body.startswith(b"/*! https://github.com/leeoniya/uPlot")
    assert js.headers["content-type"] == "text/javascript; charset=utf-8"
    assert server.get("static/uPlot.LICENSE").body.startswith(b"The MIT License")
    assert server.get("static/ui.css").headers["content-type"] == "text/css; charset=utf-8"
    assert server.get("static/../app.py").status == 404
    assert server.get("static/nope.js").status == 404
    assert server.get("ping").body == b"ok"


def test_unknown_pages_and_entries_are_404(server: UiServer) -> None:
    assert server.get("nowhere").status == 404
    assert server.get("a/default/e/missing").status == 404
    assert server.get("a/bad..name/e/x").status == 404
    assert server.get("a/default/s/no-such-session").status == 404
    assert server.get("a/default/e/..%2F..%2Fetc%2Fpasswd").status == 404


def test_another_host_needs_tokens(home: Path, tmp_path: Path) -> None:
    empty = tmp_path / "store"
    out = subprocess.run([*SCRATCH, "ui", "--host", "0.0.0.0"], env=env_for(empty),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.startswith("error [tokens_required]: refusing to serve on 0.0.0.0 "
                                 "without tokens")
    assert out.stdout == ""


def test_another_host_takes_an_mcp_token_and_shows_its_agent_only(tmp_path: Path) -> None:
    home = tmp_path / "store"
    scratch(home, "write", "mine", input=b"mine\n", agent="ops")
    scratch(home, "write", "not-mine", input=b"theirs\n")
    token = scratch(home, "mcp", "token", "add", "ops").stdout.decode().strip()
    srv = UiServer(home, "--host", "0.0.0.0")
    try:
        assert srv.base == "/TOKEN/"  # the URL says where the token goes; it has none
        assert srv.get("", base="/TOKEN/").status == 401
        page = srv.get("entries", base=f"/{token}/")
        assert page.status == 200
        assert [cells(r)[1] for r in rows(page.text, "entries")] == ["mine"]
        assert srv.get("a/default/e/not-mine", base=f"/{token}/").status == 404
        for other_agent in ("a/default", "a/default/c/1", "a/default/s/default",
                            "series?agent=default", "live?agent=default"):
            assert srv.get(other_agent, base=f"/{token}/").status == 404, other_agent
        assert srv.get("a/ops", base=f"/{token}/").status == 200
        # a Host header other than loopback is served: the bind was chosen, the token guards
        assert srv.get("", base=f"/{token}/", headers={"Host": "box.lan:1"}).status == 200
        # the page's own origin may fetch; another site's may not
        own = {"Host": "box.lan:1", "Origin": "http://box.lan:1"}
        assert srv.get("live", base=f"/{token}/", headers=own).status == 200
        other = {"Host": "box.lan:1", "Origin": "http://evil.example"}
        assert srv.get("live", base=f"/{token}/", headers=other).status == 403
        assert srv.get("live", base=f"/{token}/", headers={"Origin": "http://127.0.0.1"}
                       ).status == 403  # loopback origins are the loopback bind's only
    finally:
        srv.stop()


def test_a_bad_port_is_a_usage_error(tmp_path: Path) -> None:
    out = subprocess.run([*SCRATCH, "ui", "--port", "70000"], env=env_for(tmp_path / "s"),
                         capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stderr) == (2, "error [invalid_argument]: --port takes 0 to "
                                               "65535\n")


# -- the pages --------------------------------------------------------------------------------


def test_the_overview_lists_agents_sessions_and_top_commands(server: UiServer,
                                                             home: Path) -> None:
    page = server.get("").text
    calls = ledger_of(home)
    agents = {cells(r)[0]: cells(r) for r in rows(page, "agents")}
    assert list(agents) == ["default", "ops", *NATURAL]  # natural order: t2 before t10
    assert agents["default"][1:7] == [
        f"{len(calls):,}", f"{sum(r['tokens'] for r in calls):,}",
        f"{sum(r['intercepted'] for r in calls):,}", "1", "0", "6"]
    assert agents["default"][7] == "4 q, s1, long +1 more"  # the latest sessions first
    assert agents["ops"][1:3] == ["1", "0"]
    assert agents["t3"][7] == f"2 {ODD_SESSION}, default"
    slices = [r for r in calls if r["command"] == "slice"]
    assert len(slices) == 250 and all(r["outcome"] == "ok" for r in slices)
    top = {c[0]: c for c in map(cells, rows(page, "top-commands"))}
    assert top["slice"] == ["slice", "250", f"{sum(r['tokens'] for r in slices):,}", "0", "0"]
    assert top["get-in"][1] == "1" and top["get-in"][4] == "1"
    ingests = [r for r in calls if r["command"] == "ingest"]
    assert [r["interface"] for r in ingests] == ["cli", "mcp-stdio"]
    assert all(r["intercepted"] > 30_000 for r in ingests)
    assert top["ingest"][1:4] == ["2", f"{sum(r['tokens'] for r in ingests):,}",
                                  f"{sum(r['intercepted'] for r in ingests):,}"]
    data = json.loads(page.split('id="charts-data">', 1)[1].split("</script>", 1)[0])
    assert [c["title"] for c in data] == ["default", "t3"]  # the agents that spent tokens
    assert [c["src"] for c in data] == [f"{server.base}series?agent=default&points=300",
                                        f"{server.base}series?agent=t3&points=300"]
    series = data[0]["series"]
    assert series["charged"][0] == 0 and len(series["t"]) == len(calls) + 1
    assert series["charged"][-1] == sum(r["tokens"] for r in calls)
    assert series["intercepted"][-1] == sum(r["intercepted"] for r in calls)
    (refused,) = [r for r in calls if r["outcome"] == "refused"]
    at = series["seq"].index(refused["seq"])
    assert [i for i, v in enumerate(series["refused"]) if v is not None] == [at]
    assert series["refused"][at] == series["charged"][at]  # a mark on the charged line
    assert series["command"][at] == "get-in" and series["tokens"][at] == refused["tokens"]
    assert series["charged"] == sorted(series["charged"])
    assert len(rows(page, "calls")) == 20
    assert json.loads(server.get("series?agent=default&points=300").body) == {"series": series}


def test_a_refusal_shows_its_code_message_and_suggestions_as_the_cli_spells_them(
        server: UiServer, home: Path) -> None:
    page = server.get("a/default/s/s1").text
    refused, head, ingest = rows(page, "calls")
    assert cells(refused)[2] == "mcp-stdios1"
    (record,) = [r for r in ledger_of(home, "s1") if r["outcome"] == "refused"]
    from scratch.calls import Call
    from scratch.cli.spelling import shell_line
    # the arguments the MCP call carried, as the CLI would write them
    assert cells(refused)[3] == shell_line(Call("get-in", record["args"]))  # type: ignore[arg-type]
    assert cells(refused)[3].startswith("scratch get-in pods items")
    assert record["code"] == "get_in_too_large" and record["suggestions"]
    assert f"<code>{record['code']}</code>" in refused
    assert str(record["message"]).startswith("this answer costs ~")
    shown = re.findall(r"<code>(scratch [^<]*)</code>", refused.split('"suggestions"', 1)[1])
    assert shown == [shell_line(Call(s["command"], s["args"]))  # type: ignore[index]
                     for s in record["suggestions"]]  # type: ignore[attr-defined]
    assert "scratch get-in pods items --fit" in shown
    assert 'href="' + server.base + 'a/default/e/pods">pods</a>' in refused
    assert cells(head)[3] == "scratch head notes -n 2"
    # what no command line carries (the content, as the ledger's preview) follows as a comment
    # what no command line carries (the content, as the ledger keeps its size) said after it
    assert re.fullmatch(r"scratch ingest mcp/pods --tool kubectl content: [\d,]+ bytes",
                        cells(ingest)[3])
    assert 'href="' + server.base + 'a/default/e/notes?v=2">notes@2</a>' in head


def test_a_long_timeline_is_paged_newest_page_first(server: UiServer, home: Path) -> None:
    seqs = [int(r["seq"]) for r in ledger_of(home, "long")]  # type: ignore[call-overload]
    assert len(seqs) == 250
    page = server.get("a/default/s/long").text
    assert "250 calls; page 3 of 3 (100 a page)." in text_of(page)
    assert '<span data-count="250" data-one="call" data-many="calls">250 calls</span>' in page
    assert [int(cells(r)[0]) for r in rows(page, "calls")] == seqs[200:]
    assert 'data-live="' in page  # the last page takes new calls
    first = server.get("a/default/s/long?page=1").text
    assert [int(cells(r)[0]) for r in rows(first, "calls")] == seqs[:100]
    assert 'data-live="' not in first
    assert cells(rows(first, "calls")[4])[3] == "scratch slice app/lines 5 5"
    held = server.get(f"a/default/s/long?seq={seqs[149]}").text
    assert "page 2 of 3" in held and f'id="c{seqs[149]}"' in held


def test_a_session_of_many_calls_is_charted_in_at_most_1000_points(tmp_path: Path) -> None:
    """2,500 calls into a ledger bounded at 400 KB: the oldest are dropped (and said so), the
    rest paged and charted."""
    from scratch.store import ledger
    home = tmp_path / "store"
    for n in range(2500):
        ledger.append(home, ledger.make(interface="cli", agent="default", session="many",
                                        command="head", args={"ref": "x"}, tokens=2,
                                        outcome="refused" if n % 10 == 0 else "ok",
                                        at=f"2026-12-02T00:{n // 60 % 60:02d}:{n % 60:02d}."
                                           f"{n // 3600:03d}Z"), max_bytes=400_000)
    kept, dropped = ledger.count(home, agent="default"), ledger.dropped(home, "default")
    assert kept + dropped == 2500 and 1000 < kept < 2500
    srv = UiServer(home)
    try:
        page = srv.get("a/default/s/many").text
        (chart,) = json.loads(page.split('id="charts-data">', 1)[1].split("</script>", 1)[0])
        chart = chart["series"]
        assert len(chart["t"]) == 1000 and chart["charged"][0] == 0
        kept_calls = ledger.read(home, agent="default")
        refused = [r["seq"] for r in kept_calls if r["outcome"] == "refused"]
        assert chart["charged"][-1] == 2 * kept
        # the last refusals are all marked (at most 200 are sure to be), each on its call
        marked = [q for q, v in zip(chart["seq"], chart["refused"]) if v is not None]
        assert marked[-200:] == refused[-200:]
        assert chart["charged"] == sorted(chart["charged"])
        pages = (kept + 99) // 100
        assert (f"{kept:,} calls; page {pages} of {pages} (100 a page). The oldest "
                f"{dropped:,} calls of this agent were dropped to keep its ledger within "
                "ledger.max_bytes.") in text_of(page)
        assert len(rows(page, "calls")) == kept - (pages - 1) * 100
        overview = srv.get("").text
        assert (f'id="dropped">Older calls dropped to keep the ledger within ledger.max_bytes: '
                f"default {dropped:,} (not counted here).") in overview
    finally:
        srv.stop()


def test_the_overview_charts_many_busy_agents_with_long_names_within_the_bound(
        tmp_path: Path) -> None:
    """12 agents named with 128 characters, 1,001 calls each: the overview's 12 charts hold
    300 points each (a point names no agent: the chart does), so the page stays far under
    1 MB (at 1,000 points a chart, each naming its agent, it was 2 MB); a chart asks for the
    same 300 points again when it redraws, an agent's own page for 1,000."""
    from scratch.store import ledger
    home = tmp_path / "store"
    names = [f"{n:02d}-" + "a" * 125 for n in range(12)]
    for agent in names:
        for n in range(1001):
            ledger.append(home, ledger.make(
                interface="cli", agent=agent, session="s", command="head", args={"ref": "x"},
                tokens=3, at=f"2026-12-02T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"))
    srv = UiServer(home)
    try:
        page = srv.get("")
        assert page.status == 200 and len(page.body) < 400_000, len(page.body)
        blocks = json.loads(page.text.split('id="charts-data">', 1)[1].split("</script>", 1)[0])
        assert [b["agent"] for b in blocks] == names
        assert {len(b["series"]["t"]) for b in blocks} == {300}
        assert all("agent" not in b["series"] for b in blocks)
        assert {b["series"]["charged"][-1] for b in blocks} == {3 * 1001}
        again = json.loads(srv.get(blocks[0]["src"][len(srv.base):]).body)["series"]
        assert again == blocks[0]["series"]
        own = srv.get(f"a/{names[0]}").text
        (chart,) = json.loads(own.split('id="charts-data">', 1)[1].split("</script>", 1)[0])
        assert len(chart["series"]["t"]) == 1000 and chart["agent"] == names[0]
    finally:
        srv.stop()


def test_past_200_agents_a_filter_is_a_field_to_type_the_name_in(tmp_path: Path) -> None:
    """The entries and search pages' agent filter lists the agents up to 200; past that (a
    list of 10,000 would be megabytes) it is a field, and the name typed filters alike."""
    from scratch.store import ledger
    home = tmp_path / "store"
    scratch(home, "write", "notes", input=b"one note\n", agent="a-250")
    for n in range(1, 251):
        ledger.append(home, ledger.make(interface="cli", agent=f"a-{n}", session="s",
                                        command="ls", args={}))
    srv = UiServer(home)
    try:
        for path in ("entries", "search?q=note"):
            page = srv.get(path).text
            assert '<select name="agent">' not in page, path
            assert '<input type="search" name="agent" value="" placeholder="any" ' \
                   'aria-label="agent">' in page, path
        found = srv.get("entries?agent=a-250").text
        assert [cells(r)[:2] for r in rows(found, "entries")] == [["a-250", "notes"]]
        assert 'name="agent" value="a-250"' in found
        none = srv.get("entries?agent=a-251")  # a name typed that no agent has: none match
        assert none.status == 200 and "No entries match" in none.text
        listed = srv.get("search?q=note&agent=a-250").text
        assert "1 matching line in 1 entry of 1." in text_of(listed)
    finally:
        srv.stop()


def test_calls_through_the_proxy_show_the_upstream_and_the_stored_output(tmp_path: Path
                                                                        ) -> None:
    """An agent behind `scratch mcp proxy` (a real upstream, the SDK's client): its calls to
    the upstream, the output the proxy stored instead of showing, and that entry's pointer
    spelled as the MCP client was shown it."""
    from scratch.store import ledger
    from tests.test_mcp_proxy import fixture_entry, proxy_client, servers_file
    home = tmp_path / "store"
    home.mkdir()
    (home / "scratch.toml").write_text('[mcp.servers.fx.scratchpad]\n"*" = { min_tokens = 2000 }\n')
    c = proxy_client(home, servers_file(tmp_path, {"fx": fixture_entry()}), mode="2026-07-28")
    try:
        assert not c.call("text", {"size": 500}).is_error
        stored = c.call("text", {"size": 200_000}).meta["scratch"]["stored"]
    finally:
        c.close()
    upstream, ingest, *_ = ledger.read(home, agent="default")
    srv = UiServer(home)
    try:
        page = srv.get(f"a/default/s/{upstream['session']}").text
        shown = [cells(r) for r in rows(page, "calls")]
        assert shown[0][2].startswith("proxy")
        assert shown[0][3] == "fx: text upstream tool, through the proxy"
        assert shown[1][3].startswith("scratch ingest ") and shown[1][8] == f"{stored}@1"
        assert shown[1][6] == f"{ingest['intercepted']:,}"
        summary, text = pointer_of(srv.get(f"a/default/e/{stored}").text)
        assert summary == (f"The pointer, as the agent saw it: stored by call #{ingest['seq']} "
                           f"(proxy, {ingest['tokens']:,} tokens)")
        assert text.startswith(f"stored {stored} (version 1): ") and '{"name":' in text
    finally:
        srv.stop()


def test_the_entries_page_filters_by_agent_tool_and_format(server: UiServer) -> None:
    def names(query: str) -> list[tuple[str, str]]:
        return [(c[0], c[1]) for c in map(cells, rows(server.get("entries" + query).text,
                                                      "entries"))]
    every = names("")
    assert sorted(every) == [("default", "app/lines"), ("default", "events"),
                             ("default", "markup"), ("default", "mcp/pods"), ("default", "notes"),
                             ("default", "pods"), ("ops", "theirs"), ("t1", "note"),
                             ("t10", "note"), ("t12", "note"), ("t2", "note"), ("t3", "note")]
    assert names("?agent=ops") == [("ops", "theirs")]
    assert names("?tool=kubectl") == [("default", "mcp/pods"), ("default", "pods")]
    assert names("?format=json") == [("default", "mcp/pods"), ("default", "pods")]
    assert names("?kind=log") == [("default", "events")]
    assert server.get("entries?agent=..").status == 404


def test_an_entry_opens_with_its_pointer_and_its_first_page(server: UiServer) -> None:
    page = server.get("a/default/e/app/lines").text
    pointer = page.split('class="pointer">', 1)[1].split("</pre>", 1)[0]
    assert pointer.startswith("stored app/lines (version 1): text, ")
    assert "scratch grep app/lines" in pointer or "scratch slice app/lines" in pointer
    assert "lines 1–100 of 250" in page
    numbered = [cells(r) for r in rows(page, "lines")]
    assert numbered[0] == ["1", "line 1 ok"] and numbered[-1] == ["100", "line 100 ERROR disk full"]
    assert len(numbered) == 100


def pointer_of(page: str) -> tuple[str, str]:
    box = page.split('id="pointer">', 1)[1].split("</details>", 1)[0]
    summary = re.sub(r"<[^>]+>", "", box.split("</summary>", 1)[0])
    text = box.split('class="pointer">', 1)[1].split("</pre>", 1)[0]
    import html
    return summary, html.unescape(text)


@pytest.mark.parametrize(("name", "interface"), [("pods", "cli"), ("mcp/pods", "mcp-stdio")])
def test_the_pointer_is_the_one_the_agent_was_shown(server: UiServer, home: Path, name: str,
                                                    interface: str) -> None:
    (stored,) = [r for r in ledger_of(home) if r["command"] == "ingest" and r["entry"] == name]
    summary, text = pointer_of(server.get(f"a/default/e/{name}").text)
    assert summary == (f"The pointer, as the agent saw it: stored by call #{stored['seq']} "
                       f"({interface}, {stored['tokens']:,} tokens)")
    from tests.helpers import count
    assert text.startswith(f"stored {name} (version 1): json, ")
    if interface == "cli":
        assert count(text) == stored["tokens"]  # the very text the call was charged for
        assert f"\n  scratch schema {name}\n" in text
    else:  # as MCP tool calls, the way the client was shown them (its result's notes and
        # footer, charged too, are not part of the pointer)
        assert f'\n  {{"name":"schema","arguments":{{"file":"{name}"}}}}\n' in text
        assert "scratch " not in text and count(text) < stored["tokens"]


def test_the_viewer_pages_by_line(server: UiServer) -> None:
    page = server.get("a/default/e/app/lines?view=lines&from=201").text
    numbered = [cells(r) for r in rows(page, "lines")]
    assert [n for n, _ in numbered] == [str(n) for n in range(201, 251)]
    assert "lines 201–250 of 250" in page
    assert 'href="' + server.base + 'a/default/e/app/lines?view=lines&amp;from=101" rel="previous"' in page
    assert 'rel="next"' not in page
    old = server.get("a/default/e/notes?view=lines&v=1").text
    assert [cells(r) for r in rows(old, "lines")] == [["1", "a"], ["2", "b"], ["3", "c"]]


def test_grep_marks_the_matches_counts_them_and_pages_on(server: UiServer) -> None:
    page = server.get("a/default/e/app/lines?view=grep&q=ERROR").text
    found = rows(page, "matches")
    assert [cells(r)[0] for r in found] == [str(n) for n in range(50, 251, 50)]
    assert "<mark>ERROR</mark> disk full" in found[0]
    assert 'id="grep-count">5 matching lines in the entry; 5 shown.' in page
    assert 'rel="next"' not in page
    ok = server.get("a/default/e/app/lines?view=grep&q=ok$").text  # 245 lines end in ok
    found = [int(cells(r)[0]) for r in rows(ok, "matches")]
    assert found == [n for n in range(1, 103) if n % 50]
    assert "245 matching lines in the entry; 100 shown." in ok  # the true count
    assert 'view=grep&amp;q=ok%24&amp;from=103" rel="next">more matches ›' in ok
    more = server.get("a/default/e/app/lines?view=grep&q=ok%24&from=103").text
    assert [int(cells(r)[0]) for r in rows(more, "matches")] == [
        n for n in range(103, 205) if n % 50]
    assert "245 matching lines in the entry; 100 shown, from line 103." in more
    last = server.get("a/default/e/app/lines?view=grep&q=ok%24&from=205").text
    assert len(rows(last, "matches")) == 45 and 'rel="next"' not in last
    none = server.get("a/default/e/app/lines?view=grep&q=nothing-like-this").text
    assert "0 matching lines in the entry; 0 shown." in none
    bad = server.get("a/default/e/app/lines?view=grep&q=(unclosed").text
    assert 'class="error">invalid_pattern: ' in bad


def test_markup_in_an_entry_is_shown_escaped(server: UiServer) -> None:
    page = server.get("a/default/e/markup").text
    assert "<script>alert" not in page
    line = cells(rows(page, "lines")[0])
    assert line == ["1", "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;quoted&quot;"]


def test_the_schema_tree(server: UiServer) -> None:
    page = server.get("a/default/e/pods?view=schema").text
    tree = page.split('id="schema">', 1)[1]
    assert "<code>.: object{1} L1-8004</code>" in tree
    assert "<code>items: array[2000] L2-8003</code>" in tree
    assert "<code>items.*.phase: string 2000/2000 max 7</code>" in tree


def test_versions_and_their_diff(server: UiServer) -> None:
    page = server.get("a/default/e/notes?view=versions").text
    versions = [cells(r) for r in rows(page, "versions")]
    assert [v[0] for v in versions] == ["2", "1"] and versions[0][6] == "diff 1→2"  # newest first
    assert 'href="' + server.base + 'a/default/e/notes?view=lines&amp;v=1" title="its lines">1<' \
        in page  # a version number is a link
    diff = server.get("a/default/e/notes?view=diff&a=1&b=2").text
    body = diff.split('id="diff">', 1)[1].split("</pre>", 1)[0]
    assert re.findall(r'<div class="d (\w+)">(.*?)</div>', body) == [
        ("meta", "--- notes@1"), ("meta", "+++ notes@2"), ("meta", "@@ -1,3 +1,4 @@"),
        ("same", " a"), ("remove", "-b"), ("add", "+B"), ("same", " c"), ("add", "+d")]


def test_a_log_is_paged_by_cursor(server: UiServer) -> None:
    page = server.get("a/default/e/events").text
    ids = [int(cells(r)[0]) for r in rows(page, "log")]
    assert ids == list(range(1, 101))
    assert "view=log&amp;since=100" in page
    more = server.get("a/default/e/events?view=log&since=100").text
    assert [int(cells(r)[0]) for r in rows(more, "log")] == list(range(101, 151))
    assert cells(rows(more, "log")[0])[2] == "event 101"
    assert 'rel="next"' not in more
    assert 'rel="prev"' not in page  # the first page has none before it
    back = re.search(r'href="([^"]+)" rel="prev"', more)
    assert back is not None and back.group(1).endswith("view=log&amp;since=0")


def test_search_across_entries(server: UiServer) -> None:
    page = server.get("search?q=ERROR%7C%22event+15%22").text  # ERROR|"event 15"
    assert 'id="found">6 matching lines in 2 entries of 12.' in page
    assert page.count('<section class="hits">') == 2
    assert "<mark>&quot;event 15&quot;</mark>" in page  # a log's lines are its JSON records
    assert "· 5 matching lines in the entry</small>" in page
    empty = server.get("search?q=zzz-nothing").text
    assert 'id="found">0 matching lines in 0 entries of 12.' in empty
    theirs = server.get("search?q=another&agent=ops").text  # one agent's entries only
    assert 'id="found">1 matching line in 1 entry of 1.' in theirs
    assert "· 1 matching line in the entry</small>" in theirs
    assert '<option value="ops" selected>ops</option>' in theirs
    assert 'id="found">0 matching lines in 0 entries of 6.' in server.get(
        "search?q=another&agent=default").text
    assert server.get("search?q=x&agent=..").status == 404


def test_live_gives_the_calls_after_a_seq(server: UiServer, home: Path) -> None:
    last = int(ledger_of(home, "s1")[-1]["seq"])  # type: ignore[call-overload]
    answer = json.loads(server.get(f"live?agent=default&session=s1&after={last}").body)
    assert answer == {"rows": "", "after": last}
    from tests.helpers import cli
    assert cli("--session", "s1", "ls", env={"SCRATCH_HOME": str(home)}).code == 0
    answer = json.loads(server.get(f"live?agent=default&session=s1&after={last}").body)
    (new,) = ledger_of(home, "s1")[-1:]
    assert answer["after"] == new["seq"] > last
    assert f'data-seq="{new["seq"]}"' in answer["rows"]
    assert "<code>scratch ls</code>" in answer["rows"]


def test_live_gives_the_entries_updated_since(server: UiServer, home: Path) -> None:
    page = server.get("entries?agent=default").text
    newest = page.split('data-after="', 1)[1].split('"', 1)[0]
    answer = json.loads(server.get(f"live?what=entries&agent=default&after={newest}").body)
    (again,) = re.findall(r'data-key="([^"]+)"', answer["rows"])  # the newest, at or after
    assert again.startswith("default/") and answer["after"] == newest
    from tests.helpers import cli
    assert cli("write", "fresh/one", input=b"new\n", env={"SCRATCH_HOME": str(home)}).code == 0
    answer = json.loads(server.get(f"live?what=entries&agent=default&after={newest}").body)
    keys = re.findall(r'data-key="([^"]+)"', answer["rows"])
    assert keys[-1] == "default/fresh/one" and answer["after"] > newest
    assert json.loads(server.get("live?what=entries&agent=ops&after=" + answer["after"]).body
                      ) == {"rows": "", "after": answer["after"]}
    assert server.get("live?what=entries&agent=..").status == 404


def test_open_hands_the_url_to_the_browser(tmp_path: Path) -> None:
    told = tmp_path / "opened"
    browser = f"{sys.executable} -c \"import sys; open({str(told)!r}, 'w').write(sys.argv[1])\" %s"
    proc = subprocess.Popen([*SCRATCH, "ui", "--open"], env={**env_for(tmp_path / "store"),
                                                             "BROWSER": browser},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().decode().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{32}/", url)
        for _ in range(600):  # the browser command runs after the URL is printed
            if told.exists() and told.read_text():
                break
            time.sleep(0.05)
        assert told.read_text() == url
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_a_port_taken_is_a_clear_error(tmp_path: Path) -> None:
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        out = subprocess.run([*SCRATCH, "ui", "--port", str(port)],
                             env=env_for(tmp_path / "store"), capture_output=True, text=True,
                             timeout=60)
    assert out.returncode == 2
    assert out.stderr == (f"error [bind_failed]: cannot listen on 127.0.0.1:{port}: Address "
                          "already in use\n")
    assert out.stdout == ""


def test_reading_pages_charges_nothing_and_writes_nothing(server: UiServer, home: Path) -> None:
    """The page is read-only: no budget charged, no operation counted, no call recorded, no
    commit made, whatever it shows."""
    def state() -> dict[str, bytes]:
        found = {str(p.relative_to(home)): p.read_bytes()
                 for p in sorted((home / "state").rglob("*")) if p.is_file()
                 and not p.name.endswith(".lock")}
        found["HEAD"] = subprocess.run(["git", "-C", str(home), "rev-parse", "HEAD"],
                                       capture_output=True, check=True).stdout
        return found
    before = state()
    for path in ("", "entries", "a/default/e/pods", "a/default/e/mcp/pods?view=schema",
                 "a/default/e/app/lines?view=lines&from=120", "a/default/e/app/lines?view=grep&q=ok",
                 "a/default/e/notes?view=diff&a=1&b=2", "a/default/e/events?view=log&since=5",
                 "search?q=ERROR", "a/default/s/long", "live?agent=default&after=1"):
        assert server.get(path).status == 200, path
    after = state()
    assert sorted(after) == sorted(before)
    assert [k for k in before if before[k] != after[k]] == []


# -- who imports the page ---------------------------------------------------------------------


def test_only_the_ui_command_imports_the_web_page() -> None:
    from tests.test_layers import imports
    importers = sorted(m for m, deps in imports().items()
                       if any(d.startswith("scratch.ui") for d in deps)
                       and not m.startswith("scratch.ui"))
    assert importers == ["scratch.cli.ui_cmds"]


def test_its_help_and_other_commands_load_no_web_stack(tmp_path: Path) -> None:
    probe = ("import sys\nsys.argv = ['scratch', *%r]\nimport scratch.cli\ntry:\n"
             "    scratch.cli.main()\nexcept SystemExit:\n    pass\n"
             "print('LOADED=' + ','.join(sorted(({m.split('.')[0] for m in sys.modules} & "
             "{'starlette', 'uvicorn', 'mcp', 'anyio'}) | ({'scratch.ui'} & set(sys.modules)))))")
    for args in (("ui", "--help"), ("ls",)):
        out = subprocess.run([sys.executable, "-c", probe % (args,)], capture_output=True,
                             text=True, env=env_for(tmp_path / "store"), check=True)
        assert out.stdout.splitlines()[-1] == "LOADED=", args


def test_scratch_calls_and_the_page_show_the_same_calls(tmp_path: Path) -> None:
    home = tmp_path / "store"
    scratch(home, "write", "notes", input=b"a\nb\nc\n", session="s")
    scratch(home, "head", "notes", "-n", "2", session="s")
    scratch(home, "get-in", "notes", "x", session="s", check=False)  # an error
    scratch(home, "head", "nothing", session="s", check=False)  # an unknown entry
    listed = json.loads(scratch(home, "calls", "--json", session="s").stdout)["data"]["calls"]
    text = scratch(home, "calls", session="s").stdout.decode()
    srv = UiServer(home)
    try:
        page = srv.get("a/default/s/s").text
    finally:
        srv.stop()
    import html
    shown = [[html.unescape(c) for c in cells(r)] for r in rows(page, "calls")]
    spelled = [html.unescape(re.sub(r"<[^>]+>", "", re.findall(r"<code>(.*?)</code>", r)[0]))
               for r in rows(page, "calls")]
    # the page has the two `scratch calls` too, recorded after they answered
    assert [c[3] for c in shown[4:]] == ["scratch calls", "scratch calls"]  # --json: a rendering
    shown, spelled = shown[:4], spelled[:4]
    assert [int(c[0]) for c in shown] == [r["seq"] for r in listed]
    # what a write stored is said apart from the call (the ledger keeps only its size)
    assert [c[3] for c in shown] == ["scratch write notes content: 6 bytes",
                                     "scratch head notes -n 2",
                                     "scratch get-in notes x", "scratch head nothing"]
    assert [r["outcome"] for r in listed] == ["ok", "ok", "error", "error"]
    assert [c[4].split()[0] for c in shown] == [r["outcome"] for r in listed]
    assert [int(c[5].replace(",", "")) for c in shown] == [r["tokens"] for r in listed]
    # the CLI's table: the same calls, spelled the same, without the program's name
    lines = text.splitlines()[1:5]
    assert [line.split()[0] for line in lines] == [str(r["seq"]) for r in listed]
    for line, call in zip(lines, spelled, strict=True):
        assert call.removeprefix("scratch ") in line


# -- every page: links, ids, malformed ledgers, the door -----------------------------------------


def _links(html: str, base: str) -> list[str]:
    """The page's own links (under its base), as paths under the base, without anchors."""
    import html as html_
    found = []
    for raw in re.findall(r'href="([^"]+)"', html):
        url = html_.unescape(raw).split("#", 1)[0]
        if url.startswith(base) and not url.startswith(base + "static/"):
            found.append(url[len(base):])
    return found


def test_every_link_every_page_makes_resolves_and_ids_are_unique(server: UiServer) -> None:
    """From the overview, the agents, a session named with "/", a space and unicode, the
    entries and a search, every link (two levels deep) answers 200; no page repeats an id."""
    start = ["", "a/default", "a/t3", "a/t2", "entries", "search?q=ERROR",
             "a/default/e/pods", "a/default/e/notes?view=versions", "a/t3/s/" + quote(ODD_SESSION)]
    seen: dict[str, int] = {}
    frontier = start
    for _depth in range(2):
        following = []
        for path in frontier:
            if path in seen or len(seen) > 600:
                continue
            answer = server.get(path)
            seen[path] = answer.status
            assert answer.status == 200, path
            if not answer.headers["content-type"].startswith("text/html"):
                continue
            ids = re.findall(r' id="([^"]+)"', answer.text)
            assert len(ids) == len(set(ids)), (path, sorted({i for i in ids if ids.count(i) > 1}))
            following += _links(answer.text, server.base)
        frontier = [p for p in dict.fromkeys(following) if p not in seen]
    assert not [p for p, code in seen.items() if code != 200]
    assert len(seen) > 150  # the crawl reached the call pages, sessions, versions, lines
    assert any(p.startswith("a/t3/s/run%201/%C3%BC%20x") for p in seen)  # the odd session
    assert any(re.fullmatch(r"a/default/c/\d+", p) for p in seen)  # call pages
    assert any("view=versions" in p for p in seen)  # version numbers are links


def test_a_malformed_ledger_line_is_skipped_and_counted_never_a_500(server: UiServer,
                                                                   home: Path) -> None:
    from scratch.store import ledger
    records, skipped = ledger.scan(home, "t2")
    assert (len(records), skipped) == (1, 2)
    for path in ("", "a/t2", "a/t2/s/default", "live", "live?agent=t2", "series?agent=t2"):
        assert server.get(path).status == 200, path
    said = ("Malformed lines skipped in the call ledger (not JSON, or not a record): t2 2.")
    assert said in server.get("").text and said in server.get("a/t2").text
    assert "t2 2" not in server.get("a/t3").text  # said where it is, not everywhere
    listed = scratch(home, "calls", "--agent", "t2")  # the CLI reads past them too
    assert listed.returncode == 0 and b"write note" in listed.stdout


@pytest.mark.parametrize("path", ["a/default", "a/default/c/1", "a/default/s/s1",
                                  "series?agent=default"])
def test_the_new_pages_keep_the_door(server: UiServer, path: str) -> None:
    answer = server.get(path)
    assert answer.status == 200
    assert answer.headers["content-security-policy"] == CSP
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert server.get(path, base="/").status == 401
    assert server.get(path, base=f"/{server.token[:-1]}/").status == 401
    assert server.get(path, headers={"Host": "evil.example"}).status == 421
    assert server.get(path, headers={"Origin": "http://evil.example"}).status == 403
    assert server.get(path, method="POST").status == 405


def test_a_call_page_escapes_what_the_call_asked_and_got(server: UiServer, home: Path) -> None:
    (rec,) = [r for r in ledger_of(home, "q") if r["command"] == "grep"]
    page = server.get(f"a/default/c/{rec['seq']}").text
    main = page.split("<main>", 1)[1].split("</main>", 1)[0]
    assert "<script>" not in main and "<script" not in main.replace(
        '<script type="application/json"', "")
    assert "scratch grep markup &quot;&lt;script&gt;&quot; -F" in main  # the call, escaped
    answer = main.split('id="answer">', 1)[1].split("</pre>", 1)[0]
    assert answer == "1:&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;quoted&quot;\n"
    assert str(rec["answer"]) == "1:<script>alert('x')</script> & \"quoted\"\n"


def test_a_call_the_ledger_does_not_hold_is_404(server: UiServer) -> None:
    assert server.get("a/default/c/999999").status == 404
    assert server.get("a/default/c/x1").status == 404
    assert server.get("a/nobody").status == 404
    assert server.get("a/default/c/0").status == 404


def test_the_agent_page_ranks_calls_and_pages_the_ranking(server: UiServer, home: Path) -> None:
    calls = [r for r in ledger_of(home) if r["tokens"] > 0]
    ranked = sorted(calls, key=lambda r: (-r["tokens"], r["seq"]))
    page = server.get("a/default").text
    shown = [cells(r) for r in rows(page, "ranked-calls")]
    assert [c[1] for c in shown] == [f"#{r['seq']}" for r in ranked[:25]]
    assert [c[5] for c in shown] == [f"{r['tokens']:,}" for r in ranked[:25]]
    assert f"{len(ranked):,} calls charged {sum(r['tokens'] for r in ranked):,} tokens." in page
    second = server.get("a/default?ranked=2").text
    assert [cells(r)[1] for r in rows(second, "ranked-calls")] == [
        f"#{r['seq']}" for r in ranked[25:50]]


def test_a_call_page_shows_what_an_mcp_client_got(server: UiServer,
                                                  seeded: tuple[Path, dict[str, str]]) -> None:
    home, got = seeded
    (rec,) = [r for r in ledger_of(home, "s1") if r["command"] == "head"]
    assert rec["answer"] == got["mcp_head"]  # the tool result's text blocks, as the client got
    page = server.get(f"a/default/c/{rec['seq']}").text
    import html
    shown = page.split('id="answer">', 1)[1].split("</pre>", 1)[0]
    assert html.unescape(shown) == got["mcp_head"]
    assert "1:a\n2:B\n" in got["mcp_head"] and "-- 28 tokens (o200k_base)" in got["mcp_head"]
