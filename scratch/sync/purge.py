"""``scratch purge``: remove entries from the store, its history, its caches and its ledger.

A purge is explicit and names what goes: one entry (with its companions), an agent's whole
namespace, or every namespace. It is planned first (what :func:`plan` returns is what a dry
run shows, exactly), then carried out under the store lock in steps, each of which a crash may
interrupt (:data:`STEPS`):

1. ``objects``: the rewritten commits and trees (:mod:`scratch.sync.rewrite`) go in as one pack,
   with a commit on top of the rewritten HEAD that adds the purge's record
   ``purges/<id>.json`` (what went: the entries' paths and the ids of their versions' blobs,
   never their content). Nothing refers to them yet.
2. ``journal``: ``state/purge.json`` says which ref goes from which commit to which.
3. ``refs``: every ref moves in one ``update-ref`` transaction, the work tree with it
   (:meth:`scratch.store.Store.replace_files`: journaled, swapped under the swap lock).
4. ``files``: ``.git/index`` made to match the new HEAD.
5. ``caches``: cache files of the purged blobs and logs, dead processes' temporaries.
6. ``ledger``: the call ledger's records that touched the entries scrubbed.
7. ``pruned``: reflogs expired, everything reachable repacked, the rest pruned.

Then the remotes whose history (as last fetched) held the entries are noted in
``state/purge-leases.json``: the next ``scratch sync`` replaces their history, with a lease on
the commit last seen there (:mod:`scratch.sync.engine`). The journal goes last.

Invariants:
- Killed at any step, the store is whole: every ref names a commit whose objects are all
  there (old objects are pruned only after no ref names them), the work tree is HEAD's, and
  ``git fsck`` is clean. The next ``scratch purge``, ``gc`` or ``sync`` finishes the purge
  from its journal: each step can be done again with the same result.
- The same filters applied to the same history make the same commits
  (:mod:`scratch.sync.rewrite`), so a second store that learns of a purge from a remote
  (:func:`apply_records`) turns its copy of the shared history into the remote's.
- ``SCRATCH_PURGE_KILL_AT=<step>`` (tests only) makes the process kill itself (SIGKILL) right
  after that step; ``refs`` kills it after moving only the first ref of several, which is what
  a crash inside git's ref transaction could leave.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import orjson

from scratch.errors import EntryNotFound, NotFound, StoreError, UsageError
from scratch.store import Store, utc_now
from scratch.store.locking import atomic_write, temp_beside
from scratch.sync import scrub
from scratch.sync.gitops import Plumbing, TreeEntry
from scratch.sync.leases import load as load_leases
from scratch.sync.leases import save as save_leases
from scratch.sync.merge import entry_paths
from scratch.sync.rewrite import RECORDS_DIR, Filter, LogScrub, Outcome, Rewriter

if TYPE_CHECKING:
    from scratch.jsonvalues import Incoming
    from scratch.store.config import Config
    from scratch.store.records import EntryMeta

RECORD_VERSION = 1
JOURNAL = "purge.json"  # in state/
KILL_ENV = "SCRATCH_PURGE_KILL_AT"
STEPS = ("objects", "journal", "refs", "files", "caches", "ledger", "pruned")
BRANCH = "refs/heads/main"


class PurgeRecord(TypedDict):
    """``purges/<id>.json``: what one purge removed (names and blob ids, never content)."""

    scratch_purge: int
    id: str
    time: str
    entries: list[dict[str, str]]  # {"agent", "name"}
    namespaces: list[str]
    paths: list[str]
    folders: list[str]
    versions: dict[str, list[str]]  # path -> blob ids removed there (retention)
    blobs: list[str]
    reason: NotRequired[str]
    numbers: NotRequired[dict[str, list[int]]]  # path -> the version numbers of ``versions``
    # ledger.sync_log logs whose lines (call records) that touched the entries are scrubbed:
    # path -> {"names": [...], "versions": {name: [numbers]}}
    logs: NotRequired[dict[str, dict[str, Any]]]


class TargetRow(TypedDict):
    agent: str
    name: str
    kind: str  # file, output, log; "unknown" for one found in history alone
    versions: int
    deleted: bool
    companion_of: str | None


class HistoryCounts(TypedDict):
    commits: int  # read
    rewritten: int  # given new ids
    dropped: int  # left out: they held only what goes
    blobs: int  # objects of content taken out of trees
    refs: int  # refs moved


class UnkeptRow(TypedDict):
    agent: str
    name: str
    versions: list[int]  # versions of a kept entry whose bytes leave history


class CacheRow(TypedDict):
    path: str  # relative to the store
    bytes: int


class RemoteRow(TypedDict):
    remote: str
    url: str
    rewritten: bool  # its history is replaced at the next sync
    pruned: bool  # and pruned there (a local path)


class PurgeReport(TypedDict):
    """What ``scratch purge`` (and its dry run) reports; keys: scratch-purge(1)."""

    dry_run: bool
    purge: str | None
    entries: list[TargetRow]
    namespaces: list[str]
    unkept: list[UnkeptRow]
    history: HistoryCounts
    caches: list[CacheRow]
    ledger: dict[str, int]
    sync_logs: dict[str, int]  # ledger.sync_log path -> call records scrubbed in it
    remotes: list[RemoteRow]
    kept: NotRequired[list[str]]  # blob ids still held (other entries have the same bytes)


@dataclass
class Target:
    """One entry a purge removes, as the report lists it."""

    agent: str
    name: str
    kind: str
    versions: int
    deleted: bool
    companion_of: str | None = None

    def row(self) -> TargetRow:
        return {"agent": self.agent, "name": self.name, "kind": self.kind,
                "versions": self.versions, "deleted": self.deleted,
                "companion_of": self.companion_of}


@dataclass
class Plan:
    """A purge worked out and not yet done (:func:`plan`); its report is the dry run's."""

    record: PurgeRecord
    targets: list[Target]
    outcome: Outcome
    rewriter: Rewriter
    moves: dict[str, tuple[str, str | None]]  # ref -> (old, new); new None: deleted
    head: str | None
    caches: list[Path]
    state: list[Path]
    ledger: dict[str, int]
    remotes: list[RemoteRow]
    message: str
    extra: dict[str, bytes] = field(default_factory=dict)  # files the purge commit changes

    def report(self, root: Path, *, dry_run: bool) -> PurgeReport:
        return {
            "dry_run": dry_run, "purge": None if dry_run else self.record["id"],
            "entries": [t.row() for t in self.targets],
            "namespaces": self.record["namespaces"],
            "unkept": unkept_rows(self.record),
            "history": {"commits": self.outcome.commits, "rewritten": self.outcome.rewritten,
                        "dropped": self.outcome.dropped, "blobs": len(self.outcome.blobs),
                        "refs": len(self.moves)},
            "caches": [{"path": p.relative_to(root).as_posix(), "bytes": scrub.size_of(p)}
                       for p in self.caches + self.state],
            "ledger": self.ledger,
            "sync_logs": dict(sorted(self.outcome.log_lines.items())),
            "remotes": self.remotes,
        }


def _split(path: str) -> tuple[str, str]:
    """(agent, name) of an entry's content path ``agents/A/files/NAME``."""
    _agents, agent, _files, name = path.split("/", 3)
    return agent, name


def unkept_rows(record: PurgeRecord) -> list[UnkeptRow]:
    out: list[UnkeptRow] = []
    for path, numbers in sorted((record.get("numbers") or {}).items()):
        agent, name = _split(path)
        out.append({"agent": agent, "name": name, "versions": sorted(numbers)})
    return out


def kill_point(step: str) -> None:
    """Die here (SIGKILL) when the test hook names this step (see the module docstring)."""
    if os.environ.get(KILL_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def record_path(purge_id: str) -> str:
    return f"{RECORDS_DIR}/{purge_id}.json"


def filter_of(record: PurgeRecord) -> Filter:
    logs = {path: LogScrub(frozenset(rule.get("names") or ()),
                           {n: frozenset(v) for n, v in (rule.get("versions") or {}).items()})
            for path, rule in (record.get("logs") or {}).items()}
    return Filter(record["id"], frozenset(record["paths"]), frozenset(record["folders"]),
                  {p: frozenset(b) for p, b in record["versions"].items()},
                  frozenset(record["blobs"]), logs, str(record.get("time", "")))


def parse_record(data: bytes) -> PurgeRecord | None:
    """A record read from history (None: not one this version understands)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict) or value.get("scratch_purge") != RECORD_VERSION:
        return None
    keys = ("id", "paths", "folders", "versions", "blobs", "entries", "namespaces")
    if any(k not in value for k in keys) or not _valid_id(value["id"]):
        return None
    return value  # type: ignore[return-value]


def _valid_id(text: object) -> bool:
    return isinstance(text, str) and 16 <= len(text) <= 64 and all(
        c in "0123456789abcdef" for c in text)


# -- what a purge removes -------------------------------------------------------------------

def _in_history(git: Plumbing, paths: list[str]) -> bool:
    proc = git.run("--literal-pathspecs", "rev-list", "-1", "--all", "--", *paths)
    return bool(proc.stdout.strip())


def _targets_of_entry(store: Store, git: Plumbing, name: str) -> list[Target]:
    """The entry ``name`` of the store's agent and its companions; ``entry_not_found`` when
    neither its metadata nor history holds it."""
    meta = store.load_meta(name)
    if meta is None and not _in_history(git, list(entry_paths(store.agent, name))):
        from scratch.calls import Step, suggest
        from scratch.store.names import where
        raise EntryNotFound(f"no entry named {name!r} {where(store.root, store.agent)}, in "
                            "its files or its history", name=name, agent=store.agent,
                            store=str(store.root), suggestions=[suggest(Step.LIST_ENTRIES)])
    out = [_target(store.agent, name, meta)]
    for other in store.iter_meta():
        if other["name"].startswith(name + ".") and any(
                (v.get("info") or {}).get("companion_of") == name for v in other["versions"]):
            out.append(_target(store.agent, other["name"], other, companion_of=name))
    return out


def _target(agent: str, name: str, meta: EntryMeta | None,
            companion_of: str | None = None) -> Target:
    if meta is None:
        return Target(agent, name, "unknown", 0, True, companion_of)
    return Target(agent, name, meta["kind"], len(meta.get("versions") or []),
                  bool(meta.get("deleted")), companion_of)


def _namespace_targets(root: Path, agent: str) -> list[Target]:
    store = Store(root, agent, _config(root, agent))
    return sorted((_target(agent, m["name"], m) for m in store.iter_meta()),
                  key=lambda t: t.name)


def _config(root: Path, agent: str) -> Config:
    from scratch.store.config import load_config
    return load_config(root, agent=agent)


def agents_of(root: Path, git: Plumbing) -> list[str]:
    """Every agent with a folder in the store or anywhere in its history."""
    found = set()
    try:
        found.update(os.listdir(root / "agents"))
    except OSError:
        pass
    out = git.run("log", "--all", "--format=", "--name-only", "--", "agents/").stdout
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        parts = line.split("/", 2)
        if len(parts) == 3:
            found.add(parts[1])
    return sorted(found)


def new_record(entries: list[tuple[str, str]], namespaces: list[str],
               versions: dict[str, list[str]] | None = None, reason: str = "",
               numbers: dict[str, list[int]] | None = None) -> PurgeRecord:
    paths = sorted(p for agent, name in entries for p in entry_paths(agent, name))
    record: PurgeRecord = {
        "scratch_purge": RECORD_VERSION, "id": os.urandom(8).hex(), "time": utc_now(),
        "entries": [{"agent": a, "name": n} for a, n in entries],
        "namespaces": sorted(namespaces), "paths": paths,
        "folders": sorted(f"agents/{a}" for a in namespaces),
        "versions": {p: sorted(b) for p, b in sorted((versions or {}).items())},
        "blobs": []}
    if reason:
        record["reason"] = reason
    if numbers:
        record["numbers"] = {p: sorted(n) for p, n in sorted(numbers.items())}
    return record


def plan(store: Store, *, name: str | None = None, namespace: bool = False,
         every: bool = False) -> Plan:
    """Work out the purge of entry ``name`` of the store's agent, of its whole namespace, or
    (``every``) of every namespace. Nothing is written. Lock held."""
    git = Plumbing(store.root)
    if every:
        agents = agents_of(store.root, git)
        if not agents:
            raise NotFound("the store holds no agent's entries, in its files or its history",
                           code="nothing_to_purge")
        targets = [t for a in agents for t in _namespace_targets(store.root, a)]
        record = new_record([], agents)
        what = "every agent's entries"
    elif namespace:
        agent = store.agent
        if not (store.agent_dir.is_dir() or _in_history(git, [f"agents/{agent}"])):
            raise NotFound(f"agent {agent!r} has no entries in this store, in its files or its "
                           "history", code="agent_not_found", agent=agent)
        targets = _namespace_targets(store.root, agent)
        record = new_record([], [agent])
        what = f"agent {agent}'s namespace"
    else:
        if name is None:
            raise UsageError("name the entry to purge, or give --namespace (the agent's whole "
                             "namespace) or --all (every agent's)", code="invalid_argument")
        targets = _targets_of_entry(store, git, name)
        record = new_record([(t.agent, t.name) for t in targets], [])
        companions = len(targets) - 1
        what = f"{name} (agent {store.agent})" + (
            f" with {companions} companion{'s' if companions != 1 else ''}" if companions else "")
    versions = sum(t.versions for t in targets)
    message = (f"Purge {what} from history: {versions} version{'s' if versions != 1 else ''} "
               f"removed (purge {record['id']}).")
    return plan_record(store, git, record, targets, message)


def plan_record(store: Store, git: Plumbing, record: PurgeRecord, targets: list[Target],
                message: str, extra: dict[str, bytes] | None = None) -> Plan:
    """The plan of carrying out ``record`` (a new purge's, or a retention's)."""
    refs = git.all_refs()
    if git.detached_head() is not None:
        raise StoreError("the store's HEAD names no branch (a git command run on it left it "
                         "so): check out its branch main again first", code="store_head_detached")
    tips = [sha for sha, kind in refs.values() if kind == "commit"]
    _add_sync_logs(store.root, record)
    first = filter_of(record)
    rewriter = Rewriter(git, [first])
    outcome = rewriter.run(tips)
    blobs = sorted(outcome.blobs | {b for bs in record["versions"].values() for b in bs})
    record["blobs"] = blobs
    if blobs and rewriter.carriers & set(blobs):
        # a sync's carrier trees hold some of them: rewrite again, leaving those out too
        rewriter = Rewriter(git, [filter_of(record)])
        outcome = rewriter.run(tips)
        outcome.blobs.update(blobs)
    moves: dict[str, tuple[str, str | None]] = {}
    for ref, (sha, kind) in sorted(refs.items()):
        if kind == "commit":
            new = outcome.mapping.get(sha, sha)
        elif kind == "tag":
            new = rewriter.retag(sha, outcome.mapping)
        else:
            continue
        if new != sha:
            moves[ref] = (sha, new)
    head = refs.get(BRANCH, (None, ""))[0]
    logs = {(t.agent, t.name) for t in targets if t.kind in ("log", "unknown")}
    logs |= _log_names(record)
    namespaces = record["namespaces"]
    caches = scrub.cache_paths(store.root, outcome.blobs, logs,
                               everything=bool(namespaces) and set(namespaces) == set(
                                   agents_of(store.root, git)))
    state = scrub.state_paths(store.root, namespaces)
    ledger: dict[str, int] = {}
    for agent, (names, versions) in sorted(_ledger_scrubs(record).items()):
        found = scrub.ledger_matches(store.root, agent, names, versions)
        if found:
            ledger[agent] = found
    for agent in namespaces:
        from scratch.store import ledger as call_ledger
        found = call_ledger.count(store.root, agent=agent)
        if found:
            ledger[agent] = found
    return Plan(record, targets, outcome, rewriter, moves, head, caches, state, ledger,
                _remotes(store.root, moves), message, dict(extra or {}))


def _add_sync_logs(root: Path, record: PurgeRecord) -> None:
    """Name in ``record`` the ``ledger.sync_log`` log of each agent whose entries (or versions)
    it purges: the call records synced there are scrubbed in every version of it."""
    from scratch.store.config import load_config
    logs: dict[str, dict[str, Any]] = {}
    for agent, (names, versions) in sorted(_ledger_targets(record).items()):
        log = str(load_config(root, agent=agent)["ledger.sync_log"] or "")
        if log and log not in names:
            logs[f"agents/{agent}/logs/{log}.jsonl"] = {
                "names": sorted(names),
                "versions": {n: sorted(v) for n, v in sorted(versions.items())}}
    if logs:
        record["logs"] = logs


def _log_names(record: PurgeRecord) -> set[tuple[str, str]]:
    """(agent, name) of the logs whose lines a purge scrubs (their index caches go)."""
    out = set()
    for path in record.get("logs") or {}:
        _agents, agent, _logs, rest = path.split("/", 3)
        out.add((agent, rest.removesuffix(".jsonl")))
    return out


def _remotes(root: Path, moves: dict[str, tuple[str, str | None]]) -> list[RemoteRow]:
    """Each remote, and whether the next sync replaces its history: those whose branch, as
    last fetched, holds what goes (a lease already pending counts too)."""
    from scratch.sync.remotes import remotes
    from scratch.sync.transport import is_local
    leases = load_leases(root)
    out: list[RemoteRow] = []
    for name, url in remotes(root).items():
        rewritten = f"refs/remotes/{name}/main" in moves or name in leases
        out.append({"remote": name, "url": url, "rewritten": rewritten,
                    "pruned": rewritten and is_local(url)})
    return out


# -- carrying it out ------------------------------------------------------------------------

def execute(store: Store, purge: Plan) -> PurgeReport:
    """Carry out ``purge`` (lock held); the report (its caches as they were before)."""
    git = Plumbing(store.root)
    root = store.root
    record = purge.record
    report = purge.report(root, dry_run=False)
    git.write_pack(purge.rewriter.objects())
    moves = dict(purge.moves)
    old_head = purge.head
    rewritten = moves.get(BRANCH, (old_head, old_head))[1] if old_head else None
    if rewritten is not None:
        files = dict(git.tree(rewritten))
        body = orjson.dumps(record, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        for path, data in {record_path(record["id"]): body, **purge.extra}.items():
            files[path] = TreeEntry("100644", git.write_blob(data), len(data))
        top = git.commit(git.make_tree(files), [rewritten], purge.message)
        moves[BRANCH] = (str(old_head), top)
    git.check_connected(new for _old, new in moves.values() if new)
    kill_point("objects")
    journal = {"scratch_purge_journal": 1, "record": record,
               "refs": {ref: [old, new] for ref, (old, new) in moves.items()},
               "targets": [t.row() for t in purge.targets],
               "leases": _new_leases(root, moves, record["id"])}
    atomic_write(root / "state" / JOURNAL, orjson.dumps(journal))
    kill_point("journal")
    finish(store, git, journal)
    report["kept"] = sorted(set(record["blobs"]) - git.missing(record["blobs"]))
    return report


def _new_leases(root: Path, moves: dict[str, tuple[str, str | None]],
                purge_id: str) -> dict[str, Incoming]:
    """The leases after this purge: a remote whose tracking ref moved is replaced at the next
    sync, against the commit it had when last seen (kept from an earlier purge's lease)."""
    from scratch.sync.remotes import remotes
    leases = load_leases(root)
    for name in remotes(root):
        move = moves.get(f"refs/remotes/{name}/main")
        if move is None or move[1] is None:
            continue
        lease = leases.get(name) or {"expect": move[0], "purges": []}
        lease["rewritten"] = move[1]
        lease["purges"] = [*lease.get("purges", []), purge_id]
        leases[name] = lease
    return leases


def finish(store: Store, git: Plumbing, journal: dict[str, Incoming]) -> None:
    """Carry a journaled purge from wherever it stopped to its end (lock held)."""
    root = store.root
    record: PurgeRecord = journal["record"]
    refs = {ref: (old, new) for ref, (old, new) in journal["refs"].items()}
    current = {ref: sha for ref, (sha, _kind) in git.all_refs().items()}
    pending: list[tuple[str, str | None, str | None]] = []
    for ref, (old, new) in sorted(refs.items()):
        now = current.get(ref)
        if now == new:
            continue
        if now != old:
            raise StoreError(f"an interrupted purge cannot finish: {ref} moved since it began "
                             "(a git command run on the store?)", code="purge_conflict",
                             ref=ref)
        pending.append((ref, new, old))
    head = refs.get(BRANCH)
    if head is not None and any(ref == BRANCH for ref, _n, _o in pending):
        changes = _work_tree_changes(store, git, head[0], head[1])
        store.replace_files(changes, lambda: _move(git, pending))
    elif pending:
        _move(git, pending)
    store.git.sync_index()
    for folder in record["folders"]:
        _remove_empty_dirs(root / folder)
    kill_point("files")
    targets = journal.get("targets", [])
    logs = {(t["agent"], t["name"]) for t in targets if t["kind"] in ("log", "unknown")}
    logs |= _log_names(record)
    namespaces = record["namespaces"]
    every = bool(namespaces) and set(namespaces) >= set(agents_of(root, git))
    scrub.remove(scrub.cache_paths(root, record["blobs"], logs, everything=every))
    scrub.remove(scrub.state_paths(root, namespaces))
    scrub.sweep_temporaries(root)
    kill_point("caches")
    for agent, (names, versions) in sorted(_ledger_scrubs(record).items()):
        scrub.scrub_ledger(root, agent, names, versions, record["id"])
    kill_point("ledger")
    git.prune_unreachable()
    kill_point("pruned")
    save_leases(root, journal.get("leases") or load_leases(root))
    (root / "state" / JOURNAL).unlink(missing_ok=True)


def _ledger_targets(record: PurgeRecord) -> dict[str, tuple[set[str], dict[str, set[int]]]]:
    """Per agent (not a purged namespace: its ledger goes whole), the entries whose ledger
    records are scrubbed, and the versions of kept entries whose records are."""
    out: dict[str, tuple[set[str], dict[str, set[int]]]] = {}
    for entry in record["entries"]:
        if entry["agent"] not in record["namespaces"]:
            out.setdefault(entry["agent"], (set(), {}))[0].add(entry["name"])
    for path, numbers in (record.get("numbers") or {}).items():
        agent, name = _split(path)
        out.setdefault(agent, (set(), {}))[1].setdefault(name, set()).update(numbers)
    return out


def _ledger_scrubs(record: PurgeRecord) -> dict[str, tuple[set[str], dict[str, set[int]]]]:
    """:func:`_ledger_targets`, and the sync logs whose lines the purge scrubs: a call that
    read one kept its answer (the ledger keeps what each call showed), which could quote the
    purged calls' arguments."""
    out = _ledger_targets(record)
    for agent, name in _log_names(record):
        out.setdefault(agent, (set(), {}))[0].add(name)
    return out


def _remove_empty_dirs(top: Path) -> None:
    """Remove the folders below ``top`` (and ``top``) that hold no file any more."""
    if not top.is_dir() or top.is_symlink():
        return
    for dirpath, _dirs, _names in sorted(os.walk(top), key=lambda w: -len(w[0])):
        try:
            os.rmdir(dirpath)
        except OSError:
            pass
    try:
        os.rmdir(top.parent)  # agents/, once the last namespace went
    except OSError:
        pass


def _move(git: Plumbing, pending: list[tuple[str, str | None, str | None]]) -> None:
    if os.environ.get(KILL_ENV) == "refs" and len(pending) > 1:
        git.update_refs(pending[:1])
        kill_point("refs")
    git.update_refs(pending)
    kill_point("refs")


def _work_tree_changes(store: Store, git: Plumbing, old: str, new: str | None
                       ) -> list[tuple[Path, Path | None]]:
    """What the work tree needs to go from commit ``old`` to ``new``: deletions first, then
    each new file staged beside its place."""
    rows = git.changed_paths(old, new) if new else []
    gone = sorted((p for p, sha in rows if sha is None), key=lambda p: -p.count("/"))
    changes: list[tuple[Path, Path | None]] = [(store.root / p, None) for p in gone]
    wanted = [(p, sha) for p, sha in rows if sha is not None]
    bodies = git.blobs(sha for _p, sha in wanted)
    try:
        for path, sha in wanted:
            target = store.root / path
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            changes.append((target, temp_beside(target, bodies[sha], fsync=False)))
    except BaseException:
        for _t, staged in changes:
            if staged is not None:
                staged.unlink(missing_ok=True)
        raise
    return changes


def pending_journal(root: Path) -> dict[str, Incoming] | None:
    try:
        value = orjson.loads((root / "state" / JOURNAL).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError):
        raise StoreError("the journal of an interrupted purge (state/purge.json) cannot be "
                         "read", code="purge_journal_unreadable") from None
    return value if isinstance(value, dict) else None


def finish_pending(store: Store) -> PurgeRecord | None:
    """Finish a purge a crash interrupted (lock held); its record, or None if there was none."""
    journal = pending_journal(store.root)
    if journal is None:
        return None
    finish(store, Plumbing(store.root), journal)
    record: PurgeRecord = journal["record"]
    return record


# -- records learnt from a remote -----------------------------------------------------------

def records_in(git: Plumbing, commit: str | None) -> dict[str, PurgeRecord]:
    """The purge records a commit's tree holds, by id."""
    if commit is None:
        return {}
    tree = git.tree(commit, RECORDS_DIR + "/")
    wanted = {path: e.sha for path, e in tree.items() if path.endswith(".json")}
    bodies = git.blobs(wanted.values())
    out = {}
    for _path, sha in sorted(wanted.items()):
        record = parse_record(bodies[sha])
        if record is not None:
            out[record["id"]] = record
    return out


def apply_records(store: Store, records: list[PurgeRecord],
                  extra_tips: tuple[str, ...] = ()) -> dict[str, str | None]:
    """Apply purges made by another store to this one's history (lock held): the same
    rewrite, cleaning and pruning as a purge, without a record commit of its own (the
    records arrive with the merge). Returns how ``extra_tips`` (commits no ref names yet,
    such as a tip just fetched) were rewritten."""
    git = Plumbing(store.root)
    refs = git.all_refs()
    tips = [sha for sha, kind in refs.values() if kind == "commit"] + list(extra_tips)
    rewriter = Rewriter(git, [filter_of(r) for r in records])
    outcome = rewriter.run(tips)
    git.write_pack(rewriter.objects())
    moves: dict[str, list[str | None]] = {}
    for ref, (sha, kind) in sorted(refs.items()):
        new = outcome.mapping.get(sha, sha) if kind == "commit" else (
            rewriter.retag(sha, outcome.mapping) if kind == "tag" else sha)
        if new != sha:
            moves[ref] = [sha, new]
    entries = [e for r in records for e in r["entries"]]
    merged: PurgeRecord = {
        "scratch_purge": RECORD_VERSION, "id": records[0]["id"], "time": utc_now(),
        "entries": entries, "namespaces": sorted({a for r in records for a in r["namespaces"]}),
        "paths": sorted({p for r in records for p in r["paths"]}),
        "folders": sorted({f for r in records for f in r["folders"]}), "versions": {},
        "blobs": sorted({b for r in records for b in r["blobs"]} | outcome.blobs)}
    numbers: dict[str, set[int]] = {}
    for r in records:
        for path, ns in (r.get("numbers") or {}).items():
            numbers.setdefault(path, set()).update(ns)
    if numbers:
        merged["numbers"] = {p: sorted(n) for p, n in sorted(numbers.items())}
    logs = {path: rule for r in records for path, rule in (r.get("logs") or {}).items()}
    if logs:
        merged["logs"] = logs
    journal = {"scratch_purge_journal": 1, "record": merged, "refs": moves,
               "targets": [{"agent": e["agent"], "name": e["name"], "kind": "unknown"}
                           for e in entries], "leases": load_leases(store.root)}
    atomic_write(store.root / "state" / JOURNAL, orjson.dumps(journal))
    finish(store, git, journal)
    return {tip: outcome.mapping.get(tip, tip) for tip in extra_tips}
