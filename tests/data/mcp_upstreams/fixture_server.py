"""A small real MCP server (the SDK's low-level Server over stdio) for the proxy's tests.

Tools: ``text(size)`` (that many bytes of numbered lines), ``head`` (a name scratch's own tool
has), ``json_doc(items)``, ``structured`` (with an outputSchema), ``image``, ``error(size)``
(an isError result), ``progress`` (three progress notifications), ``add_tool`` (lists one more
tool and says so with tools/list_changed), ``crash`` (the process exits mid-call), ``hang``
(never answers), ``malformed`` (a result that is not a tool result), ``slow(seconds)`` (answers
after a while; cancelled meanwhile, it appends ``cancelled`` to $FIXTURE_LOG), ``exit_later``
(answers, then exits), ``headers`` (the HTTP request's headers, as JSON), ``echo(message)``
(``Echo: `` and the message, as server-everything's), ``request_id`` (the JSON-RPC id the call
came with, as JSON: the proxy's relay sends its own string ids). Faults written on the wire
itself, for the torture run: ``die_mid_result`` (the start of its answer's line, then the
process exits), ``garbage(then)`` (lines that are not JSON-RPC, then a good answer, or one
whose result is not a tool result when ``then`` is ``"malformed"``, or its answer's line cut
short and then nothing when ``then`` is ``"garbled"``), ``oversized(size,
mode)`` (a line of ``size`` bytes: garbage before a good answer, a malformed result, or a
valid result), ``wait_for(path)`` (answers once ``path`` exists: a hang the test ends). Its pid is appended to
$FIXTURE_PIDS when set, so a test can see it is gone once the proxy stops.

``fixture_server.py`` serves stdio; ``fixture_server.py --http PORT`` serves streamable HTTP on
127.0.0.1:PORT/mcp.
"""

from __future__ import annotations

import base64
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()
EXTRA: list[str] = []


def _tool(name: str, props: dict[str, Any] | None = None, **kw: Any) -> types.Tool:
    return types.Tool(name=name, description=f"fixture tool {name}",
                      input_schema={"type": "object", "properties": props or {}}, **kw)


TOOLS = [_tool("text", {"size": {"type": "integer"}}), _tool("head"),
         _tool("json_doc", {"items": {"type": "integer"}}),
         _tool("structured", output_schema={"type": "object", "properties": {
             "count": {"type": "integer"}}, "required": ["count"]}),
         _tool("image"), _tool("error", {"size": {"type": "integer"}}), _tool("progress"),
         _tool("add_tool"), _tool("crash"), _tool("hang"), _tool("malformed"),
         _tool("slow", {"seconds": {"type": "number"}}), _tool("exit_later"), _tool("headers"),
         _tool("echo", {"message": {"type": "string"}}), _tool("request_id"),
         _tool("die_mid_result"), _tool("garbage", {"then": {"type": "string"}}),
         _tool("oversized", {"size": {"type": "integer"}, "mode": {"type": "string"}}),
         _tool("wait_for", {"path": {"type": "string"}})]
WIRE: list[int] = []  # the stdout descriptor the SDK writes to (stdio only)
GARBAGE = [b"not json at all\n", b"\xff\xfe\xfd\n", b"[1, 2, 3]\n", b'{"jsonrpc": "2.0"}\n',
           b'{"jsonrpc": "2.0", "id": "nobody-asked", "result": {}}\n', b"{\"truncated\": \n",
           b"\n", b"42\n"]


def raw(data: bytes) -> None:
    """Bytes written on the wire as they are, between the SDK's own messages."""
    if WIRE:
        os.write(WIRE[0], data)


def text_of(size: int) -> str:
    out, n = [], 0
    while n < size:
        line = f"line {len(out) + 1:07d} " + "abcdefghij" * 5 + "\n"
        out.append(line)
        n += len(line)
    return "".join(out)[:size]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS + [_tool(n) for n in EXTRA])


def text(t: str) -> list[Any]:
    return [types.TextContent(type="text", text=t)]


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    name = params.name
    if name == "text":
        return types.CallToolResult(content=text(text_of(int(args.get("size", 100)))))
    if name == "head":
        return types.CallToolResult(content=text("the fixture's own head"))
    if name == "json_doc":
        items = [{"id": i, "name": f"pod-{i}", "status": "Running" if i % 7 else "Failed"}
                 for i in range(int(args.get("items", 10)))]
        import json
        return types.CallToolResult(content=text(json.dumps({"items": items})))
    if name == "structured":
        return types.CallToolResult(content=text('{"count": 3}'),
                                    structured_content={"count": 3})
    if name == "image":
        return types.CallToolResult(content=[types.ImageContent(type="image", data=PNG,
                                                                mime_type="image/png")])
    if name == "error":
        return types.CallToolResult(content=text(text_of(int(args.get("size", 100)))),
                                    is_error=True)
    if name == "progress":
        for i in range(1, 4):
            await ctx.session.report_progress(i, 3, f"step {i}")
        return types.CallToolResult(content=text("done"))
    if name == "add_tool":
        EXTRA.append(f"added_{len(EXTRA) + 1}")
        await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=text(f"added {EXTRA[-1]}"))
    if name == "crash":
        sys.stdout.flush()
        os._exit(3)
    if name == "hang":
        await anyio.sleep(3600)
    if name == "slow":
        try:
            await anyio.sleep(float(args.get("seconds", 5)))
        except anyio.get_cancelled_exc_class():
            if os.environ.get("FIXTURE_LOG"):
                with open(os.environ["FIXTURE_LOG"], "a") as fh:
                    fh.write("cancelled\n")
            raise
        return types.CallToolResult(content=text("slept"))
    if name == "echo":  # as server-everything's echo: the message after a prefix
        return types.CallToolResult(content=text(f"Echo: {args.get('message', '')}"))
    if name == "request_id":
        import json
        return types.CallToolResult(content=text(json.dumps(getattr(ctx, "request_id", None))))
    if name == "die_mid_result":
        import json
        raw(b'{"jsonrpc": "2.0", "id": ' + json.dumps(ctx.request_id).encode()
            + b', "result": {"content": [{"type": "text", "text": "the first half of')
        os._exit(3)
    if name == "garbage":
        for junk in GARBAGE:
            raw(junk)
        return types.CallToolResult(content=text("after the garbage"))
    if name == "oversized":
        size = int(args.get("size", 1 << 20))
        if args.get("mode") == "valid":
            return types.CallToolResult(content=text(text_of(size)))
        raw(b"x" * size + b"\n")
        return types.CallToolResult(content=text("after the big line"))
    if name == "wait_for":
        path = str(args.get("path"))
        for _ in range(60_000):  # at most ten minutes; a test creates the file long before
            if os.path.exists(path):
                return types.CallToolResult(content=text("released"))
            await anyio.sleep(0.01)
        return types.CallToolResult(content=text("never released"), is_error=True)
    if name == "exit_later":
        import threading
        threading.Timer(0.2, os._exit, (0,)).start()  # after the answer is written
        return types.CallToolResult(content=text("bye"))
    if name == "headers":
        import json
        request = getattr(ctx, "request", None)
        found = dict(request.headers) if request is not None else {}
        return types.CallToolResult(content=text(json.dumps(found, sort_keys=True)))
    return types.CallToolResult(content=text(f"unknown {name}"), is_error=True)


class Malformed:
    """Answers tools/call of ``malformed`` with a result that is not a tool result (before
    the SDK's own check, which would refuse to send it)."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params or {}
        name, args = params.get("name"), params.get("arguments") or {}
        if ctx.method == "tools/call" and name == "malformed":
            return {"content": "not a list of blocks"}
        if ctx.method == "tools/call" and name == "garbage" and args.get("then") == "malformed":
            for junk in GARBAGE:
                raw(junk)
            return {"content": "garbage, not a list of blocks"}
        if ctx.method == "tools/call" and name == "garbage" and args.get("then") == "garbled":
            import json  # the answer's line, cut short and ended; no other answer comes
            raw(b'{"jsonrpc": "2.0", "id": ' + json.dumps(ctx.request_id).encode()
                + b', "result": {"content": [{"type": "te\n')
            await anyio.sleep_forever()
        if ctx.method == "tools/call" and name == "oversized" and args.get("mode") == "malformed":
            return {"content": "x" * int(args.get("size", 1 << 20))}
        return await call_next(ctx)


async def main() -> None:
    if os.environ.get("FIXTURE_PIDS"):
        with open(os.environ["FIXTURE_PIDS"], "a") as fh:
            fh.write(f"{os.getpid()}\n")
    server: Server[Any] = Server(os.environ.get("FIXTURE_NAME", "fixture"),
                                 on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.clear()
    server.middleware.append(Malformed())
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        import uvicorn
        app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
        config = uvicorn.Config(app, host="127.0.0.1", port=int(sys.argv[2]),
                                log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve()
        return
    import io
    WIRE.append(os.dup(1))  # the SDK is given this descriptor; raw() writes to it too
    out = anyio.wrap_file(io.TextIOWrapper(os.fdopen(WIRE[0], "wb"), encoding="utf-8"))
    async with stdio_server(stdout=out) as (read, write):
        await server.run(read, write, server.create_initialization_options(
            NotificationOptions(tools_changed=True)))


if __name__ == "__main__":
    anyio.run(main)
