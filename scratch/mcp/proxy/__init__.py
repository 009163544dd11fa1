"""``scratch mcp proxy``: one MCP server in front of the user's servers, storing big results.

- :mod:`~scratch.mcp.proxy.config`: the upstream servers, read from (and wrapped into) an MCP
  client's configuration file; :mod:`~scratch.mcp.proxy.extract`: what a tool result holds, as
  text and attachments; :mod:`~scratch.mcp.proxy.intercept`: tool names routed, results passed
  on or stored behind a pointer. No SDK.
- :mod:`~scratch.mcp.proxy.upstream`: one connection to an upstream (the SDK's client);
  :mod:`~scratch.mcp.proxy.relay`: tool calls to a stdio upstream relayed as JSON-RPC lines;
  :mod:`~scratch.mcp.proxy.server`: the SDK's low-level ``Server`` the client talks to, built
  on :mod:`scratch.mcp.serve` for scratch's own tools.
"""
