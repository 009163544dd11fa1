"""``scratch mcp serve``: scratch's own tools and entries over stdio and streamable HTTP.

- :mod:`~scratch.mcp.serve.session`: who is asking (agent, budget session, model) and what a
  warm server keeps between calls; :mod:`~scratch.mcp.serve.resources`: stored entries as
  resources; :mod:`~scratch.mcp.serve.reqlog` and :mod:`~scratch.mcp.serve.ratelimit`: the
  request log and per-token rate limits. No SDK.
- :mod:`~scratch.mcp.serve.server`: the SDK's low-level ``Server`` with those tools and
  resources; :mod:`~scratch.mcp.serve.stdio`: the SDK's stdio transport on the event loop's
  pipes; :mod:`~scratch.mcp.serve.http`: the HTTP app behind scratch's door (origin, bearer
  token, rate limit). Only these import the SDK, and only ``scratch mcp serve`` (and the
  proxy, which serves scratch's tools too) imports them.
"""
