"""``scratch sync --status``: per agent, what a sync would send and receive, and what exists
only here. It fetches (objects and the remote-tracking ref only: nothing in the store's
branch or work tree changes); when the remote cannot be reached it answers from the last
fetch and says so.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from scratch.errors import SyncError
from scratch.store import Store
from scratch.sync.engine import (
    agents_in,
    base_ref,
    check_layout,
    check_remote,
    forget_fetched,
    tracking_ref,
)
from scratch.sync.gitops import Plumbing, Tree
from scratch.sync.merge import Paths, entries_of, namespace_dir, parse_log
from scratch.sync.remotes import remote_url
from scratch.sync.transport import Transport


class EntryStatus(TypedDict):
    """An entry a sync would send, receive or merge."""

    name: str
    log_entries: NotRequired[int]  # its log's lines the other side lacks (when it has a log)


class OnlyHere(TypedDict):
    """An entry a sync leaves here: too big, or not pushed yet."""

    name: str
    bytes: NotRequired[int]
    reason: str


class AgentStatus(TypedDict):
    agent: str
    ahead: int
    behind: int
    outgoing: list[EntryStatus]
    incoming: list[EntryStatus]
    both: list[EntryStatus]
    local_only: list[OnlyHere]


class RemoteStatus(TypedDict):
    """One remote's status (the keys: scratch-sync(1))."""

    remote: str
    url: str
    fetched: bool
    fetch_error: str | None
    tip: str | None
    agents: list[AgentStatus]
    purge: str | None


def status(store: Store, remote: str, only: list[str] | None) -> RemoteStatus:
    url = remote_url(store.root, remote)
    git = Plumbing(store.root)
    head = store.git.head()
    known = git.resolve(tracking_ref(remote))
    bases = git.refs(f"refs/scratch/sync/{remote}/")
    fetch_error = None
    note = None
    from scratch.sync import leases
    lease = leases.load(store.root).get(remote)
    tip: str | None
    with store.lock(), Transport(store.root, url) as tr:
        if lease is not None:  # nothing is fetched: its history is this store's, rewritten
            tip = str(lease["rewritten"])
            note = ("a purge here rewrote its history: the next sync replaces it (force with "
                    "lease), unless it moved meanwhile")
        else:
            try:
                tip = tr.fetch({k: v for k, v in {"h": head, "k": known, **bases}.items()
                                if v})
            except SyncError as exc:
                tip, fetch_error = known, exc.message
            else:
                note = _purge_note(store, git, tip)
                if note is not None and note.startswith("it holds"):
                    forget_fetched(git)
                    tip = known
                elif note is None:
                    check_remote(git, remote, known, tip)
                if tip is not None:
                    check_layout(git.tree(tip), remote)
                    if tip != known and note is None:
                        git.update_refs([(tracking_ref(remote), tip, known)])
    ours, theirs = git.tree(head), git.tree(tip)
    agents = sorted(set(only) if only is not None else agents_in(ours, theirs))
    limit = store.config["sync.max_file_bytes"]
    rows = []
    for agent in agents:
        base_commit = bases.get(base_ref(remote, agent))
        base = git.tree(base_commit, f"{namespace_dir(agent)}/") if base_commit else {}
        rows.append(_agent_status(git, agent, base, ours, theirs, limit))
    return {"remote": remote, "url": url, "fetched": fetch_error is None,
            "fetch_error": fetch_error, "tip": tip, "agents": rows, "purge": note}


def _purge_note(store: Store, git: Plumbing, tip: str | None) -> str | None:
    """What a sync would do about purges with what was fetched (None: nothing)."""
    from scratch.sync import purge
    from scratch.sync.rewrite import Rewriter
    if tip is None:
        return None
    ours = purge.records_in(git, store.git.head())
    theirs = purge.records_in(git, tip)
    unapplied = [i for i in theirs if i not in ours]
    if unapplied:
        return (f"the next sync applies {len(unapplied)} purge"
                f"{'s' if len(unapplied) != 1 else ''} made by another store "
                f"({', '.join(sorted(unapplied))}) to this store's history")
    if not ours:
        return None
    rewriter = Rewriter(git, [purge.filter_of(r) for _i, r in sorted(ours.items())])
    mine = [sha for sha, kind in git.all_refs().values() if kind == "commit"]
    if rewriter.run([tip], exclude=mine).mapping.get(tip, tip) != tip:
        return ("it holds entries purged here, in commits another store pushed: the next sync "
                "refuses unless given --replace-history")
    return None


def _agent_status(git: Plumbing, agent: str, base: Tree, ours: Tree, theirs: Tree,
                  limit: int) -> AgentStatus:
    b_all, o_all, t_all = (entries_of(t, agent) for t in (base, ours, theirs))
    outgoing, incoming, both = [], [], []
    for name in sorted(set(b_all) | set(o_all) | set(t_all)):
        b, o, t = (s.state() if s else None for s in (b_all.get(name), o_all.get(name),
                                                     t_all.get(name)))
        if o == t:
            continue
        if t == b:
            outgoing.append(name)
        elif o == b:
            incoming.append(name)
        else:
            both.append(name)
    data = git.blobs([p.log.sha for side in (b_all, o_all, t_all)
                      for n in outgoing + incoming + both
                      if (p := side.get(n)) is not None and p.log is not None])

    def row(name: str, side: dict[str, Paths]) -> EntryStatus:
        out: EntryStatus = {"name": name}
        paths, old = side.get(name), b_all.get(name)
        if paths is not None and paths.log is not None:
            keys = {line.key for line in parse_log(data.get(old.log.sha, b"") if old and
                                                   old.log else b"")[0]}
            lines = parse_log(data.get(paths.log.sha, b""))[0]
            out["log_entries"] = sum(1 for line in lines if line.key not in keys)
        return out

    local_only: list[OnlyHere] = []
    for name, paths in sorted(o_all.items()):
        if paths.file is not None and paths.file.size > limit:
            local_only.append({"name": name, "bytes": paths.file.size,
                               "reason": "over sync.max_file_bytes"})
        elif name not in t_all and (paths.file is not None or paths.log is not None):
            local_only.append({"name": name, "reason": "not pushed yet"})
    return {"agent": agent, "ahead": len(outgoing) + len(both),
            "behind": len(incoming) + len(both),
            "outgoing": [row(n, o_all) for n in outgoing],
            "incoming": [row(n, t_all) for n in incoming],
            "both": [row(n, o_all) for n in both], "local_only": local_only}
