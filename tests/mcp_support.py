"""Driving `scratch mcp serve` with the MCP SDK's own client, from synchronous tests.

A client lives in a background event loop (an anyio blocking portal), so one server and one
client can serve every test of a module. Servers are real processes (`python -m scratch mcp
serve`), HTTP ones on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the MCP SDK (pip install 'mcp>=2.3,<3') is not installed")

from anyio.from_thread import start_blocking_portal  # noqa: E402  (after the skip)

SCRATCH = [sys.executable, "-m", "scratch"]
REPO = Path(__file__).resolve().parents[1]


def server_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(SCRATCH_HOME=str(home), **extra)
    return env


class McpClient:
    """An SDK ``Client`` session held open in a background loop; calls block until answered."""

    def __init__(self, target: Any, **client_kwargs: Any) -> None:
        from mcp import Client
        self._stack = ExitStack()
        self.portal = self._stack.enter_context(start_blocking_portal())
        self.client = self._stack.enter_context(
            self.portal.wrap_async_context_manager(Client(target, **client_kwargs)))

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.portal.call(self.client.call_tool, name, arguments or {})

    def data(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The structured answer of a call that must succeed (a ``--structured`` server)."""
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        assert result.structured_content is not None, "not a --structured server"
        return result.structured_content  # type: ignore[no-any-return]

    def text(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """The answer's text of a call that must succeed."""
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        return text_of(result)

    def tools(self) -> list[Any]:
        return self.portal.call(self.client.list_tools).tools  # type: ignore[no-any-return]

    def resources(self) -> Any:
        return self.portal.call(self.client.list_resources)

    def read(self, uri: str) -> Any:
        return self.portal.call(self.client.read_resource, uri)

    def close(self) -> None:
        self._stack.close()


# the servers of these helpers offer every tool (the tests drive each of them) unless told
EVERY_TOOL = ("--tools", "all")


def stdio_client(home: Path, *args: str, env: dict[str, str] | None = None,
                 client_name: str | None = None, structured: bool = False,
                 tools: str = "all", **client_kwargs: Any) -> McpClient:
    """A client of `scratch ARGS mcp serve --tools TOOLS` (``structured``: with
    --structured; ``client_kwargs``: the SDK Client's own, such as ``logging_callback``)."""
    from mcp import StdioServerParameters
    from mcp_types import Implementation
    serve = ["mcp", "serve", "--quiet", "--tools", tools,
             *(["--structured"] if structured else [])]
    params = StdioServerParameters(command=SCRATCH[0], args=[*SCRATCH[1:], *args, *serve],
                                   env=env or server_env(home))
    kwargs: dict[str, Any] = dict(client_kwargs)
    if client_name:
        kwargs["client_info"] = Implementation(name=client_name, version="1.0")
    return McpClient(params, **kwargs)


class RawServer:
    """A `scratch mcp serve` process spoken to in JSON-RPC lines written by hand, so nothing
    on the client's side normalises what the server sends."""

    def __init__(self, home: Path, *args: str, **env: str) -> None:
        tools = () if "--tools" in args else EVERY_TOOL
        self.proc = subprocess.Popen([*SCRATCH, "mcp", "serve", *tools, *args],
                                     env=server_env(home, **env), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert answer["id"] == self.next_id
        return answer

    def close(self) -> list[dict[str, Any]]:
        """Stop the server (its stdin closed); its request log."""
        _, err = self.proc.communicate(timeout=30)
        return [json.loads(ln) for ln in err.decode().splitlines() if ln.startswith("{")]


class HttpServer:
    """`scratch mcp serve --http 127.0.0.1:0` as a process; ``url`` is where it listens."""

    def __init__(self, home: Path, *args: str, log: Path | None = None, **env: str) -> None:
        self.log = log
        tools = () if "--tools" in args else EVERY_TOOL
        cmd = [*SCRATCH, "mcp", "serve", "--http", "127.0.0.1:0", *tools, *args]
        if log is not None:
            cmd += ["--log-file", str(log)]
        self.proc = subprocess.Popen(cmd, env=server_env(home, **env), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 60
        line = b""
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            found = re.search(rb"serving (http://\S+)", line)
            if found:
                self.url = found.group(1).decode()
                return
        self.stop()
        raise AssertionError(f"server did not start: {line!r}")

    def client(self, token: str | None = None, **kwargs: Any) -> McpClient:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0))
        return McpClient(streamable_http_client(self.url, http_client=http), **kwargs)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def post(url: str, body: Any, *, token: str | None = None, headers: dict[str, str] | None = None,
         raw: bytes | None = None) -> Any:
    """One plain HTTP POST (no MCP client): for the door's refusals."""
    import httpx2
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": "2025-06-18", **(headers or {})}
    if token:
        h["Authorization"] = f"Bearer {token}"
    content = raw if raw is not None else json.dumps(body).encode()
    return httpx2.post(url, content=content, headers=h, timeout=30.0)


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw-test", "version": "1"}}}


def add_token(home: Path, agent: str) -> str:
    out = subprocess.run([*SCRATCH, "mcp", "token", "add", agent], env=server_env(home),
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


def notes_of(result: Any) -> str:
    """The second text block of an answer (warnings, notices, more: NEXT, the footer)."""
    texts = [c.text for c in result.content if c.type == "text"]
    return texts[1] if len(texts) > 1 else ""


def next_of(result: Any) -> dict[str, Any] | None:
    """The tool call that continues a --fit answer, from the result's _meta."""
    return (result.meta or {}).get("scratch/next")


def charged(result: Any) -> int:
    """The tokens an answer or refusal was charged, from the result's _meta."""
    return int(result.meta["scratch/tokens"]["count"])


def shown_tokens(result: Any, encoding: str = "o200k_base") -> int:
    """What the result puts in front of the model, counted: every text block, and each
    resource link as its JSON (the MCP rendering's pricing rule)."""
    from scratch.answers.kernel.result import compact_json
    from scratch.tokens import count_text, resolve_encoding
    spec = resolve_encoding(None, encoding)
    total = 0
    for block in result.content:
        if block.type == "text":
            total += count_text(block.text, spec)
        elif block.type == "resource_link":
            wire = {"type": "resource_link", "uri": str(block.uri), "name": block.name,
                    "mimeType": block.mime_type, "description": block.description,
                    "size": block.size}
            total += count_text(compact_json(wire), spec)
    return total
