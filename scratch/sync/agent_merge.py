"""Merge one agent's namespace: decide each entry from base, ours and theirs (rules in
:mod:`scratch.sync.merge`) and collect what the sync reports about it.

Invariant: the paths returned for the agent hold, for every entry, a metadata file that
agrees with its content file (the content is the current version's blob, or absent when the
entry is deleted), so the store opens the merged namespace as it would its own.
"""

from __future__ import annotations

from scratch.sync.gitops import Tree, TreeEntry
from scratch.sync.merge import (
    AUTO_NAME_RE,
    Line,
    Outcome,
    Paths,
    Reader,
    RemoteMeta,
    conflict_name,
    dump_meta,
    entries_of,
    entry_paths,
    load_meta,
    merge_lines,
    merge_log_meta,
    merge_versions,
    moved_ids,
    namespace_dir,
    parse_log,
    stand_in,
)

BLOB_MODE = "100644"


def merge_agent(agent: str, base: Tree, ours: Tree, theirs: Tree, read: Reader) -> Outcome:
    out = Outcome()
    b_all, o_all, t_all = (entries_of(t, agent) for t in (base, ours, theirs))
    names = sorted(set(b_all) | set(o_all) | set(t_all))
    both: list[str] = []
    for name in names:
        b, o, t = b_all.get(name), o_all.get(name), t_all.get(name)
        s_b, s_o, s_t = (p.state() if p else None for p in (b, o, t))
        if s_o == s_t:
            _take(out, agent, name, o)
        elif s_o == s_b:
            _take(out, agent, name, t)
            out.received.append({"agent": agent, "name": name})
        elif s_t == s_b:
            _take(out, agent, name, o)
            out.sent.append({"agent": agent, "name": name})
        else:
            both.append(name)
    # every log whose content changes here is read, to report ids that moved
    moved_logs = [n for n in names if _log_sha(o_all.get(n)) != _log_sha(t_all.get(n))]
    wanted: list[str] = []
    for name in set(both) | set(moved_logs):
        for paths in (b_all.get(name), o_all.get(name), t_all.get(name)):
            if paths is not None:
                wanted += [e.sha for e in (paths.meta, paths.log) if e is not None]
    data = read(wanted)
    for name in both:
        _merge_entry(out, agent, name, b_all.get(name), o_all.get(name), t_all.get(name), data)
        out.sent.append({"agent": agent, "name": name})
        out.received.append({"agent": agent, "name": name})
    _dedupe_outputs(out, agent, b_all, o_all, t_all, read)
    _report_moved_logs(out, agent, moved_logs, o_all, data)
    taken = [n for n in names if n not in both and o_all.get(n) is not None
             and t_all.get(n) is not None and o_all[n].file is not None]
    _report_moved_versions(out, agent, taken, o_all, read)
    _resolve_clashes(out, agent, o_all, read)
    return out


def _resolve_clashes(out: Outcome, agent: str, o_all: dict[str, Paths], read: Reader) -> None:
    """A name that is an entry on one side and a folder of entries on the other cannot be
    both: the entry that came from theirs moves to ``<name>.conflict-<hash>``."""
    prefix = f"{namespace_dir(agent)}/files/"
    names = {p[len(prefix):] for p in out.paths if p.startswith(prefix)}
    clashing: dict[str, str] = {}  # theirs's entry -> the folder part that must change
    for name in names:
        parts = name.split("/")
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            if folder in names:
                if folder in o_all and name not in o_all:
                    clashing[name] = folder
                else:
                    clashing[folder] = folder
    for name, part in sorted(clashing.items()):
        paths = [entry_paths(agent, name)[k] for k in range(3)]
        moved = {p: out.paths.pop(p) for p in paths if p in out.paths}
        body = moved.get(paths[0])
        raw: bytes | None = None
        if isinstance(body, bytes):
            raw = body
        elif isinstance(body, TreeEntry):
            raw = read([body.sha]).get(body.sha)
        meta = load_meta(raw)
        content = moved.get(paths[1])
        other = conflict_name(part, content.sha if isinstance(content, TreeEntry) else "0" * 8
                              ) + name[len(part):]
        if meta is not None:
            meta["name"] = other
            _write(out, agent, other, meta, content if isinstance(content, TreeEntry) else None,
                   None)
        out.conflicts.append({"agent": agent, "name": name, "theirs_as": other,
                              "ours_kind": "folder" if name not in o_all else "file",
                              "theirs_kind": "file" if name not in o_all else "folder"})


def _report_moved_versions(out: Outcome, agent: str, names: list[str],
                           o_all: dict[str, Paths], read: Reader) -> None:
    """Versions of ours that another store's merge renumbered (taken from theirs here)."""
    pairs = []
    for name in names:
        new = out.paths.get(entry_paths(agent, name)[0])
        old = o_all[name].meta
        if isinstance(new, TreeEntry) and old is not None and new.sha != old.sha:
            pairs.append((name, old.sha, new.sha))
    if not pairs:
        return
    data = read([sha for _, a, b in pairs for sha in (a, b)])
    for name, old_sha, new_sha in pairs:
        before, after = load_meta(data.get(old_sha)), load_meta(data.get(new_sha))
        if before is None or after is None or after["kind"] == "log":
            continue
        where = {(v.get("blob"), v.get("time")): v["version"] for v in after["versions"]}
        moved = [{"from": v["version"], "to": where[(v.get("blob"), v.get("time"))]}
                 for v in before["versions"]
                 if where.get((v.get("blob"), v.get("time"))) not in (None, v["version"])]
        if moved:
            mine = {m["to"] for m in moved}
            kept = {where.get((v.get("blob"), v.get("time"))) for v in before["versions"]}
            out.versions.append({
                "agent": agent, "name": name, "ours": sorted(mine),
                "theirs": [v["version"] for v in after["versions"] if v["version"] not in kept],
                "renumbered": moved, "current": len(after["versions"]) or None})


def _log_sha(paths: Paths | None) -> str | None:
    return paths.log.sha if paths is not None and paths.log is not None else None


def _take(out: Outcome, agent: str, name: str, paths: Paths | None) -> None:
    meta_p, file_p, log_p = entry_paths(agent, name)
    for path, entry in zip((meta_p, file_p, log_p), paths or (None, None, None), strict=True):
        if entry is not None:
            out.paths[path] = entry
        else:
            out.paths.pop(path, None)


def _meta(paths: Paths | None, name: str, data: dict[str, bytes]) -> RemoteMeta:
    meta = load_meta(data.get(paths.meta.sha)) if paths is not None and paths.meta else None
    return meta if meta is not None else stand_in(name, paths, data)


def _merge_entry(out: Outcome, agent: str, name: str, b: Paths | None, o: Paths | None,
                 t: Paths | None, data: dict[str, bytes]) -> None:
    om, tm = _meta(o, name, data), _meta(t, name, data)
    o_live, t_live = not om.get("deleted"), not tm.get("deleted")
    o_log, t_log = om["kind"] == "log", tm["kind"] == "log"
    if o_log != t_log:
        if o_live and t_live:  # a log here, a file there: both kept, theirs renamed
            _take(out, agent, name, o)
            first = (t.meta or t.file or t.log) if t else None
            other = conflict_name(name, first.sha if first else "0" * 8)
            moved = dict(tm, name=other)
            _write(out, agent, other, moved, t.file if t else None,
                   _raw_log(t, data) if t_log else None)
            out.conflicts.append({"agent": agent, "name": name, "theirs_as": other,
                                  "ours_kind": om["kind"], "theirs_kind": tm["kind"]})
            return
        # one side deleted it and made it the other kind meanwhile: the live one is the write
        _take(out, agent, name, o if o_live else t)
        if o_live != t_live:
            out.kept_writes.append({"agent": agent, "name": name})
        return
    if o_log:
        _merge_log(out, agent, name, b, o, t, om, tm, data)
        return
    meta, report = merge_versions(name, om, tm)
    if not meta["deleted"] and (not o_live or not t_live):
        out.kept_writes.append({"agent": agent, "name": name})
    content = None
    if not meta["deleted"] and meta["versions"]:
        cur = meta["versions"][-1]
        content = TreeEntry(BLOB_MODE, str(cur["blob"]), int(cur.get("bytes") or 0))
    _write(out, agent, name, meta, content, None)
    if report["ours"] and report["theirs"]:
        out.versions.append({"agent": agent, "name": name, **report})


def _raw_log(paths: Paths | None, data: dict[str, bytes]) -> bytes | None:
    if paths is None or paths.log is None:
        return None
    return data.get(paths.log.sha)


def _merge_log(out: Outcome, agent: str, name: str, b: Paths | None, o: Paths | None,
               t: Paths | None, om: RemoteMeta, tm: RemoteMeta,
               data: dict[str, bytes]) -> None:
    b_lines, _ = parse_log(_raw_log(b, data) or b"")
    o_lines, o_bad = parse_log(_raw_log(o, data) or b"")
    t_lines, t_bad = parse_log(_raw_log(t, data) or b"")
    if o_bad or t_bad:
        out.warnings.append(f"log {name} (agent {agent}): {o_bad + t_bad} damaged line(s) "
                            "left out of the merge")
    o_live, t_live = not om.get("deleted"), not tm.get("deleted")
    if o_live and t_live:
        merged = merge_lines(b_lines, o_lines, t_lines)
        deleted = False
    elif o_live or t_live:  # deleted there, appended here: the log lives on as written
        live = o_lines if o_live else t_lines
        merged = [(line.id, line, "ours" if o_live else "theirs") for line in live]
        deleted = False
        out.kept_writes.append({"agent": agent, "name": name})
    else:
        merged, deleted = [], True
    meta = merge_log_meta(name, om, tm, merged, deleted)
    body = b"".join(line.render(new_id) for new_id, line, _ in merged)
    _write(out, agent, name, meta, None, None if deleted else body)


def _write(out: Outcome, agent: str, name: str, meta: RemoteMeta,
           content: TreeEntry | None, log: bytes | None) -> None:
    meta_p, file_p, log_p = entry_paths(agent, name)
    out.paths[meta_p] = dump_meta(meta)
    for path in (file_p, log_p):
        out.paths.pop(path, None)
    if content is not None:
        out.paths[file_p] = content
    if log is not None:
        out.paths[log_p] = log


def _report_moved_logs(out: Outcome, agent: str, names: list[str], o_all: dict[str, Paths],
                       data: dict[str, bytes]) -> None:
    for name in names:
        _meta_p, _file_p, log_p = entry_paths(agent, name)
        new = out.paths.get(log_p)
        if new is None:
            continue
        new_bytes = new if isinstance(new, bytes) else data.get(new.sha, b"")
        before, _ = parse_log(_raw_log(o_all.get(name), data) or b"")
        after, _ = parse_log(new_bytes)
        ranges = moved_ids(before, [(line.id, line) for line in after])
        keys = {line.key for line in before}
        received = sum(1 for line in after if line.key not in keys)
        if ranges or received:
            out.logs.append({"agent": agent, "name": name, "received": received,
                             "renumbered": ranges,
                             "first_changed_id": _first_changed(before, after)})


def _first_changed(before: list[Line], after: list[Line]) -> int | None:
    for i, line in enumerate(after):
        if i >= len(before) or before[i].key != line.key or before[i].id != line.id:
            return int(line.id)
    return None


def _dedupe_outputs(out: Outcome, agent: str, b_all: dict[str, Paths], o_all: dict[str, Paths],
                    t_all: dict[str, Paths], read: Reader) -> None:
    """The same output ingested on both sides since the base is one entry: theirs stays."""
    def candidates(side: dict[str, Paths], other: dict[str, Paths]
                   ) -> dict[tuple[str, str], list[str]]:
        found: dict[tuple[str, str], list[str]] = {}
        for name, paths in side.items():
            m = AUTO_NAME_RE.fullmatch(name)
            if m and name not in b_all and name not in other and paths.file and paths.meta:
                found.setdefault((m.group(1), m.group(2)), []).append(name)
        return found

    mine, theirs = candidates(o_all, t_all), candidates(t_all, o_all)
    common = set(mine) & set(theirs)
    if not common:
        return
    names = [n for k in common for n in mine[k] + theirs[k]]
    metas = read([(o_all.get(n) or t_all[n]).meta.sha for n in names])  # type: ignore[union-attr]

    def ident(paths: Paths) -> tuple[object, ...] | None:
        meta = load_meta(metas.get(paths.meta.sha)) if paths.meta else None
        if meta is None or meta.get("kind") != "output" or meta.get("deleted") \
                or not meta["versions"]:
            return None
        info = meta["versions"][-1].get("info") or {}
        if not info.get("source_sha256"):
            return None
        return info.get("source_sha256"), info.get("format"), paths.file.sha if paths.file else None

    for key in sorted(common):
        kept = {ident(t_all[n]): n for n in theirs[key]}
        for name in mine[key]:
            same = kept.get(ident(o_all[name]))
            if same is None or ident(o_all[name]) is None:
                continue
            meta = load_meta(metas.get(o_all[name].meta.sha))  # type: ignore[union-attr]
            assert meta is not None
            meta = dict(meta, deleted=True, same_as=same)
            _write(out, agent, name, meta, None, None)
            out.deduplicated.append({"agent": agent, "name": name, "same_as": same})
            out.sent = [s for s in out.sent if s != {"agent": agent, "name": name}]
