"""Rewriting the store's history without some of what it holds (``scratch purge``).

A :class:`Filter` says what goes: whole paths (an entry's three files), whole folders (an
agent's namespace), some versions of a path (by blob id), and any blob of those left in a
*carrier* tree (the flat trees a sync pushes to carry objects, whose entries are named by
their ids). :class:`Rewriter` applies filters to every commit reachable from the given tips,
parents first, and says what each old commit became.

Invariants:
- Deterministic: a commit's rewrite depends only on its own bytes, the rewrites of its
  parents and the filters applied to it, so two stores that rewrite the same commit with the
  same filters make the same commit id. That is what lets a second store that learns of a
  purge from a remote (:mod:`scratch.sync.purge`) rewrite its own copy of the shared history
  into exactly the commits the remote now has.
- A filter is a purge's: it is applied to a commit only if the commit's tree does not hold
  that purge's record (``purges/<id>.json``): commits made after the purge, which know of it,
  are left alone (a later write of the same name is not purged again).
- Only trees on the way to a filtered path are read and rebuilt (each distinct tree once);
  entries are removed, never reordered, so git's tree order holds without sorting. A commit
  keeps every header byte for byte but its ``tree`` and ``parent`` lines (a ``gpgsig`` header,
  which the rewrite would make false, is dropped).
- A commit whose tree the filters changed and that then equals its only parent's tree is
  dropped (its children take that parent); a root commit left with an empty tree is dropped.
  A commit whose tree and parents did not change keeps its id: history before the first
  filtered path is not rewritten.
- Nothing is written until :meth:`Rewriter.objects` is asked for (a dry run writes nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import orjson

from scratch.store.gitstore import EMPTY_TREE
from scratch.sync.gitops import ObjectReader, object_id

if TYPE_CHECKING:
    from scratch.sync.gitops import Plumbing

RECORDS_DIR = "purges"
TREE_MODE = b"40000"

# what a filter does at a path component: drop all below, or drop these blob ids there
DROP = "drop"


class LogScrub(NamedTuple):
    """Lines of a log (``ledger.sync_log``: the call ledger's records, synced) to scrub: those
    whose record touched one of ``names`` or ``versions`` ({name: version numbers})."""

    names: frozenset[str]
    versions: Mapping[str, frozenset[int]]


class _LogRule(tuple[tuple[str, LogScrub], ...]):
    """The log scrubs of several purges at one path, oldest purge first (a line is marked
    with the first purge that takes it, as purging one after the other would)."""

    path = ""


def _log_rule(path: str, scrubs: tuple[tuple[str, LogScrub], ...]) -> _LogRule:
    rule = _LogRule(scrubs)
    rule.path = path
    return rule


@dataclass(frozen=True)
class Filter:
    """What one purge removes (see the module docstring). Paths are relative to the store
    root (``agents/A/files/NAME``); ``folders`` end without a slash (``agents/A``)."""

    purge: str  # the purge's id: its record is purges/<purge>.json
    paths: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()
    versions: Mapping[str, frozenset[str]] = field(default_factory=dict)
    blobs: frozenset[str] = frozenset()  # left out of carrier trees wherever they are
    logs: Mapping[str, LogScrub] = field(default_factory=dict)  # log path -> lines to scrub
    order: str = ""  # when the purge was made: filters apply oldest first

    @property
    def record_name(self) -> bytes:
        return f"{self.purge}.json".encode()


class _Node(dict[bytes, "_Node | str | frozenset[bytes] | _LogRule"]):
    """One level of the path trie of a set of filters."""


def _trie(filters: Iterable[Filter]) -> _Node:
    root = _Node()

    def put(path: str, leaf: str | frozenset[bytes] | _LogRule) -> None:
        parts = [p.encode("utf-8", "surrogateescape") for p in path.split("/")]
        node = root
        for part in parts[:-1]:
            child = node.get(part)
            if child == DROP:
                return  # a folder above it goes whole
            if not isinstance(child, _Node):
                child = node[part] = _Node()
            node = child
        last = parts[-1]
        old = node.get(last)
        if leaf == DROP or old is None:
            node[last] = leaf
        elif isinstance(old, frozenset) and isinstance(leaf, frozenset):
            node[last] = old | leaf
        elif isinstance(old, _LogRule) and isinstance(leaf, _LogRule):
            node[last] = _log_rule(path, old + leaf)
        # else: the path goes whole already, or a folder holds it (kept as the larger rule)

    for f in sorted(filters, key=lambda f: (f.order, f.purge)):
        for folder in f.folders:
            put(folder, DROP)
        for path in f.paths:
            put(path, DROP)
        for path, blobs in f.versions.items():
            put(path, frozenset(bytes.fromhex(b) for b in blobs))
        for path, scrub in f.logs.items():
            put(path, _log_rule(path, ((f.purge, scrub),)))
    return root


def parse_tree(data: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """The entries of a tree object: (mode, name, 20-byte id), in the tree's order."""
    out = []
    pos, end = 0, len(data)
    while pos < end:
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        out.append((data[pos:space], data[space + 1:nul], data[nul + 1:nul + 21]))
        pos = nul + 21
    return out


def _carrier_entry(mode: bytes, name: bytes, sha: bytes) -> bool:
    """A carrier's entry: a blob named by its own id."""
    return mode != TREE_MODE and len(name) == 40 and name == sha.hex().encode()


@dataclass
class Outcome:
    """What a rewrite made: old commit -> new commit (None: dropped with no ancestor left),
    and the counts a dry run reports."""

    mapping: dict[str, str | None] = field(default_factory=dict)
    commits: int = 0  # commits read
    rewritten: int = 0  # given a new id
    dropped: int = 0  # left out (they held only what went)
    blobs: set[str] = field(default_factory=set)  # blob ids the filters took out of trees
    log_lines: dict[str, int] = field(default_factory=dict)  # log path -> most lines scrubbed


class Rewriter:
    """Applies filters to history (see the module docstring); one per rewrite."""

    def __init__(self, git: Plumbing, filters: list[Filter]) -> None:
        self.git = git
        self.filters = filters
        self._tries: dict[frozenset[str], tuple[_Node, frozenset[bytes]]] = {}
        self._trees: dict[tuple[str, int, bool], str | None] = {}  # (tree, trie, root) -> new
        self._records: dict[str, frozenset[bytes]] = {}  # purges/ subtree -> record names
        self._new: dict[str, tuple[str, bytes]] = {}  # objects made: id -> (type, data)
        self._cache: dict[str, tuple[str, bytes]] = {}  # objects read, by id
        self._parsed: dict[str, list[tuple[bytes, bytes, bytes]]] = {}  # trees, by id
        self._commit_tree: dict[str, str] = {}
        self._reader: ObjectReader | None = None
        self.carriers: set[str] = set()  # blob ids seen in carrier trees

    # -- reading ------------------------------------------------------------------------------
    def _read(self, sha: str) -> tuple[str, bytes]:
        found = self._new.get(sha) or self._cache.get(sha)
        if found is not None:
            return found
        assert self._reader is not None
        found = self._cache[sha] = self._reader.read(sha)
        return found

    def _prefetch(self, shas: Iterable[str]) -> None:
        """Read every object of ``shas`` not read yet, in one round trip."""
        assert self._reader is not None
        wanted = [s for s in dict.fromkeys(shas) if s not in self._cache and s not in self._new]
        if wanted:
            self._cache.update(self._reader.read_many(wanted))

    def _entries(self, tree: str) -> list[tuple[bytes, bytes, bytes]]:
        found = self._parsed.get(tree)
        if found is None:
            found = self._parsed[tree] = parse_tree(self._read(tree)[1])
        return found

    def _prefetch_paths(self, roots: Iterable[str]) -> None:
        """Read, level by level, every tree the filters will look into below ``roots``:
        one round trip per level of the path tries, not one per tree."""
        level = []
        for root in dict.fromkeys(roots):
            ids = self._filters_for(root)
            if ids:
                level.append((root, self._trie_for(ids)[0]))
        seen: set[tuple[str, int]] = set()
        while level:
            following: list[tuple[str, _Node]] = []
            for tree, node in level:
                for mode, name, oid in self._entries(tree):
                    rule = node.get(name)
                    if isinstance(rule, _Node) and mode == TREE_MODE:
                        key = (oid.hex(), id(rule))
                        if key not in seen:
                            seen.add(key)
                            following.append((oid.hex(), rule))
            self._prefetch(t for t, _n in following)
            level = following

    def _put(self, kind: str, data: bytes) -> str:
        sha = object_id(kind, data)
        self._new.setdefault(sha, (kind, data))
        return sha

    # -- trees --------------------------------------------------------------------------------
    def _filters_for(self, root_tree: str) -> frozenset[str]:
        """The ids of the filters that apply to a commit with this root tree: those whose
        record the tree does not hold."""
        entries = self._entries(root_tree)
        held: frozenset[bytes] = frozenset()
        for mode, name, sha in entries:
            if _carrier_entry(mode, name, sha):
                self.carriers.add(sha.hex())
            elif name == RECORDS_DIR.encode() and mode == TREE_MODE:
                sub = sha.hex()
                known = self._records.get(sub)
                if known is None:
                    known = self._records[sub] = frozenset(
                        n for _m, n, _s in self._entries(sub))
                held = known
        return frozenset(f.purge for f in self.filters if f.record_name not in held)

    def _trie_for(self, ids: frozenset[str]) -> tuple[_Node, frozenset[bytes]]:
        found = self._tries.get(ids)
        if found is None:
            chosen = [f for f in self.filters if f.purge in ids]
            blobs = frozenset(bytes.fromhex(b) for f in chosen for b in f.blobs)
            found = self._tries[ids] = (_trie(chosen), blobs)
        return found

    def _rewrite_tree(self, sha: str, node: _Node, carriers: frozenset[bytes], root: bool,
                      outcome: Outcome) -> str | None:
        """The id of tree ``sha`` with what ``node`` names removed (None: nothing is left)."""
        key = (sha, id(node), root)
        if key in self._trees:
            return self._trees[key]
        entries = self._entries(sha)
        kept: list[tuple[bytes, bytes, bytes]] = []
        changed = False
        for mode, name, oid in entries:
            rule = node.get(name)
            if rule is not None and rule == DROP:
                changed = True
                self._note_dropped(mode, oid, outcome)
                continue
            if isinstance(rule, _LogRule):
                if mode != TREE_MODE:
                    new_blob = self._scrub_log(oid.hex(), rule, outcome)
                    if new_blob != oid.hex():
                        changed = True
                        oid = bytes.fromhex(new_blob)
            elif isinstance(rule, frozenset):
                if mode != TREE_MODE and oid in rule:
                    changed = True
                    outcome.blobs.add(oid.hex())
                    continue
            elif isinstance(rule, _Node) and mode == TREE_MODE:
                new = self._rewrite_tree(oid.hex(), rule, carriers, False, outcome)
                if new is None:
                    changed = True
                    continue
                if new != oid.hex():
                    changed = True
                    oid = bytes.fromhex(new)
            elif root and carriers and oid in carriers and _carrier_entry(mode, name, oid):
                changed = True
                continue
            kept.append((mode, name, oid))
        if not changed:
            result: str | None = sha
        elif not kept:
            result = EMPTY_TREE if root else None
            if root:
                self._put("tree", b"")
        else:
            result = self._put("tree", b"".join(m + b" " + n + b"\0" + o for m, n, o in kept))
        self._trees[key] = result
        return result

    def _scrub_log(self, blob: str, rule: _LogRule, outcome: Outcome) -> str:
        """The id of log ``blob`` with the lines ``rule`` takes scrubbed, as the call ledger
        scrubs a record (:func:`scratch.store.ledger.scrub`): ids, order and line count kept."""
        key = (blob, id(rule), False)
        if key in self._trees:
            return str(self._trees[key])
        from scratch.store.ledger import SCRUB_KEEPS
        from scratch.sync.scrub import touches
        lines = self._read(blob)[1].split(b"\n")
        scrubbed = 0
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            entry = record.get("entry") if isinstance(record, dict) else None
            if not isinstance(entry, dict):
                continue
            for purge, scrub in rule:
                versions = {n: set(v) for n, v in scrub.versions.items()}
                if touches(entry, set(scrub.names), versions):  # type: ignore[arg-type]
                    record["entry"] = {k: entry.get(k) for k in SCRUB_KEEPS} | {"purged": purge}
                    lines[i] = orjson.dumps(record)
                    scrubbed += 1
                    break
        result = self._put("blob", b"\n".join(lines)) if scrubbed else blob
        outcome.log_lines[rule.path] = max(outcome.log_lines.get(rule.path, 0), scrubbed)
        self._trees[key] = result
        return result

    def _note_dropped(self, mode: bytes, oid: bytes, outcome: Outcome) -> None:
        """Add the blobs of a dropped entry (a whole folder's, for a tree) to the outcome."""
        if mode != TREE_MODE:
            outcome.blobs.add(oid.hex())
            return
        level = [oid.hex()]
        seen: set[str] = set()
        while level:  # one round trip per level of the folder
            self._prefetch(level)
            following = []
            for tree in level:
                for m, _n, o in self._entries(tree):
                    if m == TREE_MODE:
                        if o.hex() not in seen:
                            seen.add(o.hex())
                            following.append(o.hex())
                    else:
                        outcome.blobs.add(o.hex())
            level = following

    # -- commits ------------------------------------------------------------------------------
    def run(self, tips: Iterable[str], exclude: Iterable[str] = ()) -> Outcome:
        """Rewrite every commit reachable from ``tips`` (parents first); commits reachable
        from ``exclude`` are taken as they are (known to hold nothing the filters take)."""
        outcome = Outcome()
        order = self.git.commits_parents_first(tips, exclude)
        with self.git.reader() as reader:
            self._reader = reader
            try:
                self._prefetch(sha for sha, _parents in order)
                roots = [self._read(sha)[1][5:45].decode() for sha, _parents in order]
                self._prefetch(roots)
                self._prefetch(oid.hex() for root in roots for mode, name, oid
                               in self._entries(root)
                               if name == RECORDS_DIR.encode() and mode == TREE_MODE)
                self._prefetch_paths(roots)
                for sha, parents in order:
                    self._rewrite_commit(sha, parents, outcome)
            finally:
                self._reader = None
                self._cache.clear()
                self._parsed.clear()
        return outcome

    def _rewrite_commit(self, sha: str, parents: list[str], outcome: Outcome) -> None:
        outcome.commits += 1
        mapping = outcome.mapping
        raw = self._read(sha)[1]
        head, sep, message = raw.partition(b"\n\n")
        lines = head.split(b"\n")
        tree = lines[0][5:].decode()
        ids = self._filters_for(tree)
        new_tree = tree
        if ids:
            node, carriers = self._trie_for(ids)
            new_tree = self._rewrite_tree(tree, node, carriers, True, outcome) or EMPTY_TREE
        new_parents: list[str] = []
        for parent in parents:
            mapped = mapping.get(parent, parent)
            if mapped is not None and mapped not in new_parents:
                new_parents.append(mapped)
        changed_tree = new_tree != tree
        if not changed_tree and new_parents == parents:
            mapping[sha] = sha
            return
        if changed_tree and len(new_parents) == 1 \
                and new_tree == self._tree_of(new_parents[0]):
            mapping[sha] = new_parents[0]  # it held only what went
            outcome.dropped += 1
            return
        if changed_tree and not new_parents and new_tree == EMPTY_TREE:
            mapping[sha] = None
            outcome.dropped += 1
            return
        out = [b"tree " + new_tree.encode()]
        out += [b"parent " + p.encode() for p in new_parents]
        skipping = False
        for line in lines[1:]:
            if line.startswith(b"parent "):
                continue
            if line.startswith((b"gpgsig ", b"gpgsig-sha256 ")):
                skipping = True
                continue
            if skipping and line.startswith(b" "):
                continue  # the signature's continuation lines
            skipping = False
            out.append(line)
        new = self._put("commit", b"\n".join(out) + sep + message)
        self._commit_tree[new] = new_tree
        mapping[sha] = new
        outcome.rewritten += 1

    def _tree_of(self, commit: str) -> str:
        known = self._commit_tree.get(commit)
        if known is None:
            raw = self._read(commit)[1]
            known = self._commit_tree[commit] = raw[5:45].decode()
        return known

    # -- results ------------------------------------------------------------------------------
    def objects(self) -> list[tuple[str, bytes]]:
        """The objects this rewrite made (for :meth:`Plumbing.write_pack`)."""
        return list(self._new.values())

    def retag(self, sha: str, mapping: Mapping[str, str | None]) -> str | None:
        """Annotated tag ``sha`` pointing at its target's rewrite (None: the target went)."""
        with self.git.reader() as reader:
            kind, data = reader.read(sha)
        head, sep, rest = data.partition(b"\n\n")
        lines = head.split(b"\n")
        target = lines[0][7:].decode()
        new = mapping.get(target, target)
        if new is None:
            return None
        if new == target:
            return sha
        lines[0] = b"object " + new.encode()
        return self._put(kind, b"\n".join(lines) + sep + rest)
