"""The web app of ``scratch ui`` and its door.

Every request goes, in this order, through:

1. Host and Origin: the MCP HTTP door's own checks (:func:`scratch.mcp.serve.http.
   transport_security`, the SDK's DNS-rebinding check of ``Host``: 421; and
   :func:`~scratch.mcp.serve.http.origin_allowed`: 403; the page's own origin is allowed
   too, which on another bind than loopback is not a loopback one), so a page of another
   site, or one reached through a rebound DNS name, gets nothing.
2. The token, the first segment of every path (``/<token>/...``): on a loopback bind the
   random one printed with the URL, elsewhere one of ``scratch mcp token``'s (then only the
   token's agent is shown). A request without it, or with another, gets 401 and no page.
3. Only GET and HEAD (the page reads; nothing is written): 405 otherwise.

Every answer carries a strict Content-Security-Policy (scripts, styles and fetches from the
page's own origin only; no inline script or style, no frames), ``nosniff``, ``no-referrer``
(the token is in the path) and ``no-store``.
"""

from __future__ import annotations

import hmac
import mimetypes
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from scratch.ui import agent_pages, entry_pages, pages, run_pages, search_page
from scratch.ui.views import Site, Speller

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import Message, Receive, Scope, Send

    from scratch.mcp.auth import TokenTable

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
           (b"cache-control", b"no-store")]
STATIC = ("uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE", "ui.js", "ui.css")


class Tokens:
    """Who may open the page: the one random token of a loopback bind, or (``table``) the
    store's MCP tokens, each showing its own agent."""

    def __init__(self, secret: str | None, table: TokenTable | None = None) -> None:
        self.secret = secret
        self.table = table

    def check(self, given: str) -> tuple[bool, str | None]:
        """(allowed, the agent it limits the page to or None)."""
        if self.secret is not None and hmac.compare_digest(given.encode(),
                                                           self.secret.encode()):
            return True, None
        if self.table is not None:
            info = self.table.verify(given)
            if info is not None:
                return True, info.agent
        return False, None


def _static(name: str) -> bytes:
    return resources.files("scratch.ui").joinpath("static", name).read_bytes()


class UiApp:
    """The ASGI app: the door (module docstring), then the page routes."""

    def __init__(self, root: Path, spell: Speller, *, host: str, tokens: Tokens,
                 origins: list[str] | None = None) -> None:
        from mcp.server.transport_security import TransportSecurityMiddleware

        from scratch.mcp.serve.http import is_loopback, transport_security
        self.root = root
        self.spell = spell
        self.tokens = tokens
        self.loopback = is_loopback(host)
        self.origins = list(origins or [])
        self.security = TransportSecurityMiddleware(transport_security(host, self.origins))
        self.sites: dict[str | None, Site] = {}
        self.static = {name: _static(name) for name in STATIC}

    def warm_up(self) -> None:
        self.site(None).warm_up()

    def site(self, agent: str | None) -> Site:
        found = self.sites.get(agent)
        if found is None:
            found = Site(self.root, self.spell, agents=None if agent is None else [agent])
            self.sites[agent] = found
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        from starlette.requests import Request
        request = Request(scope, receive)
        response = await self.respond(request)
        await response(scope, receive, self._with_headers(send))

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *HEADERS]}
            await send(message)
        return wrapped

    async def respond(self, request: Request) -> Response:
        from scratch.mcp.serve.http import origin_allowed
        refused = await self.security.validate_request(request)
        if refused is not None:  # 421 Host, 403 Origin (the SDK's words)
            return refused
        origin = request.headers.get("origin")
        own = origin == f"{request.url.scheme}://{request.headers.get('host', '')}"
        if not own and not origin_allowed(origin, loopback=self.loopback, origins=self.origins):
            return _text(403, "origin not allowed")
        parts = request.url.path.split("/", 2)
        given = parts[1] if len(parts) > 1 else ""  # the path comes percent-decoded
        ok, agent = self.tokens.check(given) if given else (False, None)
        if not ok:
            return _text(401, "this page needs the URL 'scratch ui' printed (with its token)",
                         [("www-authenticate", 'Bearer realm="scratch ui"')])
        if request.method not in ("GET", "HEAD"):
            return _text(405, "the page is read-only", [("allow", "GET, HEAD")])
        base = f"/{parts[1]}"
        rest = "/" + (parts[2] if len(parts) > 2 else "")
        return self.route(self.site(agent), base, rest, request)

    def route(self, site: Site, base: str, path: str, request: Request) -> Response:
        from starlette.responses import HTMLResponse, JSONResponse, Response

        from scratch.errors import ScratchError
        from scratch.ui.html import tag
        query = dict(request.query_params)
        words = path[1:].split("/") if path != "/" else []
        if len(words) <= 3 and words and words[-1] == "":  # a trailing slash: the same page
            words.pop()
        try:
            if not words:
                return HTMLResponse(pages.overview(site, base, query,
                                                   run_pages.overview_runs(site, base)))
            head = words[0]
            if head == "static" and len(words) == 2 and words[1] in self.static:
                kind = mimetypes.guess_type(words[1])[0] or "text/plain"
                if kind.startswith("text/") or kind.endswith("javascript"):
                    kind += "; charset=utf-8"
                return Response(self.static[words[1]], media_type=kind)
            if head == "ping" and len(words) == 1:  # the floor of the benchmark: no work
                return Response(b"ok", media_type="text/plain")
            if head == "entries" and len(words) == 1:
                return HTMLResponse(entry_pages.entries(site, base, query))
            if head == "search" and len(words) == 1:
                return HTMLResponse(search_page.search(site, base, query))
            if head == "live" and len(words) == 1:
                if query.get("what") == "entries":
                    return JSONResponse(entry_pages.live_entries(site, base, query))
                return JSONResponse(pages.live(site, base, query))
            if head == "series" and len(words) == 1:
                return JSONResponse(pages.series(site, base, query))
            if head == "runs" and len(words) == 1:
                return HTMLResponse(run_pages.runs(site, base, query))
            if head == "r" and len(words) == 2:
                return HTMLResponse(run_pages.run(site, base, words[1], query))
            if head == "r" and len(words) >= 4 and words[2] == "e":  # a name may hold "/"
                return HTMLResponse(run_pages.artifact(site, base, words[1],
                                                       "/".join(words[3:]), query))
            if head == "a" and len(words) == 2:
                return HTMLResponse(agent_pages.agent(site, base, words[1], query))
            if head == "a" and len(words) >= 4 and words[2] == "s":  # a session may hold "/"
                return HTMLResponse(agent_pages.session(site, base, words[1],
                                                        "/".join(words[3:]), query))
            if head == "a" and len(words) == 4 and words[2] == "c":
                return HTMLResponse(agent_pages.call_page(site, base, words[1], words[3],
                                                          query))
            if head == "a" and len(words) >= 4 and words[2] == "e":
                return HTMLResponse(entry_pages.entry(site, base, words[1],
                                                      "/".join(words[3:]), query))
        except ScratchError as exc:  # what the page asked of the store is not right
            return HTMLResponse(pages.layout(site, base, "Cannot show this", tag(
                "p", f"{exc.code}: {exc.message}", class_="error")), status_code=400)
        except pages.Missing as exc:
            return HTMLResponse(pages.layout(site, base, "Not found", tag(
                "p", str(exc), class_="error")), status_code=404)
        return HTMLResponse(pages.layout(site, base, "Not found", tag(
            "p", f"no page {path}", class_="error")), status_code=404)


def _text(status: int, message: str, headers: list[tuple[str, str]] | None = None
          ) -> Response:
    from starlette.responses import PlainTextResponse
    return PlainTextResponse(message + "\n", status_code=status, headers=dict(headers or []))


def build_app(root: Path, spell: Speller, *, host: str, secret: str | None,
              table: TokenTable | None, origins: list[str] | None = None) -> UiApp:
    """The app for the store at ``root``: a loopback bind with its ``secret`` token, or any
    bind with the store's MCP token ``table``."""
    return UiApp(root, spell, host=host, tokens=Tokens(secret, table), origins=origins)


async def serve(app: UiApp, host: str, port: int, announce: Callable[[int], None]) -> None:
    """Run the app on ``host:port`` (0: a free port), as the MCP HTTP server runs;
    ``announce(port)`` once listening."""
    from scratch.mcp.serve.http import listen, run_uvicorn
    sock = listen(host, port)
    announce(sock.getsockname()[1])
    await run_uvicorn(app, sock)
