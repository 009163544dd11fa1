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
from pathlib import Path
from typing import TYPE_CHECKING

from scratch.redact.records import Redaction

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

    from scratch.store import Store as AgentStore
    from scratch.store import ledger, logs
    from scratch.store.locking import atomic_write
    from scratch.store.names import validate_name
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
        lines, redaction = _redacted(
            store.root, [orjson.dumps({k: v for k, v in r.items() if k != "answer"})
                         for r in new])
        logs.append(AgentStore(store.root, agent, store.config), log, lines,
                    redaction=redaction)
        atomic_write(mark, str(max(r["seq"] for r in new)).encode(), fsync=False)
        os.chmod(mark, 0o600)
        out[agent] = len(new)
    return out


def _redacted(root: Path, lines: list[bytes]) -> tuple[list[bytes], Redaction]:
    """The records as the log keeps them: redacted again (records written before the ledger
    redacted its own are caught here), each finding's ``line`` its place in the batch."""
    from scratch.redact.core import redact_bytes
    from scratch.redact.markers import store_key
    from scratch.redact.records import Finding
    key = store_key(root)
    out: list[bytes] = []
    findings: list[Finding] = []
    for i, line in enumerate(lines, start=1):
        done = redact_bytes(line, key)
        out.append(done.data)
        findings.extend({**f, "line": i} for f in done.redaction.findings)
    return out, Redaction(tuple(findings))
