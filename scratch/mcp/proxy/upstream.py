"""One upstream MCP server of ``scratch mcp proxy``: its process (or URL), its SDK client
session, and what happens when it fails.

Imports the MCP SDK; only ``scratch mcp proxy`` imports this module. Invariants:

- Each upstream's client lives in a task of its own (the SDK's transports and sessions are
  entered and left in one task); a call from any other task goes through the session.
- The upstream is spoken to with the initialize handshake (``mode="legacy"``): every server
  knows it, and its notifications (progress, ``list_changed``) arrive on the open pipe.
- Results come back as the wire's dicts (validated against the protocol, never rebuilt as
  models), so a result the proxy passes on is the one the upstream sent.
- A failure is an :class:`UpstreamError` naming the server: it did not start, it crashed (the
  connection closed mid-call), a call ran past its timeout (the upstream is told to cancel it),
  or its result does not have the protocol's shape. The proxy keeps serving the others.
- A crashed or unstartable upstream is started again on its next use, no sooner than its
  back-off (none after one failure; then 1 s, doubling per consecutive failure, at most
  60 s); a successful start resets it.
- :meth:`Upstream.stop` ends the process the proxy started (the SDK closes its stdin, then
  kills its process group), so a stopped proxy leaves no orphans.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, cast

import anyio
import mcp_types as types
from pydantic import TypeAdapter, ValidationError

from scratch.errors import ScratchError
from scratch.mcp.proxy.config import UpstreamSpec
from scratch.mcp.wire import JSONObject

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp import Client
    from mcp.client import ClientSession, IncomingMessage, Transport
    from mcp.shared.dispatcher import ProgressFnT
    from mcp.shared.message import SessionMessage

    from scratch.mcp.proxy.relay import Channel

# A result as the upstream sent it: the SDK validates a result with the adapter it is given
# (send_request's type variable is bound to models, hence the ignores where it is passed), and
# the proxy hands the dict on unchanged, with no model built and dumped again.
RAW: TypeAdapter[JSONObject] = TypeAdapter(JSONObject)
START_TIMEOUT = 60.0  # seconds an upstream may take to start and answer initialize
BACKOFF_FIRST, BACKOFF_MAX = 1.0, 60.0

Notify = Callable[[str, str], Awaitable[None]]  # (server, method) of a list_changed


class UpstreamError(ScratchError):
    """A fault of an upstream server (codes: upstream_unavailable, upstream_crashed,
    upstream_timeout, upstream_malformed_result)."""

    code = "upstream_error"


class Upstream:
    """One upstream server (see the module)."""

    def __init__(self, spec: UpstreamSpec, timeout: float, notify: Notify | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.timeout = spec.timeout or timeout
        self.notify = notify
        self.client: Client | None = None  # while connected
        self.tools: list[JSONObject] = []
        self.capabilities: JSONObject = {}
        self.failures = 0
        self.retry_at = 0.0
        self.last_error = ""
        self.starts = 0
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._lock = anyio.Lock()
        self._tg: TaskGroup | None = None
        self._eof = False  # the connection's read stream ended
        self.channel: Channel | None = None  # the relay's, of a stdio upstream

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self.client is not None

    async def start(self, tg: TaskGroup) -> None:
        """Start the upstream in a task of ``tg``; raises :class:`UpstreamError` when it does
        not come up."""
        self._tg = tg
        async with self._lock:
            if self.ready:
                return
            wait = self.retry_at - time.monotonic()
            if wait > 0:
                raise UpstreamError(
                    f"upstream server {self.name!r} is down ({self.last_error}); it is "
                    f"started again in {wait:.1f}s", code="upstream_unavailable",
                    server=self.name, retry_in=round(wait, 1))
            up = anyio.Event()
            failed: list[BaseException] = []
            self._stop, self._done = anyio.Event(), anyio.Event()
            tg.start_soon(self._run, up, failed, self._stop, self._done)
            with anyio.move_on_after(START_TIMEOUT):
                await up.wait()
            if not self.ready:
                if not failed:
                    self._stop.set()
                    failed.append(TimeoutError(f"no answer to initialize in {START_TIMEOUT:g}s"))
                self._failed(_describe(failed[0]))
                raise UpstreamError(
                    f"upstream server {self.name!r} did not start: {self.last_error}",
                    code="upstream_unavailable", server=self.name,
                    retry_in=round(self.retry_at - time.monotonic(), 1))
            self.failures = 0
            self.starts += 1

    async def ensure(self) -> ClientSession:
        """The connected session, starting the upstream again if it went down."""
        if self.ready and self._eof:  # it exited between calls
            await self._lost()
        if not self.ready:
            if self._tg is None:
                raise UpstreamError(f"upstream server {self.name!r} is not started",
                                    code="upstream_unavailable", server=self.name)
            await self.start(self._tg)
        assert self.client is not None  # start() raised otherwise
        return self.client.session

    def _failed(self, why: str) -> None:
        self.last_error = why
        self.failures += 1
        # the first restart is at once (the next call); then 1 s, doubling, at most 60 s
        delay = 0.0 if self.failures == 1 else min(BACKOFF_MAX,
                                                    BACKOFF_FIRST * 2 ** (self.failures - 2))
        self.retry_at = time.monotonic() + delay

    async def _run(self, up: anyio.Event, failed: list[BaseException], stop: anyio.Event,
                   done: anyio.Event) -> None:
        from mcp import Client
        try:
            async with Client(self._target(), mode="legacy", cache=None,
                              message_handler=self._on_message,
                              client_info=types.Implementation(name="scratch-proxy",
                                                               version=_version())) as client:
                caps = client.session.server_capabilities
                self.capabilities = caps.model_dump(by_alias=True, exclude_none=True) \
                    if caps is not None else {}
                self.tools = await self._list_tools(client.session) \
                    if "tools" in self.capabilities else []
                self.client = client
                up.set()
                await stop.wait()
        except Exception as exc:  # the process died or the handshake failed
            failed.append(exc)
        finally:
            if self.client is not None and not stop.is_set():
                self._failed("its connection closed")  # crashed while serving
            self.client = None
            up.set()
            done.set()

    def _target(self) -> Transport:
        from contextlib import asynccontextmanager
        inner = self._transport()
        owner = self

        @asynccontextmanager
        async def watched() -> AsyncIterator[tuple[object, ...]]:
            owner._eof = False
            async with inner as streams:
                yield (_Watched(streams[0], owner), *streams[1:])
        # the SDK's read stream, with its end noted: what Transport yields, in its shape
        return cast("Transport", watched())

    def _transport(self) -> Transport:
        spec = self.spec
        if spec.url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client
            http = httpx2.AsyncClient(headers=dict(spec.headers),
                                      timeout=httpx2.Timeout(self.timeout + 5))
            return streamable_http_client(spec.url, http_client=http)
        from scratch.mcp.proxy.relay import raw_stdio
        assert spec.command is not None
        # the proxy's own environment, as the client gave it, plus the entry's env; the
        # transport relays tool calls as lines (scratch.mcp.proxy.relay)
        return raw_stdio(spec.command, list(spec.args), {**os.environ, **spec.env}, spec.cwd,
                         self)

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._done is not None:
            with anyio.move_on_after(10):
                await self._done.wait()

    async def _on_message(self, message: IncomingMessage) -> None:
        """Notifications of the upstream: list changes are passed on (progress arrives through
        each call's callback)."""
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if not isinstance(method, str) or not method.endswith("/list_changed"):
            return
        if method == "notifications/tools/list_changed" and self.client is not None:
            try:
                self.tools = await self._list_tools(self.client.session)
            except Exception as exc:  # the list is asked again on the proxy's next listing
                self.last_error = _describe(exc)
        if self.notify is not None:
            await self.notify(self.name, method)

    async def _list_tools(self, session: ClientSession) -> list[JSONObject]:
        tools: list[JSONObject] = []
        cursor = None
        for _ in range(100):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.send_request(  # type: ignore[type-var]  # see RAW
                types.ListToolsRequest(params=params), RAW,
                                              request_read_timeout_seconds=self.timeout)
            tools += [t for t in page.get("tools", []) if isinstance(t, dict)
                      and isinstance(t.get("name"), str)]
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return tools

    # -- requests ----------------------------------------------------------------------------
    async def request(self, request: types.ClientRequest, *, tool: str | None = None,
                      progress: ProgressFnT | None = None) -> JSONObject:
        """Send ``request`` (an SDK request model); the raw result, or :class:`UpstreamError`
        for a fault; an error the upstream answered with is re-raised as the SDK's
        ``MCPError``."""
        from mcp.shared.exceptions import MCPError
        session = await self.ensure()
        what = f"tool {tool!r} of " if tool else ""
        try:
            return await session.send_request(request, RAW,  # type: ignore[type-var]  # see RAW
                                              request_read_timeout_seconds=self.timeout,
                                              progress_callback=progress)
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                raise UpstreamError(
                    f"{what}upstream server {self.name!r} did not answer within "
                    f"{self.timeout:g}s; the call was cancelled", code="upstream_timeout",
                    server=self.name, tool=tool, timeout=self.timeout) from None
            if exc.code == types.CONNECTION_CLOSED:
                await self._lost()
                raise UpstreamError(
                    f"upstream server {self.name!r} closed its connection during the call"
                    f"{' of ' + repr(tool) if tool else ''} (it crashed or exited); it is "
                    "started again on its next call", code="upstream_crashed",
                    server=self.name, tool=tool) from None
            raise
        except ValidationError as exc:
            errors = exc.errors()
            where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
            why = errors[0]["msg"] if errors else str(exc)
            raise UpstreamError(
                f"{what}upstream server {self.name!r} returned a result that is not a valid "
                f"MCP result ({where or 'result'}: {why})",
                code="upstream_malformed_result", server=self.name, tool=tool) from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._lost()
            raise UpstreamError(
                f"upstream server {self.name!r} is gone (its connection broke); it is started "
                "again on its next call", code="upstream_crashed", server=self.name,
                tool=tool) from None

    async def _lost(self) -> None:
        """The connection died under a call: let the client task end (it reports the crash)."""
        if self.client is not None and self._stop is not None:
            self._failed("its connection closed")
            self.client = None
            self._stop.set()
            if self._done is not None:
                with anyio.move_on_after(10):
                    await self._done.wait()


class _Receiving(Protocol):
    """The read stream of an SDK client transport, as :class:`_Watched` uses it."""

    async def receive(self) -> SessionMessage | Exception: ...

    async def aclose(self) -> None: ...


class _Watched:
    """The upstream's read stream, as the SDK's dispatcher iterates it, noting its end (the
    process exited, the connection closed) in ``owner._eof``."""

    def __init__(self, inner: _Receiving, owner: Upstream) -> None:
        self.inner, self.owner = inner, owner

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self.inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.owner._eof = True
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> _Watched:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Watched:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return text if len(text) < 300 else text[:300] + "..."


def _version() -> str:
    from scratch import __version__
    return __version__
