"""Who a hook call is: the one mapping from a client's hook payload to scratch's names.

A capture is stored in the namespace of the client's agent (``claude-code``, ``gemini-cli``,
``cursor``, or the agent the hook command names), so every session and subagent of that client
reads what any of them stored. The budget is per session of the client (its own session id);
a subagent has a context window of its own, so its captures are charged to a session of its
own, ``SESSION-WORKER``, and the ledger keeps the worker apart. When runs arrive (a client
session as a run, each subagent as a worker) this is the function to tie to them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from scratch.hooks.clients import JSONObject

SESSION_BAD = re.compile(r"[^A-Za-z0-9_-]+")
MAX_NAME = 128


class HookIdentity(NamedTuple):
    agent: str  # the scratch namespace the capture lands in
    session: str  # the client's session id (as a scratch session name)
    worker: str | None  # the subagent the call came from, None for the main thread
    budget_session: str  # what is charged: the session, or SESSION-WORKER for a subagent


def clean(value: str) -> str:
    """``value`` as a scratch agent or session name (``[A-Za-z0-9_-]{1,128}``)."""
    out = SESSION_BAD.sub("-", value).strip("-")[:MAX_NAME]
    return out or "unknown"


def identity(payload: JSONObject, client: str, agent: str | None = None) -> HookIdentity:
    """The (agent, session, worker) of one hook payload of ``client``: Claude Code and Gemini
    CLI and Codex name the session ``session_id``, Cursor ``conversation_id``; Claude Code and
    Codex name a subagent ``agent_id`` (absent on the main thread)."""
    raw = payload.get("session_id") or payload.get("conversation_id") or "unknown"
    session = clean(str(raw))
    worker_raw = payload.get("agent_id") if client in ("claude-code", "codex") else None
    worker = clean(str(worker_raw)) if worker_raw else None
    budget = clean(f"{session}-{worker}") if worker else session
    return HookIdentity(agent or client, session, worker, budget)


__all__ = ["HookIdentity", "clean", "identity"]
