"""Which MCP tool calls run on the event loop instead of a worker thread.

Over stdio (one client), a read-only tool on an entry it last answered within
:data:`INLINE_MS` runs on the loop itself (:mod:`scratch.mcp.server`), or is taken off the
wire before the SDK sees it (:mod:`scratch.mcp.quick`): the hand-off to a thread and back
costs a warm answer about as much as the answer. A call that was slow (an index built, a
whole-entry scan) goes back to the thread the next time. Over HTTP every call takes the
thread, so no client's slow call stalls another's.
"""

from __future__ import annotations

from typing import Any

from scratch.mcp import specs

# the worst a call run on the loop can stall the one client's other calls, in milliseconds
INLINE_MS = 10.0
_LAST_MS: dict[tuple[str, str], float] = {}  # (tool, file) -> how long its last call took
_LAST_KEPT = 1024


def _inline_key(name: str, arguments: Any) -> tuple[str, str] | None:
    spec = specs.BY_NAME.get(name)
    if spec is None or not spec.read_only or not isinstance(arguments, dict):
        return None
    file = arguments.get("file")
    return (name, file) if isinstance(file, str) else None


def runs_inline(name: str, arguments: Any, transport: str) -> bool:
    """Whether a call runs on the event loop, not a worker thread (see the module): over
    stdio, a read-only tool on an entry it last answered within :data:`INLINE_MS`."""
    if transport != "stdio":
        return False
    key = _inline_key(name, arguments)
    last = _LAST_MS.get(key) if key is not None else None
    return last is not None and last <= INLINE_MS


def took(name: str, arguments: Any, seconds: float) -> None:
    """Remember how long a call of ``name`` on its entry took (for :func:`runs_inline`)."""
    key = _inline_key(name, arguments)
    if key is None:
        return
    if len(_LAST_MS) >= _LAST_KEPT and key not in _LAST_MS:
        _LAST_MS.clear()  # a bounded memo: starting over costs one threaded call per entry
    _LAST_MS[key] = seconds * 1000


__all__ = ["INLINE_MS", "runs_inline", "took"]
