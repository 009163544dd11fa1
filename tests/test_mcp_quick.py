"""Quick tool calls of `scratch mcp serve` over stdio (scratch.mcp.quick): answered off the
wire, they must be exactly the SDK path's answers. Two real servers on two stores holding the
same entries, one with the quick path and one with SCRATCH_MCP_SDK_ONLY=1 (the setting
mcp.sdk_only), get the same JSON-RPC lines (a legacy handshake client and a 2026-07-28 one,
written by hand so nothing normalises the answers); every answer is compared whole, and the
request logs say which path each call took."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_support import SCRATCH, server_env

pytest.importorskip("mcp")

DOC = {"items": [{"id": i, "name": f"pod-{i}", "phase": "Running" if i % 5 else "Failed",
                  "big": 12345678901234567890123 if i == 3 else i} for i in range(400)]}
LOG = "".join(f"2026-12-01 10:{i // 60:02d}:{i % 60:02d} {'ERROR' if i % 9 == 0 else 'INFO'} "
              f"worker-{i % 4} step {i}\n" for i in range(3000))
# each call three times in a row: the first runs on the SDK's path (nothing is known of it
# yet), the next ones on the quick path where it is enabled and the last one was quick
REPEAT = 3
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("head", {"file": "log", "lines": 5}),
    ("tail", {"file": "log", "lines": 3}),
    ("grep", {"file": "log", "pattern": "ERROR", "context": 0, "max_count": 4}),
    ("get_in", {"file": "doc", "path": "items.3"}),
    ("get_in", {"file": "doc", "path": "items", "offset": 10, "limit": 2}),
    ("schema", {"file": "doc"}),
    ("iterate_over", {"file": "doc", "path": "items", "fields": "id,phase", "limit": 5}),
    ("head", {"file": "log", "lines": 3000}),  # over the cap: a refusal with suggestions
    ("head", {"file": "log", "lines": 3000, "fit": True}),  # a fitted page and next
    ("get_in", {"file": "doc", "path": "items.9999"}),  # an error
    ("head", {"file": "log", "lines": "five"}),  # wrong argument type
]


def _store(tmp: Path, name: str) -> Path:
    home = tmp / name
    env = server_env(home)
    subprocess.run([*SCRATCH, "init"], env=env, check=True, capture_output=True)
    for entry, text in (("doc", json.dumps(DOC)), ("log", LOG)):
        subprocess.run([*SCRATCH, "ingest", entry, "--store-always"], input=text.encode(),
                       env=env, check=True, capture_output=True)
    return home


class Raw:
    """A server process spoken to in JSON-RPC lines."""

    def __init__(self, home: Path, **env: str) -> None:
        self.proc = subprocess.Popen([*SCRATCH, "mcp", "serve"], env=server_env(home, **env),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.next_id = 0

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        answer = json.loads(self.proc.stdout.readline())
        assert answer["id"] == self.next_id
        return answer  # type: ignore[no-any-return]

    def close(self) -> list[dict[str, Any]]:
        """Stop the server; its request log."""
        _, err = self.proc.communicate(timeout=30)  # closes stdin: the server ends
        return [json.loads(ln) for ln in err.decode().splitlines() if ln.startswith("{")]


MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "quick-test", "version": "1"},
               "io.modelcontextprotocol/clientCapabilities": {}}


def _session(home: Path, protocol: str, **env: str) -> tuple[list[dict[str, Any]],
                                                             list[dict[str, Any]]]:
    server = Raw(home, **env)
    try:
        extra: dict[str, Any] = {}
        if protocol == "legacy":
            server.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "quick-test", "version": "1"}})
            server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        else:
            extra = {"_meta": MODERN_META}
        answers = []
        for name, arguments in CALLS:
            for _ in range(REPEAT):
                answers.append(server.request("tools/call", {"name": name,
                                                             "arguments": arguments, **extra}))
    finally:
        log = server.close()
    return answers, log


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_quick_answers_are_the_sdk_paths_answers(tmp_path: Path, protocol: str) -> None:
    quick, quick_log = _session(_store(tmp_path, "a"), protocol)
    sdk, sdk_log = _session(_store(tmp_path, "b"), protocol, SCRATCH_MCP_SDK_ONLY="1")
    assert len(quick) == len(sdk) == REPEAT * len(CALLS)
    for n, (mine, theirs) in enumerate(zip(quick, sdk, strict=True)):
        assert mine == theirs, (n, CALLS[n // REPEAT])
    # what the answers hold is what it should: a refusal, a fitted page, an error, exact ints
    by_call = {n: quick[REPEAT * n + REPEAT - 1]["result"] for n in range(len(CALLS))}
    assert "12345678901234567890123" in by_call[3]["content"][0]["text"]
    assert by_call[7]["isError"] is True
    assert by_call[7]["structuredContent"]["suggestions"]
    assert by_call[8]["isError"] is False and "next" in json.dumps(by_call[8])
    assert by_call[9]["isError"] is True
    assert by_call[10]["isError"] is True
    if protocol == "modern":
        assert all(a["result"]["resultType"] == "complete" for a in quick)
        assert all("io.modelcontextprotocol/serverInfo" in a["result"]["_meta"] for a in quick)
    # the paths taken: repeated quick read-only calls answered off the wire, nothing else
    calls = [r for r in quick_log if r.get("method") == "tools/call"]
    assert len(calls) == REPEAT * len(CALLS)
    # the first call of a tool on an entry takes the SDK's path (nothing known of it yet);
    # how many after it are quick depends on how long each took (<= 10 ms) on this machine
    assert not calls[0].get("quick") and not calls[3 * REPEAT].get("quick")
    assert sum(bool(r.get("quick")) for r in calls) >= 3
    assert all(r["tool"] == CALLS[i // REPEAT][0] for i, r in enumerate(calls))
    assert not any(r.get("quick") for r in sdk_log)


def test_a_call_with_a_progress_token_or_an_older_protocol_goes_the_sdks_way(
        tmp_path: Path) -> None:
    home = _store(tmp_path, "a")
    server = Raw(home)
    try:
        server.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                      "clientInfo": {"name": "old", "version": "1"}})
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for _ in range(3):
            answer = server.request("tools/call", {"name": "head",
                                                   "arguments": {"file": "log", "lines": 1}})
            assert answer["result"]["isError"] is False
        answer = server.request("tools/call", {"name": "head", "arguments": {
            "file": "log", "lines": 1}, "_meta": {"progressToken": "p1"}})
        assert answer["result"]["isError"] is False
    finally:
        log = server.close()
    assert not any(r.get("quick") for r in log)
