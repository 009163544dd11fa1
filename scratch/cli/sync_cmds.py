"""`scratch remote` and `scratch sync`: share a store through any git remote."""

from typing import Annotated, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result, Table
from scratch.cli.common import CompletionLine, app, command

remote_app = typer.Typer(name="remote", help="The git remotes this store syncs with "
                         "(a bare repository's path, ssh://, user@host:path, https://).\n\n"
                         "Example: scratch remote add origin /srv/scratch.git",
                         no_args_is_help=True)
app.add_typer(remote_app, name="remote")



def complete_remotes(ctx: CompletionLine, incomplete: str) -> list[str]:
    """Remote names of the store given on the line (else the environment's)."""
    try:
        from scratch.names import find_store_root
        from scratch.sync.remotes import remotes
        root, _ = find_store_root(ctx.params.get("store"))
        return [name for name in remotes(root) if name.startswith(incomplete)]
    except Exception:
        return []


RemoteName = Annotated[str, typer.Argument(metavar="REMOTE", help="The remote's name, e.g. "
                                           "origin.", autocompletion=complete_remotes,
                                           show_default=False)]


@command("add", target=remote_app,
         help="Add remote REMOTE at URL: a path to a bare repository, file://, ssh://, "
         "user@host:path, https:// or git://. scratch stores no credentials: https and ssh "
         "use your own git's.\n\nExample: scratch remote add origin git@example.com:me/s.git")
def remote_add_cmd(ctx: Context, name: RemoteName, url: Annotated[str, typer.Argument(
        metavar="URL", help="Where the remote repository is.", show_default=False)]):
    from scratch.sync import remotes
    data = remotes.add(ctx.store().root, name, url)
    return Result("remote add", data=data, text=f"added remote {data['name']}: {data['url']}\n")


@command("list", target=remote_app, help="List the remotes: name and URL.\n\n"
         "Example: scratch remote list --json")
def remote_list_cmd(ctx: Context):
    from scratch.sync import remotes
    found = remotes.remotes(ctx.store().root)
    rows = [{"name": k, "url": v} for k, v in found.items()]
    if not rows:
        return Result("remote list", data={"remotes": []}, text="no remotes\n")
    return Result("remote list", data={"remotes": rows},
                  table=Table(["name", "url"], [[r["name"], r["url"]] for r in rows]))


@command("remove", target=remote_app, help="Remove remote REMOTE (and what was fetched from "
         "it; nothing stored is removed).\n\nExample: scratch remote remove origin")
def remote_remove_cmd(ctx: Context, name: RemoteName):
    from scratch.sync import remotes
    data = remotes.remove(ctx.store().root, name)
    return Result("remote remove", data=data, text=f"removed remote {name}\n")


@command("sync", help="Fetch, merge and push the agent's namespace (--all: every agent) with "
         "REMOTE, or with every remote. Commits nothing new by itself; a push refused because "
         "another store pushed first is merged and retried. --status shows what would move."
         "\n\nExample: scratch sync origin --all")
def sync_cmd(ctx: Context,
             remote: Annotated[Optional[str], typer.Argument(
                 metavar="[REMOTE]", help="The remote; every remote when omitted.",
                 autocompletion=complete_remotes, show_default=False)] = None,
             all_agents: Annotated[bool, typer.Option(
                 "--all", help="Sync every agent's namespace, not only --agent's.")] = False,
             status: Annotated[bool, typer.Option(
                 "--status", help="Only show, per agent, what is ahead and behind, what would "
                 "move and what exists only here.")] = False):
    from scratch.sync import chosen_remotes, report
    store = ctx.store()
    agents = None if all_agents else [ctx.agent]
    names = chosen_remotes(store.root, remote)
    if status:
        from scratch.sync.status import status as sync_status
        rows = [sync_status(store, name, agents) for name in names]
        return Result("sync", data={"status": rows}, text=report.status_text(rows))
    from scratch.sync.engine import sync
    results = [sync(store, name, agents) for name in names]
    warnings = tuple(w for r in results for w in r["warnings"])
    return Result("sync", data={"remotes": results}, text=report.sync_text(results),
                  warnings=warnings)
