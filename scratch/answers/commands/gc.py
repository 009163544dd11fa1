"""gc: apply retention (``retention.max_age``, ``retention.keep_versions``) and the cache's bound
(``cache.max_bytes``) to every agent of the store; ``--prune-history`` purges what retention
takes from history too.

On the command line only, not an MCP tool: it acts on every agent's entries by the store's
settings, and with ``--prune-history`` rewrites history; an agent's tools act on its own
namespace. It also runs by itself once a day where retention is configured (never pruning
history): see :mod:`scratch.sync.retention`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from scratch.answers.kernel.result import Result
from scratch.declare import Arg, Command

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.sync.retention import GcReport

DRY_RUN = Arg("Only say what would be removed; change nothing.", flags=("--dry-run",))
PRUNE_HISTORY = Arg("Purge what retention removes from git history too, as purge does (the "
                    "remotes' history is replaced at the next sync); without it, history "
                    "keeps every version.", flags=("--prune-history",))


def gc(ctx: Context, dry_run: Annotated[bool, DRY_RUN] = False,
       prune_history: Annotated[bool, PRUNE_HISTORY] = False) -> Result[GcReport]:
    from scratch.sync.retention import gc as collect
    report = collect(ctx.store(), dry_run=dry_run, prune_history=prune_history)
    return Result("gc", data=report, text=gc_text(report))


def gc_text(r: GcReport) -> str:
    """The human report of a gc or its dry run."""
    from scratch.answers.commands.purge import purge_text
    would = r["dry_run"]
    out: list[str] = []
    if would:
        out.append("Would do (--dry-run: nothing was changed):")
    if not any(s["max_age"] or s["keep_versions"] or s["cache_max_bytes"]
               for s in r["settings"].values()):
        out.append("nothing to do: no retention is configured (retention.max_age, "
                   "retention.keep_versions, cache.max_bytes all keep everything)")
        return "\n".join(out) + "\n"
    for agent, s in sorted(r["settings"].items()):
        out.append(f"agent {agent}: retention.max_age {s['max_age'] or 'none'}, "
                   f"retention.keep_versions {s['keep_versions'] or 'all'}, cache.max_bytes "
                   f"{s['cache_max_bytes'] or 'no limit'}")
    how = "purged from history too" if r["prune_history"] else \
        "removed as rm removes them (history keeps them: restore brings them back)"
    if r["removed"]:
        out.append(f"entries unchanged for longer than retention.max_age, {how}:")
        out += [f"  {e['name']} (agent {e['agent']}, {e['kind']}, last changed "
                f"{e['updated']})" for e in r["removed"]]
    for v in r["versions"]:
        gone = ", ".join(map(str, v["versions"]))
        many = "s" if len(v["versions"]) > 1 else ""
        out.append(f"{v['name']} (agent {v['agent']}): version{many} {gone} no longer "
                   "readable (kept: "
                   f"{', '.join(map(str, v['kept']))}); "
                   + ("their bytes purged from history" if r["prune_history"] else
                      "their bytes stay in git history"))
    if not r["removed"] and not r["versions"]:
        out.append("no entry or version is past its retention")
    if r["purge"] is not None:
        out.append(purge_text(r["purge"]).rstrip("\n"))
    c = r["caches"]
    if c["max_bytes"]:
        out.append(f"cache: {c['before']:,} bytes (cache.max_bytes {c['max_bytes']:,}): " + (
            f"{c['after']:,} after removing the {len(c['removed'])} written longest ago"
            if c["removed"] else "nothing to remove"))
        out += [f"  {row['path']} ({row['bytes']:,} bytes)" for row in c["removed"]]
    return "\n".join(out) + "\n"


COMMAND = Command(
    "gc", "Apply retention (retention.max_age, retention.keep_versions, cache.max_bytes) to "
    "every agent's entries.\n\n"
    "Entries unchanged for longer than retention.max_age are removed as rm does; only the "
    "newest retention.keep_versions versions stay readable; the cache is held under "
    "cache.max_bytes, oldest first. --prune-history purges what goes from git history too. "
    "Runs by itself once a day where retention is configured (never pruning history).\n\n"
    "Example: scratch gc --dry-run",
    gc)
