"""sync: fetch, merge and push the agent's namespace with the store's remotes; or (status) only
say what would move.

An agent in a run syncs its run's namespace (its artifacts and events) with its own. Over MCP
an agent syncs its own namespace (and its run's) only: ``all`` (every agent's) is not offered there,
since an agent must not act on other agents. Where the store is pushed is the person's choice
(``remote add``, on the command line only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypedDict

from scratch.answers.kernel.result import Payload, Result
from scratch.declare import Arg, Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.store import Store
    from scratch.sync.status import RemoteStatus

REMOTE = Arg("The remote; every remote when left out.", metavar="[REMOTE]", max_length=255,
             complete="remotes", show_default=False)
ALL = Arg("Sync every agent's namespace, not only this agent's.", flags=("--all",), mcp=False)
REPLACE_HISTORY = Arg("Replace the remote's history when it holds entries purged here (in "
                      "commits another store pushed since): what it has is kept, less the "
                      "purged entries; pushed with a lease on what was fetched.",
                      flags=("--replace-history",), mcp=False)
STATUS = Arg("Only show, per agent, what is ahead and behind, what would move and what exists "
             "only here.", flags=("--status",))


class StatusData(TypedDict):
    """``sync --status``: each remote's status."""

    status: list[RemoteStatus]


def sync(ctx: Context, remote: Annotated[str | None, REMOTE] = None,
         all: Annotated[bool, ALL] = False, status: Annotated[bool, STATUS] = False,
         replace_history: Annotated[bool, REPLACE_HISTORY] = False
         ) -> Result[Payload | StatusData]:
    from scratch.sync import chosen_remotes, report
    from scratch.sync.merge import RUN_KEY
    store = ctx.store() if not ctx.coordinator else _store_of(ctx)
    # this agent's namespace, and its run's (the artifacts every worker of it shares)
    agents = None if all else [ctx.agent] + ([RUN_KEY + ctx.run] if ctx.run else [])
    names = chosen_remotes(store.root, remote)
    if status:
        from scratch.sync.status import status as sync_status
        rows = [sync_status(store, name, agents) for name in names]
        status_data: StatusData = {"status": rows}
        return Result("sync", data=status_data, text=report.status_text(rows))
    from scratch.sync.engine import sync as sync_with
    from scratch.sync.ledger_export import export_calls
    if names:  # ledger.sync_log: the calls go with the sync (an agent's, not a run's)
        export_calls(store, None if agents is None else [ctx.agent])
    results = [sync_with(store, name, agents, replace=replace_history) for name in names]
    warnings = tuple(w for r in results for w in r["warnings"])
    return Result("sync", data={"remotes": results},
                  text=lambda spell: report.sync_text(results, ctx.agent, spell),
                  warnings=warnings)


def _store_of(ctx: Context) -> Store:
    """A coordinator's store (it has no scratchpad, but syncs its run)."""
    from scratch.store import Store
    return Store.open(ctx.root, ctx.agent, ctx.config)


COMMAND = Command(
    "sync", "Fetch, merge and push the agent's namespace (--all: every agent) with REMOTE, or "
    "with every remote. Commits nothing new by itself; a push refused because another store "
    "pushed first is merged and retried. --status shows what would move.\n\n"
    "Example: scratch sync origin --all",
    sync,
    tools=(Tool("sync", "Fetch, merge and push this agent's entries with the store's remotes "
                "(or one remote): commits nothing new; a push refused because another store "
                "pushed first is merged and retried.", args=("remote",), read_only=False,
                idempotent=True, toolset="session"),
           Tool("sync_status", "What a sync of this agent's entries would send and receive, "
                "per remote, and what exists only here; nothing moves.", args=("remote",),
                fixed={"status": True}, primary=False, toolset="session")))
