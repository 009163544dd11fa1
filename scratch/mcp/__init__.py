"""The MCP interface: ``scratch mcp serve`` (scratch's tools over stdio and streamable HTTP)
and ``scratch mcp proxy`` (the user's MCP servers behind scratch).

Layers, each importing only those below it (and the MCP SDK only where it says so):

- :mod:`scratch.mcp.specs`: the declarative tool table (names, schemas, annotations, the
  mapping of MCP argument names to the core's) and ``to_tool_call``; pure data, no SDK.
- :mod:`scratch.mcp.rendering`: what a tool result shows the model, and so what an answer
  costs (the answers pipeline's :class:`~scratch.answers.kernel.rendering.Rendering` for MCP);
  calls spelled as tool calls; no SDK.
- :mod:`scratch.mcp.dispatch`: the one place a tool call reaches the core: a
  :class:`~scratch.calls.Call` run by the answers pipeline
  (tool name + arguments + session -> :class:`~scratch.mcp.dispatch.ToolOutcome`); no SDK.
- :mod:`scratch.mcp.framing`: JSON-RPC lines over pipes (MCP's stdio framing), read and
  written by both roles; :mod:`scratch.mcp.auth`: HTTP bearer tokens; no SDK.
- :mod:`scratch.mcp.serve`: the server of scratch's own tools and entries (sessions,
  resources, the request log, rate limits; the SDK's ``Server``, its stdio and HTTP).
- :mod:`scratch.mcp.proxy`: the proxy in front of the user's servers; it builds on
  :mod:`scratch.mcp.serve` for scratch's own tools.

Only ``scratch mcp serve`` and ``scratch mcp proxy`` import ``mcp``, ``starlette`` or
``uvicorn``, so no other command pays for the SDK.
"""
