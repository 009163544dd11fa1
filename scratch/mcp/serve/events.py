"""Usage events (``scratchpad_usage``) to MCP clients, and the sessions that finish.

How an event reaches a client: a ``notifications/message`` (MCP's logging notification) at
level ``info``, logger ``scratchpad_usage``, whose ``data`` is the event object
(:class:`scratch.runs.UsageEvent`: agent, run, iteration, tokens_intercepted,
tokens_extracted, ...). Of the notifications MCP defines, it is the one that carries an
arbitrary JSON object to the client and that every SDK client hands to the application (the
Python SDK's ``logging_callback``); the others name a change (a list, a resource) and carry
no data, and a notification method of scratch's own would be dropped or refused by clients.

Invariants:
- The worker that calls ``finish`` gets its event on that request's own stream (stdio, or the
  POST's response stream over HTTP); on the 2026-07-28 protocol only when the request opts in
  to log messages (its ``io.modelcontextprotocol/logLevel``: the SDK client's ``log_level``),
  as that protocol requires. The tool result carries the event too, so nothing depends on it.
- Every other open session of the same run hears of it on its connection's standalone stream
  (the streamable-HTTP GET stream; stdio's one stream): the coordinator of an orchestration
  sees its workers finish. The 2026-07-28 protocol has no standalone stream for log messages,
  so its sessions are not sent these; the run's events (``scratch runs show``) have them all.
- A level a client set with ``logging/setLevel`` above ``info`` stops them.
- A session of a run that closes (stdio's end, an HTTP ``DELETE``, the server stopping)
  finishes its worker (:func:`scratch.runs.finish_worker`, reason ``session_closed`` or
  ``server_stopped``) when it made tool calls and they intercepted or extracted anything. A
  session in no run is no worker: only its ``finish`` records an event.
- Sending never fails a call and never stalls the server: a client gone is skipped.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING

from scratch.mcp.wire import JSONObject

if TYPE_CHECKING:
    from scratch.mcp.serve.session import ServerState, Session
    from scratch.runs import UsageEvent

LOGGER = "scratchpad_usage"
LEVEL = "info"
# RFC 5424 severities in MCP's order: a client's setLevel at or below info lets events through
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def wants(session: Session) -> bool:
    """Whether the client of ``session`` asked for log messages at ``info``."""
    level = session.log_level if session.log_level in LEVELS else "debug"
    return LEVELS.index(level) <= LEVELS.index(LEVEL)


def event_data(event: UsageEvent) -> JSONObject:
    return {k: v for k, v in event.items()}


def _modern(mcp_session: object) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    return getattr(mcp_session, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS


async def _send(mcp_session: object, event: UsageEvent, related: object | None) -> bool:
    """One log notification on ``mcp_session`` (the SDK's ServerSession): on the stream of the
    request ``related`` when given, else the standalone one. False when it could not go."""
    send = getattr(mcp_session, "send_log_message", None)
    if send is None:
        return False
    try:
        with warnings.catch_warnings():  # the SDK marks logging deprecated as of 2026-07-28
            warnings.simplefilter("ignore")
            await send(LEVEL, event_data(event), LOGGER, related)
    except Exception:  # noqa: BLE001 - a client gone: its loss, never the server's
        return False
    return True


class EventHub:
    """The usage events this server process records, handed to its clients' sessions."""

    def __init__(self, state: ServerState) -> None:
        from scratch.runs import on_usage
        self.state = state
        self._pending: list[UsageEvent] = []
        self._lock = threading.Lock()
        self.stop = on_usage(self._seen)

    def _seen(self, event: UsageEvent) -> None:  # any thread (a call runs on a worker's)
        with self._lock:
            self._pending.append(event)

    def take(self) -> list[UsageEvent]:
        with self._lock:
            taken, self._pending = self._pending, []
        return taken

    async def deliver(self, origin: Session | None = None, request: object | None = None
                      ) -> None:
        """Send the events recorded since the last delivery: to ``origin`` (the session whose
        request ``request`` finished it) on that request's stream, to the other sessions of
        each event's run on their standalone streams."""
        for event in self.take():
            mine = (origin is not None and event["agent"] == origin.agent
                    and event["session"] == origin.session)
            if mine and request is not None and origin is not None and wants(origin):
                ctx_session = getattr(request, "session", None)
                await _send(ctx_session, event, getattr(request, "request_id", None))
            await self.broadcast(event, exclude=origin if mine else None)

    async def broadcast(self, event: UsageEvent, exclude: Session | None = None) -> None:
        if event["run"] is None:
            return
        for _key, session in self.state.sessions():
            if session is exclude or session.run != event["run"] or not wants(session):
                continue
            if session.mcp_session is None or _modern(session.mcp_session):
                continue
            await _send(session.mcp_session, event, None)

    def finish(self, session: Session, reason: str) -> UsageEvent | None:
        """Finish the worker of a session that closed (see the module docstring)."""
        if session.calls == 0 or session.run is None:  # no worker of a run
            return None
        from scratch.runs import finish_worker
        from scratch.store import ledger
        try:
            config = self.state.configs.get()
            return finish_worker(
                self.state.root, agent=session.agent, session=session.session,
                run=session.run, iteration=session.iteration, interface=session.interface,
                reason=reason, explicit=False, coordinator=session.coordinator, config=config,
                max_ledger_bytes=int(config.get("ledger.max_bytes", ledger.DEFAULT_MAX_BYTES)))
        except Exception:  # noqa: BLE001 - a store gone or read-only: the event is lost
            return None

    def finish_all(self, reason: str) -> None:
        """The server stops (or its one stdio client left): every open session finishes."""
        for session in self.state.forget_all():
            self.finish(session, reason)
        self.take()  # nobody is left to hear them
