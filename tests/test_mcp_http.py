"""`scratch mcp serve --http` on 127.0.0.1: tokens, isolation, the door's refusals, the log."""

from __future__ import annotations

import json
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scratch.mcp.specs import TOOLS
from tests.mcp_support import (
    INITIALIZE,
    SCRATCH,
    HttpServer,
    McpClient,
    add_token,
    post,
    server_env,
    text_of,
)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-http") / "store"


@pytest.fixture(scope="module")
def tokens(home: Path) -> dict[str, str]:
    return {"ops": add_token(home, "ops"), "dev": add_token(home, "dev")}


@pytest.fixture(scope="module")
def server(home: Path, tokens: dict[str, str]) -> Iterator[HttpServer]:
    hold = home.parent / "hold"  # the server's test hook: calls wait while hold-TOOL exists
    hold.mkdir()
    srv = HttpServer(home, "--rate-limit", "0", log=home.parent / "requests.jsonl",
                     SCRATCH_MCP_TEST_HOLD=str(hold))
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def ops(server: HttpServer, tokens: dict[str, str]) -> Iterator[McpClient]:
    c = server.client(tokens["ops"])
    yield c
    c.close()


@pytest.fixture(scope="module")
def dev(server: HttpServer, tokens: dict[str, str]) -> Iterator[McpClient]:
    c = server.client(tokens["dev"])
    yield c
    c.close()


def listed(client: McpClient) -> dict[str, dict[str, str]]:
    """``list_files`` read back from its table: name -> its columns."""
    lines = client.text("list_files").splitlines()
    columns = lines[0].split()
    return {row[0]: dict(zip(columns, row, strict=False)) for row in map(str.split, lines[1:])}


def test_the_sdk_client_works_over_http_with_a_token(ops: McpClient) -> None:
    assert len(ops.tools()) == len(TOOLS)
    assert ops.text("write_file", {"path": "plan", "content": "a\n"}) == (
        "plan: version 1 (2 bytes, 1 line)\n")
    assert text_of(ops.call("read", {"file": "plan"})) == "a\n"
    assert "\nsession      ops/mcp-" in ops.text("budget")


def test_two_tokens_cannot_see_each_others_entries(ops: McpClient, dev: McpClient) -> None:
    ops.text("write_file", {"path": "ops-only", "content": "secret\n"})
    assert "ops-only" in listed(ops)
    assert "ops-only" not in listed(dev)
    assert dev.call("read", {"file": "ops-only"}).structured_content["code"] == "entry_not_found"
    assert dev.call("read_file", {"path": "../ops/files/ops-only"}).is_error
    from mcp.shared.exceptions import MCPError
    with pytest.raises(MCPError) as err:
        dev.read("scratch://ops/ops-only")
    assert err.value.code == -32002
    dev.text("write_file", {"path": "ops-only", "content": "dev's own\n"})
    assert text_of(ops.call("read", {"file": "ops-only"})) == "secret\n"
    assert text_of(dev.call("read", {"file": "ops-only"})) == "dev's own\n"
    assert dev.text("get_usage_stats").startswith("agent: dev\n")


def test_no_token_or_a_bad_one_gets_401(server: HttpServer, tokens: dict[str, str]) -> None:
    for token in (None, "scr_not-a-token", tokens["ops"][:-2]):
        reply = post(server.url, INITIALIZE, token=token)
        assert reply.status_code == 401, token
        assert reply.headers["www-authenticate"].startswith("Bearer")
        assert reply.json()["error"] == "unauthorized"
    assert post(server.url, INITIALIZE, token=tokens["ops"]).status_code == 200


def test_the_token_file_is_private_and_holds_only_hashes(home: Path,
                                                         tokens: dict[str, str]) -> None:
    path = home / "state" / "mcp" / "tokens.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert all(t not in text for t in tokens.values())
    listed = subprocess.run([*SCRATCH, "--json", "mcp", "token", "list"], env=server_env(home),
                            capture_output=True, text=True, check=True)
    rows = json.loads(listed.stdout)["data"]["tokens"]
    assert sorted(r["agent"] for r in rows) == ["dev", "ops"]
    assert all(t not in listed.stdout for t in tokens.values())


def test_a_revoked_token_is_refused_at_once(server: HttpServer, home: Path) -> None:
    token = add_token(home, "temp")
    assert post(server.url, INITIALIZE, token=token).status_code == 200
    gone = subprocess.run([*SCRATCH, "mcp", "token", "remove", "temp"], env=server_env(home),
                          capture_output=True, text=True, check=True)
    assert gone.stdout.startswith("removed t-")
    assert post(server.url, INITIALIZE, token=token).status_code == 401


def test_a_browser_origin_is_refused(server: HttpServer, tokens: dict[str, str]) -> None:
    evil = post(server.url, INITIALIZE, token=tokens["ops"],
                headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403
    local = post(server.url, INITIALIZE, token=tokens["ops"],
                 headers={"Origin": "http://localhost:3000"})
    assert local.status_code == 200


def test_malformed_requests_get_protocol_errors(server: HttpServer, ops: McpClient,
                                                tokens: dict[str, str]) -> None:
    bad_json = post(server.url, None, token=tokens["ops"], raw=b'{"jsonrpc": "2.0", "id": ')
    assert bad_json.status_code == 400
    assert bad_json.json()["error"]["code"] == -32700
    not_rpc = post(server.url, {"hello": "world"}, token=tokens["ops"])
    assert not_rpc.status_code == 400
    assert not ops.call("budget").is_error  # still serving


def _wait_for(path: Path, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


def test_a_client_that_disconnects_mid_call_leaves_nothing_half_stored(
        server: HttpServer, ops: McpClient, tokens: dict[str, str], home: Path) -> None:
    """The server's hook holds the ingest on its worker thread until the test lets it go, so
    the client hangs up while the call is known to be in progress."""
    import socket
    from urllib.parse import urlsplit
    hold = home.parent / "hold"
    big = "\n".join(json.dumps({"i": i, "pad": "x" * 200}) for i in range(40_000)) + "\n"
    opened = post(server.url, INITIALIZE, token=tokens["ops"])
    sid = opened.headers["mcp-session-id"]
    post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
         token=tokens["ops"], headers={"Mcp-Session-Id": sid})
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": "ingest", "arguments": {
                           "content": big, "name": "dropped", "store_always": True}}}).encode()
    url = urlsplit(server.url)
    assert url.hostname is not None and url.port is not None
    request = (f"POST {url.path} HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\n"
               f"Authorization: Bearer {tokens['ops']}\r\nMcp-Session-Id: {sid}\r\n"
               "Content-Type: application/json\r\n"
               "Accept: application/json, text/event-stream\r\n"
               f"MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {len(body)}\r\n"
               "\r\n").encode() + body
    (hold / "hold-ingest").touch()
    try:
        with socket.create_connection((url.hostname, url.port), timeout=60) as sock:
            sock.sendall(request)
            _wait_for(hold / "held-ingest")  # the call is running: the client hangs up now
        assert "dropped" not in listed(ops)  # the server serves others meanwhile
    finally:
        (hold / "hold-ingest").unlink()
    # the abandoned call runs to its end on its thread: the entry is there whole
    deadline = time.monotonic() + 60
    while "dropped" not in (entries := listed(ops)):
        assert time.monotonic() < deadline, "the abandoned ingest never finished"
        time.sleep(0.05)
    assert entries["dropped"]["lines"] == "40000" and entries["dropped"]["version"] == "1"
    assert not ops.call("budget").is_error


def test_one_log_line_per_request_and_never_content(server: HttpServer, ops: McpClient,
                                                    tokens: dict[str, str]) -> None:
    marker = "do-not-log-this-3f9a"
    ops.text("write_file", {"path": "logged", "content": marker + "\n"})
    ops.call("read", {"file": "logged"})
    post(server.url, INITIALIZE)  # a 401
    assert server.log is not None
    text = server.log.read_text()
    assert marker not in text and tokens["ops"] not in text
    rows = [json.loads(line) for line in text.splitlines()]
    calls = [r for r in rows if r.get("tool") == "read" and r.get("agent") == "ops"]
    assert calls and {"time", "request_id", "agent", "token", "tool", "tokens", "duration_ms",
                      "outcome"} <= set(calls[-1])
    assert calls[-1]["outcome"] == "ok" and calls[-1]["tokens"] > 0
    assert calls[-1]["token"].startswith("t-")
    assert any(r.get("outcome") == "unauthorized" and r.get("status") == 401 for r in rows)


def test_rate_limits_and_body_limits(home: Path, tokens: dict[str, str]) -> None:
    srv = HttpServer(home, "--rate-limit", "3", "--max-body", "4096", "--quiet")
    try:
        codes = [post(srv.url, INITIALIZE, token=tokens["dev"]).status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
        limited = post(srv.url, INITIALIZE, token=tokens["dev"])
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        # another token has its own bucket; a body over --max-body is refused whole
        huge = dict(INITIALIZE, params={**INITIALIZE["params"], "pad": "x" * 10_000})
        assert post(srv.url, huge, token=tokens["ops"]).status_code == 413
    finally:
        srv.stop()


def test_a_non_loopback_bind_without_tokens_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "no-tokens"
    out = subprocess.run([*SCRATCH, "mcp", "serve", "--http", "0.0.0.0:0"],
                         env=server_env(empty), capture_output=True, text=True, timeout=60,
                         check=False)
    assert out.returncode == 2
    assert "error [tokens_required]: refusing to serve on 0.0.0.0 without tokens" in out.stderr
    assert "scratch mcp token add AGENT" in out.stderr
