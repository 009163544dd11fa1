"""The proxy's fast path: a tool call to a stdio upstream relayed as JSON-RPC lines.

Going through the SDK on both sides (the client's request parsed into models, re-sent through
the upstream's client session, its answer parsed, validated and serialized again) costs a
pass-through call more than a millisecond; a relay of lines costs a few dozen microseconds.
Two halves, on the event loop, no thread:

- :func:`raw_stdio` is the upstream's stdio transport (what the SDK's ``Client`` is given in
  place of ``stdio_client``): it starts the process in a session of its own, and splits its
  stdout into lines in the pipe's own callback (a subprocess protocol, no reader task). A
  line answering a relayed call (its ``id``, or the ``progressToken`` of a progress
  notification, is one the relay gave: ``scratch~N``) goes to the relay, and its answer is
  written back to the client in that same callback; every other line is parsed for the SDK
  session as before (initialize, lists, resources, prompts,
  list_changed, calls on the SDK path). Stopping it closes the upstream's stdin, then ends
  its process group (SIGTERM, then SIGKILL): no orphans.
- :class:`Front` sits between the client's stdin lines and the proxy's SDK server, offered
  each line in the stdin pipe's callback (:class:`scratch.mcp.framing.TakingReader`). A
  ``tools/call`` of an upstream tool whose upstream is connected over :func:`raw_stdio` is
  taken off the line and relayed: sent on with a relay id (and progress token), the answer
  awaited under the upstream's timeout, and written back with the client's id. A result
  that :func:`scratch.mcp.proxy.intercept.below_threshold` lets through is the upstream's
  result object as parsed (no model, nothing added or dropped); anything else goes through
  :func:`scratch.mcp.proxy.server.finish`, as on the SDK path. The client's
  ``notifications/cancelled`` of a relayed call is sent on to the upstream (with the relay
  id) and no answer is written. Everything else, and every call while an upstream is down,
  goes to the SDK server unchanged.
- Only after a legacy ``initialize`` (protocol 2025-11-25 or older): those results are the
  upstream's own shape; a 2026-07-28 client goes the SDK's way.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol, TypeAlias

import anyio
import orjson

from scratch.mcp.framing import MAX_LINE, LineSplitter, handshake_of, loads_line, tool_call_of
from scratch.mcp.wire import JSON, JSONObject

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

    from scratch.errors import ScratchError
    from scratch.mcp.proxy.intercept import Route
    from scratch.mcp.serve.session import ServerState, Session


# proxy.server and proxy.upstream import this module, never the other way (not even for
# types): the proxy, its upstreams, the finishing step and the error class are handed in (see
# Front), each typed here by what the relay uses of it.
class Upstream(Protocol):
    """What the relay uses of an upstream (:class:`scratch.mcp.proxy.upstream.Upstream`)."""

    name: str
    timeout: float
    _eof: bool
    channel: Channel | None

    @property
    def ready(self) -> bool: ...

    async def _lost(self) -> None: ...


class Proxy(Protocol):
    """What the relay uses of the proxy (:class:`scratch.mcp.proxy.server.Proxy`)."""

    state: ServerState

    @property
    def routes(self) -> dict[str, Route]: ...

    @property
    def upstreams(self) -> Mapping[str, Upstream]: ...


class UpstreamError(Protocol):
    """How the relay makes an upstream's error (the class
    :class:`scratch.mcp.proxy.upstream.UpstreamError`)."""

    def __call__(self, message: str, *, code: str, **details: JSON) -> ScratchError: ...


Incoming: TypeAlias = "SessionMessage | Exception"  # what the SDK session reads
# scratch.mcp.proxy.server.finish, of this proxy (the last: when the call was sent)
Finish: TypeAlias = ("Callable[[Route, JSONObject, Callable[[], Session], float | None],"
                     " Awaitable[JSONObject]]")

TAG = "scratch~"  # relay ids and progress tokens: strings no SDK client makes
LEGACY = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
STOP_GRACE = 2.0  # seconds an upstream has to exit once its stdin is closed (then signals)


class Channel:
    """An upstream's pipes as the relay uses them."""

    def __init__(self, stdin: asyncio.WriteTransport) -> None:
        self.stdin = stdin
        self.pending: dict[str, Relayed] = {}  # relay id -> the call waiting for its answer
        self.open = True
        self._next = 0

    def new_id(self) -> str:
        self._next += 1
        return f"{TAG}{self._next}"

    def write(self, data: bytes) -> None:
        if not self.stdin.is_closing():
            self.stdin.write(data)

    def take(self, line: bytes) -> bool:
        """Whether ``line`` belongs to a relayed call (then it has been handed over)."""
        if not self.pending or TAG.encode() not in line:
            return False
        try:
            msg = loads_line(line)
        except ValueError:
            return False
        if not isinstance(msg, dict):
            return False
        mid = msg.get("id")
        if isinstance(mid, str) and mid.startswith(TAG) and "method" not in msg:
            call = self.pending.pop(mid, None)
            if call is not None:
                call.answered(msg)
            return True  # ours, even when its call was cancelled meanwhile
        if msg.get("method") == "notifications/progress":
            params = msg.get("params")
            token = params.get("progressToken") if isinstance(params, dict) else None
            call = self.pending.get(token) if isinstance(token, str) else None
            if call is not None:
                call.progress(params)  # type: ignore[arg-type]
                return True
        return False

    def close(self) -> None:
        self.open = False
        calls = list(self.pending.values())
        self.pending.clear()
        for call in calls:
            call.gone()


class _UpstreamPipes(asyncio.SubprocessProtocol):
    """The upstream's stdout, split into lines in the loop's own callback: a relayed call's
    answer is written back to the client in the same callback that read it (no task to wake,
    no loop turn between the upstream's answer and the client's)."""

    def __init__(self, owner: Upstream,
                 to_session: MemoryObjectSendStream[Incoming]) -> None:
        self.owner = owner
        self.to_session = to_session
        self.channel: Channel | None = None  # set once the pipes are connected
        self.lines = LineSplitter()
        self.exited = asyncio.get_running_loop().create_future()
        self.ended = False

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1 or self.ended:
            return
        for line in self.lines.feed(data):
            self._line(line)
            if self.ended:
                return
        if len(self.lines) > MAX_LINE:  # as the stream reader's limit: the pipe ends
            self._end()

    def _line(self, line: bytes) -> None:
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        assert self.channel is not None
        if self.channel.take(line) or not line.strip():
            return
        try:
            item: Incoming = SessionMessage(jsonrpc_message_adapter.validate_json(
                line, by_name=False))
        except ValueError as exc:  # the session says what was wrong
            item = exc
        try:
            self.to_session.send_nowait(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.WouldBlock):
            pass

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            if self.lines and not self.ended:  # the last line, without its newline
                self._line(self.lines.rest())
            self._end()

    def _end(self) -> None:
        if self.ended:
            return
        self.ended = True
        if self.channel is not None:
            self.channel.close()
        self.owner._eof = True
        self.to_session.close()

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


@asynccontextmanager
async def raw_stdio(command: str, args: list[str], env: dict[str, str], cwd: str | None,
                    owner: Upstream) -> AsyncIterator[tuple[MemoryObjectReceiveStream[Incoming],
                                                          MemoryObjectSendStream[SessionMessage]]]:
    """The upstream's process as the SDK client's ``(read_stream, write_stream)`` (see the
    module); ``owner.channel`` is its :class:`Channel` while it runs."""
    loop = asyncio.get_running_loop()
    # unbounded: lines are handed over in the pipe's callback, which cannot wait
    to_session: MemoryObjectSendStream[Incoming]
    read_stream: MemoryObjectReceiveStream[Incoming]
    write_stream: MemoryObjectSendStream[SessionMessage]
    from_session: MemoryObjectReceiveStream[SessionMessage]
    to_session, read_stream = anyio.create_memory_object_stream(math.inf)
    write_stream, from_session = anyio.create_memory_object_stream(16)
    transport, pipes = await loop.subprocess_exec(
        lambda: _UpstreamPipes(owner, to_session), command, *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=None,
        env=env, cwd=cwd, start_new_session=True)
    stdin = transport.get_pipe_transport(0)
    assert isinstance(stdin, asyncio.WriteTransport)
    channel = Channel(stdin)
    pipes.channel = channel

    async def writer() -> None:
        try:
            async with from_session:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    channel.write(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(writer)
        owner.channel = channel
        try:
            yield read_stream, write_stream
        finally:
            owner.channel = None
            with anyio.CancelScope(shield=True):
                await _stop(transport, pipes)
                await read_stream.aclose()
                await write_stream.aclose()
            tg.cancel_scope.cancel()


async def _stop(transport: asyncio.SubprocessTransport, pipes: _UpstreamPipes) -> None:
    """Close stdin, give the process its grace, then end its whole group."""
    stdin = transport.get_pipe_transport(0)
    if stdin is not None:
        stdin.close()
    pid = transport.get_pid()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, sig)
        try:
            await asyncio.wait_for(asyncio.shield(pipes.exited), STOP_GRACE)
            break
        except TimeoutError:
            continue
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # children it left in its group
    transport.close()


class Front:
    """The client's stdin lines, with relayed tool calls taken out (see the module)."""

    def __init__(self, proxy: Proxy, finish: Finish, error: UpstreamError) -> None:
        self.proxy = proxy
        self.finish = finish  # scratch.mcp.proxy.server.finish, given the proxy
        self.error = error  # scratch.mcp.proxy.upstream.UpstreamError
        self.out: asyncio.StreamWriter | None = None  # the client's stdout, once it is open
        self.legacy = False
        self.client_name: str | None = None
        self.inflight: dict[JSON, Relayed] = {}  # the client's request id -> its call
        self.tasks: set[asyncio.Task[None]] = set()  # the loop holds tasks only weakly
        self._thresholds: dict[tuple[str, str], int] = {}
        self._stamp: tuple[int, int, int] | None = None

    def reader(self) -> asyncio.StreamReader:
        """The stream reader for the client's stdin (``scratch.mcp.serve.stdio.pipe_streams``):
        the lines :meth:`offer` takes are relayed in the pipe's own callback, with no task to wake
        between the client's request and the upstream's."""
        from scratch.mcp.framing import TakingReader
        return TakingReader(self.offer)

    def offer(self, line: bytes) -> bool:
        """Whether the client's ``line`` was taken here (relayed, or a relayed call's
        cancellation); every other line goes on to the SDK server, in order."""
        if b'"tools/call"' in line:  # relayed only once the client's stdout is open
            return self.legacy and self.out is not None and self._relay(line)
        if b'"notifications/cancelled"' in line:
            return bool(self.inflight) and self._cancel(line)
        if b'"initialize"' in line:  # read even before that: it is often waiting already
            self._initialize(line)
        return False

    def _initialize(self, line: bytes) -> None:
        shake = handshake_of(line)
        if shake is None:
            return
        self.legacy = shake.version in LEGACY
        if shake.client_name is not None:
            self.client_name = shake.client_name

    def _relay(self, line: bytes) -> bool:
        call = tool_call_of(line)
        if call is None:
            return False
        cid, params = call
        route = self.proxy.routes.get(params["name"])
        if route is None:
            return False
        upstream = self.proxy.upstreams[route.server]
        channel = upstream.channel
        if channel is None or not channel.open or not upstream.ready or upstream._eof:
            return False  # down: the SDK path restarts it and says what happened
        Relayed(self, channel, upstream, route, cid, params)
        return True

    def _cancel(self, line: bytes) -> bool:
        try:
            msg = loads_line(line)
        except ValueError:
            return False
        params = msg.get("params") if isinstance(msg, dict) else None
        if not isinstance(params, dict) or msg.get("method") != "notifications/cancelled":
            return False
        call = self.inflight.get(params.get("requestId"))
        if call is None:
            return False
        call.cancel(params)
        return True

    def threshold(self, server: str, tool: str) -> int:
        """The tool's threshold, resolved again only when scratch.toml changed (one stat a
        call instead of a copy of the configuration)."""
        from scratch.store.config import CONFIG_FILE
        configs = self.proxy.state.configs
        try:
            st = os.stat(configs.root / CONFIG_FILE)
            stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        except OSError:
            stamp = (0, 0, 0)
        if stamp != self._stamp:
            self._thresholds.clear()
            self._stamp = stamp
        found = self._thresholds.get((server, tool))
        if found is None:
            from scratch.thresholds import resolve_server_threshold
            config = configs.get()
            found = resolve_server_threshold(server, tool, config["mcp.servers"],
                                             config["thresholds"]).min_tokens
            self._thresholds[(server, tool)] = found
        return found

    def spawn(self, coro: Coroutine[None, None, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def send(self, message: JSONObject) -> None:
        assert self.out is not None  # no call is relayed before it opens
        self.out.write(orjson.dumps(message) + b"\n")

    def session(self) -> Session:
        state = self.proxy.state
        return state.session_for(("stdio",), state.agent, self.client_name, "")


# the prefix of the _meta keys the protocol reserves for a connection's own envelope
RESERVED_META = "io.modelcontextprotocol/"


class Relayed:
    """One relayed tool call, from the request sent on to the answer written back. Handled
    in callbacks of the loop (no task), except a result that needs storing."""

    def __init__(self, front: Front, channel: Channel, upstream: Upstream, route: Route,
                 cid: JSON, params: JSONObject) -> None:
        self.front, self.channel, self.upstream, self.route = front, channel, upstream, route
        self.cid = cid
        self.started = time.perf_counter()  # for the call ledger's milliseconds
        self.uid = channel.new_id()
        sent = {**params, "name": route.tool}
        meta = params.get("_meta")
        self.token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(meta, dict):
            # the keys the protocol reserves belong to the client's own connection (a client
            # that probed for 2026-07-28 and fell back to the handshake still stamps them),
            # not to the upstream's, opened with the handshake: an SDK server there refuses
            # a request that carries them
            kept = {k: v for k, v in meta.items() if not k.startswith(RESERVED_META)}
            if self.token is not None:
                kept["progressToken"] = self.uid
            if kept:
                sent["_meta"] = kept
            else:
                del sent["_meta"]
        self.task: asyncio.Task[None] | None = None
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(upstream.timeout, self.timed_out)
        channel.pending[self.uid] = self
        front.inflight[cid] = self
        channel.write(orjson.dumps({"jsonrpc": "2.0", "id": self.uid, "method": "tools/call",
                                    "params": sent}) + b"\n")

    def _done(self) -> None:
        self.timer.cancel()
        self.channel.pending.pop(self.uid, None)
        if self.front.inflight.get(self.cid) is self:
            del self.front.inflight[self.cid]

    def _reply(self, result: JSONObject) -> None:
        self.front.send({"jsonrpc": "2.0", "id": self.cid, "result": result})

    def progress(self, params: JSONObject) -> None:
        if self.token is not None:
            self.front.send({"jsonrpc": "2.0", "method": "notifications/progress",
                             "params": {**params, "progressToken": self.token}})

    def answered(self, msg: JSONObject) -> None:
        self._done()
        error = msg.get("error")
        if isinstance(error, dict):  # a protocol error: passed on, its message cut
            from scratch.mcp.proxy.intercept import cut_text, record_relayed
            text = error.get("message")
            record_relayed(self.front.session(), self.route.server, self.route.tool,
                           code="upstream_protocol_error",
                           message=text if isinstance(text, str) else None,
                           started=self.started)
            self.front.send({"jsonrpc": "2.0", "id": self.cid, "error": {
                **error, "message": cut_text(text) if isinstance(text, str) else text}})
            return
        raw = msg.get("result")
        if not isinstance(raw, dict):
            raw = {"content": raw}  # not a result object: finish() says so
        from scratch.mcp.proxy.intercept import fits_below
        if fits_below(raw, self.front.threshold(self.route.server, self.route.tool)):
            from scratch.mcp.proxy.intercept import record_relayed
            record_relayed(self.front.session(), self.route.server, self.route.tool,
                           code="upstream_tool_error" if raw.get("isError") is True else None,
                           started=self.started)
            self._reply(raw)
            return
        self.front.inflight[self.cid] = self  # cancellable while it is stored
        self.task = self.front.spawn(self._finish(raw))

    async def _finish(self, raw: JSONObject) -> None:
        try:
            result = await self.front.finish(self.route, raw, self.front.session, self.started)
            self._reply(result)
            assert self.front.out is not None
            await self.front.out.drain()
        finally:
            if self.front.inflight.get(self.cid) is self:
                del self.front.inflight[self.cid]

    def timed_out(self) -> None:
        self._done()
        if self.channel.open:
            self.channel.write(orjson.dumps({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": self.uid, "reason": "timed out"}}) + b"\n")
        from scratch.mcp.proxy.intercept import error_result, record_relayed
        u = self.upstream
        exc = self.front.error(
            f"tool {self.route.tool!r} of upstream server {u.name!r} did not answer within "
            f"{u.timeout:g}s; the call was cancelled", code="upstream_timeout", server=u.name,
            tool=self.route.tool, timeout=u.timeout)
        record_relayed(self.front.session(), self.route.server, self.route.tool,
                       code=exc.code, message=exc.message, started=self.started)
        self._reply(error_result(exc))

    def gone(self) -> None:
        self._done()
        self.task = self.front.spawn(self._gone())

    async def _gone(self) -> None:
        from scratch.mcp.proxy.intercept import error_result
        u = self.upstream
        await u._lost()
        self._reply(error_result(self.front.error(
            f"upstream server {u.name!r} closed its connection during the call of "
            f"{self.route.tool!r} (it crashed or exited); it is started again on its next "
            "call", code="upstream_crashed", server=u.name, tool=self.route.tool)))

    def cancel(self, params: JSONObject) -> None:
        """The client cancelled the call: the upstream is told, and no answer is written."""
        self._done()
        if self.front.inflight.get(self.cid) is self:
            del self.front.inflight[self.cid]
        if self.task is not None:
            self.task.cancel()
        if self.channel.open:
            self.channel.write(orjson.dumps({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {**params, "requestId": self.uid}}) + b"\n")


__all__ = ["Channel", "Front", "LEGACY", "Relayed", "TAG", "raw_stdio"]
