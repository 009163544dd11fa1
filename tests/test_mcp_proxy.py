"""`scratch mcp proxy` in front of real upstream servers (the SDK-built fixture server in
tests/data/mcp_upstreams), driven by the MCP SDK's own client: interception, pass-through,
names, notifications, and the faults (start failure, crash, hang, malformed result, a result
over max_ingest_bytes, no orphans)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_support import SCRATCH, McpClient, server_env

FIXTURE = Path(__file__).parent / "data" / "mcp_upstreams" / "fixture_server.py"
WIDE = {"SCRATCH_BUDGET_CONTEXT_WINDOW": "100000000"}


def servers_file(tmp: Path, servers: dict[str, Any]) -> Path:
    path = tmp / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def fixture_entry(pids: Path | None = None, **extra: Any) -> dict[str, Any]:
    env = {"FIXTURE_PIDS": str(pids)} if pids else {}
    return {"command": sys.executable, "args": [str(FIXTURE)], "env": env, **extra}


def proxy_client(home: Path, config: Path, *, env: dict[str, str] | None = None,
                 **kwargs: Any) -> McpClient:
    from mcp import StdioServerParameters
    params = StdioServerParameters(
        command=SCRATCH[0], args=[*SCRATCH[1:], "mcp", "proxy", "--tools", "all", "--config",
                                  str(config)],
        env=env or server_env(home, **WIDE))
    return McpClient(params, **kwargs)


def version_info(home: Path, name: str) -> dict[str, Any]:
    from scratch.store import Store
    from scratch.store.config import load_config
    meta = Store.open(home, "default", load_config(home)).load_meta(name)
    assert meta is not None
    return meta["versions"][-1]["info"]  # type: ignore[no-any-return]


def dump(result: Any) -> dict[str, Any]:
    """A result as the wire had it (the client's model adds resultType's default)."""
    out = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    out.pop("resultType", None)
    return out  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("mcp-proxy") / "store"
    store.mkdir()
    (store / "scratch.toml").write_text(
        '[mcp.servers.fx.scratchpad]\n"json_*" = { min_tokens = 50 }\n'
        '"*" = { min_tokens = 2000 }\n')
    return store


@pytest.fixture(scope="module")
def pids(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pids") / "pids"


@pytest.fixture(scope="module")
def client(home: Path, pids: Path, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[McpClient]:
    config = servers_file(tmp_path_factory.mktemp("cfg"), {
        "fx": fixture_entry(pids, timeout=3),
        "missing": {"command": "/nonexistent/mcp-server"}})
    c = proxy_client(home, config, mode="legacy")
    yield c
    c.close()


def test_upstream_tools_are_listed_beside_scratchs_own_and_a_clash_is_prefixed(
        client: McpClient) -> None:
    tools = {t.name: t for t in client.tools()}
    assert {"text", "json_doc", "crash", "get_in", "head"} <= set(tools)
    # issue 22: an upstream's tool keeps its name; scratch's head is the one renamed
    assert "scratch_head" in tools and "fx__head" not in tools
    assert tools["scratch_head"].input_schema["properties"]["file"]
    assert client.text("head") == "the fixture's own head"


def test_a_tool_with_an_output_schema_is_listed_without_it(client: McpClient) -> None:
    tool = next(t for t in client.tools() if t.name == "structured")
    assert tool.output_schema is None
    assert tool.meta["scratch/outputSchema"]["required"] == ["count"]
    result = client.call("structured")
    assert result.structured_content == {"count": 3} and not result.is_error


def test_a_small_result_passes_through_unchanged(client: McpClient) -> None:
    result = client.call("text", {"size": 500})
    from tests.data.mcp_upstreams.fixture_server import text_of
    assert dump(result) == {"content": [{"type": "text", "text": text_of(500)}],
                            "isError": False}


def test_a_big_result_is_stored_and_the_pointer_links_to_it(client: McpClient) -> None:
    from tests.data.mcp_upstreams.fixture_server import text_of
    result = client.call("text", {"size": 200_000})
    assert not result.is_error
    scratch = result.meta["scratch"]
    name = scratch["stored"]
    assert name.startswith("fx.text/") and scratch["version"] == 1
    assert scratch["tokens"] > 2000 > scratch["pointer_tokens"] > 0
    assert result.content[0].text.startswith(f"stored {name} (version 1): text, 200,000 bytes")
    link = result.content[-1]
    assert link.type == "resource_link" and str(link.uri).endswith(f"/{name}@1")
    # explored through the proxy with scratch's own tools
    assert client.text("slice", {"file": name, "start": 2, "end": 2}).endswith(
        text_of(200_000).splitlines()[1] + "\n")
    # the same bytes again: the same entry, no new version
    again = client.call("text", {"size": 200_000})
    assert again.meta["scratch"]["stored"] == name and again.meta["scratch"]["version"] == 1
    stats = client.portal.call(client.client.call_tool, "get_usage_stats", {})
    assert "tokens intercepted: " in stats.content[0].text
    intercepted = int(stats.content[0].text.split("tokens intercepted: ")[1].split()[0])
    assert intercepted > 1.9 * (scratch["tokens"] - scratch["pointer_tokens"])  # both calls


def test_a_servers_own_threshold_decides(client: McpClient) -> None:
    # json_* is stored from 50 tokens on; a JSON text is stored as JSON and explored by path
    result = client.call("json_doc", {"items": 20})
    name = result.meta["scratch"]["stored"]
    assert "json" in result.content[0].text.split("\n")[0]
    assert client.text("get_in", {"file": name, "path": "items.7.status"}) == "Failed\n"
    assert "scratch" not in (client.call("text", {"size": 1000}).meta or {})


def test_an_image_is_stored_as_a_binary_companion_with_its_mime_type(
        home: Path, tmp_path: Path) -> None:
    (tmp_path / "scratch.toml").write_text('[mcp.servers.fx.scratchpad]\n"*" = { min_tokens = 10 }\n')
    c = proxy_client(tmp_path, servers_file(tmp_path, {"fx": fixture_entry()}))
    try:
        result = c.call("image")
        name = result.meta["scratch"]["stored"]
        listed = c.text("list_files", {"prefix": name})
        assert f"{name}.image-1" in listed
    finally:
        c.close()
    info = version_info(tmp_path, f"{name}.image-1")
    assert info["mime_type"] == "image/png" and info["format"] == "binary"


def test_an_upstream_error_is_never_stored_and_a_long_one_is_cut(client: McpClient) -> None:
    from tests.data.mcp_upstreams.fixture_server import text_of
    small = client.call("error", {"size": 300})
    assert small.is_error and small.content[0].text == text_of(300)
    big = client.call("error", {"size": 100_000})
    text = big.content[0].text
    assert big.is_error and "scratch" not in (big.meta or {})
    assert len(text.encode()) < 8 * 1024 + 100
    assert text.startswith(text_of(6000)[:6000])
    assert "[... scratch cut " in text and text.endswith(text_of(100_000)[-1000:])


def test_progress_notifications_pass_through(client: McpClient) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        seen.append((p, total, message))

    result = client.portal.call(lambda: client.client.call_tool(
        "progress", {}, progress_callback=on_progress))
    assert result.content[0].text == "done"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.filterwarnings("ignore:ping is removed")  # a 2025 client's ping, on purpose
def test_ping_is_answered(client: McpClient) -> None:
    import mcp_types as types
    for _ in range(2):  # answered by the proxy itself, each time, and nothing else changes
        answer = client.portal.call(client.client.send_ping)
        assert isinstance(answer, types.EmptyResult)
        assert answer.model_dump(exclude_none=True, by_alias=True) == {}
    assert client.text("text", {"size": 10}) == "line 00000"  # the session still serves


def test_a_malformed_result_is_an_error_naming_the_server(client: McpClient) -> None:
    result = client.call("malformed")
    info = json.loads(result.content[0].text)
    assert result.is_error and info["code"] == "upstream_malformed_result"
    assert info["server"] == "fx" and "'fx'" in info["message"]
    assert client.text("text", {"size": 10}) == "line 00000"  # still serving


def test_a_hang_past_the_timeout_is_an_error_and_the_proxy_keeps_serving(
        client: McpClient) -> None:
    result = client.call("hang")  # it hangs until its process ends: only the timeout answers
    info = json.loads(result.content[0].text)
    assert info["code"] == "upstream_timeout" and info["server"] == "fx"
    assert client.text("text", {"size": 10}) == "line 00000"


def test_a_server_that_does_not_start_costs_only_itself(client: McpClient) -> None:
    names = {t.name for t in client.tools()}
    assert "text" in names and "get_in" in names  # the others serve


def test_a_crash_mid_call_names_the_server_and_the_next_call_restarts_it(
        client: McpClient, pids: Path) -> None:
    before = pids.read_text().split()
    result = client.call("crash")
    info = json.loads(result.content[0].text)
    assert result.is_error and info["code"] == "upstream_crashed" and info["server"] == "fx"
    assert client.text("text", {"size": 10}) == "line 00000"
    after = pids.read_text().split()
    assert len(after) == len(before) + 1  # a new process


def test_list_changed_of_an_upstream_is_passed_on(home: Path, tmp_path: Path) -> None:
    got: list[str] = []

    async def handler(message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if isinstance(method, str):
            got.append(method)

    c = proxy_client(home, servers_file(tmp_path, {"fx": fixture_entry()}), mode="legacy",
                     message_handler=handler)
    try:
        assert "added_1" not in {t.name for t in c.tools()}
        assert c.text("add_tool") == "added added_1"
        deadline = time.monotonic() + 10
        while "notifications/tools/list_changed" not in got and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "notifications/tools/list_changed" in got
        assert "added_1" in {t.name for t in c.tools()}
    finally:
        c.close()


def test_tools_offered_by_two_servers_are_both_prefixed(home: Path, tmp_path: Path) -> None:
    c = proxy_client(home, servers_file(tmp_path, {"alpha": fixture_entry(),
                                                   "beta": fixture_entry()}))
    try:
        names = {t.name for t in c.tools()}
        assert {"alpha__text", "beta__text", "alpha__head", "beta__head"} <= names
        assert "text" not in names
        assert c.text("beta__text", {"size": 10}) == "line 00000"
    finally:
        c.close()


def test_a_result_over_max_ingest_bytes_is_stored_up_to_it_and_flagged_partial(
        home: Path, tmp_path: Path) -> None:
    env = server_env(home, **WIDE, SCRATCH_LIMITS_MAX_INGEST_BYTES="100000")
    c = proxy_client(home, servers_file(tmp_path, {"fx": fixture_entry()}), env=env)
    try:
        result = c.call("text", {"size": 300_000})
        scratch = result.meta["scratch"]
        assert scratch["partial"] is True
        assert "PARTIAL: the result is 300,000 bytes, over limits.max_ingest_bytes (100,000)" \
            in result.content[0].text
        assert scratch["stored"] in c.text("list_files", {"prefix": scratch["stored"]})
    finally:
        c.close()
    info = version_info(home, scratch["stored"])
    assert info["partial"] is True and 99_000 < info["bytes_received"] <= 100_000  # at a line end
    assert info["mcp"] == {"server": "fx", "tool": "text"}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("how", ["client closes", "SIGTERM"])
def test_stopping_the_proxy_stops_every_upstream(home: Path, tmp_path: Path, how: str) -> None:
    pids = tmp_path / "pids"
    config = servers_file(tmp_path, {"a": fixture_entry(pids), "b": fixture_entry(pids)})
    proc = subprocess.Popen([*SCRATCH, "mcp", "proxy", "--config", str(config)],
                            env=server_env(home), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stderr is not None
    lines = [proc.stderr.readline().decode()]
    while "serving" not in lines[-1] and lines[-1]:
        lines.append(proc.stderr.readline().decode())
    from tests.data.mcp_upstreams.fixture_server import TOOLS
    assert f"serving {2 * len(TOOLS)} tools of 2 server(s) (a, b)" in lines[-1]
    assert "scratch mcp proxy: a's tool 'text' is offered as 'a__text' (the name is taken)\n" in lines
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2 and all(_alive(p) for p in started)
    if how == "SIGTERM":
        proc.send_signal(signal.SIGTERM)
    else:
        proc.stdin.close()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in started)


def test_one_command_after_dashes(home: Path) -> None:
    from mcp import StdioServerParameters
    params = StdioServerParameters(
        command=SCRATCH[0], args=[*SCRATCH[1:], "mcp", "proxy", "--name", "fx", "--",
                                  sys.executable, str(FIXTURE)], env=server_env(home, **WIDE))
    c = McpClient(params)
    try:
        # [mcp.servers.fx] applies: json_* is stored from 50 tokens on
        assert c.call("json_doc", {"items": 20}).meta["scratch"]["stored"].startswith(
            "fx.json_doc/")
    finally:
        c.close()
