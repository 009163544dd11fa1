"""Ingest: pass small outputs through untouched, store and index big ones, return a pointer.

Shared by the commands that store an output (``ingest``, ``run``) and by the MCP proxy, which
stores an upstream tool's result with its companions.

Invariants:
- Below the tool's threshold the exact bytes received are returned for stdout and nothing is
  stored (unless ``store_always``). Since a token is at least one byte, input shorter in bytes
  than the threshold passes without loading a tokenizer.
- At or above it: the content is normalised (JSON pretty-printed unless ``raw``), indexed once
  (index keyed by the stored blob id and format under ``cache/index/``), committed as a
  version of an ``output`` entry together with its companion entries, and described by a
  pointer.
- Automatic names are ``<tool or stdin>/<UTC timestamp>-<8 hex of sha256 of the input>``; the
  same input ingested again under an automatic name points to the entry already stored. When an
  entry is itself named like the tool, the folder is ``<tool>.outputs`` instead.
- The pointer's size rule (see :mod:`scratch.answers.pointer.build`) is judged against the smaller
  of the stored tokens and the tokens as received (they differ when JSON is re-rendered), in
  the rendering the agent reads (its next calls spelled and sized as that rendering prints
  them). The pointer is charged as shown (never refused: the output is already in hand), and
  what storing kept out of the context is recorded as intercepted.
- NAME and the format are checked before any input is read.
- An index that fails to build for a structured format falls back to a text index with a
  warning: what arrived is stored either way.
- Memory stays bounded: input spools to a file past 8 MiB and is streamed from there. When
  the stored form is exactly the input (content stored as received, JSON already in the
  canonical layout), the spooled file itself becomes the stored file: no copy is written.
- Big JSON: once its canonical text is stored, its line pass
  (:class:`scratch.index.lines.LinesAhead`), its pointer's error grep and, once its blob id
  is hashed, its git object (a loose object written here, at git's loose compression level)
  read the stored file beside the parse of its items and the analysis (memory holds a slice
  of it at a time); all are waited for (or their leftovers removed) before ingest returns.
- A caller may hand companions of its own (:class:`Companion`: the images of an MCP result,
  its JSON text blocks) and extra version info; they are committed with the output, in the
  same commit, named ``NAME.<slug>`` like embedded documents.
- What is stored is redacted first (:mod:`scratch.redact`), unless the policy for the tool
  says not to (``redact.*`` settings, ``no_redact``): input in memory is redacted before it is
  normalised; input spooled to a file is scanned by a child process on the other core while
  it is normalised as it is, and nothing of that reaches the store (git object, index, stored
  file) before the scan's answer: nothing found, it is stored as it is; values found, it is
  dropped and the redacted copy (a file into a file, memory bounded) is normalised instead.
  Each companion is redacted likewise, and each version is committed with its record; the
  pointer says what was redacted (``redacted``). What passes through below the threshold is
  not stored, so it is not redacted.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from scratch.answers.kernel.context import Context
from scratch.answers.kernel.rendering import Rendering
from scratch.answers.kernel.result import Charge, Result
from scratch.errors import LimitExceeded, ScratchError, UsageError
from scratch.store import Pending, Store
from scratch.store.gitstore import file_blob
from scratch.store.names import validate_name
from scratch.store.spool import Spooled, spool
from scratch.thresholds import resolve_threshold

if TYPE_CHECKING:
    from scratch.answers.pointer.grep import ErrorGrepAhead
    from scratch.beside import Beside
    from scratch.index import EntryIndex
    from scratch.index.analyze import Analysis
    from scratch.index.lines import LinesAhead
    from scratch.index.normalizer import Normalized
    from scratch.redact.core import FileScan
    from scratch.redact.policy import Policy
    from scratch.redact.records import Redaction
    from scratch.store.gitstore import BlobWriter
    from scratch.store.records import WrittenVersion
    from scratch.tokens import EncodingSpec

Progress = Callable[[str, int, "int | None"], None]
# Tokens of the --json envelope around the pointer's data ({"scratch":1,...,"meta":{tokens,
# budget}} and "pointer_tokens"), measured at 58-62; rounded up.
ENVELOPE_TOKENS = 80
BACKGROUND_OBJECT_BYTES = 4 << 20
# big JSON's line pass (a child process, during the parse) reads the stored file this much
# at a time, less than its default: its memory adds to the ingest's own
LINE_PASS_CHUNK = 2 << 20
RECEIVED_PROBE_BYTES = 4 << 20  # of the input, counted to tell it holds enough tokens
# options of common CLIs that take a value, so the value is not taken for the subcommand
VALUED_OPTIONS = frozenset({"-n", "--namespace", "--context", "--kubeconfig", "--cluster",
                            "-o", "--output", "--region", "--profile", "-R", "--repo",
                            "--project", "--zone"})
TOOL_BAD = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Companion:
    """A document stored beside the output: its slug (``NAME.<slug>``), bytes, declared format
    (None: sniffed) and, for binary content, its MIME type (kept in the version info)."""

    slug: str
    data: bytes
    fmt: str | None = None
    mime_type: str | None = None


@dataclass
class IngestOptions:
    name: str | None = None
    tool: str | None = None
    fmt: str | None = None
    raw: bool = False
    store_always: bool = False
    partial: bool = False
    companions: tuple[Companion, ...] = ()
    info: dict[str, object] | None = None  # added to the version info (where it came from)
    notices: tuple[str, ...] = ()  # said with the pointer
    no_redact: bool = False  # store as given (the user said so; recorded)


def tool_slug(tool: str | None) -> str:
    if not tool:
        return "stdin"
    slug = TOOL_BAD.sub("_", tool).strip("._-")
    return slug[:100] or "stdin"


def check_options(opts: IngestOptions, store: Store | None = None) -> None:
    """Refuse a bad NAME or format before any input is read (or any command run): once the
    input is consumed, an error would lose it."""
    if opts.name is not None:
        validate_name(opts.name)
        meta = store.load_meta(opts.name) if store is not None else None
        if meta is not None and meta["kind"] == "log" and not meta.get("deleted"):
            raise UsageError(f"{opts.name!r} is a log; outputs need another name",
                             code="wrong_kind", name=opts.name, kind="log")
    if opts.fmt is not None:
        from scratch.formats.sniffer import canonical_format
        canonical_format(opts.fmt)


def _rendering(rendering: Rendering | None) -> Rendering:
    if rendering is not None:
        return rendering
    from scratch.answers.kernel.rendering import PlainCalls
    return PlainCalls()


def ingest(ctx: Context, stream: BinaryIO, opts: IngestOptions,
           progress: Progress | None = None, rendering: Rendering | None = None) -> Result[object]:
    """Store ``stream``'s output (or pass it through); ``progress``: where to say how far it
    is (default: the call's reporter, :mod:`scratch.progress`)."""
    from scratch import progress as reporting
    progress = progress or reporting.report
    store = ctx.store()
    check_options(opts, store)
    from scratch.safefs import ensure_dir

    tmp_dir = ensure_dir(store.root, store.cache_dir / "tmp")  # never a symlink out
    spooled = spool(stream, tmp_dir, progress=lambda n: progress("read", n, None))
    try:
        return ingest_spooled(ctx, spooled, opts, progress, rendering)
    finally:
        spooled.discard()


def ingest_spooled(ctx: Context, spooled: Spooled, opts: IngestOptions,
                   progress: Progress | None = None, rendering: Rendering | None = None
                   ) -> Result[object]:
    from scratch import progress as reporting
    progress = progress or reporting.report
    check_options(opts)
    store = ctx.store()
    tool = tool_slug(opts.tool)
    if spooled.size == 0:
        return Result("ingest", data={"stored": False, "empty": True, "bytes": 0},
                      text=b"", notices=("scratch: the input was empty; nothing stored",))
    limit = ctx.config["limits.max_ingest_bytes"]
    if spooled.size > limit:
        raise LimitExceeded(f"{spooled.size:,} bytes is over limits.max_ingest_bytes "
                            f"({limit:,}); nothing stored", code="ingest_too_large",
                            limit="limits.max_ingest_bytes", limit_value=limit,
                            attempted=spooled.size)
    threshold = resolve_threshold(opts.tool or "stdin", ctx.config["thresholds"])
    spec = ctx.encoding()
    if not opts.store_always and spooled.size < threshold.min_tokens:
        return _passthrough(spooled, threshold.min_tokens, None)
    received: int | None = None  # exact tokens of the input as received, when counted
    if not opts.store_always:
        from scratch.tokens import count_stream
        # enough of the input to decide: tokens of a prefix never exceed the whole's by much,
        # and a prefix that already reaches the threshold settles it
        prefix_bytes = max(64 * 1024, 16 * threshold.min_tokens)
        if spooled.size <= prefix_bytes:
            counted = count_stream(_chunks(spooled, progress), spec)
            if counted < threshold.min_tokens:
                return _passthrough(spooled, threshold.min_tokens, counted)
            received = counted
        else:
            head = spooled.head(prefix_bytes)
            cut = head.rfind(b"\n")
            counted = count_stream([head[: cut + 1] if cut > 0 else head], spec)
            if counted < threshold.min_tokens:
                counted = count_stream(_chunks(spooled, progress), spec)
                if counted < threshold.min_tokens:
                    return _passthrough(spooled, threshold.min_tokens, counted)
                received = counted
    return _store(ctx, store, spooled, opts, tool, progress, _rendering(rendering), received)


def _passthrough(spooled: Spooled, threshold: int, tokens: int | None) -> Result[object]:
    data = b"".join(spooled.chunks())
    payload = {"stored": False, "bytes": len(data), "tokens": tokens, "threshold": threshold,
               "content": data.decode("utf-8", errors="replace")}
    return Result("ingest", data=payload, text=data)


def _auto_name(store: Store, tool: str, sha256: str, fmt: str) -> tuple[str, bool]:
    """The automatic name, and whether identical content is already stored under one.

    Only an entry whose current version was ingested from exactly these bytes as the same
    format ``fmt`` counts (the full sha256 is in its version info): 8 hex digits alone can
    collide, an entry can have been rewritten since, and the same input read as another
    format (``--format text``, then sniffed as JSON) is another entry.
    """
    folder = _auto_folder(store, tool)
    suffix = f"-{sha256[:8]}"
    for meta in store.iter_meta():
        name = meta["name"]
        if (meta.get("deleted") or meta["kind"] != "output" or not name.startswith(f"{folder}/")
                or not name.endswith(suffix) or not meta.get("versions")):
            continue
        info = meta["versions"][-1].get("info") or {}
        if info.get("source_sha256") == sha256 and info.get("format") == fmt:
            return name, True
    now = datetime.now(UTC)
    for ahead in range(60):
        fresh = f"{folder}/{(now + timedelta(seconds=ahead)):%Y%m%dT%H%M%SZ}{suffix}"
        if store.load_meta(fresh) is None:
            break
        # taken within this second (say, by this input read as another format): the next
        # free second, rather than a new version of that entry
    return fresh, False


def _auto_folder(store: Store, tool: str) -> str:
    """The folder of ``tool``'s automatic names: its slug, unless an entry already has that
    name (a name cannot be both an entry and a folder, and the output must not be lost over
    it); then ``<slug>.outputs``, ``<slug>.outputs-2``, ..."""
    for i in range(1, 1000):
        folder = tool if i == 1 else f"{tool}.outputs" if i == 2 else f"{tool}.outputs-{i - 1}"
        if not (store.files_dir / folder).is_file():
            return folder
    return "stdin.outputs"  # pragma: no cover - a thousand entries named after one tool


def _chunks(spooled: Spooled, progress: Progress | None) -> Iterator[bytes]:
    """The spooled input block by block, saying how much of it was counted."""
    done = 0
    for chunk in spooled.chunks():
        yield chunk
        done += len(chunk)
        if progress is not None:
            progress("count", done, spooled.size)


def _received_tokens(spooled: Spooled, spec: EncodingSpec, enough: int,
                     progress: Progress | None = None) -> int | None:
    """Tokens of the input as received, or None when it surely has ``enough`` or more.

    Its first :data:`RECEIVED_PROBE_BYTES` are counted a segment at a time until ``enough``
    (plus a margin for the tokens around the probe's cut) is reached, so a big input costs a
    few hundred KB of counting, not a second pass, and no tokenizer engine's memory; only an
    input still under ``enough`` there is counted whole.
    """
    from scratch.tokens import count_stream, count_stream_until
    probe = spooled.head(RECEIVED_PROBE_BYTES)
    got = count_stream_until([probe], spec, enough + 64)
    if got is None or len(probe) >= spooled.size:
        return got
    return count_stream(_chunks(spooled, progress), spec)


def _laid_out(spooled: Spooled, opts: IngestOptions) -> bool | None:
    """For big JSON that ingest lays out (:data:`scratch.index.normalizer.PARALLEL_BYTES` or
    more, not ``raw``, not declared another format), whether its first 64 KiB are in the
    stored layout already (:func:`scratch.reindent.may_be_canonical`): then it is likely
    stored as received; else it will be laid out anew. None for any other input."""
    from scratch.index.normalizer import PARALLEL_BYTES
    from scratch.reindent import may_be_canonical

    if spooled.size < PARALLEL_BYTES or opts.raw \
            or (opts.fmt is not None and opts.fmt.lower() != "json"):
        return None
    head = spooled.head(64 << 10)
    if head.lstrip()[:1] not in (b"{", b"["):
        return None
    return may_be_canonical(head)


def _received_ahead(spooled: Spooled, spec: EncodingSpec) -> Beside[int | None]:
    """:func:`_received_tokens` of the input, started now in a thread, for big JSON that
    will be laid out anew: its pointer is judged by the smaller of its stored and received
    tokens, and counting the received prefix (with the tokenizer's first load) took ~0.3 s
    at the very end; this runs while the re-indent pass has the GIL released."""
    from scratch.answers.pointer.build import MAX_POINTER_TOKENS
    from scratch.beside import Beside

    return Beside(_received_tokens, spooled, spec, 100 * MAX_POINTER_TOKENS,
                  name="scratch-received", daemon=True)


def _store(ctx: Context, store: Store, spooled: Spooled, opts: IngestOptions, tool: str,
           progress: Progress | None, rendering: Rendering, received: int | None = None
           ) -> Result[object]:
    from scratch.answers.pointer.build import MAX_POINTER_TOKENS, build_pointer, fit_shown
    from scratch.index.normalizer import normalize
    from scratch.tokens import count_text

    spec = ctx.encoding()
    from scratch.safefs import ensure_dir

    tmp_dir = ensure_dir(store.root, store.cache_dir / "tmp")
    fd, prepared_name = tempfile.mkstemp(dir=tmp_dir, prefix=f".tmp-ingest-{os.getpid()}-")
    os.close(fd)
    prepared = Path(prepared_name)
    companions_tmp: list[Path] = []
    from scratch.answers.capture.redaction import policy_for
    policy = policy_for(ctx, opts.tool or "stdin", no_redact=opts.no_redact)
    writer: BlobWriter | None = None
    aheads: list[LinesAhead] = []  # big JSON's line pass, under way
    guessed: list[LinesAhead] = []  # the line pass of the spool, started on a guess
    greps: list[ErrorGrepAhead] = []  # and its pointer's error grep
    scanning: FileScan | None = None
    laid_out = _laid_out(spooled, opts)
    counting = _received_ahead(spooled, spec) if laid_out is False and received is None \
        else None
    try:
        source, redaction, scanning = _redacted_input(ctx, spooled, policy)
        started: list[BlobWriter] = []
        from scratch import reindent

        if laid_out and spooled.path is not None and not reindent.HAVE_C:
            # big JSON whose first lines are in the stored layout is likely stored as the
            # spooled file itself: its line pass starts now, beside the pure-Python re-indent
            # pass that will tell, seconds later (and is dropped if the stored form is another
            # file after all). Not beside the C pass: it tells in a fraction of a second, and
            # a line pass started beside it only slowed it (three processes on two cores)
            from scratch.index.lines import LinesAhead

            guessed.append(LinesAhead(spooled.path, [spec.base], tmp_dir,
                                      chunk=LINE_PASS_CHUNK))

        def whole(path: Path) -> None:
            # big JSON whose stored form is complete on disk: its line pass and its error
            # grep read it now, beside the parse and the analysis (the line pass in a child,
            # the grep in a thread that runs without the GIL)
            from scratch.index.lines import LinesAhead

            if guessed and os.path.samefile(path, guessed[0].source):
                aheads.append(guessed.pop())  # the stored file is the spooled one
            else:
                aheads.append(LinesAhead(path, [spec.base], tmp_dir, chunk=LINE_PASS_CHUNK))
            from scratch.answers.pointer.grep import ErrorGrepAhead
            greps.append(ErrorGrepAhead(path, "json"))

        def written(path: Path, blob: str, parts: Sequence[bytes]) -> None:
            # and once its blob id is known, its git object, read from the stored file a slice
            # at a time in a thread (mostly without the GIL), compressed meanwhile beside the
            # stored text, and moved into git only once the input's scan, if still under
            # way, found nothing
            started.append(store.git.write_blob_async(
                parts, blob, gate=None if scanning is None else scanning.found_nothing,
                staging=tmp_dir))

        def storing(stage: str, done: int, total: int | None) -> None:
            # the normalizer reads the spooled input again: that is storing it, of a known size
            if progress is not None:
                progress(*(("store", done, spooled.size) if stage == "read" else
                           (stage, done, total)))

        def normalized(given: BinaryIO, adopt: Path | None = None) -> Normalized:
            nonlocal writer
            try:
                with given:
                    return normalize(given, prepared, declared=opts.fmt, raw=opts.raw,
                                     progress=storing, written=written, adopt=adopt,
                                     whole=whole)
            finally:
                writer = started[0] if started else None

        def drop_started() -> None:
            # what was started on a text that will not be stored: not its object nor its lines
            nonlocal writer
            if writer is not None:
                try:
                    writer.wait()
                except Exception:  # noqa: BLE001 - an object nothing refers to
                    pass
            writer = None
            for ahead in aheads:
                ahead.discard()
            aheads.clear()
            for grep in greps:
                grep.wait()
            greps.clear()
            started.clear()

        # the spool is the stored form itself when that is the input as received (no copy)
        norm = normalized(source, spooled.path)
        if scanning is not None:  # nothing goes on to the store before the scan's answer
            redone, redaction = _scanned_input(ctx, spooled, scanning, tmp_dir, companions_tmp)
            scanning = None
            if redone is not None:  # values found: what was normalised is dropped unstored
                drop_started()  # (its object gated: it wrote nothing)
                norm = normalized(redone)  # (into a new file: the spool is left as it is)
        for ahead in guessed:  # a wrong guess
            ahead.discard()
        guessed.clear()
        if norm.blob is None and writer is not None:
            drop_started()  # a canonical text the normalizer then did not keep (too deep)
        if writer is None and prepared.stat().st_size >= BACKGROUND_OBJECT_BYTES:
            # compress the content into git on the second core while the index is built
            writer = store.git.store_object_async(prepared)
        if norm.blob is not None:  # hashed as it was written
            blob, size = norm.blob, prepared.stat().st_size
        else:
            blob, size = file_blob(prepared)
        index, norm.format = _index_or_text(store, prepared, blob, norm.format, spec.base,
                                            norm.analysis, progress, norm.warnings,
                                            aheads[0] if aheads else None)
        if norm.adopted:  # the scan and the line pass, which read the spool by its name, are
            spooled.hand_over(prepared)  # done: the stored file keeps the only name
        if opts.name:
            name, existing = opts.name, False
        else:  # named once the format is known (see _auto_name)
            name, existing = _auto_name(store, tool, spooled.sha256, norm.format)
        lines = index.line_count
        base_total = index.total_tokens(spec.base)
        total = spec.scale(base_total) if base_total is not None else 0
        binary = norm.format == "binary"
        if redaction.findings:  # their lines in the stored form (JSON may be laid out anew)
            from scratch.redact.core import relocate
            redaction = relocate(redaction, prepared)
        added = opts.info or {}
        if added and policy.enabled:  # what the caller adds (an MCP result's words) is stored
            from scratch.redact.core import redact_value
            from scratch.redact.markers import store_key
            added = redact_value(added, store_key(ctx.root), allowed=policy.allowed())
        info = {"format": norm.format, "tool": opts.tool, "tokens": total,
                "encoding": spec.name, "base_tokens": {spec.base: base_total},
                "partial": opts.partial, "layout": norm.layout,
                "source_sha256": spooled.sha256, "bytes_received": spooled.size,
                "warnings": norm.warnings, **added}
        items = [Pending(name, prepared, "output", info, blob, size, lines, binary, redaction)]
        companion_names: list[str] = []
        given = [Companion(emb.slug, emb.text.encode("utf-8", errors="surrogatepass"),
                           "json" if emb.kind == "json" else None, None)
                 for emb in norm.embedded]
        paths = {emb.slug: list(emb.path) for emb in norm.embedded}
        taken = {c.slug for c in given}
        for extra in opts.companions:  # the caller's own, slugs kept unique
            slug, n = extra.slug, 2
            while slug in taken:
                slug, n = f"{extra.slug}-{n}", n + 1
            taken.add(slug)
            given.append(Companion(slug, extra.data, extra.fmt, extra.mime_type))
        for comp in given:
            cname = f"{name}.{comp.slug}"
            path, citem = _companion(ctx, store, tmp_dir, cname, comp, spec.base, name,
                                     paths.get(comp.slug), policy)
            companions_tmp.append(path)
            items.append(citem)
            companion_names.append(cname)
        if writer is not None:  # git add then finds the object written and only hashes
            writer.wait()
            writer = None
            from scratch.heap import trim
            trim()  # what the threads of a big input freed, before the pointer's reads
        with store.lock():
            records = store.commit_versions(items, verb="Ingest",
                                            note=" Partial output." if opts.partial else "")
        main = records[0]
        stored_fmt = (main.get("info") or {}).get("format")
        if main["unchanged"] and isinstance(stored_fmt, str) and stored_fmt != norm.format:
            # identical content makes no version: describe the entry as it is stored (the
            # warnings of reading it as the other format do not apply)
            norm.warnings = [*main["info"].get("warnings", ()),
                             f"{name} already holds these bytes as {stored_fmt}; identical "
                             f"content makes no new version, so they are not read as "
                             f"{norm.format} (ingest them under another name for that)"]
            index.close()
            index = _build_index(store, prepared, blob, stored_fmt, spec.base, None, None)
            norm.format = stored_fmt
        from scratch.answers.kernel.fitting import Meter
        from scratch.answers.kernel.target import open_target
        from scratch.answers.pointer.sizing import EntrySizer
        meter = Meter(ctx, rendering)
        target = open_target(ctx, name)
        try:
            from scratch.answers.pointer.binary import binary_for
            from scratch.answers.pointer.grep import error_lines_for
            from scratch.answers.pointer.snapshot import snapshot_for
            pointer = build_pointer(
                name=name, version=main["version"], fmt=norm.format, size=size, lines=lines,
                tokens=total, encoding=spec.name, exact=spec.exact, info=index.info,
                companions=companion_names, warnings=norm.warnings, partial=opts.partial,
                existing=existing or main["unchanged"], sizer=EntrySizer(meter, target),
                error_lines=error_lines_for(target, norm.format, index.info,
                                            greps[0] if greps else None),
                snapshot=snapshot_for(target, index.info),
                binary=binary_for(target, norm.format))
        finally:
            target.index.close()
            index.close()
        reason = (opts.info or {}).get("partial_reason")
        if opts.partial and reason:
            pointer["partial_reason"] = str(reason)
        from scratch.answers.capture.redaction import said
        told = said(_stored_redaction(records, redaction))
        if told is not None:
            pointer["redacted"] = told
        # The size rule is about the output the tool printed. Re-rendered JSON can have far
        # more tokens than the minified bytes received, so judge the pointer by the smaller.
        judged = total
        if size != spooled.size:
            if received is None:
                received = counting.result() if counting is not None else \
                    _received_tokens(spooled, spec, 100 * MAX_POINTER_TOKENS, progress)
            if received is not None:
                judged = min(total, received)
        # the data is printed where the rendering shows it: it meets the same rule on its
        # own (the envelope around it, and the warnings it repeats under meta, reserved for)
        overhead = ENVELOPE_TOKENS + sum(count_text(w, spec) + 2 for w in norm.warnings)
        data, text, pointer_tokens, _level = fit_shown(pointer, judged, rendering, spec,
                                                       overhead=overhead)
    finally:
        if scanning is not None:
            scanning.close()
        if writer is not None:
            writer.wait()
        for ahead in (*aheads, *guessed):
            ahead.discard()
        for grep in greps:
            grep.wait()
        if counting is not None:
            counting.wait()
        prepared.unlink(missing_ok=True)
        for path in companions_tmp:
            path.unlink(missing_ok=True)
    notices: tuple[str, ...] = opts.notices
    text_out: str | bytes = text
    if pointer_tokens >= judged and spooled.size <= 1 << 20:
        # even the barest pointer would cost more than the output itself (a tiny output
        # stored with --store-always or a very low threshold): show the output, say where
        # it is stored
        text_out = b"".join(spooled.chunks())
        pointer_tokens = judged
        notices = (*opts.notices,
                   f"scratch: stored as {name} (version {main['version']}); the output is "
                   "shorter than a pointer to it"
                   + ("; PARTIAL: the command failed, was killed or was interrupted mid-output"
                      if opts.partial else ""),)
    data["pointer_tokens"] = pointer_tokens
    return Result("ingest", data=data, text=text_out, style="pointer",
                  warnings=tuple(norm.warnings), notices=notices,
                  charge=Charge(kind="pointer", enforce=False, stored=total))


def _redacted_input(ctx: Context, spooled: Spooled, policy: Policy
                    ) -> tuple[BinaryIO, Redaction, FileScan | None]:
    """The input to normalise, redacted as ``policy`` says, the record of it, and the scan
    still under way, if any. Input in memory is redacted here: the input itself when nothing
    was found (or redaction is off), else a redacted copy. Input in a file is scanned on the
    other core (:class:`scratch.redact.core.FileScan`) while it is normalised as it is: the
    caller stores nothing of that before :func:`_scanned_input` says what the scan found."""
    from scratch.redact.records import Redaction
    if not policy.enabled:
        redaction = Redaction.skipped(policy.reason)
    elif spooled.data is not None:
        from scratch.redact.core import redact_bytes
        from scratch.redact.markers import store_key
        done = redact_bytes(spooled.data, store_key(ctx.root), allowed=policy.allowed())
        return io.BytesIO(done.data), done.redaction, None
    else:
        assert spooled.path is not None
        from scratch.redact.core import FileScan
        scanning = FileScan(spooled.path, policy.allow)
        return open(spooled.path, "rb"), Redaction(), scanning  # noqa: SIM115 (caller's with)
    if spooled.data is not None:
        return io.BytesIO(spooled.data), redaction, None
    assert spooled.path is not None
    return open(spooled.path, "rb"), redaction, None  # noqa: SIM115 (closed by the caller's with)


def _scanned_input(ctx: Context, spooled: Spooled, scanning: FileScan, tmp_dir: Path,
                   temps: list[Path]) -> tuple[BinaryIO | None, Redaction]:
    """Once the input's scan is done: None and the record when it found nothing to replace
    (what was normalised is stored as it is), else the redacted copy (a file, kept in
    ``temps`` to be removed) to normalise instead, and the record."""
    assert spooled.path is not None
    from scratch.redact.core import write_redacted
    from scratch.redact.markers import store_key
    from scratch.redact.records import Redaction
    hits, missed = scanning.result()
    if not hits:
        from scratch.redact.rules import rule_set
        return None, Redaction(missed=tuple(missed), rule_set=rule_set().source)
    fd, name = tempfile.mkstemp(dir=tmp_dir, prefix=f".tmp-redact-{os.getpid()}-")
    os.close(fd)
    target = Path(name)
    temps.append(target)
    found = write_redacted(spooled.path, target, store_key(ctx.root), hits, missed)
    assert found is not None
    return open(target, "rb"), found  # noqa: SIM115 (closed by the caller's with)


def _stored_redaction(records: list[WrittenVersion], made: Redaction) -> Redaction:
    """The record of the version the pointer describes: the one just made, or, when the
    content was already stored (unchanged), the record kept with that version."""
    from scratch.redact.records import Redaction
    if not records or not records[0].get("unchanged"):
        return made
    kept = (records[0].get("info") or {}).get("redaction")
    if isinstance(kept, dict) and kept.get("redacted") is False:
        return Redaction.skipped(str(kept.get("unredacted", "")))
    if isinstance(kept, dict) and isinstance(kept.get("findings"), list):
        return Redaction(tuple(kept["findings"]))
    return Redaction()


def _build_index(store: Store, content: Path, blob: str, fmt: str, base: str,
                 analysis: Analysis | None, progress: Progress | None,
                 ahead: LinesAhead | None = None) -> EntryIndex:
    from scratch.index import open_version_index
    return open_version_index(content, store.cache_dir / "index", blob, fmt, base,
                              analysis=analysis, progress=progress, ahead=ahead)


def _index_or_text(store: Store, content: Path, blob: str, fmt: str, base: str,
                   analysis: Analysis | None, progress: Progress | None, warnings: list[str],
                   ahead: LinesAhead | None = None) -> tuple[EntryIndex, str]:
    """The index, and the format it was built for: a structured index that fails on a bug
    falls back to a text index (and a warning) rather than losing the output. ``ahead``: the
    line pass already under way (the same for any format)."""
    try:
        return _build_index(store, content, blob, fmt, base, analysis, progress, ahead), fmt
    except ScratchError:
        raise
    except Exception as exc:
        if fmt in ("text", "binary"):
            raise
        warnings.append(f"could not index as {fmt} ({type(exc).__name__}: {exc}); "
                        "indexed as text")
        return _build_index(store, content, blob, "text", base, None, progress, ahead), "text"


def _companion(ctx: Context, store: Store, tmp_dir: Path, cname: str, comp: Companion,
               base: str, parent: str, json_path: list[str | int] | None, policy: Policy
               ) -> tuple[Path, Pending]:
    from scratch.answers.capture.redaction import redact
    from scratch.index.normalizer import normalize
    validate_name(cname)
    fd, tmp_name = tempfile.mkstemp(dir=tmp_dir, prefix=f".tmp-companion-{os.getpid()}-")
    os.close(fd)
    path = Path(tmp_name)
    data, redaction = redact(ctx, comp.data, policy)
    norm = normalize(io.BytesIO(data), path, declared=comp.fmt)
    if redaction.findings:
        from scratch.redact.core import relocate
        redaction = relocate(redaction, path)
    blob, size = file_blob(path)
    index, norm.format = _index_or_text(store, path, blob, norm.format, base, norm.analysis,
                                        None, norm.warnings)
    base_total = index.total_tokens(base)
    lines = index.line_count
    index.close()
    info: dict[str, object] = {"format": norm.format, "companion_of": parent,
                            "base_tokens": {base: base_total}}
    if json_path is not None:
        info["path"] = json_path
    if comp.mime_type:
        info["mime_type"] = comp.mime_type
    return path, Pending(cname, path, "output", info, blob, size, lines,
                         norm.format == "binary", redaction)


def default_tool(command: list[str]) -> str:
    """``kubectl get pods`` -> ``kubectl_get``: the program and its first non-option word."""
    if not command:
        raise UsageError("nothing to run: no command was given", code="invalid_argument")
    prog = os.path.basename(command[0])
    words = iter(command[1:])
    for word in words:
        if word in VALUED_OPTIONS:
            next(words, None)  # "-n kube-system get" names the tool by "get"
            continue
        if not word.startswith("-"):
            return tool_slug(f"{prog}_{word}")
    return tool_slug(prog)


__all__ = ["Companion", "IngestOptions", "check_options", "default_tool", "ingest",
           "ingest_spooled"]
