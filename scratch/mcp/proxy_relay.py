"""The proxy's fast path: a tool call to a stdio upstream relayed as JSON-RPC lines.

Going through the SDK on both sides (the client's request parsed into models, re-sent through
the upstream's client session, its answer parsed, validated and serialized again) costs a
pass-through call more than a millisecond; a relay of lines costs a few dozen microseconds.
Two halves, on the event loop, no thread:

- :func:`raw_stdio` is the upstream's stdio transport (what the SDK's ``Client`` is given in
  place of ``stdio_client``): it starts the process in a session of its own, and reads its
  stdout as lines. A line answering a relayed call (its ``id``, or the ``progressToken`` of a
  progress notification, is one the relay gave: ``scratch~N``) goes to the relay; every other
  line is parsed for the SDK session as before (initialize, lists, resources, prompts,
  list_changed, calls on the SDK path). Stopping it closes the upstream's stdin, then ends
  its process group (SIGTERM, then SIGKILL): no orphans.
- :class:`Front` sits between the client's stdin lines and the proxy's SDK server. A
  ``tools/call`` of an upstream tool whose upstream is connected over :func:`raw_stdio` is
  taken off the line and relayed: sent on with a relay id (and progress token), the answer
  awaited under the upstream's timeout, and written back with the client's id. A result that
  :func:`scratch.mcp.proxy.below_threshold` lets through is the upstream's result object as
  parsed (no model, nothing added or dropped); anything else goes through
  :func:`scratch.mcp.proxy_server.finish`, as on the SDK path. The client's
  ``notifications/cancelled`` of a relayed call is sent on to the upstream (with the relay
  id) and no answer is written. Everything else, and every call while an upstream is down,
  goes to the SDK server unchanged.
- Only after a legacy ``initialize`` (protocol 2025-11-25 or older): those results are the
  upstream's own shape; a 2026-07-28 client goes the SDK's way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import orjson

from scratch.mcp.stdio import MAX_LINE

if TYPE_CHECKING:
    from scratch.mcp.proxy_server import Proxy
    from scratch.mcp.upstream import Upstream

TAG = "scratch~"  # relay ids and progress tokens: strings no SDK client makes
LEGACY = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
STOP_GRACE = 2.0  # seconds an upstream has to exit once its stdin is closed (then signals)


class Gone(Exception):
    """The upstream's stdout ended while a relayed call waited."""


def _loads(data: bytes | str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # e.g. an integer beyond 64 bits: the slow parser takes it
        return json.loads(data)


class Channel:
    """An upstream's pipes as the relay uses them."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.progress: dict[str, Callable[[dict[str, Any]], None]] = {}
        self.open = True
        self._next = 0

    def new_id(self) -> str:
        self._next += 1
        return f"{TAG}{self._next}"

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    async def drain(self) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.drain()

    def take(self, line: bytes) -> bool:
        """Whether ``line`` belongs to a relayed call (then it has been handed over)."""
        if not (self.pending or self.progress) or TAG.encode() not in line:
            return False
        try:
            msg = _loads(line)
        except ValueError:
            return False
        if not isinstance(msg, dict):
            return False
        mid = msg.get("id")
        if isinstance(mid, str) and mid.startswith(TAG) and "method" not in msg:
            fut = self.pending.pop(mid, None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
            return True  # ours, even when its call was cancelled meanwhile
        if msg.get("method") == "notifications/progress":
            params = msg.get("params")
            token = params.get("progressToken") if isinstance(params, dict) else None
            if isinstance(token, str) and token in self.progress:
                self.progress[token](params)  # type: ignore[arg-type]
                return True
        return False

    def close(self) -> None:
        self.open = False
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(Gone())
        self.pending.clear()


@asynccontextmanager
async def raw_stdio(command: str, args: list[str], env: dict[str, str], cwd: Any,
                    owner: Upstream) -> AsyncIterator[tuple[Any, Any]]:
    """The upstream's process as the SDK client's ``(read_stream, write_stream)`` (see the
    module); ``owner.channel`` is its :class:`Channel` while it runs."""
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    proc = await asyncio.create_subprocess_exec(
        command, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        env=env, cwd=cwd, start_new_session=True, limit=MAX_LINE)
    channel = Channel(proc)
    to_session, read_stream = anyio.create_memory_object_stream[Any](16)
    write_stream, from_session = anyio.create_memory_object_stream[Any](16)

    async def reader() -> None:
        assert proc.stdout is not None
        try:
            async with to_session:
                while True:
                    try:
                        line = await proc.stdout.readuntil(b"\n")
                    except asyncio.IncompleteReadError as exc:
                        if not exc.partial:
                            return
                        line = exc.partial
                    except (asyncio.LimitOverrunError, OSError):
                        return
                    if channel.take(line):
                        continue
                    if not line.strip():
                        continue
                    try:
                        item: Any = SessionMessage(jsonrpc_message_adapter.validate_json(
                            line, by_name=False))
                    except ValueError as exc:  # the session says what was wrong
                        item = exc
                    try:
                        await to_session.send(item)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return
        finally:
            channel.close()
            owner._eof = True

    async def writer() -> None:
        try:
            async with from_session:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    channel.write(data.encode() + b"\n")
                    await channel.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        owner.channel = channel
        try:
            yield read_stream, write_stream
        finally:
            owner.channel = None
            with anyio.CancelScope(shield=True):
                await _stop(proc)
                await read_stream.aclose()
                await write_stream.aclose()
            tg.cancel_scope.cancel()


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Close stdin, give the process its grace, then end its whole group."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
        try:
            await asyncio.wait_for(proc.wait(), STOP_GRACE)
            break
        except TimeoutError:
            continue
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # children it left in its group


class Front:
    """The client's stdin lines, with relayed tool calls taken out (see the module)."""

    def __init__(self, proxy: Proxy, lines: Any, out: Any) -> None:
        self.proxy = proxy
        self.lines = lines
        self.out = out  # asyncio.StreamWriter of the client's stdout
        self.legacy = False
        self.client_name: str | None = None
        self.inflight: dict[Any, tuple[asyncio.Task[None], Channel, str]] = {}

    def __aiter__(self) -> Front:
        return self

    async def __anext__(self) -> str:
        while True:
            line: str = await self.lines.__anext__()
            if '"tools/call"' in line:
                if self.legacy and self._relay(line):
                    continue
            elif '"notifications/cancelled"' in line:
                if self.inflight and self._cancel(line):
                    continue
            elif '"initialize"' in line:
                self._initialize(line)
            return line

    def _initialize(self, line: str) -> None:
        try:
            msg = _loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict) or msg.get("method") != "initialize":
            return
        params = msg.get("params")
        if not isinstance(params, dict):
            return
        self.legacy = params.get("protocolVersion") in LEGACY
        info = params.get("clientInfo")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self.client_name = info["name"]

    def _relay(self, line: str) -> bool:
        try:
            msg = _loads(line)
        except ValueError:
            return False
        if not isinstance(msg, dict) or msg.get("method") != "tools/call" or "id" not in msg:
            return False
        params = msg.get("params")
        if not isinstance(params, dict) or not isinstance(params.get("name"), str):
            return False
        route = self.proxy.routes.get(params["name"])
        if route is None:
            return False
        upstream = self.proxy.upstreams[route.server]
        channel = upstream.channel
        if channel is None or not channel.open or not upstream.ready or upstream._eof:
            return False  # down: the SDK path restarts it and says what happened
        cid = msg["id"]
        uid = channel.new_id()
        task = asyncio.get_running_loop().create_task(
            self._call(cid, uid, params, route, upstream, channel))
        self.inflight[cid] = (task, channel, uid)
        return True

    def _cancel(self, line: str) -> bool:
        try:
            msg = _loads(line)
        except ValueError:
            return False
        params = msg.get("params") if isinstance(msg, dict) else None
        if not isinstance(params, dict) or msg.get("method") != "notifications/cancelled":
            return False
        found = self.inflight.pop(params.get("requestId"), None)
        if found is None:
            return False
        task, channel, uid = found
        task.cancel()
        if channel.open:
            channel.write(orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                        "params": {**params, "requestId": uid}}) + b"\n")
        return True

    def _send(self, message: dict[str, Any]) -> None:
        self.out.write(orjson.dumps(message) + b"\n")

    async def _call(self, cid: Any, uid: str, params: dict[str, Any], route: Any,
                    upstream: Upstream, channel: Channel) -> None:
        from scratch.mcp.proxy import error_result
        from scratch.mcp.proxy_server import finish
        from scratch.mcp.upstream import UpstreamError
        sent = {**params, "name": route.tool}
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is not None:
            assert isinstance(meta, dict)
            sent["_meta"] = {**meta, "progressToken": uid}

            def progress(p: dict[str, Any]) -> None:
                self._send({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {**p, "progressToken": token}})
            channel.progress[uid] = progress
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        channel.pending[uid] = fut
        try:
            channel.write(orjson.dumps({"jsonrpc": "2.0", "id": uid, "method": "tools/call",
                                        "params": sent}) + b"\n")
            try:
                reply = await asyncio.wait_for(fut, upstream.timeout)
            except TimeoutError:
                if channel.open:
                    channel.write(orjson.dumps({"jsonrpc": "2.0",
                                                "method": "notifications/cancelled",
                                                "params": {"requestId": uid,
                                                           "reason": "timed out"}}) + b"\n")
                result = error_result(UpstreamError(
                    f"tool {route.tool!r} of upstream server {upstream.name!r} did not answer "
                    f"within {upstream.timeout:g}s; the call was cancelled",
                    code="upstream_timeout", server=upstream.name, tool=route.tool,
                    timeout=upstream.timeout))
            except Gone:
                await upstream._lost()
                result = error_result(UpstreamError(
                    f"upstream server {upstream.name!r} closed its connection during the call "
                    f"of {route.tool!r} (it crashed or exited); it is started again on its next "
                    "call", code="upstream_crashed", server=upstream.name, tool=route.tool))
            else:
                error = reply.get("error")
                if isinstance(error, dict):  # a protocol error: passed on, its message cut
                    from scratch.mcp.proxy import cut_text
                    msg = error.get("message")
                    self._send({"jsonrpc": "2.0", "id": cid, "error": {
                        **error, "message": cut_text(msg) if isinstance(msg, str) else msg}})
                    return
                raw = reply.get("result")
                if not isinstance(raw, dict):
                    raw = {"content": raw}  # not a result object: finish() says so
                result = await finish(self.proxy, route, raw, self._session)
            self._send({"jsonrpc": "2.0", "id": cid, "result": result})
            await self.out.drain()
        finally:
            channel.pending.pop(uid, None)
            channel.progress.pop(uid, None)
            if self.inflight.get(cid, (None,))[0] is asyncio.current_task():
                del self.inflight[cid]

    def _session(self) -> Any:
        state = self.proxy.state
        return state.session_for(("stdio",), state.agent, self.client_name, "")


__all__ = ["Channel", "Front", "LEGACY", "TAG", "raw_stdio"]
