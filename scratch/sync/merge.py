"""The merge rules: one agent's entries from a base, ours and theirs, merged losing nothing.

Pure functions over tree listings and blob bytes: nothing here writes. An entry is the set of
its paths (``meta/<name>.json`` plus ``files/<name>`` or ``logs/<name>.jsonl``); an entry only
one side changed since the base is taken from that side as it is. An entry both changed is
merged by kind, and its metadata is *built* from the merged content and both sides' version
records, never merged as text:

- Logs: every entry of both sides appears exactly once (an entry is its timestamp and value;
  counted as ours + theirs - base, so one both sides got from elsewhere is not doubled). The
  lines both sides share from the start keep their place and ids; the rest follow in
  timestamp order (theirs first on a tie), numbered on from there, so ids stay unique,
  increasing and contiguous. Every id that moved in this store is reported as old -> new
  ranges (:func:`moved_ids`).
- Versioned files (file and output): the versions both share keep their numbers; those only
  one side has follow in the order they were written (their time), so the current version is
  the one written last. A side that deleted the entry while the other wrote keeps the write.
- Outputs are content-addressed: the same output ingested on both sides since the base (same
  folder, same source hash and format) is one entry; theirs is kept, ours reported as the
  same entry.
- A name that is a log on one side and a file on the other keeps ours; theirs is kept under
  ``<name>.conflict-<8 hex>`` and reported.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

import orjson

from scratch.sync.gitops import Tree, TreeEntry

if TYPE_CHECKING:
    from scratch.jsonvalues import Incoming

META_VERSION = 1
LINE_RE = re.compile(rb'\{"id":(\d+),"ts":"([^"\\]*)","entry":(.*)\}', re.S)
AUTO_NAME_RE = re.compile(r"(.+)/\d{8}T\d{6}Z-([0-9a-f]{8})")
Reader = Callable[[list[str]], dict[str, bytes]]
NewBlob = bytes  # content to be written as a blob
# an entry's metadata as either side's tree holds it: JSON from a peer, checked by load_meta
# (its version, kind and versions list) and read with .get where the rest is read
RemoteMeta: TypeAlias = "dict[str, Incoming]"
# one line of a sync report (an entry received, sent, merged, kept, in conflict)
ReportRow: TypeAlias = dict[str, object]
Merged = dict[str, TreeEntry | NewBlob]


class Paths(NamedTuple):
    """One entry's paths in a tree (``None`` where it has none)."""

    meta: TreeEntry | None
    file: TreeEntry | None
    log: TreeEntry | None

    def state(self) -> tuple[str | None, ...]:
        return tuple(e.sha if e else None for e in self)


# A namespace is synced under a key: an agent's name (``agents/<agent>/``), or ``run.<run>``
# for a run's (``runs/<run>/``: its artifacts and events, scratch.runs). No agent name has a
# dot, so the two never meet; the key names the namespace in base refs and reports.
RUN_KEY = "run."


def namespace_dir(key: str) -> str:
    """The folder of the namespace synced under ``key``."""
    return f"runs/{key[len(RUN_KEY):]}" if key.startswith(RUN_KEY) else f"agents/{key}"


def namespace_of(path: str) -> str | None:
    """The key of the namespace ``path`` lies in (None: in none, such as ``.gitignore``)."""
    top, _, rest = path.partition("/")
    name = rest.partition("/")[0]
    if not name:
        return None
    return name if top == "agents" else f"{RUN_KEY}{name}" if top == "runs" else None


def entry_paths(agent: str, name: str) -> tuple[str, str, str]:
    base = namespace_dir(agent)
    return f"{base}/meta/{name}.json", f"{base}/files/{name}", f"{base}/logs/{name}.jsonl"


def entries_of(tree: Tree, agent: str) -> dict[str, Paths]:
    """The entries of ``agent`` (a namespace's key) in ``tree`` (already checked by the
    caller's layout check)."""
    prefix = f"{namespace_dir(agent)}/"
    found: dict[str, list[TreeEntry | None]] = {}
    for path, entry in tree.items():
        if not path.startswith(prefix):
            continue
        sub, _, rest = path[len(prefix):].partition("/")
        if sub == "meta" and rest.endswith(".json"):
            found.setdefault(rest[:-5], [None, None, None])[0] = entry
        elif sub == "files":
            found.setdefault(rest, [None, None, None])[1] = entry
        elif sub == "logs" and rest.endswith(".jsonl"):
            found.setdefault(rest[:-6], [None, None, None])[2] = entry
    return {name: Paths(*parts) for name, parts in found.items()}


class Outcome:
    """What merging one agent gives: its merged paths and what to report."""

    def __init__(self) -> None:
        self.paths: Merged = {}
        self.received: list[ReportRow] = []
        self.sent: list[ReportRow] = []
        self.logs: list[ReportRow] = []
        self.versions: list[ReportRow] = []
        self.kept_writes: list[ReportRow] = []
        self.deduplicated: list[ReportRow] = []
        self.conflicts: list[ReportRow] = []
        self.warnings: list[str] = []


# -- logs --------------------------------------------------------------------------------------
class Line(NamedTuple):
    id: int
    ts: bytes
    entry: bytes

    @property
    def key(self) -> tuple[bytes, bytes]:
        return self.ts, self.entry

    def render(self, new_id: int) -> bytes:
        return b'{"id":%d,"ts":"%s","entry":%s}\n' % (new_id, self.ts, self.entry)


def parse_log(data: bytes) -> tuple[list[Line], int]:
    """The whole lines of a log file, and how many damaged ones were left out."""
    lines: list[Line] = []
    damaged = 0
    for raw in data.split(b"\n")[:-1]:
        m = LINE_RE.fullmatch(raw)
        if m is None:
            damaged += 1
            continue
        lines.append(Line(int(m.group(1)), m.group(2), m.group(3)))
    return lines, damaged


def merge_lines(base: list[Line], ours: list[Line], theirs: list[Line]
                ) -> list[tuple[int, Line, str]]:
    """The merged log as (id, line, origin) with origin ``both``, ``ours`` or ``theirs``."""
    k = 0
    while k < len(ours) and k < len(theirs) and ours[k].key == theirs[k].key:
        k += 1
    prefix = theirs[:k]
    base_rest = Counter(line.key for line in base) - Counter(line.key for line in prefix)
    need = Counter(line.key for line in ours[k:]) + Counter(line.key for line in theirs[k:])
    need -= base_rest
    picks: list[tuple[bytes, int, int, Line, str]] = []
    for origin, rank, rest in (("theirs", 0, theirs[k:]), ("ours", 1, ours[k:])):
        for i, line in enumerate(rest):
            if need[line.key] > 0:
                need[line.key] -= 1
                picks.append((line.ts, rank, i, line, origin))
    picks.sort(key=lambda p: p[:3])
    out = [(line.id, line, "both") for line in prefix]
    if prefix:
        next_id = prefix[-1].id + 1
    else:
        next_id = min((p[3].id for p in picks), default=1)
    for _ts, _rank, _i, line, origin in picks:
        out.append((next_id, line, origin))
        next_id += 1
    return out


def moved_ids(before: list[Line], after: list[tuple[int, Line]]) -> list[dict[str, list[int]]]:
    """Ranges of ids whose entry (timestamp and value) now has another id:
    ``[{"from": [a, b], "to": [c, d]}]``, each a run with one offset."""
    where: dict[tuple[bytes, bytes], list[int]] = {}
    for new_id, line in after:
        where.setdefault(line.key, []).append(new_id)
    for ids in where.values():
        ids.reverse()
    pairs = []
    for line in before:
        found = where.get(line.key)
        if found:
            new_id = found.pop()
            if new_id != line.id:
                pairs.append((line.id, new_id))
    ranges: list[dict[str, list[int]]] = []
    for old, new in pairs:
        if ranges and old == ranges[-1]["from"][1] + 1 and new == ranges[-1]["to"][1] + 1:
            ranges[-1]["from"][1] = old
            ranges[-1]["to"][1] = new
        else:
            ranges.append({"from": [old, old], "to": [new, new]})
    return ranges


# -- metadata ----------------------------------------------------------------------------------
def load_meta(data: bytes | None) -> RemoteMeta | None:
    if data is None:
        return None
    try:
        meta = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(meta, dict) or meta.get("scratch_meta") != META_VERSION \
            or meta.get("kind") not in ("file", "log", "output") \
            or not isinstance(meta.get("versions"), list):
        return None
    return meta


def dump_meta(meta: RemoteMeta) -> bytes:
    return orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n"


def _fresh(name: str, kind: str, sides: list[RemoteMeta]) -> RemoteMeta:
    created = min((m.get("created") or "" for m in sides), default="") or None
    updated = max((m.get("updated") or "" for m in sides), default="") or None
    return {"scratch_meta": META_VERSION, "name": name, "kind": kind, "deleted": False,
            "created": created, "updated": updated, "versions": []}


def _next_id(*metas: RemoteMeta | None) -> int:
    return max([int((m or {}).get("log", {}).get("next_id") or 1) for m in metas] + [1])


def merge_versions(name: str, ours: RemoteMeta, theirs: RemoteMeta
                   ) -> tuple[RemoteMeta, ReportRow]:
    """Both sides' version records merged (see the module docstring); the report names the
    versions each side brought and the numbers of ours that moved."""
    o_list, t_list = ours["versions"], theirs["versions"]

    content_addressed = ours["kind"] == theirs["kind"] == "output"

    def key(v: RemoteMeta) -> tuple[str, str]:
        # an output is its content: the same bytes stored on both sides are one version
        return str(v.get("blob")), "" if content_addressed else str(v.get("time"))

    k = 0
    while k < len(o_list) and k < len(t_list) and key(o_list[k]) == key(t_list[k]):
        k += 1
    t_keys = {key(v) for v in t_list[k:]}
    tail = [(str(v.get("time")), 0, i, v, "theirs") for i, v in enumerate(t_list[k:])]
    tail += [(str(v.get("time")), 1, i, v, "ours") for i, v in enumerate(o_list[k:])
             if key(v) not in t_keys]
    tail.sort(key=lambda t: t[:3])
    meta = _fresh(name, ours["kind"], [ours, theirs])
    # a version either side no longer keeps (retention, a purge) stays so
    versions = [dict(v) | ({"removed": t_list[i]["removed"]} if t_list[i].get("removed")
                           and not v.get("removed") else {}) for i, v in enumerate(o_list[:k])]
    brought: dict[str, list[int]] = {"ours": [], "theirs": []}  # the versions each side brought
    renumbered: list[ReportRow] = []
    origin_kind = {"ours": ours["kind"], "theirs": theirs["kind"]}
    last_origin = "ours"
    for _t, _r, _i, v, origin in tail:
        record = dict(v)
        record["version"] = len(versions) + 1
        versions.append(record)
        brought[origin].append(record["version"])
        if origin == "ours" and v.get("version") != record["version"]:
            renumbered.append({"from": v.get("version"), "to": record["version"]})
        last_origin = origin
    meta["versions"] = versions
    meta["kind"] = origin_kind[last_origin] if tail else ours["kind"]
    meta["deleted"] = bool(ours.get("deleted")) and bool(theirs.get("deleted"))
    if "log" in ours or "log" in theirs:  # a log that was deleted: its ids stay used
        meta["log"] = {"next_id": _next_id(ours, theirs), "count": 0}
    report: ReportRow = {"ours": brought["ours"], "theirs": brought["theirs"],
                         "renumbered": renumbered,
                         "current": len(versions) if versions else None}
    return meta, report


def merge_log_meta(name: str, ours: RemoteMeta, theirs: RemoteMeta,
                   merged: list[tuple[int, Line, str]], deleted: bool) -> RemoteMeta:
    meta = _fresh(name, "log", [ours, theirs])
    meta["deleted"] = deleted
    last = merged[-1][0] if merged else 0
    meta["log"] = {"next_id": max(_next_id(ours, theirs), last + 1), "count": len(merged)}
    if merged:
        meta["log"]["first_id"] = merged[0][0]
    return meta


def stand_in(name: str, paths: Paths | None, data: dict[str, bytes]) -> RemoteMeta:
    """Metadata for a side that has none (the entry removed outright, or its metadata lost):
    what its content shows."""
    if paths is None or (paths.file is None and paths.log is None):
        meta = _fresh(name, "file", [])
        meta["deleted"] = True
        return meta
    if paths.log is not None:
        lines, _ = parse_log(data.get(paths.log.sha, b""))
        meta = _fresh(name, "log", [])
        meta["log"] = {"next_id": (lines[-1].id + 1) if lines else 1, "count": len(lines)}
        return meta
    assert paths.file is not None
    meta = _fresh(name, "file", [])
    meta["versions"] = [{"version": 1, "time": "", "blob": paths.file.sha,
                         "bytes": paths.file.size, "lines": None, "message": "", "info": {}}]
    return meta


def conflict_name(name: str, sha: str) -> str:
    return f"{name}.conflict-{sha[:8]}"
