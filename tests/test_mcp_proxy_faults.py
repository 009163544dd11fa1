"""`scratch mcp proxy` when a call is cancelled by the client, and when an upstream exits
between calls, on both of the proxy's paths: the relay of lines (a client that did the legacy
initialize handshake) and the SDK's (a 2026-07-28 client). The upstream is the SDK-built
fixture server in tests/data/mcp_upstreams, the client the SDK's own."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.test_mcp_proxy import fixture_entry, proxy_client, servers_file

MODES = [pytest.param("legacy", id="relay"), pytest.param(None, id="sdk")]


def _proxied(tmp_path: Path, entry: dict, mode: str | None) -> Any:
    """A proxy of the fixture server ``entry`` (as ``fx``) on a new store, its client
    speaking ``mode`` (the SDK's default when None)."""
    home = tmp_path / "store"
    home.mkdir()
    kwargs = {"mode": mode} if mode else {}
    return proxy_client(home, servers_file(tmp_path, {"fx": entry}), **kwargs)


def _wait_for(path: Path, text: str, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("mode", MODES)
def test_a_legacy_clients_calls_are_relayed_as_lines_and_a_new_clients_go_the_sdks_way(
        tmp_path: Path, mode: str | None) -> None:
    # the upstream sees which path a call took: the relay sends its own ids (scratch~N), the
    # SDK's client session numbers its requests; the first call is the one the initialize
    # line (already waiting when the proxy opens its stdin) decides
    c = _proxied(tmp_path, fixture_entry(), mode)
    try:
        ids = [json.loads(c.text("request_id")) for _ in range(3)]
        if mode == "legacy":
            assert all(isinstance(i, str) and i.startswith("scratch~") for i in ids), ids
            assert len(set(ids)) == 3
        else:
            assert all(isinstance(i, int) for i in ids), ids
    finally:
        c.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_call_the_client_cancels_is_cancelled_upstream_and_the_proxy_keeps_serving(
        tmp_path: Path, mode: str | None) -> None:
    log = tmp_path / "fixture.log"
    entry = fixture_entry(timeout=60)
    entry["env"]["FIXTURE_LOG"] = str(log)
    c = _proxied(tmp_path, entry, mode)
    try:
        assert c.text("text", {"size": 10}) == "line 00000"
        async def cancelled_call() -> bool:
            with anyio.move_on_after(1.0) as scope:
                await c.client.call_tool("slow", {"seconds": 30})
            return scope.cancelled_caught

        assert c.portal.call(cancelled_call) is True
        # notifications/cancelled reached the upstream: its handler was cancelled (before
        # its 30 s: the log says so only then)
        assert _wait_for(log, "cancelled\n")
        # still serving, on the same upstream process, with no stray answer in between
        assert c.text("text", {"size": 10}) == "line 00000"
        assert c.text("slow", {"seconds": 0}) == "slept"
    finally:
        c.close()


@pytest.mark.parametrize("mode", MODES)
def test_an_upstream_that_exits_between_calls_is_started_again_on_the_next_call(
        tmp_path: Path, mode: str | None) -> None:
    # the design: an upstream found gone when a call comes is started again for that call
    # (transparently: it did not fail a call), a new process
    pids = tmp_path / "pids"
    c = _proxied(tmp_path, fixture_entry(pids), mode)
    try:
        assert c.text("exit_later") == "bye"
        first = pids.read_text().split()
        assert len(first) == 1
        from tests.test_mcp_proxy import _alive
        deadline = time.monotonic() + 10
        while _alive(int(first[0])) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(int(first[0]))
        time.sleep(0.3)  # the proxy reads the end of its stdout
        assert c.text("text", {"size": 10}) == "line 00000"
        after = pids.read_text().split()
        assert len(after) == 2 and after[0] == first[0]
        assert "text" in {t.name for t in c.tools()}
    finally:
        c.close()
