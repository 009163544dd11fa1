"""The MCP interface: ``scratch mcp serve`` over stdio and streamable HTTP.

Layers, each importing only those below it (and the MCP SDK only where it says so):

- :mod:`scratch.mcp.specs`: the declarative tool table (names, schemas, annotations, the
  mapping of MCP argument names to the core's) and ``to_tool_call``; pure data, no SDK.
- :mod:`scratch.mcp.rendering`: what a tool result shows the model, and so what an answer
  costs (the answers pipeline's :class:`~scratch.answers.kernel.rendering.Rendering` for MCP); calls
  spelled as tool calls; no SDK.
- :mod:`scratch.mcp.dispatch`: the one place a tool call reaches the core: a
  :class:`~scratch.calls.Call` run by the answers pipeline
  (tool name + arguments + session -> :class:`~scratch.mcp.dispatch.ToolOutcome`); no SDK.
- :mod:`scratch.mcp.session`, :mod:`scratch.mcp.resources`, :mod:`scratch.mcp.tokens`,
  :mod:`scratch.mcp.ratelimit`, :mod:`scratch.mcp.reqlog`: per-connection state, stored
  entries as resources, HTTP bearer tokens, rate limits and the request log; no SDK.
- :mod:`scratch.mcp.server` and :mod:`scratch.mcp.http`: the SDK's low-level ``Server`` and
  the HTTP app around it. Only these import ``mcp``, ``starlette`` or ``uvicorn``, and only
  ``scratch mcp serve`` imports them, so no other command pays for the SDK.
"""
