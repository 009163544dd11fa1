"""The torture run through MCP (issue 21, point 3): malformed JSON-RPC lines fed to a real
`scratch mcp serve` over stdio, and upstream faults behind a real `scratch mcp proxy`.

stdio: after an initialize handshake, every malformed line is followed by a probe (a
``tools/list`` and a ``head`` of a stored entry, with ids of their own); what the server
wrote before the probe was answered is the case's answer, asserted exactly (an error code
per id, a result, or nothing). The invariants: every probe is answered correctly, and the
server never exits on input. Where the SDK (mcp 2.x, not patched here) departs from what
JSON-RPC 2.0 or the MCP spec says, the test asserts what the SDK does and says so in the
case's ``spec`` note (:data:`CASES`).

The suite runs each case once plus 50 seeded mutations of valid lines; the full size (1,000
malformed lines) runs with ``SCRATCH_SLOW=1 python -m pytest -m slow
tests/test_mcp_torture_stdio.py``.

No timing is raced: answers are waited for (a reader thread and a queue; the bound is only a
guard against a hang), a call is held in flight by the server's test hook
(``SCRATCH_MCP_TEST_HOLD``), and the proxy's hanging upstream blocks until a file the test
creates.
"""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.mcp_support import SCRATCH, server_env

full_size = pytest.mark.skipif(os.environ.get("SCRATCH_SLOW") != "1",
                               reason="full-size torture run: set SCRATCH_SLOW=1")

GUARD = 60.0  # seconds any one answer may take before the test calls it a hang (not a timing)
ENTRY, ENTRY_TEXT = "notes/probe.txt", "alpha\nbeta\ngamma\n"
MB = 1 << 20

# the JSON-RPC 2.0 codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


def line(msg: Any) -> bytes:
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


def req(id: Any, method: Any, params: Any = None, **extra: Any) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    msg.update(extra)
    return line(msg)


INITIALIZE = req(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "torture", "version": "1"}})
INITIALIZED = line({"jsonrpc": "2.0", "method": "notifications/initialized"})


class Wire:
    """A `scratch mcp serve --quiet` process spoken to in bytes: what it writes is read by a
    thread into a queue, so a test waits for an answer without racing a clock."""

    def __init__(self, home: Path, hold: Path) -> None:
        env = server_env(home, SCRATCH_BUDGET_CONTEXT_WINDOW="1000000000",
                         SCRATCH_MCP_TEST_HOLD=str(hold))
        self.proc = subprocess.Popen([*SCRATCH, "mcp", "serve", "--quiet", "--tools", "all"],
                                     env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.probes = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw)
        self.lines.put(None)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.stderr.append(raw)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next(self) -> dict[str, Any]:
        try:
            raw = self.lines.get(timeout=GUARD)
        except queue.Empty:
            raise AssertionError(f"no answer in {GUARD:g}s: the server hangs") from None
        if raw is None:
            raise AssertionError(f"the server closed its stdout (exit {self.proc.wait()}): "
                                 + b"".join(self.stderr[-20:]).decode(errors="replace"))
        msg = json.loads(raw)
        assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", raw[:300]
        return msg

    def until(self, *ids: Any) -> tuple[dict[Any, dict[str, Any]], list[dict[str, Any]]]:
        """Read until every id in ``ids`` is answered: those answers, and every other line
        written meanwhile (in order)."""
        wanted, found, other = list(ids), {}, []
        for _ in range(10_000):  # bounded: a server that floods fails here
            if not wanted:
                return found, other
            msg = self.next()
            key = _key(msg.get("id")) if "id" in msg else None
            if key is not None and key in wanted and key not in found:
                found[key] = msg
                wanted.remove(key)
            else:
                other.append(msg)
        raise AssertionError(f"still waiting for {wanted}")

    def call(self, id: Any, method: str, params: Any = None) -> dict[str, Any]:
        self.send(req(id, method, params))
        found, other = self.until(_key(id))
        assert other == [], other
        return found[_key(id)]

    def probe(self, *expect: Any) -> list[dict[str, Any]]:
        """The valid calls after a bad line: a tools/list and a head of the stored entry,
        both answered correctly; returns every other line written before they were
        answered, waiting also for the answers to ``expect`` (ids)."""
        self.probes += 1
        lid, hid = f"probe-{self.probes}-list", f"probe-{self.probes}-head"
        self.send(req(lid, "tools/list") + req(hid, "tools/call", {
            "name": "head", "arguments": {"file": ENTRY, "lines": 2}}))
        found, other = self.until(lid, hid, *map(_key, expect))
        tools = {t["name"] for t in found[lid]["result"]["tools"]}
        assert {"head", "write_file", "ingest"} <= tools
        head = found[hid]["result"]
        assert head.get("isError") is not True, head
        assert "alpha" in head["content"][0]["text"] and "beta" in head["content"][0]["text"]
        assert "gamma" not in head["content"][0]["text"]
        assert self.proc.poll() is None
        return [found[_key(i)] for i in expect] + other

    def close(self) -> tuple[int, list[dict[str, Any]]]:
        """Close stdin: the exit code, and whatever it still wrote (nothing is expected)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        rest: list[dict[str, Any]] = []
        for _ in range(10_000):
            raw = self.lines.get(timeout=GUARD)
            if raw is None:
                break
            rest.append(json.loads(raw))
        return self.proc.wait(timeout=GUARD), rest


def _key(id: Any) -> Any:
    """An id as a dict key (ids of any JSON type are compared by their JSON)."""
    return id if isinstance(id, (str, int)) and not isinstance(id, bool) else json.dumps(id)


def answer_of(msg: dict[str, Any]) -> tuple[Any, Any]:
    """What a case asserts of one answer: its id, and its error code or "result"."""
    return msg.get("id"), msg["error"]["code"] if "error" in msg else "result"


class Case(NamedTuple):
    name: str
    data: bytes  # written as is (one or more lines)
    answers: list[tuple[Any, Any]]  # (id, error code | "result") in the order awaited
    spec: str  # what JSON-RPC 2.0 / MCP say, and where the SDK departs from it


HUGE_ID = "9" * 10_000
NULL = None

CASES: list[Case] = [
    Case("invalid_json", b'{"jsonrpc":"2.0","id":"c1","method":\n', [],
         "SPEC: -32700 Parse error with id null. SDK: ignored (a line that is not JSON "
         "reaches the session as an exception and is dropped)"),
    Case("not_json_at_all", b"hello, server\n", [], "SPEC: -32700 with id null. SDK: ignored"),
    Case("json_scalar", b"42\n", [], "SPEC: -32600 Invalid Request, id null. SDK: ignored"),
    Case("wrong_jsonrpc", req("c2", "ping")[:-1].replace(b'"2.0"', b'"1.0"') + b"\n", [],
         "SPEC: -32600 (jsonrpc MUST be exactly \"2.0\"). SDK: ignored"),
    Case("missing_jsonrpc", line({"id": "c3", "method": "ping"}), [],
         "SPEC: -32600. SDK: ignored"),
    Case("huge_id", b'{"jsonrpc":"2.0","id":' + HUGE_ID.encode() + b',"method":"ping"}\n', [],
         "SPEC: an integer id is valid JSON-RPC; MCP ids are strings or integers, so a "
         "server answers (or -32600 if it cannot hold the id). SDK: ignored (Python's json "
         "refuses a 10,000-digit integer: the int/str digit limit)"),
    Case("string_id", req("c4", "ping"), [("c4", "result")], "SPEC: a string id is valid"),
    Case("array_id", req([1], "ping"), [], "SPEC: -32600 (an id is a string, number or "
         "null). SDK: ignored"),
    Case("object_id", req({"a": 1}, "ping"), [], "SPEC: -32600. SDK: ignored"),
    Case("null_id", req(NULL, "ping"), [], "SPEC: MCP ids MUST NOT be null: -32600. "
         "SDK: ignored"),
    Case("float_id", req(1.5, "ping"), [], "SPEC: JSON-RPC SHOULD NOT use fractions; MCP "
         "ids are strings or integers: -32600. SDK: ignored"),
    Case("bool_id", req(True, "ping"), [], "SPEC: -32600. SDK: ignored"),
    Case("missing_method", line({"jsonrpc": "2.0", "id": "c5"}), [],
         "SPEC: -32600. SDK: ignored"),
    Case("method_a_number", req("c6", 5), [], "SPEC: -32600. SDK: ignored"),
    Case("unknown_method", req("c7", "nope/nope"), [("c7", METHOD_NOT_FOUND)],
         "SPEC: -32601"),
    Case("tools_call_params_a_list", req("c8", "tools/call", [1, 2]), [],
         "SPEC: -32602 (or -32600: params MUST be an object in MCP). SDK: ignored"),
    Case("tools_call_params_missing", req("c9", "tools/call"), [("c9", INVALID_PARAMS)],
         "SPEC: -32602"),
    Case("tools_call_name_a_number", req("c10", "tools/call", {"name": 5}),
         [("c10", INVALID_PARAMS)], "SPEC: -32602"),
    Case("tools_call_arguments_a_string",
         req("c11", "tools/call", {"name": "head", "arguments": "x"}),
         [("c11", INVALID_PARAMS)], "SPEC: -32602"),
    Case("tools_call_unknown_tool", req("c12", "tools/call", {"name": "nope", "arguments": {}}),
         [("c12", INVALID_PARAMS)], "SPEC (MCP): -32602 Unknown tool"),
    Case("tools_list_params_a_string", req("c13", "tools/list", "x"), [],
         "SPEC: -32602 (or -32600). SDK: ignored"),
    Case("line_of_10_mb_valid", req("c14", "ping", {"pad": "a" * (10 * MB)}),
         [("c14", "result")], "SPEC: valid, answered (no size limit on stdio)"),
    Case("line_of_10_mb_garbage", b"x" * (10 * MB) + b"\n", [],
         "SPEC: -32700. SDK: ignored"),
    Case("invalid_utf8_in_a_string", b'{"jsonrpc":"2.0","id":"c15","method":"ping",'
         b'"params":{"x":"\xff\xfe"}}\n', [("c15", "result")],
         "SPEC: JSON text is UTF-8, so strictly -32700. scratch's stdio framing decodes "
         "with U+FFFD replacement (as the SDK's own stdio does), so the request is answered"),
    Case("invalid_utf8_line", b"\xff\xfe\xfd\x80\n", [], "SPEC: -32700. SDK: ignored"),
    Case("notification_with_an_id", req("c16", "notifications/initialized"),
         [("c16", METHOD_NOT_FOUND)],
         "SPEC: a message with an id is a request, and there is no such request method: "
         "-32601 (as the SDK answers)"),
    Case("unknown_notification", line({"jsonrpc": "2.0", "method": "notifications/whatever"}),
         [], "SPEC: a notification is never answered: silence"),
    Case("cancel_of_an_unknown_request", line({
        "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "zz"}}),
        [], "SPEC (MCP): a cancellation of an unknown request is ignored"),
    Case("empty_line", b"\n", [], "SPEC: no message; ignored"),
    Case("blank_line", b"   \t \n", [], "SPEC: no message; ignored"),
    Case("batch", b"[" + req("c17", "ping")[:-1] + b"," + req("c18", "ping")[:-1] + b"]\n", [],
         "SPEC: JSON-RPC answers a batch with an array; MCP 2025-06-18 (negotiated here) "
         "removed batching. SDK: ignored"),
    Case("empty_batch", b"[]\n", [], "SPEC: -32600 (one error, not an array). SDK: ignored"),
    Case("a_response_from_the_client", line({"jsonrpc": "2.0", "id": "c19", "result": {}}), [],
         "SPEC: a response to no request: ignored"),
    Case("an_error_response_from_the_client",
         line({"jsonrpc": "2.0", "id": "c20", "error": {"code": 1, "message": "x"}}), [],
         "SPEC: ignored"),
    Case("initialize_again", INITIALIZE.replace(b'"id":0', b'"id":"c21"'), [("c21", "result")],
         "SPEC (MCP): says nothing of a second initialize. SDK: answered again; the "
         "connection keeps serving"),
    Case("duplicate_ids_one_after_the_other", req("c22", "ping") + req("c22", "ping"),
         [("c22", "result"), ("c22", "result")],
         "SPEC (MCP): an id MUST NOT be reused in a session; nothing says the server must "
         "refuse. SDK: both answered"),
]


def started(root: Path) -> Wire:
    """A server on a new store under ``root``, initialized, with :data:`ENTRY` stored."""
    (root / "hold").mkdir()
    w = Wire(root / "store", root / "hold")
    w.hold = root / "hold"  # type: ignore[attr-defined]
    init = w.call(0, "initialize", json.loads(INITIALIZE)["params"])
    assert init["result"]["serverInfo"]["name"] == "scratch"
    w.send(INITIALIZED)
    stored = w.call("store", "tools/call", {"name": "write_file", "arguments": {
        "path": ENTRY, "content": ENTRY_TEXT}})
    assert stored["result"].get("isError") is not True, stored
    assert w.probe() == []
    return w


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wire]:
    w = started(tmp_path_factory.mktemp("torture-stdio"))
    yield w
    code, rest = w.close()  # no answer written late, none twice; stdin's end ends it
    assert rest == [] and code == 0, (code, rest)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_malformed_line_gets_its_answer_and_the_next_calls_are_answered(
        wire: Wire, case: Case) -> None:
    wire.send(case.data)
    expected_ids = list(dict.fromkeys(_key(i) for i, _ in case.answers))
    got = wire.probe(*expected_ids)
    # a repeated id: the second answer is among the "other" lines
    assert sorted(map(str, map(answer_of, got))) == sorted(map(str, case.answers)), case.spec


def test_duplicate_ids_in_flight_are_both_answered(wire: Wire) -> None:
    # a head held on its worker thread (the server's test hook) while a ping with the same id
    # comes: the SDK overwrites its in-flight entry for the id (no -32600), and answers both
    hold: Path = wire.hold  # type: ignore[attr-defined]
    (hold / "hold-head").touch()
    wire.send(req("dup", "tools/call", {"name": "head", "arguments": {"file": ENTRY}}))
    for _ in range(6000):  # bounded wait for the hook to say the call has started
        if (hold / "held-head").exists():
            break
        threading.Event().wait(0.01)
    assert (hold / "held-head").exists()
    wire.send(req("dup", "ping"))
    first = wire.next()
    assert first == {"jsonrpc": "2.0", "id": "dup", "result": {}}
    (hold / "hold-head").unlink()
    second = wire.next()
    assert second["id"] == "dup" and "alpha" in second["result"]["content"][0]["text"]
    (hold / "held-head").unlink()
    assert wire.probe() == []


# -- seeded mutations of valid lines ----------------------------------------------------------

BASES = [
    req("m", "ping"),
    req("m", "tools/list"),
    req("m", "tools/call", {"name": "head", "arguments": {"file": ENTRY, "lines": 1}}),
    req("m", "tools/call", {"name": "grep", "arguments": {"file": ENTRY, "pattern": "a"}}),
    req("m", "resources/list"),
    req("m", "tools/call", {"name": "list_files", "arguments": {}}),
]
JUNK = [b"{", b"}", b"[", b"]", b'"', b",", b":", b"null", b"\xff", b"\x00", b"\\", b"1e999",
        b'"id":', b"-", b"\xc3", b" ", b"\t", b"[[[[", HUGE_ID.encode()[:500]]
VALUES: list[Any] = [None, True, 1.5, -1, "", [], {}, [1], {"a": None}, "x" * 100, 2 ** 70]


def mutate(rng: random.Random, n: int) -> bytes:
    """A valid line of :data:`BASES` broken one of several ways (its id made unique)."""
    base = rng.choice(BASES).replace(b'"id":"m"', b'"id":"m%d"' % n)
    how = rng.randrange(7)
    body = bytearray(base[:-1])
    if how == 0:  # cut short
        del body[rng.randrange(len(body)):]
    elif how == 1:  # a byte flipped
        at = rng.randrange(len(body))
        body[at] = rng.randrange(256)
    elif how == 2:  # junk inserted
        at = rng.randrange(len(body) + 1)
        body[at:at] = rng.choice(JUNK)
    elif how == 3:  # a span deleted
        at = rng.randrange(len(body))
        del body[at:at + rng.randrange(1, 12)]
    else:  # a field of the right JSON replaced by a value of another type
        msg = json.loads(bytes(body))
        target = msg if how < 6 or "params" not in msg else msg["params"]
        field = rng.choice(sorted(target))
        target[field] = rng.choice(VALUES)
        body = bytearray(json.dumps(msg).encode())
    return bytes(body).replace(b"\n", b" ") + b"\n"


class Tally(NamedTuple):
    lines: int
    probes_answered: int
    answers: dict[str, int]  # error code or "result" -> how many
    exit_code: int


def _tally(msg: dict[str, Any], answers: dict[str, int]) -> None:
    # nothing but an answer to a mutated line (a result or one of JSON-RPC's errors); a
    # mutation may leave a valid request (a new id, say), and it is answered
    assert not str(msg.get("id", "")).startswith("probe-"), msg
    kind = str(msg["error"]["code"]) if "error" in msg else "result"
    assert kind == "result" or int(kind) in (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND,
                                             INVALID_PARAMS, -32002), msg
    answers[kind] = answers.get(kind, 0) + 1


def run_mutations(wire: Wire, count: int, seed: int) -> Tally:
    """``count`` mutated lines, each followed by the probe; then the server is closed (an
    answer to a mutated request may come after the probe's: it is counted at the end)."""
    rng = random.Random(seed)
    answers: dict[str, int] = {}
    before = wire.probes
    for n in range(count):
        wire.send(mutate(rng, n))
        for msg in wire.probe():
            _tally(msg, answers)
    probes = wire.probes - before
    code, rest = wire.close()
    for msg in rest:
        _tally(msg, answers)
    return Tally(count, probes, answers, code)


def test_seeded_mutations_never_stop_the_server(tmp_path: Path) -> None:
    tally = run_mutations(started(tmp_path), 50, seed=21)
    assert tally.probes_answered == 50 and tally.exit_code == 0


@pytest.mark.slow
@full_size
def test_full_size_a_thousand_malformed_lines(tmp_path: Path) -> None:
    w = started(tmp_path)
    fixed = 0
    for case in CASES:
        w.send(case.data)
        ids = list(dict.fromkeys(_key(i) for i, _ in case.answers))
        assert sorted(map(str, map(answer_of, w.probe(*ids)))) == sorted(
            map(str, case.answers)), case.name
        fixed += 1
    tally = run_mutations(w, 1000 - fixed, seed=2021)
    report = {"lines": fixed + tally.lines, "probes_answered": fixed + tally.probes_answered,
              "mutation_answers": tally.answers,
              "server_exits_on_input": 0 if tally.exit_code == 0 else 1}
    print("full-size stdio torture:", json.dumps(report))
    assert report["lines"] == 1000 and report["probes_answered"] == 1000
    assert tally.exit_code == 0


# -- the proxy in front of an upstream that fails on the wire ---------------------------------

FIXTURE = Path(__file__).parent / "data" / "mcp_upstreams" / "fixture_server.py"
PROXY_TIMEOUT = 2.0  # seconds: the hanging upstream costs the test this much, once per path
PATHS = [pytest.param("legacy", id="relay"), pytest.param(None, id="sdk")]


@pytest.fixture(scope="module", params=PATHS)
def proxied(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Any, Path]]:
    """`scratch mcp proxy --timeout 2 -- python fixture_server.py` and its SDK client: one
    that did the legacy handshake (its tool calls relayed as lines) or a 2026-07-28 one (the
    SDK's path); and the file of the upstream's pids (one line per process started)."""
    from mcp import StdioServerParameters

    from tests.mcp_support import McpClient
    root = tmp_path_factory.mktemp("torture-proxy")
    pids = root / "pids"
    env = server_env(root / "store", SCRATCH_BUDGET_CONTEXT_WINDOW="1000000000",
                     FIXTURE_PIDS=str(pids))
    import sys
    params = StdioServerParameters(command=SCRATCH[0], args=[
        *SCRATCH[1:], "mcp", "proxy", "--tools", "all", "--timeout", str(PROXY_TIMEOUT),
        "--name", "fx", "--",
        sys.executable, str(FIXTURE)], env=env)
    kwargs = {"mode": request.param} if request.param else {}
    client = McpClient(params, **kwargs)
    yield client, pids
    client.close()


def fault_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    info: dict[str, Any] = json.loads(result.content[0].text)
    assert info["server"] == "fx" and "'fx'" in info["message"], info
    return info


def serves(client: Any) -> None:
    """The next calls, of the same upstream and of scratch's own tools, are answered."""
    assert client.text("echo", {"message": "still here"}) == "Echo: still here"
    assert "line 00000" in client.text("text", {"size": 10})
    assert "echo" in {t.name for t in client.tools()}


def pids_of(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_proxy_an_upstream_that_dies_mid_result_costs_that_call_and_is_restarted(
        proxied: tuple[Any, Path]) -> None:
    client, pids = proxied
    serves(client)
    before = pids_of(pids)
    info = fault_of(client.call("die_mid_result"))
    assert info["code"] == "upstream_crashed" and info["tool"] == "die_mid_result", info
    serves(client)  # on a new upstream process
    after = pids_of(pids)
    assert len(after) == len(before) + 1 and after[:len(before)] == before


def test_proxy_garbage_lines_before_an_answer_cost_nothing(proxied: tuple[Any, Path]) -> None:
    # lines that are not JSON-RPC (text, invalid UTF-8, an array, a response to no request,
    # an empty line) are not the call's answer: the answer after them is
    client, pids = proxied
    before = pids_of(pids)
    assert client.text("garbage") == "after the garbage"
    serves(client)
    assert pids_of(pids) == before  # the same process: nothing was restarted


def test_proxy_garbage_in_place_of_a_result_is_a_malformed_result(
        proxied: tuple[Any, Path]) -> None:
    client, _ = proxied
    info = fault_of(client.call("garbage", {"then": "malformed"}))
    assert info["code"] == "upstream_malformed_result", info
    serves(client)


def test_proxy_a_garbled_answer_line_of_a_live_upstream_costs_that_call_its_timeout(
        proxied: tuple[Any, Path]) -> None:
    # the upstream writes its answer's line cut short (not JSON) and stays up: neither path
    # reads an id out of a line that does not parse, so the call is the timeout's (named so)
    client, pids = proxied
    before = pids_of(pids)
    info = fault_of(client.call("garbage", {"then": "garbled"}))
    assert info["code"] == "upstream_timeout", info
    serves(client)
    assert pids_of(pids) == before


def test_proxy_an_oversized_line_costs_only_that_call(proxied: tuple[Any, Path]) -> None:
    client, pids = proxied
    before = pids_of(pids)
    # 12 MB of garbage on one line, then the answer: the answer is passed on
    assert client.text("oversized", {"size": 12 * MB, "mode": "garbage"}) == "after the big line"
    # a 12 MB result that is not a tool result: named as such
    info = fault_of(client.call("oversized", {"size": 12 * MB, "mode": "malformed"}))
    assert info["code"] == "upstream_malformed_result", info
    # a valid 12 MB result: stored, and the pointer is what the call answers
    result = client.call("oversized", {"size": 12 * MB, "mode": "valid"})
    assert not result.is_error
    stored = result.meta["scratch"]
    assert stored["stored"].startswith("fx.oversized/") and stored["partial"] is False
    assert result.content[0].text.startswith(f"stored {stored['stored']} (version 1)")
    assert "12,582,912 bytes" in result.content[0].text
    assert sum(len(c.text) for c in result.content if c.type == "text") < 64 * 1024
    serves(client)
    assert pids_of(pids) == before


def test_proxy_a_hanging_upstream_times_out_and_the_next_call_is_served(
        proxied: tuple[Any, Path], tmp_path: Path) -> None:
    client, _ = proxied
    release = tmp_path / "release"
    info = fault_of(client.call("wait_for", {"path": str(release)}))
    assert info["code"] == "upstream_timeout" and info["timeout"] == PROXY_TIMEOUT, info
    release.touch()  # the upstream was told to cancel; were it not, this ends its wait
    serves(client)
    # the same tool answers once its file is there (no stray answer of the cancelled call)
    assert client.text("wait_for", {"path": str(release)}) == "released"
