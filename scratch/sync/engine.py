"""``scratch sync``: fetch, merge, push, under the store lock, losing nothing.

History is git's, but which changes are new is not read from git's ancestry: it is read from
a *base* per remote and agent, ``refs/scratch/sync/<remote>/<agent>``, the remote commit whose
namespace of that agent this store last merged (or pushed). A run's namespace (``runs/<run>/``:
its artifacts and events) is synced the same way under the key ``run.<run>``
(:func:`scratch.sync.merge.namespace_dir`). That is what lets ``--agent``
sync one namespace and leave the others, on both sides, for later. Refs:

- ``refs/remotes/<remote>/main``: the remote's branch as last fetched. A remote whose branch no
  longer descends from it rewrote its history: refused, never forced.
- ``refs/heads/main``: after a merge, a commit whose parents are the store's previous HEAD and
  the remote's tip (so both histories, and every version blob, stay reachable).
- What is pushed is a commit on top of the remote's tip whose tree is the remote's, with the
  synced agents' namespaces merged; its other parent is the local HEAD, so the remote gets the
  whole history -- unless that history holds a blob over ``sync.max_file_bytes``: then the other
  parent is a commit that only carries the smaller blobs, and the entries over the limit are
  left as the remote had them (local-only, listed).

Purges (:mod:`scratch.sync.purge`) travel as records in ``purges/`` (merged as a union). A
sync first finishes a purge a crash interrupted. Then:

- A remote whose history this store's purge rewrote (``state/purge-leases.json``) is read with
  ``ls-remote``, nothing fetched: if its branch is still the commit last seen there, the
  merge is made on top of the rewritten commit and pushed with ``--force-with-lease`` on the
  commit last seen, replacing its history (a local-path remote is pruned after). If it moved,
  what it has is fetched as below.
- What is fetched is looked at through every purge record known (ours and theirs): records
  this store has not applied yet are applied first (its own history rewritten the same way,
  so it matches the remote's again); if the remote's new commits still hold something a
  record removed, the sync refuses (``sync_remote_moved`` when this store's purge was waiting
  for it, ``sync_remote_holds_purged`` otherwise) unless asked to replace its history
  (``replace``): then the merge is made on the fetched commits as the records leave them and
  pushed with a lease on what was fetched.

Order, so a crash anywhere leaves a store that opens whole (``Store.replace_files``):
fetch (objects only), merge in memory, stage the new files in ``cache/tmp``, then under the
swap lock make the deletions, move the new files in and move HEAD and the bases together in
one ref transaction;
push; then record the pushed commit. A push the remote refuses because it moved on is retried
from the fetch, with a growing pause, :data:`MAX_ATTEMPTS` times.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any, TypedDict

from scratch.calls import Step, suggest
from scratch.errors import SyncError
from scratch.safefs import check_dirs, ensure_dir
from scratch.store import Store
from scratch.store.locking import temp_beside
from scratch.store.names import validate_agent, validate_name, validate_run
from scratch.sync.agent_merge import merge_agent
from scratch.sync.gitops import Plumbing, Tree, TreeEntry
from scratch.sync.merge import Outcome, entry_paths, namespace_dir, namespace_of
from scratch.sync.remotes import remote_url
from scratch.sync.transport import Transport

MAX_ATTEMPTS = 6
FIRST_PAUSE = 0.1  # seconds; doubled after each refused push, with jitter
STREAM_BYTES = 1 << 20  # files bigger than this are streamed from git, not read in memory
LAYOUT_FILES = (".gitignore", "scratch.toml")  # at the top of a store; never merged
RECORDS = "purges/"  # purge records: merged as a union, never changed


class LocalOnly(TypedDict):
    """A file too big to sync: it stays in this store (the remote keeps what it has)."""

    agent: str
    name: str
    bytes: int
    reason: str


def is_record(path: str) -> bool:
    name = path[len(RECORDS):]
    return path.startswith(RECORDS) and name.endswith(".json") and 16 <= len(name) - 5 <= 64 \
        and all(c in "0123456789abcdef" for c in name[:-5])


def base_ref(remote: str, agent: str) -> str:
    return f"refs/scratch/sync/{remote}/{agent}"


def tracking_ref(remote: str) -> str:
    return f"refs/remotes/{remote}/main"


def sync(store: Store, remote: str, agents: list[str] | None, *,
         replace: bool = False) -> dict[str, Any]:
    """Sync ``agents`` (None: every agent) with ``remote``; the report (keys: scratch-sync(1)).
    ``replace``: replace the remote's history when it holds what a purge removed."""
    from scratch.sync.purge import finish_pending
    url = remote_url(store.root, remote)
    git = Plumbing(store.root)
    pause = FIRST_PAUSE
    with store.lock():
        finish_pending(store)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            report = _attempt(store, git, remote, url, agents, replace)
            report["attempts"] = attempt
            if report.pop("rejected") is False:
                return report
            if attempt < MAX_ATTEMPTS:
                time.sleep(pause * (1 + random.random()))
                pause *= 2
    raise SyncError(f"{remote} kept moving on: {MAX_ATTEMPTS} pushes were refused because "
                    "another store pushed first; what was merged is kept here",
                    code="sync_push_rejected", remote=remote, attempts=MAX_ATTEMPTS,
                    suggestions=[suggest(Step.SYNC, remote=remote)])


def check_layout(tree: Tree, remote: str) -> None:
    """A remote branch is merged only if it is a scratch store, and only with what a store
    holds: regular files with valid agent and entry names (no symlinks, no submodules)."""
    for path, entry in tree.items():
        if path in LAYOUT_FILES or (is_record(path) and entry.mode == "100644"):
            continue
        parts = path.split("/")
        if parts[0] not in ("agents", "runs") or len(parts) < 4 \
                or parts[2] not in ("files", "logs", "meta"):
            raise SyncError(f"{remote} holds history that is not a scratch store ({path!r} is "
                            "no entry of one); nothing was merged", code="sync_unrelated_history",
                            remote=remote, path=path,
                            suggestions=[suggest(Step.LIST_REMOTES)])
        try:
            (validate_agent if parts[0] == "agents" else validate_run)(parts[1])
            name = "/".join(parts[3:])
            suffix = {"logs": ".jsonl", "meta": ".json"}.get(parts[2], "")
            if not name.endswith(suffix):
                raise ValueError(path)
            validate_name(name[: len(name) - len(suffix)] if suffix else name)
            if entry.mode not in ("100644", "100755"):
                raise ValueError(path)
        except Exception:
            raise SyncError(f"{remote} holds {path!r}, which no scratch store writes (a link, a "
                            "submodule or a name scratch refuses); nothing was merged",
                            code="sync_unsafe_remote", remote=remote, path=path) from None


def agents_in(*trees: Tree) -> set[str]:
    """The keys of every namespace in ``trees``: agents' and runs' (:func:`namespace_of`)."""
    found = set()
    for tree in trees:
        for path in tree:
            key = namespace_of(path)
            if key is not None:
                found.add(key)
    return found


def _without(tree: Tree, agents: set[str]) -> Tree:
    return {p: e for p, e in tree.items() if namespace_of(p) not in agents}


def _attempt(store: Store, git: Plumbing, remote: str, url: str,
             only: list[str] | None, replace: bool = False) -> dict[str, Any]:
    from scratch.progress import report as said
    from scratch.sync import leases
    lease = leases.load(store.root).get(remote)
    with Transport(store.root, url) as tr:
        expect: str | None = None  # the remote's tip its history is replaced from
        raw_tip: str | None = None  # what a fetch brought, before the purges were applied
        applied: list[str] = []
        tip: str | None = None
        if lease is not None:
            now = tr.remote_tip()
            if now is not None and now == lease.get("expect"):
                tip, expect = str(lease["rewritten"]), now
            elif now is None:
                _drop_lease(store, remote)
                lease = None
        head = store.git.head()
        known = git.resolve(tracking_ref(remote))
        bases = git.refs(f"refs/scratch/sync/{remote}/")
        if expect is None:
            haves = {"head": head or "", "known": known or "", **bases}
            said("fetch", 0)
            raw = raw_tip = tr.fetch({k: v for k, v in haves.items() if v})
            tip, holds, applied = clean_fetched(store, git, remote, raw)
            if applied:  # this store's history was rewritten: read its refs again
                head = store.git.head()
                known = git.resolve(tracking_ref(remote))
                bases = git.refs(f"refs/scratch/sync/{remote}/")
            if holds:
                if not replace:
                    forget_fetched(git)
                    raise _holds_purged(store, remote, lease is not None)
                expect = raw
            elif lease is not None:
                _drop_lease(store, remote)  # it holds nothing purged (any more)
                lease = None
                from scratch.sync.transport import is_local, prune_local
                if is_local(url):  # a sync killed after replacing it may not have pruned it
                    prune_local(url)
        check_remote(git, remote, known, tip)
        theirs = git.tree(tip)
        if tip is not None:
            check_layout(theirs, remote)
            if tip != known:
                git.update_refs([(tracking_ref(remote), tip, known)])
        ours = git.tree(head)
        agents = set(only) if only is not None else agents_in(ours, theirs)
        base_trees: dict[str, Tree] = {}
        outcomes: dict[str, Outcome] = {}
        for i, agent in enumerate(sorted(agents)):
            said("merge", i, len(agents))
            base_commit = bases.get(base_ref(remote, agent))
            if base_commit not in base_trees:
                base_trees[str(base_commit)] = git.tree(base_commit,
                                                        f"{namespace_dir(agent)}/") \
                    if base_commit else {}
            outcomes[agent] = merge_agent(agent, base_trees[str(base_commit)], ours, theirs,
                                          git.blobs)
        merged: dict[str, TreeEntry | bytes] = dict(_without(ours, agents))
        merged.update({p: e for p, e in theirs.items() if is_record(p)})  # purges: a union
        for outcome in outcomes.values():
            merged.update(outcome.paths)
        new_blobs = {p: v for p, v in merged.items() if isinstance(v, bytes)}
        local: Tree = {p: (TreeEntry("100644", git.write_blob(v), len(v))
                           if isinstance(v, bytes) else v) for p, v in merged.items()}
        limit = store.config["sync.max_file_bytes"]
        local_only = _local_only(local, agents, limit)
        report = _report(remote, url, agents, outcomes, local_only)
        report.update(fetched=tip, local_commit=None, pushed=None, rejected=False,
                      purges_applied=applied, replaced=False, pruned=False)
        new_head = head
        if _shas(local) != _shas(ours):
            assert head is not None
            tree = git.make_tree(local)
            parents = [head] + ([tip] if tip else [])
            new_head = git.commit(tree, parents, _message("Sync", remote, agents, report))
            said("apply", 0)
            _apply(store, git, ours, local, new_blobs, head, new_head,
                   [(base_ref(remote, a), tip, bases.get(base_ref(remote, a)))
                    for a in agents] if tip else [])
            report["local_commit"] = new_head
        elif tip is not None:
            _move_bases(git, remote, agents, tip, bases)
        outgoing = _push_tree(theirs, local, agents, local_only, ours)
        if tip is not None and _shas(outgoing) == _shas(theirs) and expect is None:
            return report
        assert new_head is not None
        parents = [tip] if tip else []
        _small, big = git.objects_to_send(new_head, [tip] if tip else [], limit)
        if big:  # carry the smaller blobs only: the big ones stay here
            carrier = git.commit(git.flat_tree(_small), [],
                                 "Carry the versions of the entries synced (objects only).")
            parents.append(carrier)
        else:
            parents.append(new_head)
        pushed = git.commit(git.make_tree(outgoing), parents,
                            _message("Push", remote, agents, report))
        fresh = git.refs(f"refs/scratch/sync/{remote}/")
        said("push", 0)
        if not tr.push(pushed, {"head": new_head, **({"tip": tip} if tip else {})},
                       lease=expect):
            report["rejected"] = True
            return report
        moves: list[tuple[str, str | None, str | None]] = [
            (tracking_ref(remote), pushed, git.resolve(tracking_ref(remote)))]
        moves += [(base_ref(remote, a), pushed, fresh.get(base_ref(remote, a))) for a in agents]
        git.update_refs(moves)
        report["pushed"] = pushed
        if expect is not None:
            _drop_lease(store, remote)
            report["replaced"] = True
            if expect == raw_tip:  # fetched: what it held of the purged entries goes here too
                forget_fetched(git)
            from scratch.sync.transport import is_local, prune_local
            if is_local(url):
                prune_local(url)
                report["pruned"] = True
        return report


FETCHED = "refs/scratch/fetched/"  # a fetched tip, held while purges are applied


def clean_fetched(store: Store, git: Plumbing, remote: str, raw: str | None
                  ) -> tuple[str | None, bool, list[str]]:
    """The fetched tip ``raw`` as every known purge record leaves it, whether that differs
    (the remote holds what a purge removed), and the ids of the records learnt from it and
    applied to this store (its own refs rewritten the same way, caches and ledger cleaned,
    objects pruned)."""
    from scratch.sync import purge
    from scratch.sync.rewrite import Rewriter
    if raw is None:
        return None, False, []
    ours = purge.records_in(git, store.git.head())
    theirs = purge.records_in(git, raw)
    known = {**ours, **theirs}
    if not known:
        return raw, False, []
    unapplied = sorted(i for i in theirs if i not in ours)
    if unapplied:
        held = f"{FETCHED}{remote}"
        stale = git.resolve(held)
        git.update_refs(([(held, None, stale)] if stale else []) + [(held, raw, None)])
        purge.apply_records(store, [known[i] for i in sorted(known)])
        new = git.resolve(held) or raw
        git.update_refs([(held, None, new)])
        return new, new != raw, unapplied
    rewriter = Rewriter(git, [purge.filter_of(known[i]) for i in sorted(known)])
    mine = [sha for sha, kind in git.all_refs().values() if kind == "commit"]
    outcome = rewriter.run([raw], exclude=mine)
    cleaned = outcome.mapping.get(raw, raw)
    if cleaned != raw:
        git.write_pack(rewriter.objects())
    return cleaned, cleaned != raw, []


def forget_fetched(git: Plumbing) -> None:
    """Remove what a fetch brought that no ref reaches (it held what a purge removed)."""
    for ref, (sha, _kind) in git.all_refs().items():
        if ref.startswith(FETCHED):
            git.update_refs([(ref, None, sha)])
    git.store_git.sync_index()
    git.prune_unreachable()


def _drop_lease(store: Store, remote: str) -> None:
    from scratch.sync import leases
    leases.drop(store.root, remote)


def _holds_purged(store: Store, remote: str, moved: bool) -> SyncError:
    from scratch.sync import purge
    records = purge.records_in(Plumbing(store.root), store.git.head())
    names = sorted({f"{e['name']} (agent {e['agent']})" for r in records.values()
                    for e in r["entries"]} | {f"agent {a}'s namespace" for r in records.values()
                                              for a in r["namespaces"]})
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    why = (f"{remote} moved since this store's purge: another store pushed to it, and what it "
           "has still holds" if moved else f"{remote} holds, in commits this store has not "
           "seen,")
    return SyncError(f"{why} entries purged here ({shown}); scratch does not replace a "
                     "remote's history unless asked. Replacing it keeps what others pushed, "
                     "less the purged entries; nothing was merged or pushed",
                     code="sync_remote_moved" if moved else "sync_remote_holds_purged",
                     remote=remote,
                     suggestions=[suggest(Step.SYNC, remote=remote, replace_history=True)])


def check_remote(git: Plumbing, remote: str, known: str | None, tip: str | None) -> None:
    if known is None or tip == known:
        return
    if tip is None or not git.is_ancestor(known, tip):
        raise SyncError(f"{remote} rewrote its history: its branch no longer holds what this "
                        "store fetched from it before; scratch never overwrites a remote, and "
                        "merges nothing from it", code="sync_remote_rewritten", remote=remote,
                        known=known, tip=tip,
                        suggestions=[suggest(Step.REMOVE_REMOTE, name=remote),
                                     suggest(Step.ADD_REMOTE, name=remote, url="URL")])


def _shas(tree: Tree) -> dict[str, str]:
    return {p: e.sha for p, e in tree.items()}


def _move_bases(git: Plumbing, remote: str, agents: set[str], tip: str,
                bases: dict[str, str]) -> None:
    git.update_refs([(base_ref(remote, a), tip, bases.get(base_ref(remote, a)))
                     for a in agents if bases.get(base_ref(remote, a)) != tip])


def _local_only(tree: Tree, agents: set[str], limit: int) -> list[LocalOnly]:
    out: list[LocalOnly] = []
    for path, entry in tree.items():
        parts = path.split("/", 3)
        key = namespace_of(path)
        if len(parts) == 4 and parts[2] == "files" and key in agents and entry.size > limit:
            out.append({"agent": key, "name": parts[3], "bytes": entry.size,
                        "reason": "over sync.max_file_bytes"})
    return sorted(out, key=lambda r: (r["agent"], r["name"]))


def _push_tree(theirs: Tree, local: Tree, agents: set[str], local_only: list[LocalOnly],
               ours: Tree) -> Tree:
    """The remote's tree with the synced namespaces as merged here, except the entries that
    stay local (those keep what the remote has); the purge records of both."""
    out = _without(theirs, agents)
    out.update({p: e for p, e in local.items() if is_record(p)})
    out.update({p: e for p, e in local.items() if namespace_of(p) in agents})
    if not theirs and ".gitignore" in ours:
        out[".gitignore"] = ours[".gitignore"]
    for row in local_only:
        for path in entry_paths(row["agent"], row["name"]):
            out.pop(path, None)
            if path in theirs:
                out[path] = theirs[path]
    return out


def _apply(store: Store, git: Plumbing, ours: Tree, local: Tree, new_blobs: dict[str, bytes],
           head: str, new_head: str, bases: list[tuple[str, str | None, str | None]]) -> None:
    """Make the work tree hold ``local`` and HEAD ``new_head``, all at once (see the module
    docstring)."""
    changes: list[tuple[Path, Path | None]] = []
    moved = [p for p in local if p not in new_blobs
             and (p not in ours or ours[p].sha != local[p].sha)]
    # small files come from one cat-file process; big ones are streamed, one each
    small = git.blobs(local[p].sha for p in moved if 0 <= local[p].size <= STREAM_BYTES)
    # staged in cache/tmp (a folder may have to become a file), moved in once the deletions
    # are done; a killed sync's leftovers there are swept by their pid
    staging = ensure_dir(store.root, store.cache_dir / "tmp") / "sync"
    gone = sorted((p for p in ours if p not in local), key=lambda p: -p.count("/"))
    changes += [(store.root / p, None) for p in gone]
    try:
        for path in sorted(local):
            old, new = ours.get(path), local[path]
            if old is not None and old.sha == new.sha:
                continue
            try:
                check_dirs(store.root, store.root / path)  # no symlink on the way
            except NotADirectoryError:
                pass  # a file where a folder goes: it is among the deletions, done first
            target = staging
            if path in new_blobs:
                changes.append((target, temp_beside(target, new_blobs[path], fsync=False)))
            elif new.sha in small:
                changes.append((target, temp_beside(target, small[new.sha], fsync=False)))
            else:
                changes.append((target, _stream_beside(git, target, new.sha)))
            changes[-1] = (store.root / path, changes[-1][1])
    except BaseException:
        for _t, staged in changes:
            if staged is not None:
                staged.unlink(missing_ok=True)
        raise
    store.replace_files(changes, lambda: git.update_refs(
        [("refs/heads/main", new_head, head)] + [b for b in bases if b[1] != b[2]]))


def _stream_beside(git: Plumbing, target: Path, sha: str) -> Path:
    tmp = temp_beside(target, b"", fsync=False)
    fd = os.open(tmp, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0))
    try:
        git.blob_to(sha, fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return tmp


def _message(verb: str, remote: str, agents: set[str], report: dict[str, Any]) -> str:
    who = ", ".join(sorted(agents)) or "no agent"
    return (f"{verb} {'with' if verb == 'Sync' else 'to'} {remote} (agents {who}): "
            f"{len(report['received'])} entries received, {len(report['sent'])} sent.")


def _report(remote: str, url: str, agents: set[str], outcomes: dict[str, Outcome],
            local_only: list[LocalOnly]) -> dict[str, Any]:
    out: dict[str, Any] = {"remote": remote, "url": url, "agents": sorted(agents)}
    for key in ("received", "sent", "logs", "versions", "kept_writes", "deduplicated",
                "conflicts", "warnings"):
        out[key] = [item for o in outcomes.values() for item in getattr(o, key)]
    out["local_only"] = local_only
    stays = {(row["agent"], row["name"]) for row in local_only}
    out["sent"] = [row for row in out["sent"] if (row["agent"], row["name"]) not in stays]
    return out
