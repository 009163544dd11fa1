"""`scratch mcp proxy` in front of an upstream over streamable HTTP (an ``mcpServers`` entry
with ``url`` and ``headers``): the SDK-built fixture server of tests/data/mcp_upstreams served
by uvicorn on 127.0.0.1, the client the SDK's own. The headers reach the upstream; results
pass through or are stored as for a stdio upstream."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.data.mcp_upstreams.fixture_server import text_of
from tests.test_mcp_proxy import FIXTURE, dump, proxy_client, servers_file


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(FIXTURE), "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the HTTP fixture server did not listen"
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(params=["legacy", None], ids=["legacy", "2026"])
def client(request: pytest.FixtureRequest, url: str, tmp_path: Path) -> Iterator[object]:
    home = tmp_path / "store"
    home.mkdir()
    (home / "scratch.toml").write_text('[mcp.servers.web.scratchpad]\n"*" = { min_tokens = 2000 }\n')
    config = servers_file(tmp_path, {"web": {"url": url, "headers": {
        "X-Scratch-Test": "header-value-1", "Authorization": "Bearer t0ken"}}})
    kwargs = {"mode": request.param} if request.param else {}
    c = proxy_client(home, config, **kwargs)
    yield c
    c.close()


def test_the_entrys_headers_are_sent_to_the_upstream(client: object) -> None:
    seen = json.loads(client.text("headers"))  # type: ignore[attr-defined]
    assert seen["x-scratch-test"] == "header-value-1"
    assert seen["authorization"] == "Bearer t0ken"


def test_a_small_result_over_http_passes_through_unchanged(client: object) -> None:
    result = dump(client.call("text", {"size": 500}))  # type: ignore[attr-defined]
    # a 2026-07-28 answer carries the proxy's serverInfo in _meta (the SDK adds it)
    if set(result.get("_meta", {})) == {"io.modelcontextprotocol/serverInfo"}:
        del result["_meta"]
    assert result == {"content": [{"type": "text", "text": text_of(500)}],
                            "isError": False}


def test_a_big_result_over_http_is_stored_and_explored(client: object) -> None:
    result = client.call("text", {"size": 200_000})  # type: ignore[attr-defined]
    scratch = result.meta["scratch"]
    name = scratch["stored"]
    assert name.startswith("web.text/") and scratch["tokens"] > 2000 > scratch["pointer_tokens"]
    line = client.text("slice", {"file": name, "start": 3, "end": 3})  # type: ignore[attr-defined]
    assert line.endswith(text_of(200_000).splitlines()[2] + "\n")


def test_progress_over_http_passes_through(client: object) -> None:
    seen: list[float] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        seen.append(p)

    c = client
    result = c.portal.call(lambda: c.client.call_tool(  # type: ignore[attr-defined]
        "progress", {}, progress_callback=on_progress))
    assert result.content[0].text == "done" and seen == [1, 2, 3]
