"""Quick tool calls of ``scratch mcp serve`` over stdio, answered off the wire.

The SDK's handling of one request over stdio (the line parsed into models, the session's
dispatch through memory streams and tasks, the result model validated, sieved and
serialized) costs a warm call more than scratch's own answer does. The calls that matter
most for speed are the ones :func:`scratch.mcp.inline.runs_inline` already runs on the event
loop: a read-only tool on an entry it last answered within a few milliseconds. Those are
taken off the client's stdin in the pipe's callback (:class:`scratch.mcp.stdio.TakingReader`),
answered by the same :func:`scratch.mcp.dispatch.run_tool`, and written back as one JSON-RPC
line; every other line goes to the SDK server, in order.

Invariants:
- The answer is the SDK path's answer: the same :func:`run_tool` outcome in the same wire
  shape (tests compare both paths line by line, with the setting ``mcp.sdk_only`` turning
  this path off). Only for the protocol versions whose tool result needs no translation: the
  2025-06-18 and 2025-11-25 handshakes, and 2026-07-28 per request (``resultType`` and the
  ``serverInfo`` stamp added as the SDK adds them). Anything else, or anything unusual about
  the request (no id, odd params, a progress token, an unknown tool), goes the SDK's way.
- The session is the stdio connection's, as the SDK path's (one client, one process).
- One request-log line per call, as the SDK path writes it, with ``"quick": true``.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson

from scratch.mcp.dispatch import run_tool, wire_result
from scratch.mcp.inline import runs_inline, took
from scratch.mcp.reqlog import RequestLog
from scratch.mcp.session import ServerState
from scratch.mcp.stdio import handshake_of, tool_call_of

HANDSHAKE_VERSIONS = {"2025-06-18", "2025-11-25"}  # tool results as this module writes them
MODERN_VERSION = "2026-07-28"
PROTOCOL_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


def enabled(config: Any) -> bool:
    """Off with the setting ``mcp.sdk_only`` (``SCRATCH_MCP_SDK_ONLY=1``): every call through
    the SDK, to rule this path out when a client misbehaves."""
    return not config["mcp.sdk_only"]


class QuickCalls:
    """Takes quick tool calls off the client's stdin and answers them (see the module)."""

    def __init__(self, state: ServerState, server_info: dict[str, Any],
                 log: RequestLog | None) -> None:
        self.state = state
        self.server_info = server_info  # the SDK's serverInfo stamp of 2026-07-28 results
        self.log = log
        self.out: Any = None  # asyncio.StreamWriter of the client's stdout, once it is open
        self.version: str | None = None  # of the initialize handshake
        self.client_name: str | None = None

    def offer(self, line: bytes) -> bool:
        """Whether the client's ``line`` was answered here."""
        if b'"tools/call"' in line and self.out is not None and self._call(line):
            return True
        if b'"initialize"' in line:  # read even before stdout opens: it is often waiting
            self._initialize(line)
        return False

    def _initialize(self, line: bytes) -> None:
        shake = handshake_of(line)
        if shake is None:
            return
        self.version = shake.version
        if shake.client_name is not None:
            self.client_name = shake.client_name

    def _call(self, line: bytes) -> bool:
        call = tool_call_of(line)
        if call is None:
            return False
        rid, params = call
        name, arguments = params["name"], params.get("arguments")
        if isinstance(rid, bool) or not isinstance(rid, (str, int)) or not isinstance(
                arguments, dict):
            return False
        meta = params.get("_meta")
        client_name = self.client_name
        if meta is None:
            if self.version not in HANDSHAKE_VERSIONS:
                return False
            modern = False
        elif isinstance(meta, dict) and set(meta) <= {PROTOCOL_KEY, CLIENT_KEY,
                                                      "io.modelcontextprotocol/clientCapabilities"}:
            if meta.get(PROTOCOL_KEY) != MODERN_VERSION:
                return False
            modern = True
            info = meta.get(CLIENT_KEY)
            if isinstance(info, dict) and isinstance(info.get("name"), str):
                client_name = info["name"]
        else:  # a progress token, or anything else the SDK should see
            return False
        if not runs_inline(name, arguments, "stdio"):
            return False
        start = time.perf_counter()
        state = self.state
        session = state.session_for(("stdio",), state.agent, client_name, "")
        outcome = run_tool(name, arguments, session)  # never raises
        took(name, arguments, time.perf_counter() - start)
        result = wire_result(outcome)
        if modern:
            result["resultType"] = "complete"
            result["_meta"] = {**result.get("_meta", {}), SERVER_INFO_KEY: self.server_info}
        try:
            data = _dumps({"jsonrpc": "2.0", "id": rid, "result": result})
            logged: tuple[str, str | int | None] = ("ok" if outcome.ok else "tool_error",
                                                    outcome.code)
        except (TypeError, ValueError) as exc:  # a bug: an error answer; the pipe stays open
            data = _dumps({"jsonrpc": "2.0", "id": rid, "error": {
                "code": -32603, "message": f"the answer could not be written: {exc}"}})
            logged = ("error", -32603)
        self.out.write(data + b"\n")
        if self.log is not None:
            self.log.write(request_id=uuid.uuid4().hex[:16], rpc_id=rid, transport="stdio",
                           agent=state.agent, method="tools/call", tool=name,
                           tokens=outcome.tokens, quick=True,
                           duration_ms=round((time.perf_counter() - start) * 1000, 2),
                           outcome=logged[0], code=logged[1])
        return True


def _dumps(message: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(message)
    except TypeError:  # an integer beyond 64 bits, say: the slow encoder takes it
        import json
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


__all__ = ["QuickCalls", "enabled"]
