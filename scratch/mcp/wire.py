"""JSON as it enters and leaves the MCP wire: the one place :mod:`scratch.mcp` spells ``Any``.

A value parsed from a JSON-RPC line, a tool's arguments, an upstream's result as it came, a
result dict about to be sent: its shape is what a peer sent or what the protocol says, checked
where it is read (``isinstance`` on the way in; the SDK's models or the spec on the way out).
Everything else in :mod:`scratch.mcp` has a real type (the SDK's models, scratch's classes,
Protocols). mypy's ``disallow_any_explicit`` is on for all of :mod:`scratch.mcp`
(pyproject.toml); uses of an alias are not flagged, so this module is the one exception.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

JSON: TypeAlias = Any  # type: ignore[explicit-any]  # see the module: the JSON edge, by name
JSONObject: TypeAlias = dict[str, JSON]

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from starlette.requests import Request

    # what the SDK hands a request handler: over HTTP ``request`` is the Starlette request
    Ctx: TypeAlias = ServerRequestContext[JSONObject, Request]

__all__ = ["JSON", "JSONObject"]
