"""``scratch gc``: retention (``retention.max_age``, ``retention.keep_versions``) and the cache's
bound (``cache.max_bytes``), applied to every agent with its own effective settings.

- ``retention.max_age``: a live entry whose metadata last changed longer ago than this (a
  write, an append, a restore) is removed as ``rm`` removes it: its content leaves the work
  tree in a commit, history keeps every version (``restore`` brings it back). With
  ``prune_history`` such entries, and entries deleted that long ago, are purged instead
  (:mod:`scratch.sync.purge`: gone from history, caches and the ledger; the next sync replaces
  the remotes' history).
- ``retention.keep_versions``: of a file or output, only the newest N versions stay readable;
  older ones are marked ``removed`` in its metadata (reading one is ``version_removed``) and
  their cache files go, but their bytes stay in git history (``scratch git log -p`` shows
  them, a sync carries them) unless ``prune_history``, which purges those blobs from history
  (a blob that a kept version of the same entry also has stays).
- ``cache.max_bytes``: the rebuildable cache (indexes with their SQL copies and counts, old
  versions as files, summaries; never ``cache/tmp``) is cut to the bound, oldest written
  first.

Defaults keep everything: a store that sets none of these loses nothing to gc.

Runs by itself (:func:`due`, :func:`start`): after a command or tool call that changed the
store, when this agent's settings configure retention and the last run began a day ago or
more, a detached process runs ``gc`` without ``prune_history`` (history is only ever rewritten
when asked): the command never waits for it, and a failure is recorded in
``state/gc-last.json``, never shown to the command.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import orjson

from scratch.store import Store
from scratch.store.config import Config, load_config, parse_duration
from scratch.store.locking import atomic_write
from scratch.sync import scrub
from scratch.sync.purge import CacheRow, PurgeReport

if TYPE_CHECKING:
    from scratch.store.records import EntryMeta

LAST = "gc-last.json"  # in state/: when the last run began, and how it ended
LOCK = "gc.lock"  # in state/: one gc at a time (a background run only)
DAY = 86400.0
CACHE_PARTS = ("index", "blobs", "summaries")  # what cache.max_bytes trims (never tmp)


class Settings(TypedDict):
    max_age: str
    keep_versions: int
    cache_max_bytes: int


class RemovedEntry(TypedDict):
    agent: str
    name: str
    kind: str
    updated: str  # when its metadata last changed


class UnkeptVersions(TypedDict):
    agent: str
    name: str
    versions: list[int]  # no longer readable
    kept: list[int]


class CacheTrim(TypedDict):
    max_bytes: int
    before: int
    after: int
    removed: list[CacheRow]


class GcReport(TypedDict):
    """What ``scratch gc`` did or (``dry_run``) would do; keys: scratch-gc(1)."""

    dry_run: bool
    prune_history: bool
    settings: dict[str, Settings]  # per agent
    removed: list[RemovedEntry]
    versions: list[UnkeptVersions]
    purge: PurgeReport | None
    caches: CacheTrim


def settings_of(config: Config) -> Settings:
    return {"max_age": str(config["retention.max_age"] or ""),
            "keep_versions": int(config["retention.keep_versions"] or 0),
            "cache_max_bytes": int(config["cache.max_bytes"] or 0)}


def configured(config: Config) -> bool:
    s = settings_of(config)
    return bool(s["max_age"] or s["keep_versions"] or s["cache_max_bytes"])


def _stamp(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _agents(root: Path) -> list[str]:
    try:
        return sorted(n for n in os.listdir(root / "agents")
                      if (root / "agents" / n).is_dir() and not n.startswith("."))
    except OSError:
        return []


def gc(store: Store, *, dry_run: bool = False, prune_history: bool = False,
       now: datetime | None = None) -> GcReport:
    """Apply every agent's retention settings to ``store``'s root (takes the lock)."""
    from scratch.sync import purge
    from scratch.sync.gitops import Plumbing
    root = store.root
    moment = now or datetime.now(UTC)
    report: GcReport = {"dry_run": dry_run, "prune_history": prune_history, "settings": {},
                        "removed": [], "versions": [], "purge": None,
                        "caches": {"max_bytes": 0, "before": 0, "after": 0, "removed": []}}
    with store.lock():
        if not dry_run:
            purge.finish_pending(store)
        work: list[tuple[Store, list[str], list[tuple[str, EntryMeta]], str]] = []
        purged_entries: list[tuple[str, str]] = []
        purged_versions: dict[str, list[str]] = {}
        purged_numbers: dict[str, list[int]] = {}
        unkept_blobs: set[str] = set()
        for agent in _agents(root):
            config = load_config(root, agent=agent)
            settings = settings_of(config)
            report["settings"][agent] = settings
            st = Store(root, agent, config)
            deletions, metas = _agent_plan(st, settings, moment, prune_history, report,
                                           purged_entries, purged_versions, purged_numbers,
                                           unkept_blobs)
            if deletions or metas:
                work.append((st, deletions, metas, _message(agent, settings, deletions,
                                                             metas)))
        if prune_history and (purged_entries or purged_versions):
            record = purge.new_record(purged_entries, [], purged_versions, reason="retention",
                                      numbers=purged_numbers)
            targets = [purge.Target(a, n, "unknown", 0, True) for a, n in purged_entries]
            for t in targets:
                meta = Store(root, t.agent, load_config(root, agent=t.agent)).load_meta(t.name)
                t.kind, t.versions = (meta["kind"], len(meta["versions"])) if meta else (
                    "unknown", 0)
                t.deleted = bool(meta.get("deleted")) if meta else True
            extra = {}
            for st, _deletions, metas, _msg in work:
                for name, meta in metas:
                    for v in meta["versions"]:
                        if v.get("removed"):
                            v["removed"] = f"{v['removed']}; purge {record['id']}"
                    extra[st.rel(st.meta_path(name))] = orjson.dumps(
                        meta, option=orjson.OPT_INDENT_2) + b"\n"
            what = [f"{len(purged_entries)} entr{'y' if len(purged_entries) == 1 else 'ies'}"
                    ] if purged_entries else []
            what += [f"older versions of {len(purged_versions)} entr"
                     f"{'y' if len(purged_versions) == 1 else 'ies'}"] if purged_versions else []
            plan = purge.plan_record(store, Plumbing(root), record, targets,
                                     f"Retention: purge {' and '.join(what)} from history "
                                     f"(purge {record['id']}).", extra)
            report["purge"] = plan.report(root, dry_run=True) if dry_run else \
                purge.execute(store, plan)
        elif not dry_run:
            for st, deletions, metas, message in work:
                st.commit_retention(deletions, metas, message)
            scrub.remove(scrub.cache_paths(root, unkept_blobs, []))
        bound = max((s["cache_max_bytes"] for s in report["settings"].values()), default=0)
        if bound:  # (a dry run leaves out what the steps above would remove)
            going = {root / c["path"] for c in (report["purge"] or {"caches": []})["caches"]}
            going.update(scrub.cache_paths(root, unkept_blobs, []))
            report["caches"] = trim_cache(root, bound, dry_run=dry_run, going=going)
    return report


def _agent_plan(st: Store, settings: Settings, moment: datetime, prune_history: bool,
                report: GcReport, purged_entries: list[tuple[str, str]],
                purged_versions: dict[str, list[str]], purged_numbers: dict[str, list[int]],
                unkept_blobs: set[str]) -> tuple[list[str], list[tuple[str, EntryMeta]]]:
    """What retention takes from one agent: the entries to delete and the metadata to save
    (versions marked removed); with ``prune_history`` what to purge instead, added to the
    lists given."""
    deletions: list[str] = []
    metas: list[tuple[str, EntryMeta]] = []
    age = parse_duration(settings["max_age"]) if settings["max_age"] else None
    cutoff = _stamp(moment - timedelta(seconds=age)) if age else None
    keep = settings["keep_versions"]
    for meta in sorted(st.iter_meta(), key=lambda m: m["name"]):
        name = meta["name"]
        old = cutoff is not None and str(meta.get("updated") or "") < cutoff
        if old and (prune_history or not meta.get("deleted")):
            report["removed"].append({"agent": st.agent, "name": name, "kind": meta["kind"],
                                      "updated": str(meta.get("updated"))})
            if prune_history:
                purged_entries.append((st.agent, name))
            else:
                deletions.append(name)
            continue
        if not keep or meta.get("deleted") or meta["kind"] == "log":
            continue
        versions = meta["versions"]
        # a version already unkept is purged only now, if asked and its bytes are in history
        older = [v for v in versions[:-keep] if not v.get("removed") or (
            prune_history and "purge " not in str(v.get("removed")))]
        if not older:
            continue
        kept = versions[-keep:]
        report["versions"].append({"agent": st.agent, "name": name,
                                   "versions": [v["version"] for v in older],
                                   "kept": [v["version"] for v in kept]})
        for v in older:
            v["removed"] = v.get("removed") or f"retention.keep_versions {keep}"
        metas.append((name, meta))
        blobs = {str(v["blob"]) for v in older} - {str(v["blob"]) for v in kept}
        unkept_blobs.update(blobs)
        if prune_history and blobs:
            path = st.rel(st.content_path(name))
            purged_versions[path] = sorted(blobs)
            purged_numbers[path] = [v["version"] for v in older]
    return deletions, metas


def _message(agent: str, settings: Settings, deletions: list[str],
             metas: list[tuple[str, EntryMeta]]) -> str:
    parts = []
    if deletions:
        parts.append(f"delete {len(deletions)} entr{'y' if len(deletions) == 1 else 'ies'} "
                     f"unchanged for over {settings['max_age']}")
    if metas:
        parts.append(f"keep the newest {settings['keep_versions']} versions of "
                     f"{len(metas)} entr{'y' if len(metas) == 1 else 'ies'}")
    return f"Retention (agent {agent}): {' and '.join(parts)}."


def trim_cache(root: Path, bound: int, *, dry_run: bool, going: set[Path] | None = None
               ) -> CacheTrim:
    """Cut the cache to ``bound`` bytes, the least recently written first (``going``: what
    is being removed anyway, left out)."""
    items: list[tuple[float, str, int, Path]] = []
    for part in CACHE_PARTS:
        base = root / "cache" / part
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            path = base / name
            if going and path in going:
                continue
            try:
                mtime = os.lstat(path).st_mtime
            except OSError:
                continue
            items.append((mtime, path.as_posix(), scrub.size_of(path), path))
    items.sort()
    before = total = sum(size for _m, _p, size, _path in items)
    removed: list[CacheRow] = []
    for _mtime, _key, size, path in items:
        if total <= bound:
            break
        removed.append({"path": path.relative_to(root).as_posix(), "bytes": size})
        total -= size
        if not dry_run:
            scrub.remove([path])
    return {"max_bytes": bound, "before": before, "after": total, "removed": removed}


# -- by itself, once a day ------------------------------------------------------------------

def due(root: Path, config: Config) -> bool:
    """Whether a background gc should start now: retention configured, and the last run
    began a day ago or more (one ``stat``)."""
    if not configured(config):
        return False
    try:
        return time.time() - os.stat(root / "state" / LAST).st_mtime >= DAY
    except FileNotFoundError:
        return True
    except OSError:
        return False


def start(root: Path) -> bool:
    """Start a detached ``gc`` (marking the run as begun first, so one starts per day);
    True if one was started. Never raises."""
    import subprocess
    try:
        last = root / "state" / LAST
        if last.exists():
            os.utime(last)
        else:
            atomic_write(last, orjson.dumps({"started": _stamp(datetime.now(UTC))}),
                         fsync=False)
        subprocess.Popen([sys.executable, "-m", "scratch.sync.retention", str(root)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                         cwd=str(root))
    except OSError:
        return False
    return True


def after_command(command: str, root: Path, before: str | None, config: Config) -> bool:
    """After a command: start the daily gc if it changed the store and one is due."""
    from scratch.store.gitstore import GitStore
    if command.split(" ", 1)[0] in ("gc", "purge") or GitStore(root).head() == before:
        return False
    return due(root, config) and start(root)


def run(root: Path) -> int:
    """The background gc: one at a time; how it ended goes to ``state/gc-last.json``."""
    import fcntl

    from scratch.errors import ScratchError
    fd = os.open(root / "state" / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0
        began = _stamp(datetime.now(UTC))
        try:
            report = gc(Store.open(root, create=False))
            outcome: dict[str, object] = {
                "started": began, "ok": True, "removed": len(report["removed"]),
                "versions": sum(len(v["versions"]) for v in report["versions"]),
                "cache_removed": len(report["caches"]["removed"])}
        except ScratchError as exc:
            outcome = {"started": began, "ok": False, "error": exc.to_dict()}
        atomic_write(root / "state" / LAST, orjson.dumps(outcome), fsync=False)
        return 0 if outcome["ok"] else 1
    finally:
        os.close(fd)


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1])))
