"""Runs over MCP (issue 29 points 1-3), with the SDK's own client over stdio and HTTP: two
workers and a coordinator share artifacts, an agent outside the run cannot see them, a big
artifact is a pointer the explore tools follow, and a worker's usage event reaches the
clients as a log notification (its own, and the coordinator's GET stream)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scratch import runs
from scratch.store import ledger
from tests.mcp_support import SCRATCH, HttpServer, McpClient, server_env, stdio_client, text_of
from tests.test_artifact_read import PODS, REPORT

WAIT = 60.0  # seconds a notification may take before the test fails (never a pass condition)


class Heard:
    """A logging callback that keeps each notification and wakes whoever waits for one."""

    def __init__(self) -> None:
        self.got: list[Any] = []
        self.new = threading.Event()

    async def __call__(self, params: Any) -> None:
        self.got.append(params)
        self.new.set()

    def first(self) -> Any:
        assert self.new.wait(WAIT), "no notification arrived"
        return self.got[0]


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, text_of(result)
    return json.loads(text_of(result))  # type: ignore[no-any-return]


def put(home: Path, run: str, name: str, path: Path | None = None, data: bytes = b"") -> None:
    args = [*SCRATCH, "artifact", "put", run, name, "--agent", "w1", "--run", run]
    subprocess.run(args + ([str(path)] if path else []), input=None if path else data,
                   env=server_env(home), check=True, capture_output=True)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "store"
    put(home, "r1", "pods.json", PODS)
    return home


def test_two_workers_and_a_coordinator_share_artifacts_over_stdio(home: Path) -> None:
    heard = Heard()
    w1 = stdio_client(home, "--agent", "w1", "--run", "r1", tools="explore,run")
    w2 = stdio_client(home, "--agent", "w2", "--run", "r1", tools="explore,run",
                      logging_callback=heard, log_level="info")
    boss = stdio_client(home, "--agent", "boss", "--run", "r1", "--coordinator",
                        tools="explore,run")
    outsider = stdio_client(home, "--agent", "out", "--run", "r2", tools="explore,run")
    try:
        names = [t.name for t in w2.tools()]
        assert names[-4:] == ["list_artifacts", "write_artifact", "read_artifact", "finish"]
        assert "run" not in json.dumps([t.input_schema for t in w2.tools()
                                        if t.name.endswith("artifact")])
        assert w1.text("write_artifact", {"name": "report.json",
                                          "content": REPORT.decode()}).startswith(
            "artifact:r1/report.json: version 1")
        # small: whole, to a worker and to the coordinator
        for client in (w2, boss):
            assert client.text("read_artifact", {"name": "report.json"}) == REPORT.decode()
        # big: a pointer for the worker, which the explore tools follow on its budget
        pointer = w2.text("read_artifact", {"name": "pods.json"})
        assert pointer.startswith("artifact 'pods.json' of run 'r1' is ~")
        assert '"file":"artifact:r1/pods.json"' in pointer.replace(" ", "")
        head = w2.text("head", {"file": "artifact:r1/pods.json", "lines": 2})
        assert head == '1:{\n2:    "apiVersion": "v1",\n'
        counted = w2.text("grep", {"file": "artifact:r1/pods.json",
                                   "pattern": "CrashLoopBackOff", "count": True})
        assert counted == "4\n"
        # the coordinator: refused with the next step; no scratchpad of its own
        big = error_of(boss.call("read_artifact", {"name": "pods.json"}))
        assert big["code"] == "artifact_too_large"
        # its shape first (a 50-line head of a one-line artifact is the whole of it)
        assert big["suggestions"][0] == {"name": "schema", "arguments": {
            "file": "artifact:r1/pods.json"}}
        assert error_of(boss.call("head", {"file": "mine"}))["code"] == (
            "coordinator_has_no_scratchpad")
        assert boss.resources().resources == []  # no entries of its own
        # outside the run: not found, whether it exists or not
        for args in ({"file": "artifact:r1/pods.json"}, {"file": "artifact:r1/none.json"}):
            err = error_of(outsider.call("head", args))
            assert err["code"] == "entry_not_found"
            assert err["message"].startswith("no artifact 'artifact:r1/") and \
                err["message"].endswith("' for agent 'out' in run 'r2'")
        assert error_of(outsider.call("read_artifact", {"name": "pods.json"}))["code"] == (
            "entry_not_found")  # the session reads its own run: r2 has none
        assert "pods.json" not in outsider.text("list_artifacts")
        # finish: the event in the result and as a notification on the call's stream
        done = w2.call("finish")
        assert not done.is_error
        note = heard.first()
        assert (note.level, note.logger) == ("info", "scratchpad_usage")
        event = note.data
        assert (event["event"], event["agent"], event["run"], event["iteration"],
                event["interface"], event["reason"]) == (
            "scratchpad_usage", "w2", "r1", 1, "mcp-stdio", "finish")
        assert event["tokens_intercepted"] == 0 and event["calls"] == 4
        assert event["tokens_extracted"] == sum(
            r["tokens"] for r in ledger.read(home, agent="w2") if not r.get("event")
            and r["command"] != "finish")
        assert text_of(done) == (
            f"finished: agent w2 in run r1 (iteration 1), session {event['session']}: 0 tokens "
            f"intercepted, {event['tokens_extracted']:,} extracted over 4 calls\n")
    finally:
        for client in (w1, w2, boss, outsider):
            client.close()
    assert runs.usage_events(home, "r1")[0] == event


def test_a_session_that_closes_finishes_its_worker_over_stdio(home: Path) -> None:
    worker = stdio_client(home, "--agent", "w5", "--run", "r1", tools="explore,run")
    try:
        worker.text("read_artifact", {"name": "pods.json"})
    finally:
        worker.close()  # the server sees stdin close and finishes the session's worker
    (event,) = [e for e in runs.usage_events(home, "r1") if e["agent"] == "w5"]
    assert (event["reason"], event["calls"], event["interface"]) == (
        "session_closed", 1, "mcp-stdio")
    assert event["tokens_extracted"] > 0
    idle = stdio_client(home, "--agent", "w6", "--run", "r1", tools="explore,run")
    idle.tools()
    idle.close()  # no call, nothing intercepted or extracted: no event
    assert [e["agent"] for e in runs.usage_events(home, "r1")] == ["w5"]


def test_the_legacy_protocol_sends_the_event_without_asking(home: Path) -> None:
    heard = Heard()
    worker = stdio_client(home, "--agent", "w7", "--run", "r1", tools="explore,run",
                          logging_callback=heard, mode="legacy")
    try:
        worker.text("list_artifacts")
        worker.call("finish")
        assert heard.first().data["agent"] == "w7"
    finally:
        worker.close()


@pytest.fixture
def http(home: Path) -> Iterator[tuple[HttpServer, dict[str, str]]]:
    def token(agent: str, *flags: str) -> str:
        out = subprocess.run([*SCRATCH, "mcp", "token", "add", agent, *flags],
                             env=server_env(home), capture_output=True, text=True, check=True)
        return out.stdout.strip()
    tokens = {"w1": token("w1", "--run", "r1"), "w2": token("w2", "--run", "r1"),
              "w3": token("w3", "--run", "r1"),
              "boss": token("boss", "--run", "r1", "--coordinator"),
              "out": token("out", "--run", "r2")}
    server = HttpServer(home)
    try:
        yield server, tokens
    finally:
        server.stop()


def test_workers_and_a_coordinator_over_http_and_the_event_stream(
        http: tuple[HttpServer, dict[str, str]], home: Path) -> None:
    server, tokens = http
    heard = Heard()
    # the coordinator on the handshake protocol: its GET stream carries the run's events
    boss = server.client(tokens["boss"], mode="legacy", logging_callback=heard)
    clients: list[McpClient] = [boss]
    try:
        w1 = server.client(tokens["w1"])
        w2 = server.client(tokens["w2"], mode="legacy")
        out = server.client(tokens["out"])
        clients += [w1, w2, out]
        w1.text("write_artifact", {"name": "report.json", "content": REPORT.decode()})
        assert boss.text("read_artifact", {"name": "report.json"}) == REPORT.decode()
        assert w2.text("read_artifact", {"name": "pods.json"}).startswith(
            "artifact 'pods.json' of run 'r1' is ~")
        assert error_of(out.call("head", {"file": "artifact:r1/report.json"}))["code"] == (
            "entry_not_found")
        assert error_of(boss.call("read_artifact", {"name": "pods.json"}))["code"] == (
            "artifact_too_large")
        w2.call("finish")
        note = heard.first()
        assert (note.logger, note.data["agent"], note.data["reason"], note.data["run"],
                note.data["interface"]) == ("scratchpad_usage", "w2", "finish", "r1",
                                            "mcp-http")
        assert note.data["tokens_extracted"] > 0
        # a worker that ends its session (DELETE) finishes; the coordinator hears it too
        heard.new.clear()
        w3 = server.client(tokens["w3"], mode="legacy")
        w3.text("read_artifact", {"name": "pods.json"})
        w3.close()
        assert heard.new.wait(WAIT), "the session's end was not heard"
        closed = heard.got[-1].data
        assert (closed["agent"], closed["reason"], closed["calls"]) == (
            "w3", "session_closed", 1)
    finally:
        for client in clients:
            client.close()
    recorded = [(e["agent"], e["reason"]) for e in runs.usage_events(home, "r1")]
    assert recorded[:2] == [("w2", "finish"), ("w3", "session_closed")]


def test_a_modern_http_client_that_asks_gets_its_own_event(
        http: tuple[HttpServer, dict[str, str]], home: Path) -> None:
    server, tokens = http
    heard = Heard()
    worker = server.client(tokens["w1"], logging_callback=heard, log_level="info")
    try:
        worker.text("read_artifact", {"name": "pods.json"})
        result = worker.call("finish")
        note = heard.first()
        assert note.data["agent"] == "w1" and note.data["calls"] == 1
        assert f"{note.data['tokens_extracted']:,} extracted" in text_of(result)
    finally:
        worker.close()


def test_a_worker_behind_the_proxy_finishes_with_what_it_intercepted(home: Path) -> None:
    """Aura's flow: a worker's tool outputs intercepted by scratch (the proxy), its usage event
    recorded when its client leaves."""
    from mcp import StdioServerParameters
    fixture = Path(__file__).parent / "data" / "mcp_upstreams" / "fixture_server.py"
    params = StdioServerParameters(
        command=SCRATCH[0], args=[*SCRATCH[1:], "--agent", "w8", "--run", "r1", "mcp", "proxy",
                                  "--name", "fx", "--", sys.executable, str(fixture)],
        env=server_env(home))
    client = McpClient(params, mode="legacy")  # the proxy speaks the handshake era
    try:
        stored = client.call("text", {"size": 200_000}).meta["scratch"]["stored"]
        assert stored
    finally:
        client.close()
    (event,) = [e for e in runs.usage_events(home, "r1") if e["agent"] == "w8"]
    assert (event["reason"], event["interface"], event["calls"]) == (
        "session_closed", "proxy", 1)
    recs = [r for r in ledger.read(home, agent="w8") if not r.get("event")]
    assert event["tokens_intercepted"] == sum(r["intercepted"] for r in recs) > 0
    assert {(r["run"], r["iteration"]) for r in recs} == {("r1", 1)}


@pytest.mark.parametrize("args, code, rc", [
    (("--run", "../r1"), "invalid_run", 2),
    (("--run", "r1/x"), "invalid_run", 2),
    (("--run", "r1", "--iteration", "9"), "iteration_not_found", 4),
    (("--coordinator",), "not_in_run", 2),
])
def test_a_server_or_token_of_a_bad_run_is_refused_before_anything(
        home: Path, args: tuple[str, ...], code: str, rc: int) -> None:
    tokens = home / "state" / "mcp" / "tokens.json"
    for command in (["mcp", "serve", "--json", *args],
                    ["mcp", "token", "add", "w9", "--json", *args]):
        done = subprocess.run([*SCRATCH, *command], env=server_env(home), capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=60)
        assert done.returncode == rc, (done.stdout, done.stderr)
        assert json.loads(done.stdout)["error"]["code"] == code
    assert not tokens.exists()
    assert sorted(p.name for p in (home / "runs").iterdir()) == ["r1"]
