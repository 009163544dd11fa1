"""``scratch mcp proxy``: one MCP server in front of the user's servers (SDK side).

Imports the MCP SDK; only ``scratch mcp proxy`` imports this module. Invariants:

- Tools: scratch's own (:mod:`scratch.mcp.specs`, run by :func:`scratch.mcp.dispatch.run_tool`)
  and every upstream's, named and rewritten by
  :func:`scratch.mcp.proxy.intercept.route_tools`; a call of an upstream tool is forwarded
  and its result goes through :func:`scratch.mcp.proxy.intercept.handle_result` on a worker
  thread.
- Passed on as they are: progress notifications of a call (to the caller's token), the
  cancellation of a call (the SDK cancels the forwarded request when the caller's is
  cancelled), ``notifications/*/list_changed`` of any upstream (to every connected client; on
  the 2026-07-28 protocol through ``subscriptions/listen``), resources and resource templates
  (scratch's entries first, then each upstream's, one source per page), resources/read by
  URI (``scratch://`` is scratch's; another goes to the upstream that listed or linked it,
  else to each upstream with resources in turn), prompts (named like tools). ``ping`` is
  answered by the proxy: it is a message between two peers, and each upstream's pings are
  answered by the proxy's client of it.
- An upstream that fails (see :mod:`scratch.mcp.proxy.upstream`) costs only its own calls:
  they get an ``isError`` result naming the server; the other servers and scratch's tools
  keep serving.
"""

from __future__ import annotations

import base64
import functools
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import mcp_types as types
import orjson
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError

from scratch import __version__
from scratch.errors import ScratchError
from scratch.mcp import specs
from scratch.mcp.proxy.intercept import (
    SEP,
    Route,
    below_threshold,
    cut_text,
    error_result,
    handle_result,
    record_relayed,
    route_tools,
)
from scratch.mcp.proxy.upstream import Upstream, UpstreamError
from scratch.mcp.serve.server import (
    call_result,
    in_thread,
    instructions,
    list_page,
    read_page,
    session_of,
    tool_of,
)
from scratch.mcp.serve.session import ServerState, Session
from scratch.mcp.wire import JSON, JSONObject

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp.server.session import ServerSession
    from mcp.server.subscriptions import InMemorySubscriptionBus

    from scratch.mcp.wire import Ctx


class Proxy:
    """The upstreams and what is derived from them (routes, the tool list)."""

    def __init__(self, state: ServerState, upstreams: list[Upstream],
                 toolset: str = "proxy") -> None:
        self.state = state
        state.proxy = True  # every call through this process is the ledger's "proxy"
        self.upstreams = {u.name: u for u in upstreams}
        self.toolset = toolset  # scratch's tools offered (specs.CHOICES)
        self.own_tools: list[JSONObject] = []
        self.tools: list[JSONObject] = []
        self.routes: dict[str, Route] = {}
        self.renamed: list[tuple[str, str, str]] = []
        self.prompt_routes: dict[str, Route] = {}
        self.uri_owner: dict[str, str] = {}  # resource URI -> the upstream that named it
        self.clients: dict[int, ServerSession] = {}  # connection -> its latest session
        self.bus: InMemorySubscriptionBus | None = None
        self.tg: TaskGroup | None = None
        self.refresh()

    def refresh(self) -> None:
        """The tool list again: an upstream's tool always keeps its name (unless two upstreams
        have it), so a scratch tool whose name an upstream has is offered as
        ``scratch_NAME``, in tools/list and in every pointer and suggestion."""
        listed = [(u.name, u.tools) for u in self.upstreams.values()]
        offered = specs.offer(self.toolset, {t["name"] for _, tools in listed for t in tools})
        specs.serve(offered)
        self.tools, self.routes, self.renamed = route_tools(listed, set(offered.values()))
        # what makes an entry here, for every hint and description that says so
        specs.serve_upstream([specs.UpstreamTool(
            self.routes[t["name"]].server, t["name"],
            isinstance(t.get("annotations"), dict) and t["annotations"].get("readOnlyHint")
            is True) for t in self.tools])
        self.own_tools = own_tools()

    async def start_all(self) -> None:
        async def one(u: Upstream) -> None:
            assert self.tg is not None  # set before the upstreams start
            try:
                await u.start(self.tg)
            except UpstreamError as exc:
                print(f"scratch mcp proxy: {exc.message}", file=sys.stderr, flush=True)
        async with anyio.create_task_group() as tg:
            for u in self.upstreams.values():
                tg.start_soon(one, u)
        self.refresh()

    async def retry_down(self) -> None:
        """Upstreams that are down and whose back-off has run out are started again."""
        import time
        now = time.monotonic()
        down = [u for u in self.upstreams.values() if not u.ready and u.retry_at <= now]
        if not down:
            return
        before = {u.name: len(u.tools) for u in down}
        assert self.tg is not None
        async with anyio.create_task_group() as tg:
            for u in down:
                tg.start_soon(_quiet_start, u, self.tg)
        if any(len(u.tools) != before[u.name] or u.ready for u in down):
            self.refresh()

    def remember(self, ctx: Ctx) -> None:
        # the connection's latest session (a session is made per request; the handshake's
        # params are one object per connection); a 2026-07-28 connection has none and is
        # told through subscriptions/listen
        session = ctx.session
        params = session.client_params
        if params is not None:
            self.clients[id(params)] = session

    async def changed(self, server: str, method: str) -> None:
        """An upstream's list changed: tell every client (see the module)."""
        if method == "notifications/tools/list_changed":
            self.refresh()
        kind = method.split("/")[1]
        send = {"tools": "send_tool_list_changed", "prompts": "send_prompt_list_changed",
                "resources": "send_resource_list_changed"}.get(kind)
        if send is None:
            return
        for session in list(self.clients.values()):
            try:
                await getattr(session, send)()
            except Exception:  # a client that went away
                continue
        if self.bus is not None:
            from mcp.server.subscriptions import (
                PromptsListChanged,
                ResourcesListChanged,
                ToolsListChanged,
            )
            event = (ToolsListChanged() if kind == "tools" else PromptsListChanged()
                     if kind == "prompts" else ResourcesListChanged())
            await self.bus.publish(event)

    def announce(self) -> None:
        for server, tool, exposed in self.renamed:
            print(f"scratch mcp proxy: {server}'s tool {tool!r} is offered as {exposed!r} "
                  "(the name is taken)", file=sys.stderr, flush=True)
        up = [u.name for u in self.upstreams.values() if u.ready]
        print(f"scratch mcp proxy: serving {len(self.tools)} tools of {len(up)} server(s) "
              f"({', '.join(up) or 'none up'}) beside scratch's {len(self.own_tools)}",
              file=sys.stderr, flush=True)


def own_tools() -> list[JSONObject]:
    """scratch's own tools as the proxy lists them (after :func:`specs.serve` and
    :func:`specs.serve_upstream`): an entry argument says how an entry comes to be here (a
    big result of an upstream tool is stored, and its pointer names it), which an agent
    cannot guess from ``Entry: NAME``."""
    from scratch.mcp.rendering import entry_argument_text
    text = entry_argument_text()
    out = []
    for name, spec in specs.served():
        tool = tool_of(spec, name).model_dump(by_alias=True, mode="json", exclude_none=True)
        props = tool["inputSchema"]["properties"]
        for p in spec.params:
            if p.core == "ref":
                props[p.name] = {**props[p.name], "description": text}
        out.append(tool)
    return out


async def _quiet_start(u: Upstream, tg: TaskGroup) -> None:
    try:
        await u.start(tg)
    except UpstreamError:
        pass


def _listing(result: JSONObject) -> JSONObject:
    """A list result for the wire: the 2026-07-28 protocol requires its cache fields (the
    proxy's lists change with the upstreams': never cached); older ones drop them."""
    return {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", **result}


def _complete(result: JSONObject) -> JSONObject:
    return result if "resultType" in result else {"resultType": "complete", **result}


def _cut_error(exc: MCPError) -> MCPError:
    return MCPError(code=exc.code, message=cut_text(exc.error.message), data=exc.error.data)


async def finish(proxy: Proxy, route: Route, raw: JSONObject,
                 session: Callable[[], Session], started: float | None = None) -> JSONObject:
    """What the client gets for the upstream's result ``raw`` (on either path): the very
    object below the threshold, else the pointer or an error saying why."""
    if below_threshold(proxy.state.configs.get(), route.server, route.tool, raw):
        record_relayed(session(), route.server, route.tool,
                       code="upstream_tool_error" if raw.get("isError") is True else None,
                       started=started)
        return _complete(raw)
    try:
        found = await in_thread(handle_result, session(), route.server, route.tool, raw)
    except ScratchError as exc:  # the ingest's record says why
        return _complete(error_result(exc))
    except ValueError as exc:  # MalformedResult
        record_relayed(session(), route.server, route.tool, code="upstream_malformed_result",
                       message=str(exc), started=started)
        return _complete(error_result(UpstreamError(
            f"tool {route.tool!r} of upstream server {route.server!r} returned a result "
            f"that is not a tool result: {exc}", code="upstream_malformed_result",
            server=route.server, tool=route.tool)))
    for link in raw.get("content") or ():
        if isinstance(link, dict) and link.get("type") == "resource_link" \
                and isinstance(link.get("uri"), str):
            proxy.uri_owner[link["uri"]] = route.server
    if found.stored is None:
        record_relayed(session(), route.server, route.tool,
                       code="upstream_tool_error" if raw.get("isError") is True else None,
                       started=started)
    return _complete(found.result)


def build_proxy(proxy: Proxy) -> Server[JSONObject]:
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
    proxy.bus = InMemorySubscriptionBus()
    state = proxy.state

    # Results are the wire's dicts, which the SDK's runner sends as they are (JSON: the
    # handler slots are typed with the SDK's result models).
    async def list_tools(ctx: Ctx, params: types.PaginatedRequestParams | None) -> JSON:
        proxy.remember(ctx)
        await proxy.retry_down()
        return _listing({"tools": [*proxy.own_tools, *proxy.tools]})

    async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> JSON:
        proxy.remember(ctx)
        route = proxy.routes.get(params.name)
        if route is None and specs.spec_of(params.name) is not None:
            from scratch.mcp.dispatch import run_tool
            outcome = await in_thread(run_tool, params.name, params.arguments,
                                      session_of(ctx, state))
            return call_result(outcome)
        if route is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}",
                           data={"code": "unknown_tool", "tool": params.name})
        upstream = proxy.upstreams[route.server]
        meta = ctx.meta or {}  # the SDK's parsed _meta: a dict by field name
        token = (meta.get("progress_token", meta.get("progressToken"))
                 if isinstance(meta, dict) else getattr(meta, "progress_token", None))

        async def on_progress(progress: float, total: float | None, message: str | None
                              ) -> None:  # named as the SDK's ProgressFnT names them
            await ctx.session.report_progress(progress, total, message)

        request = types.CallToolRequest(params=types.CallToolRequestParams(
            name=route.tool, arguments=params.arguments))
        started = time.perf_counter()  # for the call ledger's milliseconds
        try:
            raw = await upstream.request(request, tool=route.tool,
                                         progress=on_progress if token is not None else None)
        except UpstreamError as exc:
            record_relayed(session_of(ctx, state), route.server, route.tool, code=exc.code,
                           message=exc.message, started=started)
            return _complete(error_result(exc))
        except MCPError as exc:  # the upstream answered with a protocol error: pass it on
            record_relayed(session_of(ctx, state), route.server, route.tool,
                           code="upstream_protocol_error", message=exc.error.message,
                           started=started)
            raise _cut_error(exc) from None
        return await finish(proxy, route, raw, lambda: session_of(ctx, state), started)

    # -- resources: scratch's entries, then each upstream's, one source per page --------------
    def sources() -> list[str | None]:
        return [None, *[u.name for u in proxy.upstreams.values()
                        if u.ready and "resources" in u.capabilities]]

    async def list_resources(ctx: Ctx, params: types.PaginatedRequestParams | None) -> JSON:
        proxy.remember(ctx)
        cursor = getattr(params, "cursor", None) if params is not None else None
        where, inner = _decode_cursor(cursor)
        names = sources()
        if where >= len(names):
            return _listing({"resources": []})
        source = names[where]
        if source is None:
            rows, nxt = await in_thread(list_page, session_of(ctx, state), inner)
            resources = [{"uri": r["uri"], "name": r["name"], "mimeType": r["mimeType"],
                          "size": r["size"], "description": r["description"],
                          "_meta": r["_meta"]} for r in rows]
        else:
            page = await _ask(proxy.upstreams[source], types.ListResourcesRequest(
                params=types.PaginatedRequestParams(cursor=inner) if inner else None))
            resources = page.get("resources", [])
            for r in resources:
                if isinstance(r, dict) and isinstance(r.get("uri"), str):
                    proxy.uri_owner[r["uri"]] = source
            nxt = page.get("nextCursor")
        out: JSONObject = {"resources": resources}
        if nxt:
            out["nextCursor"] = _encode_cursor(where, nxt)
        elif where + 1 < len(names):
            out["nextCursor"] = _encode_cursor(where + 1, None)
        return _listing(out)

    async def list_templates(ctx: Ctx, params: types.PaginatedRequestParams | None) -> JSON:
        from scratch.mcp.serve.resources import TEMPLATE
        templates: list[JSON] = [{"name": "entry", "uriTemplate": TEMPLATE, "description": (
            "A stored entry of this agent (NAME, or NAME@VERSION for an old version); read in "
            "pages: ?from_line=N, and each page's _meta names the next.")}]
        for source in sources()[1:]:
            assert source is not None
            try:
                page = await _ask(proxy.upstreams[source], types.ListResourceTemplatesRequest())
            except MCPError:
                continue  # an upstream with resources but no templates
            templates += page.get("resourceTemplates", [])
        return _listing({"resourceTemplates": templates})

    async def read_resource(ctx: Ctx, params: types.ReadResourceRequestParams) -> JSON:
        proxy.remember(ctx)
        uri = str(params.uri)
        if uri.startswith("scratch://"):
            page = await in_thread(read_page, session_of(ctx, state), uri)
            return _listing({"contents": [{"uri": page["uri"], "mimeType": page["mimeType"],
                                           "text": page["text"], "_meta": page["_meta"]}]})
        owner = proxy.uri_owner.get(uri)
        tried = [owner] if owner else [s for s in sources()[1:] if s]
        last: MCPError | None = None
        for source in tried:
            try:
                return _listing(await _ask(proxy.upstreams[source], types.ReadResourceRequest(
                    params=types.ReadResourceRequestParams(uri=uri))))
            except MCPError as exc:
                last = exc
        if last is not None:
            raise _cut_error(last)
        raise MCPError(code=-32002, message=f"Resource not found: {uri}", data={"uri": uri})

    # -- prompts: every upstream's, named like tools -----------------------------------------
    async def list_prompts(ctx: Ctx, params: types.PaginatedRequestParams | None) -> JSON:
        listed = []
        for u in proxy.upstreams.values():
            if not (u.ready and "prompts" in u.capabilities):
                continue
            page = await _ask(u, types.ListPromptsRequest())
            listed.append((u.name, [p for p in page.get("prompts", []) if isinstance(p, dict)
                                    and isinstance(p.get("name"), str)]))
        prompts, proxy.prompt_routes, _ = route_tools(listed, set())
        return _listing({"prompts": prompts})

    async def get_prompt(ctx: Ctx, params: types.GetPromptRequestParams) -> JSON:
        route = proxy.prompt_routes.get(params.name)
        if route is None:
            if SEP in params.name and params.name.split(SEP, 1)[0] in proxy.upstreams:
                server, name = params.name.split(SEP, 1)
                route = Route(server, name)
            else:
                found = [u.name for u in proxy.upstreams.values() if u.ready
                         and "prompts" in u.capabilities]
                if len(found) != 1:
                    raise MCPError(code=types.INVALID_PARAMS,
                                   message=f"Unknown prompt: {params.name}")
                route = Route(found[0], params.name)
        return _complete(await _ask(proxy.upstreams[route.server], types.GetPromptRequest(
            params=types.GetPromptRequestParams(name=route.tool, arguments=params.arguments))))

    server: Server[JSONObject] = Server(
        "scratch-proxy", version=__version__, title="scratch (proxy)",
        description="Your MCP servers behind scratch: a big tool result is stored once and "
                    "the model gets a short pointer and tools to explore it.",
        instructions=instructions(),
        on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
        on_list_resource_templates=list_templates, on_read_resource=read_resource,
        on_list_prompts=list_prompts, on_get_prompt=get_prompt,
        on_subscriptions_listen=ListenHandler(proxy.bus))
    server.middleware.clear()  # no OpenTelemetry span per message (see scratch.mcp.serve.server)
    return server


async def _ask(u: Upstream, request: types.ClientRequest) -> JSONObject:
    try:
        return await u.request(request)
    except UpstreamError as exc:
        raise MCPError(code=types.INTERNAL_ERROR, message=exc.message,
                       data={"code": exc.code, "server": u.name}) from None


def _encode_cursor(source: int, inner: str | None) -> str:
    raw = orjson.dumps([source, inner])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str | None) -> tuple[int, str | None]:
    if not cursor:
        return 0, None
    try:
        value = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        source, inner = value
        if isinstance(source, int) and source >= 0 and (inner is None or isinstance(inner, str)):
            return source, inner
    except (ValueError, TypeError, orjson.JSONDecodeError):
        pass
    raise MCPError(code=types.INVALID_PARAMS, message="invalid cursor")


async def serve_proxy(state: ServerState, upstreams: list[Upstream],
                      toolset: str = "proxy") -> None:
    """Start the upstreams, serve stdio until the client goes away (or SIGTERM/SIGINT), then
    stop every upstream."""
    import signal

    from mcp.server.stdio import stdio_server

    from scratch.mcp.serve.stdio import pipe_streams
    proxy = Proxy(state, upstreams, toolset)
    for u in upstreams:
        u.notify = proxy.changed
    async with anyio.create_task_group() as tg:
        proxy.tg = tg

        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as sigs:
                async for _ in sigs:
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(on_signal)
        try:
            await proxy.start_all()
            proxy.announce()
            server = build_proxy(proxy)
            # tool calls of stdio upstreams relayed as lines, off the client's stdin
            from scratch.mcp.proxy.relay import Front
            front = Front(proxy, functools.partial(finish, proxy), UpstreamError)
            async with pipe_streams(front.reader()) as pipes:
                if pipes is not None:
                    front.out = pipes.stdout.writer
                streams = stdio_server(*pipes.for_sdk()) if pipes is not None else stdio_server()
                async with streams as (read_stream, write_stream):
                    await server.run(read_stream, write_stream,
                                     server.create_initialization_options(NotificationOptions(
                                         prompts_changed=True, resources_changed=True,
                                         tools_changed=True)))
        finally:
            with anyio.CancelScope(shield=True):
                async with anyio.create_task_group() as stops:
                    for u in upstreams:
                        stops.start_soon(u.stop)
            tg.cancel_scope.cancel()
