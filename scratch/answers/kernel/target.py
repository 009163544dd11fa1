"""Resolve a REF to a file plus its index, and price line ranges from that index.

REF is ``NAME``, ``NAME@VERSION``, or a unique prefix of the 8-hex hash that ends an automatic
name (``kubectl_get/20261130T071502Z-1a2b3c4d`` is also reachable as ``1a2b``); or, for an
artifact of a run, ``artifact:RUN/NAME`` (``@VERSION`` too): read in place from the run's
namespace, by a reader of that run only (:mod:`scratch.runs.access`), with the reader's own
budget and encoding.

Invariants:
- The index of a stored version is keyed by the version's blob id and stored format
  (``cache/index/<blob>.<format>``), so it is built at most once per content and format, and the
  same bytes stored as text and as JSON never share one; a missing or corrupt index, or one
  built for another format, is rebuilt here, never fatal. An index kept under the blob id
  alone (older stores) is used when it was built for the version's format.
- Logs (append-only, no versions) are indexed under ``cache/index/log-<hash of name>-<size>``:
  a log that grew gets a fresh index.
- Line costs come from the index's per-line token prefix sums (no re-tokenising of the entry).
- A long-lived process may keep indexes open between calls
  (:mod:`scratch.answers.kernel.kept_indexes`, off by default); a kept index answers only
  while its content file is unchanged.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from scratch.answers.kernel.context import Context
from scratch.errors import EntryNotFound, UsageError
from scratch.store import Store, Version
from scratch.store.names import ARTIFACT_PREFIX, split_artifact, split_ref

if TYPE_CHECKING:
    from scratch.index import EntryIndex
    from scratch.store import EntryMeta, ListRow
    from scratch.tokens import EncodingSpec

HASH_SUFFIX = re.compile(r"-([0-9a-f]{8})$")
FORMAT_NAME = re.compile(r"[a-z]{1,16}")  # a stored format (scratch.formats.sniffer.FORMATS)


class Target:
    """One resolved REF: the entry, its version and its index."""

    __slots__ = ("name", "version", "kind", "path", "index", "store", "info", "latest", "binary",
                 "key", "spec", "prefix")

    def __init__(self, name: str, version: int | None, kind: str, path: Path, index: EntryIndex,
                 store: Store, info: dict[str, object], latest: bool, binary: bool, key: str,
                 spec: EncodingSpec) -> None:
        self.name = name
        self.version = version  # None for logs
        self.kind = kind
        self.path = path
        self.index = index  # a kept index's handle (kept_indexes) when one is kept
        self.store = store
        self.info = info
        self.latest = latest  # the current content (or a log), so the bare name refers to it
        self.binary = binary  # the version was stored as binary (NUL bytes or invalid UTF-8)
        # what the content's caches are keyed by: ``<blob>.<format>``, or ``log-<hash>-<size>``
        self.key = key
        self.spec = spec  # the agent's encoding (scratch.tokens.EncodingSpec)
        self.prefix = ""  # an artifact's: "artifact:RUN/" (the name is the run's entry's)

    def __repr__(self) -> str:
        return f"Target({self.name!r}, version={self.version!r}, kind={self.kind!r})"

    @property
    def ref(self) -> str:
        """The REF that names exactly this content (the bare name for the current one)."""
        bare = self.prefix + self.name
        return bare if self.latest else f"{bare}@{self.version}"

    @property
    def format(self) -> str:
        return str(self.index.meta.get("format", "text"))


MIN_PREFIX = 3  # hex digits a hash prefix needs (fewer would match too much to mean one entry)


def resolve_name(store: Store, name: str) -> str:
    """The entry ``name`` refers to: itself when it is an entry; else the entry whose automatic
    name's hash starts with it (``1a2b``, and ``1a2b.<slug>`` for that entry's companion);
    else, for a tool name, that tool's latest stored output. Otherwise an error that says what
    would have matched."""
    meta = store.load_meta(name) if _valid(name) else None
    if meta is not None and not meta.get("deleted"):
        return name
    prefix, _, companion = name.partition(".")
    rows = None
    if re.fullmatch(f"[0-9a-f]{{{MIN_PREFIX},8}}", prefix):
        rows = store.list("")
        hits = []
        for row in rows:
            m = HASH_SUFFIX.search(row["name"])
            if m and m.group(1).startswith(prefix):
                hits.append(row["name"])
        if companion:  # NAME.<slug>: the companion of the entry the prefix names
            hits = [f"{h}.{companion}" for h in hits
                    if any(r["name"] == f"{h}.{companion}" for r in rows)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            _ambiguous(name, hits)
    if rows is None:
        rows = store.list("")
    latest = _latest_output(rows, name)
    if latest is not None:
        return latest
    raise _not_found(store, name, [r["name"] for r in rows] + _tools(rows))


def _tools(rows: list[ListRow]) -> list[str]:
    """The tools whose outputs are stored under automatic names (``<tool>/<time>-<hash>``):
    each name means its latest output, so a close one is worth suggesting too."""
    tools: dict[str, None] = {}
    for row in rows:
        folder, _, leaf = row["name"].rpartition("/")
        if folder and row.get("kind") == "output" and HASH_SUFFIX.search(leaf):
            tools[folder.removesuffix(".outputs")] = None
    return list(tools)


def entry_name(store: Store, name: str, *, deleted: bool = False) -> str:
    """The entry ``name`` names, the one way every command that acts on an existing entry
    reads it (history, rm, restore, diff, export, log read ... as schema and head do): the
    entry itself, a unique prefix of the hash of an automatic name, or a tool's name for its
    latest output (:func:`resolve_name`); ``deleted``: a deleted entry's own name counts
    too (its history, restoring it). Not found: the error names the close entries and
    tools, and the answers pipeline suggests the call asked with each."""
    if deleted and _valid(name):
        meta = store.load_meta(name)
        if meta is not None:
            return name
    return resolve_name(store, name)


def _ambiguous(name: str, hits: list[str]) -> None:
    from scratch.calls import call

    # one 8-digit hash for all: the same content under two names, only a name helps
    hashes = {m.group(1) for m in map(HASH_SUFFIX.search, hits) if m}
    hint = (f"all end in the same hash {next(iter(hashes))}; give the full name"
            if len(hashes) == 1 else "give more digits or the full name")
    raise UsageError(f"hash prefix {name!r} matches {len(hits)} entries; {hint}",
                     code="ambiguous_ref", matches=hits[:20],
                     suggestions=[call("head", ref=h) for h in hits[:5]])


def _latest_output(rows: list[ListRow], tool: str) -> str | None:
    """The newest output stored under the automatic names of tool ``tool`` (its folder is
    ``<tool>/``, or ``<tool>.outputs/`` when an entry is itself named ``<tool>``)."""
    best: tuple[str, str] | None = None
    for row in rows:
        name = row["name"]
        folder, _, leaf = name.rpartition("/")
        if folder not in (tool, f"{tool}.outputs") or not HASH_SUFFIX.search(leaf):
            continue
        if row.get("kind") != "output":
            continue
        key = (leaf.rsplit("-", 1)[0], name)  # <UTC time> sorts in time order
        if best is None or key > best:
            best = key
    return best[1] if best is not None else None


def close_names(name: str, names: list[str]) -> list[str]:
    """The entry names closest to ``name`` (a case-only difference first), as
    difflib.get_close_matches finds them."""
    import difflib
    lower = [n for n in names if n.lower() == name.lower()]
    return list(dict.fromkeys(lower + difflib.get_close_matches(name, names, n=3, cutoff=0.6)))[:3]


def _not_found(store: Store, name: str, names: list[str] | None = None) -> EntryNotFound:
    from scratch.calls import call
    suggestions = [call("ls")]
    hint = ""
    unmade: str | None = "name"  # how entries are made is said by the interface (registry)
    close = close_names(name, names or [])
    if close:  # the caller's own call with each close name is offered (answers pipeline)
        hint = "; did you mean " + " or ".join(repr(n) for n in close) + "?"
        suggestions = [call("head", ref=n) for n in close] + suggestions
        unmade = None
    elif re.fullmatch(f"[0-9a-f]{{1,{MIN_PREFIX - 1}}}", name.partition(".")[0]):
        hint = (f"; a hash prefix needs at least {MIN_PREFIX} hex digits "
                f"({name.partition('.')[0]!r} has {len(name.partition('.')[0])})")
        unmade = None
    elif _on_disk(name):
        import os
        leaf = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(name.rstrip("/"))) or "file"
        leaf = leaf.lstrip(".") or "file"
        unmade = "path"
        suggestions = [call("write", name=leaf, source=name), call("ls")]
    from scratch.store.names import where
    error = EntryNotFound(f"no entry named {name!r} {where(store.root, store.agent)}{hint}",
                          name=name, agent=store.agent, store=str(store.root),
                          suggestions=suggestions)
    error.unmade = unmade
    if close:
        error.details["close_names"] = close
    return error


def _valid(name: str) -> bool:
    from scratch.store.names import validate_name
    try:
        validate_name(name)
    except UsageError:
        return False
    return True


def _on_disk(name: str) -> bool:
    import os
    try:
        return os.path.isfile(name)
    except (OSError, ValueError):
        return False


def open_target(ctx: Context, ref: str, *, logs: bool = False) -> Target:
    from scratch.index import EntryIndex, IndexInvalid, build_index, open_version_index

    name, version = split_ref(ref)
    artifact = split_artifact(name)
    store: Store
    meta: EntryMeta | None
    if artifact is not None:  # a run's artifact, by its exact name
        store, name, meta = _artifact(ctx, *artifact, version)
    else:
        store = ctx.store()
        # an entry's own name (the common case) is loaded once; anything else is resolved
        meta = store.load_meta(name) if _valid(name) else None
        if meta is None or meta.get("deleted"):
            name = entry_name(store, name, deleted=version is not None)
            meta = store.require(name, allow_deleted=version is not None)
    spec = ctx.encoding()
    base = spec.base
    index_root = store.cache_dir / "index"
    blob: str | None = None
    if meta["kind"] == "log":
        if not logs:
            from scratch.calls import call
            raise UsageError(f"{name!r} is a log; this command works on files and outputs "
                             "(logs support head, tail and grep; or log read)",
                             code="wrong_kind", name=name, kind="log",
                             suggestions=[call("log read", name=name), call("tail", ref=name)])
        if version is not None:
            raise UsageError("logs have no versions", code="invalid_ref", ref=ref)
        path = store.content_path(name, "log")
        size = path.stat().st_size
        import hashlib
        key = hashlib.sha1(f"{store.agent}/{name}".encode()).hexdigest()[:16]
        key = f"log-{key}-{size}"
        fmt = "ndjson"
        info: dict[str, object] = {}
        kept = meta["log"].get("redaction") if meta.get("log") else None
        if kept:  # what redaction found in its appends (scratch.store.logs)
            info["redaction"] = kept
        binary = False
    else:
        ver = _version(store, name, meta, version)
        path = store.version_file(ver)
        info = ver.info.get("info") or {}
        binary = bool(ver.info.get("binary"))
        stored = info.get("format")
        fmt = (stored if isinstance(stored, str) and FORMAT_NAME.fullmatch(stored)
               else _sniff_file(path))
        blob = str(ver.info["blob"])
        key = f"{blob}.{fmt}"
        version = ver.version
    from scratch.progress import report  # an index built here (first use, a synced entry)

    def opener() -> EntryIndex:
        try:
            if blob is not None:
                return open_version_index(path, index_root, blob, fmt, base, progress=report)
            try:
                opened = EntryIndex.open(path, index_root / key, fmt)
                opened.add_base(base)
                return opened
            except IndexInvalid:
                return build_index(path, index_root / key, fmt, bases=[base], progress=report)
        except PermissionError:
            # a read-only store still answers: index into a private temporary directory
            import atexit
            import shutil
            import tempfile
            scratch_dir = tempfile.mkdtemp(prefix="scratch-index-")
            atexit.register(shutil.rmtree, scratch_dir, True)
            return build_index(path, Path(scratch_dir) / "index", fmt, bases=[base])

    from scratch.answers.kernel.kept_indexes import KeptIndex, open_kept
    index = open_kept(index_root / key, path, opener)
    if isinstance(index, KeptIndex):  # maybe opened by a call priced in another encoding
        index.add_base(base)
    latest = version is None or version == len(meta["versions"])
    target = Target(name, version, meta["kind"], path, index, store, info, latest, binary, key,
                    spec)
    if artifact is not None:
        target.prefix = f"{ARTIFACT_PREFIX}{artifact[0]}/"
    return target


def _artifact(ctx: Context, run: str, name: str, version: int | None
              ) -> tuple[Store, str, EntryMeta]:
    """The run's namespace, the artifact's name and metadata, for a reader of ``run``: another
    run's artifact, and one that is not there, are ``entry_not_found`` alike."""
    from scratch.runs import RunStore, artifact_not_found, check_member
    check_member(ctx.run, run, name, ctx.agent)
    space = RunStore.open_run(ctx.root, run, ctx.agent, ctx.config)
    meta = space.load_meta(name)
    if meta is None or meta["kind"] == "log" or (meta.get("deleted") and version is None):
        raise artifact_not_found(run, name, ctx.agent, ctx.run)
    return space, name, meta


def _version(store: Store, name: str, meta: EntryMeta, version: int | None) -> Version:
    """Version ``version`` (None: the current one) of the entry whose ``meta`` was just read;
    what is not there is left to ``Store.resolve`` to report."""
    versions = meta.get("versions") or []
    wanted = len(versions) if version is None else version
    if versions and 1 <= wanted <= len(versions) and not versions[wanted - 1].get("removed"):
        return Version(name, wanted, meta, versions[wanted - 1])
    return store.resolve(name, version)


def _sniff_file(path: Path) -> str:
    from scratch.formats.sniffer import sniff
    with open(path, "rb") as fh:
        head = fh.read(65536)
        more = bool(fh.read(1))
    return sniff(head, complete=not more)


def line_prefix_cost(lineno: int) -> int:
    """Tokens the ``N:`` line-number prefix adds: ~1 per 3 digits, plus the separator."""
    digits = len(str(lineno))
    return (digits + 2) // 3 + 1


def numbers_cost(start: int, end: int) -> int:
    """Total :func:`line_prefix_cost` of lines start..end, computed per band of digit counts."""
    total = 0
    lo = start
    while lo <= end:
        digits = len(str(lo))
        hi = min(end, 10 ** digits - 1)
        total += (hi - lo + 1) * ((digits + 2) // 3 + 1)
        lo = hi + 1
    return total


def range_cost(target: Target, start: int, end: int, spec: EncodingSpec, *, numbers: bool
               ) -> int:
    """Estimated tokens of printing lines start..end (from the index's prefix sums)."""
    if end < start:
        return 0
    base_tokens = target.index.range_tokens(start, end, spec.base) or 0
    return int(spec.scale(base_tokens + (numbers_cost(start, end) if numbers else 0)))
