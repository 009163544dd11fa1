"""Streamable HTTP: the SDK's app behind scratch's own door (tokens, Origin, rate limits, log).

Imports starlette and uvicorn (through the SDK); only ``scratch mcp serve --http`` imports it.
Every request to the app goes, in this order, through:

1. Origin: a request that carries an ``Origin`` header (a browser's) is refused (403) unless
   the origin is allowed: a loopback origin when bound to loopback, or one given with
   ``--allow-origin``. Clients that are not browsers send none. On a loopback bind the SDK's
   DNS-rebinding check of ``Host`` applies too.
2. Bearer token: when the store has MCP tokens, a request without a valid one gets 401 with
   ``WWW-Authenticate: Bearer``; the agent of the request is the token's, set here and nowhere
   else. Without tokens only a loopback bind is allowed (``check_bind``) and the agent is
   ``--agent``.
3. Rate limit per token (or per client address without tokens): 429 with ``Retry-After``.
4. The SDK's transport, which caps the body (413 over ``--max-body``) and speaks MCP.

Each refusal above is one line in the request log; requests that reach MCP are logged there.
A ``DELETE`` that ends a session (answered below 400) is handed on (``on_end``): its worker
finishes (:mod:`scratch.mcp.serve.events`).
"""

from __future__ import annotations

import ipaddress
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from scratch.answers.kernel.result import compact_json
from scratch.errors import UsageError
from scratch.mcp.auth import TokenInfo, TokenTable
from scratch.mcp.serve.ratelimit import RateLimiter
from scratch.mcp.serve.reqlog import RequestLog

if TYPE_CHECKING:
    import socket

    from mcp.server.lowlevel import Server
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from scratch.mcp.wire import JSONObject

MCP_PATH = "/mcp"
# called when a client ends its session (DELETE): the token (None: no tokens) and session id
SessionEnd = Callable[["TokenInfo | None", str], Awaitable[None]]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_bind(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[::1]:PORT`` or ``PORT`` (on 127.0.0.1)."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--http takes HOST:PORT, e.g. 127.0.0.1:8765, not {value!r}",
                         code="invalid_argument")
    return host, int(port)


def check_bind(host: str, tokens: TokenTable) -> None:
    if not is_loopback(host) and len(tokens) == 0:
        raise UsageError(
            f"refusing to serve on {host} without tokens: anyone who can reach it would act as "
            "the agent; add one with 'scratch mcp token add AGENT' (or bind to 127.0.0.1)",
            code="tokens_required", host=host)


def _loopback_origin(origin: str) -> bool:
    from urllib.parse import urlsplit
    try:
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and is_loopback(parts.hostname or "")
    except ValueError:
        return False


def origin_allowed(origin: str | None, *, loopback: bool, origins: set[str] | list[str]) -> bool:
    """Whether a request with this ``Origin`` header may go on: none (not a browser), one
    given with ``--allow-origin``, or a loopback origin when bound to loopback. The door of
    every HTTP server of scratch (MCP, ``scratch ui``) asks this."""
    return (not origin or origin in origins
            or (loopback and _loopback_origin(origin)))


def transport_security(host: str, origins: list[str]) -> TransportSecuritySettings:
    """The SDK's Host (DNS rebinding) and Origin checks for a server bound to ``host``: on a
    loopback bind only loopback Host headers are served, and the loopback origins and
    ``origins`` allowed (agreeing with :func:`origin_allowed`); elsewhere the Host check is
    off (the bind was chosen, and tokens guard it)."""
    from mcp.server.transport_security import TransportSecuritySettings
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    local = [f"{scheme}://{h}{port}" for scheme in ("http", "https")
             for h in ("127.0.0.1", "localhost", "[::1]") for port in ("", ":*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost",
                       "[::1]"],
        allowed_origins=local + list(origins))


class Door:
    """The ASGI app in front of the SDK's (see the module docstring for the order)."""

    def __init__(self, app: ASGIApp, *, tokens: TokenTable, limiter: RateLimiter,
                 log: RequestLog | None, loopback: bool, origins: list[str],
                 on_end: SessionEnd | None = None) -> None:
        self.app = app
        self.on_end = on_end
        self.tokens = tokens
        self.limiter = limiter
        self.log = log
        self.loopback = loopback
        self.origins = set(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan
            return
        start = time.perf_counter()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        if not origin_allowed(headers.get("origin"), loopback=self.loopback,
                              origins=self.origins):
            await self._refuse(send, 403, "forbidden", "origin not allowed", start, None)
            return
        token = None
        if len(self.tokens):
            auth = headers.get("authorization", "")
            scheme, _, value = auth.partition(" ")
            token = self.tokens.verify(value.strip()) if scheme.lower() == "bearer" else None
            if token is None:
                await self._refuse(send, 401, "unauthorized",
                                   "a valid bearer token is required" if auth
                                   else "missing bearer token", start, None,
                                   [(b"www-authenticate", b'Bearer realm="scratch"')])
                return
            scope["scratch.token"] = token
            _authenticate(scope, token)
        client = scope.get("client") or ("local", 0)
        key = token.id if token else f"addr:{client[0]}"
        wait = self.limiter.take(key)
        if wait:
            await self._refuse(send, 429, "rate_limited", f"rate limit of "
                               f"{self.limiter.per_minute} requests per minute; retry in "
                               f"{wait} s", start, token,
                               [(b"retry-after", str(wait).encode())])
            return
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        await self.app(scope, receive, watch)
        sid = headers.get("mcp-session-id")
        if (self.on_end is not None and scope.get("method") == "DELETE" and sid and status
                and status[0] < 400):
            await self.on_end(token, sid)
        if status and status[0] in (403, 413, 421) and self.log is not None:
            outcome = {403: "forbidden", 413: "too_large", 421: "forbidden"}[status[0]]
            self._log(outcome, status[0], start, token)

    def _log(self, outcome: str, status: int, start: float, token: TokenInfo | None) -> None:
        if self.log is not None:
            self.log.write(request_id=uuid.uuid4().hex[:16], transport="http",
                           agent=token.agent if token else None,
                           token=token.id if token else None, status=status,
                           duration_ms=round((time.perf_counter() - start) * 1000, 2),
                           outcome=outcome)

    async def _refuse(self, send: Send, status: int, outcome: str, message: str, start: float,
                      token: TokenInfo | None,
                      extra: list[tuple[bytes, bytes]] | None = None) -> None:
        body = compact_json({"error": outcome, "error_description": message}).encode()
        # logged before it is answered: a client that has its answer finds the line
        self._log(outcome, status, start, token)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()), *(extra or [])]})
        await send({"type": "http.response.body", "body": body})


def _authenticate(scope: Scope, token: TokenInfo) -> None:
    """Let the SDK bind each HTTP session to the token that opened it (a request for a
    session with another token is answered as if the session did not exist)."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken
    scope["user"] = AuthenticatedUser(AccessToken(token="-", client_id=f"{token.agent}/"
                                                  f"{token.id}", scopes=[]))


def build_app(server: Server[JSONObject], *, host: str, tokens: TokenTable, limiter: RateLimiter,
              log: RequestLog | None, max_body: int, origins: list[str],
              on_end: SessionEnd | None = None) -> Door:
    loopback = is_loopback(host)
    # The Door checks origins; on a loopback bind the SDK also checks Host (DNS rebinding),
    # and is given the same origins so its own Origin check agrees with the Door's.
    security = transport_security(host, origins)
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security,
                                     max_request_body_size=max_body, host=host)
    return Door(app, tokens=tokens, limiter=limiter, log=log, loopback=loopback,
                origins=origins, on_end=on_end)


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (0: any free port); a port taken is a usage error."""
    import socket
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by accepted sockets
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                         code="bind_failed", host=host, port=port) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


async def run_uvicorn(app: ASGIApp, sock: socket.socket) -> None:
    """Serve ``app`` with uvicorn on the listening ``sock`` until stopped."""
    import uvicorn
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=2)
    await uvicorn.Server(config).serve(sockets=[sock])


async def serve_http(app: Door, host: str, port: int, announce: Callable[[str], None]
                     ) -> None:
    """Run uvicorn on ``host:port`` (0: any free port); ``announce(url)`` once listening."""
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    announce(f"http://{shown}:{bound}{MCP_PATH}")
    await run_uvicorn(app, sock)
