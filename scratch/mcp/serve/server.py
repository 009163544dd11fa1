"""The MCP server: the SDK's low-level ``Server`` with scratch's tools and resources.

Imports the MCP SDK (and through it pydantic and starlette); only ``scratch mcp serve``
imports this module. Invariants:

- Tools come from :mod:`scratch.mcp.specs` (one table) and run through
  :func:`scratch.mcp.dispatch.run_tool` in a worker thread, so a slow call (a big ingest, a
  git commit) never stalls the connection or other clients; a client that goes away mid-call
  leaves nothing half-stored (the core writes atomically) and the server keeps serving. The
  one exception is :func:`runs_inline`: over stdio (one client), a
  read-only call whose tool last answered that entry within a few milliseconds runs on the
  event loop itself, since the hand-off to a thread and back costs a warm answer about as much
  as the answer; a call that was slow (an index built, a whole-entry scan) goes back to the
  thread the next time. Every call, over both transports, is dispatched by the SDK's server.
- An unknown tool is a protocol error (JSON-RPC -32602, as the MCP spec has it); wrong
  arguments and refusals are tool results with ``isError: true`` and the error object as
  JSON text and as ``structuredContent``, so a model can read and correct them.
- The session of a request: stdio is one connection; over HTTP it is the token's agent and the
  ``Mcp-Session-Id`` (the 2026-07-28 protocol has no sessions: there it is the token's).
- Every request is one line in the request log (:mod:`scratch.mcp.serve.reqlog`), never content.
- A usage event a call records (the ``finish`` tool) goes to the clients as a log
  notification, and a session that closes finishes its worker (:mod:`scratch.mcp.serve.events`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar, TypeVarTuple, cast

import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from scratch import __version__
from scratch.errors import ScratchError
from scratch.mcp import specs
from scratch.mcp.dispatch import ToolOutcome, run_tool, wire_result
from scratch.mcp.serve import sampling
from scratch.mcp.serve.reqlog import RequestLog
from scratch.mcp.serve.resources import (
    TEMPLATE,
    EntryPage,
    EntryResource,
    list_entries,
    read_entry,
)
from scratch.mcp.serve.session import ConnectionKey, ServerState, Session
from scratch.mcp.wire import JSON, JSONObject

if TYPE_CHECKING:
    from mcp.server.context import CallNext, HandlerResult

    from scratch.calls import ArgValue
    from scratch.mcp.wire import Ctx

# Calls run on these threads, so a slow one (a big ingest, a git commit) never stalls the
# connection or other clients. The event loop's own executor, not anyio's to_thread, which
# costs as much again as the hand-off itself (its backend and limiter lookups run per call).
_WORKERS = ThreadPoolExecutor(max_workers=16, thread_name_prefix="scratch-mcp")
RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for resources/read of an unknown URI
def instructions() -> str:
    """The server's instructions, naming only the tools it offers (the --tools set)."""
    by_tool = {spec.name: name for name, spec in specs.served()}  # tool -> name offered
    from scratch.mcp.rendering import NAMED_MAKERS, maker_names
    makers, more = maker_names(NAMED_MAKERS)
    store = (f"A big result of an upstream tool ({', '.join(makers)}{', …' if more else ''}) "
             "is stored and you get a pointer to it instead: explore the entry it names"
             if makers else
             "Store a big text with ingest (or a proxy stores it for you) and use the pointer "
             "it returns" if "ingest" in by_tool else
             "A big output is stored for you (by a proxy, a hook or 'scratch run'): use the "
             "pointer it returns")
    chain = " -> ".join(" / ".join(by_tool[t] for t in step if t in by_tool) for step in (
        ("schema",), ("item_schema",), ("iterate_over", "get_in"), ("grep", "slice"))
        if any(t in by_tool for t in step))
    return ("scratch stores big tool outputs and answers questions about them cheaply. "
            f"{store}{'; then ' + chain if chain else ''}. Every answer states its "
            "cost in tokens; one over the per-call cap is refused with suggestions (tool calls "
            "that fit), and fit=true returns the largest part that fits plus next, the call "
            "that continues.")


# what the request log line of the current request carries beyond method and duration
T = TypeVar("T")
Ts = TypeVarTuple("Ts")
# the worst a call run on the loop can stall the one client's other calls, in milliseconds
INLINE_MS = 10.0
_LAST_MS: dict[tuple[str, str], float] = {}  # (tool, file) -> how long its last call took
_LAST_KEPT = 1024
_LOG_FIELDS: contextvars.ContextVar[dict[str, JSON] | None] = contextvars.ContextVar(
    "scratch_mcp_log_fields", default=None)


async def in_thread(fn: Callable[[*Ts], T], *args: *Ts) -> T:
    """``fn(*args)`` on a worker thread. Cancelled meanwhile (the client went away), the call
    still runs to its end on its thread (the core's writes are atomic); its answer is
    dropped."""
    return await asyncio.get_running_loop().run_in_executor(_WORKERS, fn, *args)


def _inline_key(name: str, arguments: JSON) -> tuple[str, str] | None:
    spec = specs.spec_of(name)
    if spec is None or not spec.read_only or not isinstance(arguments, dict):
        return None
    file = arguments.get("file")
    return (name, file) if isinstance(file, str) else None


def runs_inline(name: str, arguments: JSON, transport: str) -> bool:
    """Whether a call runs on the event loop, not a worker thread: over stdio (one client), a
    read-only tool on an entry it last answered within :data:`INLINE_MS`, since the hand-off
    to a thread and back costs a warm answer about as much as the answer. Over HTTP every
    call takes the thread, so no client's slow call stalls another's."""
    if transport != "stdio":
        return False
    key = _inline_key(name, arguments)
    last = _LAST_MS.get(key) if key is not None else None
    return last is not None and last <= INLINE_MS


def took(name: str, arguments: JSON, seconds: float) -> None:
    """Remember how long a call of ``name`` on its entry took (for :func:`runs_inline`)."""
    key = _inline_key(name, arguments)
    if key is None:
        return
    if len(_LAST_MS) >= _LAST_KEPT and key not in _LAST_MS:
        _LAST_MS.clear()  # a bounded memo: starting over costs one threaded call per entry
    _LAST_MS[key] = seconds * 1000


class Notifier:
    """Progress notifications of one call, for a client that sent a ``progressToken``: each
    report the call's work makes (:mod:`scratch.progress`) that is worth showing becomes a
    ``notifications/progress`` sent from the event loop, its ``progress`` rising through the
    stages (stages done, plus the share of the current one) and its ``message`` what a
    person at a terminal reads. :meth:`sent` waits for them, so all precede the result."""

    def __init__(self, ctx: Ctx, loop: asyncio.AbstractEventLoop, after: float) -> None:
        from scratch.progress import Shown
        self.ctx = ctx
        self.loop = loop
        self.shown = Shown(after=after, every=0.2)
        self.stages = 0
        self.last = 0.0
        self.pending: list[concurrent.futures.Future[None]] = []

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        from scratch.progress import describe
        new = stage != self.shown.stage
        if not self.shown.wanted(stage):
            return
        if new and self.last:
            self.stages += 1
        share = min(done / total, 0.999) if total else 0.0
        value = max(self.stages + share, self.last + 0.001)
        self.last = value
        message = describe(stage, done, total, self.shown.elapsed())
        self.pending.append(asyncio.run_coroutine_threadsafe(
            self.ctx.session.report_progress(round(value, 3), None, message), self.loop))

    async def sent(self) -> None:
        for future in self.pending:
            with contextlib.suppress(Exception):  # a client gone: its result goes nowhere too
                await asyncio.wrap_future(future)


def _progress_token(ctx: Ctx) -> object:
    meta = getattr(ctx, "meta", None)
    if isinstance(meta, dict):
        return meta.get("progress_token", meta.get("progressToken"))
    return getattr(meta, "progress_token", None)


def _reported(notifier: Notifier | None, fn: Callable[[], T]) -> T:
    """``fn()`` with its progress reports going to ``notifier`` (on a worker thread)."""
    from scratch.progress import reporting
    with reporting(notifier):
        return fn()


def tool_of(spec: specs.ToolSpec, name: str | None = None) -> types.Tool:
    """``spec`` as tools/list shows it, offered as ``name`` (default: its own)."""
    a = spec.annotations()
    return types.Tool(
        name=name or spec.name, description=spec.description,
        input_schema=spec.input_schema(),
        annotations=types.ToolAnnotations(
            read_only_hint=a["readOnlyHint"],
            destructive_hint=a.get("destructiveHint"), idempotent_hint=a.get("idempotentHint"),
            open_world_hint=a["openWorldHint"]))


def call_result(outcome: ToolOutcome) -> types.CallToolResult:
    return types.CallToolResult.model_validate(wire_result(outcome))


class Identity:
    """Who sent a request: the agent, the token's id (HTTP), the connection's key, and the
    run the token names (None: the server's)."""

    __slots__ = ("agent", "token_id", "key", "transport", "run")

    def __init__(self, agent: str, token_id: str | None, key: ConnectionKey,
                 transport: str, run: tuple[str | None, int | None, bool] | None = None
                 ) -> None:
        self.agent, self.token_id, self.key, self.transport = agent, token_id, key, transport
        self.run = run


def identity_of(ctx: Ctx, state: ServerState) -> Identity:
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict) and "scratch.token" in scope:
        token = scope["scratch.token"]
        sid = request.headers.get("mcp-session-id") if request is not None else None
        run = (token.run, token.iteration, token.coordinator) if token.run else None
        return Identity(token.agent, token.id, ("http", token.id, sid), "http", run)
    if isinstance(scope, dict):  # HTTP without tokens (loopback only)
        sid = request.headers.get("mcp-session-id") if request is not None else None
        return Identity(state.agent, None, ("http", None, sid), "http")
    return Identity(state.agent, None, ("stdio",), "stdio")


def _client_name(ctx: Ctx) -> str | None:
    try:
        params = ctx.session.client_params
        return params.client_info.name if params is not None else None
    except AttributeError:
        return None


def session_of(ctx: Ctx, state: ServerState, who: Identity | None = None) -> Session:
    who = who or identity_of(ctx, state)
    fields = _LOG_FIELDS.get()
    if fields is not None:
        fields.update(agent=who.agent, token=who.token_id, transport=who.transport)
    found = state.session_for(who.key, who.agent, _client_name(ctx), who.token_id or "",
                              who.run)
    found.mcp_session = getattr(ctx, "session", None)  # its channel for notifications
    return found


# A test hook, off unless this variable names a folder: a call of tool T waits on its worker
# thread while the file ``hold-T`` exists there, after creating ``held-T`` to say it has
# started. Tests use it to know a call is in progress (say, to disconnect mid-call) instead of
# racing a call against the clock.
HOLD_ENV = "SCRATCH_MCP_TEST_HOLD"


def _held(folder: str, name: str, arguments: JSON, session: Session,
          supplied: dict[str, ArgValue] | None = None) -> ToolOutcome:
    import os
    hold = os.path.join(folder, f"hold-{name}")
    if os.path.exists(hold):
        with open(os.path.join(folder, f"held-{name}"), "w"):
            pass
        while os.path.exists(hold):
            time.sleep(0.01)
    return run_tool(name, arguments, session, None, supplied)


def build_server(state: ServerState, log: RequestLog | None = None) -> Server[JSONObject]:
    import os
    import warnings

    from scratch.mcp.serve.events import EventHub
    tools = [tool_of(spec, name) for name, spec in specs.served()]
    hold = os.environ.get(HOLD_ENV) or None
    if state.hub is None:
        state.hub = EventHub(state)
    hub = state.hub

    async def list_tools(ctx: Ctx, params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        fields = _LOG_FIELDS.get()
        if fields is not None:
            fields["tool"] = params.name
        if specs.spec_of(params.name) is None:  # not a tool this server offers
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}",
                           data={"code": "unknown_tool", "tool": params.name})
        who = identity_of(ctx, state)
        session = session_of(ctx, state, who)
        session.calls += 1
        start = time.perf_counter()
        notifier = None
        if _progress_token(ctx) is not None:  # the client asked to hear how far a call is
            notifier = Notifier(ctx, asyncio.get_running_loop(),
                                float(session.context().config["progress.after"]))
        name, arguments = params.name, params.arguments
        # summarize by_model: the client's own model, when it offers one (sampling); such a
        # call waits for the client on its thread, never on the loop
        offered = sampling.offered_model(ctx, session, params) if sampling.asks_model(
            specs.spec_of(name).command, arguments) else None  # type: ignore[union-attr]
        # (an in-process object the command takes as it is: not one of ArgValue's kinds)
        supplied: dict[str, ArgValue] | None = (
            None if offered is None else {"client_model": cast("ArgValue", offered)})
        if hold is not None:
            outcome = await in_thread(_reported, notifier,
                                      lambda: _held(hold, name, arguments, session, supplied))
        elif notifier is None and supplied is None and runs_inline(name, arguments,
                                                                   who.transport):
            outcome = run_tool(name, arguments, session)
        else:
            outcome = await in_thread(_reported, notifier,
                                      lambda: run_tool(name, arguments, session, None, supplied))
        if notifier is not None:
            await notifier.sent()
        if isinstance(offered, sampling.RoundModel) and offered.pending and \
                outcome.code == sampling.InputRequired.code:
            return offered.input_required()  # type: ignore[return-value]
        took(params.name, params.arguments, time.perf_counter() - start)
        if fields is not None:
            fields.update(tokens=outcome.tokens, code=outcome.code,
                          outcome="ok" if outcome.ok else "tool_error")
        if hub is not None:  # a usage event this call recorded: to its clients
            await hub.deliver(session, ctx)
        return call_result(outcome)

    async def set_level(ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        session_of(ctx, state).log_level = str(params.level)
        return types.EmptyResult()

    async def list_resources(ctx: Ctx, params: types.PaginatedRequestParams | None
                             ) -> types.ListResourcesResult:
        session = session_of(ctx, state)
        cursor = getattr(params, "cursor", None) if params is not None else None
        rows, nxt = await in_thread(list_page, session, cursor)
        return types.ListResourcesResult(
            resources=[types.Resource(uri=r["uri"], name=r["name"], mime_type=r["mimeType"],
                                      size=r["size"], description=r["description"],
                                      _meta=r["_meta"]) for r in rows],
            next_cursor=nxt)

    async def list_templates(ctx: Ctx, params: types.PaginatedRequestParams | None
                             ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            name="entry", uri_template=TEMPLATE, description=(
                "A stored entry of this agent (NAME, or NAME@VERSION for an old version); "
                "read in pages: ?from_line=N, and each page's _meta names the next."))])

    async def read_resource(ctx: Ctx, params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        session = session_of(ctx, state)
        page = await in_thread(read_page, session, str(params.uri))
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=page["uri"], mime_type=page["mimeType"], text=page["text"],
            _meta=page["_meta"])])

    # The tool list and the resource template never change while a server runs: let clients
    # keep them (without a hint a 2026-07-28 client lists the tools again before every call);
    # the resource list changes with every write and stays uncached.
    static = CacheHint(ttl_ms=3_600_000, scope="public")
    with warnings.catch_warnings():  # logging/setLevel: deprecated as of 2026-07-28, still
        warnings.simplefilter("ignore")  # what declares the log messages usage events ride
        server: Server[JSONObject] = Server(
            "scratch", version=__version__, title="scratch",
            cache_hints={"tools/list": static, "resources/templates/list": static},
            # the 2026-07-28 HTTP transport checks each call's Mcp-Param-* headers against the
            # tool's schema: hand it the schema instead of having it run tools/list per call
            get_tool_input_schema=_input_schema,
            description="A git-backed scratchpad for agents: big outputs stored once, explored "
                        "cheaply, every answer priced in tokens.",
            instructions=instructions(),
            on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
            on_list_resource_templates=list_templates, on_read_resource=read_resource,
            on_set_logging_level=set_level)
    # No OpenTelemetry span per message (the SDK's documented opt-out: drop its middleware);
    # scratch has its own request log, and the span costs every call.
    server.middleware.clear()
    if log is not None:
        server.middleware.append(_LogMiddleware(log, state.agent))
    return server


def _input_schema(name: str) -> JSONObject | None:
    spec = specs.spec_of(name)
    return spec.input_schema() if spec is not None else None


def list_page(session: Session, cursor: str | None) -> tuple[list[EntryResource], str | None]:
    if session.coordinator:  # no scratchpad: no entries of its own to list
        return [], None
    try:
        return list_entries(session.context(), cursor)
    except ScratchError as exc:
        raise MCPError(code=types.INTERNAL_ERROR, message=exc.message,
                       data={"code": exc.code}) from None


def read_page(session: Session, uri: str) -> EntryPage:
    from scratch.errors import NotFound, UsageError
    try:
        return read_entry(session.context(), uri)
    except NotFound as exc:
        raise MCPError(code=RESOURCE_NOT_FOUND, message=f"Resource not found: {exc.message}",
                       data={"uri": uri, "code": exc.code}) from None
    except UsageError as exc:
        raise MCPError(code=types.INVALID_PARAMS, message=exc.message,
                       data={"uri": uri, "code": exc.code}) from None
    except ScratchError as exc:
        raise MCPError(code=types.INTERNAL_ERROR, message=exc.message,
                       data={"uri": uri, **exc.to_dict()}) from None


class _LogMiddleware:
    """One request-log line per JSON-RPC request (notifications are not requests)."""

    def __init__(self, log: RequestLog, stdio_agent: str) -> None:
        self.log = log
        self.stdio_agent = stdio_agent

    async def __call__(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None:
            return await call_next(ctx)
        request = getattr(ctx, "request", None)
        scope = getattr(request, "scope", None)
        http = isinstance(scope, dict)
        tok = scope.get("scratch.token") if isinstance(scope, dict) else None
        # a unique id per request (JSON-RPC ids repeat across connections), and who sent it
        fields: dict[str, JSON] = {"request_id": uuid.uuid4().hex[:16], "rpc_id": ctx.request_id,
                                  "transport": "http" if http else "stdio",
                                  "agent": tok.agent if tok else (None if http
                                                                  else self.stdio_agent),
                                  "token": tok.id if tok else None, "method": ctx.method}
        token = _LOG_FIELDS.set(fields)
        start = time.perf_counter()
        outcome, code = "ok", None
        try:
            return await call_next(ctx)
        except MCPError as exc:
            outcome, code = "error", exc.code
            raise
        except Exception:
            outcome = "error"
            raise
        finally:
            _LOG_FIELDS.reset(token)
            outcome = fields.pop("outcome", outcome)
            code = fields.pop("code", None) or code
            self.log.write(**fields, duration_ms=round((time.perf_counter() - start) * 1000, 2),
                           outcome=outcome, code=code)


async def serve_stdio(state: ServerState, log: RequestLog | None) -> None:
    from mcp.server.stdio import stdio_server

    from scratch.mcp.serve.stdio import pipe_streams
    server = build_server(state, log)
    try:
        async with pipe_streams() as pipes:
            streams = stdio_server(*pipes.for_sdk()) if pipes is not None else stdio_server()
            async with streams as (read_stream, write_stream):
                await server.run(read_stream, write_stream,
                                 server.create_initialization_options())
    finally:  # the one client left: its worker finishes (scratch.mcp.serve.events)
        if state.hub is not None:
            await in_thread(state.hub.finish_all, "session_closed")
