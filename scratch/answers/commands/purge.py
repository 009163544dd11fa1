"""purge: remove an entry (or a namespace, or every one) from the store and its whole history.

On the command line only, never an MCP tool: it rewrites the history of every agent's entries
(each commit after the entry's first version gets a new id), replaces the remotes' history at
the next sync, and cannot be undone; an agent must not be able to do that to a store, nor be
offered it in a tool list. Never run by anything else (``gc`` purges only when asked with
``--prune-history``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.kernel.result import Result
from scratch.declare import Arg, Command

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.sync.purge import PurgeReport

NAME = Arg("The entry to purge (with its companions); leave out with --namespace or --all.",
           metavar="[NAME]", max_length=1024, complete="names", show_default=False)
NAMESPACE = Arg("Purge the agent's whole namespace (the agent --agent names).",
                flags=("--namespace",))
ALL = Arg("Purge every agent's namespace: every entry of the store.", flags=("--all",))
DRY_RUN = Arg("Only say what would be removed; change nothing.", flags=("--dry-run",))


def purge(ctx: Context, name: Annotated[str | None, NAME] = None,
          namespace: Annotated[bool, NAMESPACE] = False, all: Annotated[bool, ALL] = False,
          dry_run: Annotated[bool, DRY_RUN] = False) -> Result[dict[str, object] | PurgeReport]:
    from scratch.errors import EntryNotFound, UsageError
    from scratch.sync import purge as purging
    if sum((name is not None, namespace, all)) != 1:
        raise UsageError("name one entry, or give --namespace (the agent's namespace) or --all "
                         "(every agent's), exactly one of them", code="invalid_argument",
                         suggestions=[])
    store = ctx.store()
    with store.lock():
        finished = purging.finish_pending(store)
        try:
            if name is not None:  # named as every command names an entry (a deleted one too)
                from scratch.answers.kernel.target import entry_name
                from scratch.store.names import validate_name
                name = entry_name(store, validate_name(name), deleted=True)
            plan = purging.plan(store, name=name, namespace=namespace, every=all)
        except EntryNotFound:
            if finished is not None and name is not None and any(
                    e["agent"] == store.agent and e["name"] == name
                    for e in finished["entries"]):
                done = {"dry_run": False, "purge": finished["id"], "finished": True,
                        "entries": finished["entries"]}
                return Result("purge", data=done, text=(
                    f"Finished purge {finished['id']}, which was interrupted: {name} (agent "
                    f"{store.agent}) is gone from the store and its history.\n"))
            raise
        report = plan.report(store.root, dry_run=True) if dry_run else \
            purging.execute(store, plan)
    return Result("purge", data=report, text=purge_text(report))


def _plural(n: int, word: str, many: str = "") -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def purge_text(r: PurgeReport) -> str:
    """The human report of a purge or its dry run (every line says what goes)."""
    dry = r["dry_run"]
    out = [("Would purge, from the store and its history (--dry-run: nothing was changed):"
            if dry else f"Purged, from the store and its history (purge {r['purge']}):")]
    namespaces = set(r["namespaces"])
    for agent in sorted(namespaces):
        count = sum(1 for e in r["entries"] if e["agent"] == agent)
        out.append(f"  agent {agent}'s whole namespace ({_plural(count, 'entry', 'entries')})")
    for e in r["entries"]:
        if e["agent"] in namespaces:
            continue
        extra = "".join((", deleted" if e["deleted"] else "",
                         f", companion of {e['companion_of']}" if e["companion_of"] else ""))
        out.append(f"  {e['name']} (agent {e['agent']}): {e['kind']}, "
                   f"{_plural(e['versions'], 'version')}{extra}")
    for u in r["unkept"]:
        out.append(f"  {u['name']} (agent {u['agent']}): version"
                   f"{'s' if len(u['versions']) > 1 else ''} "
                   f"{', '.join(map(str, u['versions']))} (the entry stays)")
    h = r["history"]
    out.append(f"history: {h['rewritten']:,} of {_plural(h['commits'], 'commit')} "
               f"{'rewritten' if h['rewritten'] != 1 else 'rewritten'}, "
               f"{h['dropped']:,} dropped (they held only what goes); "
               f"{_plural(h['blobs'], 'object')} of content taken out; "
               f"{_plural(h['refs'], 'ref')} moved")
    if r.get("kept"):
        out.append(f"kept: {_plural(len(r['kept']), 'object')} of the same bytes as entries "
                   "that stay")
    caches = r["caches"]
    total = sum(c["bytes"] for c in caches)
    out.append(f"caches: {_plural(len(caches), 'file or folder', 'files and folders')} "
               f"({total:,} bytes)" + (":" if caches else ""))
    out += [f"  {c['path']}" for c in caches]
    for agent, n in sorted(r["ledger"].items()):
        verb = "removed" if agent in namespaces else "scrubbed"
        out.append(f"call ledger: {_plural(n, 'record')} of agent {agent} {verb}")
    if not r["ledger"]:
        out.append("call ledger: no record touched")
    for path, n in r["sync_logs"].items():
        out.append(f"synced call log {path} (ledger.sync_log): {_plural(n, 'record')} scrubbed "
                   "in its history")
    for remote in r["remotes"]:
        if remote["rewritten"]:
            where = ("a local path: pruned there too" if remote["pruned"] else
                     "it keeps the old objects until it runs git gc")
            out.append(f"remote {remote['remote']}: history replaced at the next sync "
                       f"(force with lease; {where})")
        else:
            out.append(f"remote {remote['remote']}: not rewritten (its history, as last "
                       "fetched, does not hold them)")
    return "\n".join(out) + "\n"


COMMAND = Command(
    "purge", "Remove an entry from the store, its whole git history, its caches, the call "
    "ledger and, at the next sync, its remotes.\n\n"
    "NAME goes with its companions; --namespace takes the agent's whole namespace, --all "
    "every entry. Cannot be undone: --dry-run says exactly what goes.\n\n"
    "Example: scratch purge --dry-run kubectl_get_secrets/20261206T101500Z-1a2b3c4d",
    purge)
