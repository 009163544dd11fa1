"""What a sync carries of the call ledger: nothing, unless ``ledger.sync_log`` names a log.

The ledger itself (``state/agents/NAME/calls.jsonl``) is this store's alone and never pushed.
With ``ledger.sync_log`` set, each sync first appends every synced agent's calls recorded
since the last sync to that log in the agent's own namespace (one log entry per call, the
ledger's record as JSON without the answer's text, which stays local: it repeats what the
synced entries hold and would make every call's entry as big as its answer), so the sync
carries them like any log and every store that syncs the agent can read them (``scratch log
read NAME``).

Invariants: a call is appended once (the last seq appended is kept beside the ledger, in
``calls.synced``, written after the append: a crash between the two appends those calls again
at the next sync, never loses them); an agent with no new calls gets no commit.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scratch.store import Store

MARK_NAME = "calls.synced"  # the last seq appended to the sync log, beside the ledger


def export_calls(store: Store, agents: list[str] | None) -> dict[str, int]:
    """Append the new calls of ``agents`` (None: every agent with a ledger) to the log that
    ``ledger.sync_log`` names; {agent: calls appended}. Does nothing when it names none."""
    log = str(store.config["ledger.sync_log"] or "")
    if not log:
        return {}
    import orjson

    from scratch import ledger
    from scratch.locking import atomic_write
    from scratch.names import validate_name
    from scratch.store import Store as AgentStore
    from scratch.store import logs
    validate_name(log)
    out: dict[str, int] = {}
    for agent in ledger.agents(store.root) if agents is None else agents:
        mark = ledger.agent_dir(store.root, agent) / MARK_NAME
        try:
            last = int(mark.read_text(encoding="ascii").strip() or 0)
        except (OSError, ValueError):
            last = 0
        new = [r for r in ledger.read(store.root, agent=agent) if r["seq"] > last]
        if not new:
            continue
        logs.append(AgentStore(store.root, agent, store.config), log,
                    [orjson.dumps({k: v for k, v in r.items() if k != "answer"})
                     for r in new])
        atomic_write(mark, str(max(r["seq"] for r in new)).encode(), fsync=False)
        os.chmod(mark, 0o600)
        out[agent] = len(new)
    return out
