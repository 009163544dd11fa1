"""Append-only logs with cursor pagination.

A log is ``agents/<agent>/logs/<name>.jsonl``: one JSON object per line,
``{"id": n, "ts": "...Z", "entry": value}``; ``entry`` is the JSON value when the appended text
parses as JSON, else the text itself.

Invariants:
- Ids start at 1, grow by one per entry and are never reused (the next id lives in the metadata,
  which survives ``rm``). Since entries are only ever appended, the entry with id k is line
  ``k - first_id + 1`` of the file.
- An append (one entry or a batch) is built in memory, checked against limits and quota, then
  written with a single ``write`` on an ``O_APPEND`` descriptor and fsynced, under the store
  lock, then committed: concurrent appenders never interleave or lose entries.
- An append is journaled first (the log's size, the metadata's bytes): a process killed before
  its commit leaves nothing behind, the next open cuts the log back and restores the metadata,
  so the file always equals the last commit once recovered. A torn last line (from before the
  journal existed) has no trailing newline: readers ignore it and the next append cuts it off.
- The log file is opened without following a symlink and refused if hard-linked
  (:mod:`scratch.safefs`): an append must never write to a file outside the store.
- An append comes with its :class:`~scratch.redact.Redaction` (entries already redacted, or
  why not; a finding's ``line`` is the entry's place in the batch, kept as its ``id``): the
  metadata's ``log.redaction`` adds up the counts per rule and keeps the first findings
  (:data:`scratch.redact.records.MAX_KEPT`), and an append without one is refused
  (``TypeError``), as for versions (:mod:`scratch.store.writing`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import orjson

from scratch.errors import LimitExceeded, UsageError, argument
from scratch.redact.records import MAX_KEPT, Redaction
from scratch.store import Store, new_meta, utc_now

if TYPE_CHECKING:
    from pathlib import Path

    from scratch.jsonvalues import JSON
    from scratch.store.records import LogCursor


class LogRecord(TypedDict):
    """One line of a log file."""

    id: int
    ts: str  # when it was appended (UTC, ISO 8601)
    entry: JSON  # the entry's JSON value, or its text when it is not JSON


class Appended(TypedDict):
    name: str
    first_id: int
    last_id: int
    count: int
    redacted: NotRequired[dict[str, object]]  # set by the answer: what redaction found


class LogPage(TypedDict):
    """What :func:`read` gives: the entries after ``since``, at most ``limit``."""

    name: str
    entries: list[LogRecord]
    has_more: bool
    next_since: int
    warnings: list[str]


class LogTail(TypedDict):
    """What :func:`tail` gives: the last ``n`` entries of ``total``."""

    name: str
    entries: list[LogRecord]
    total: int
    warnings: list[str]


def parse_entry(text: str) -> JSON:
    """The JSON value of ``text`` if it is (strict) JSON, else the text; numbers kept as
    written (:mod:`scratch.jsonvalues`)."""
    from scratch.jsonvalues import parse_exact

    stripped = text.strip()
    if stripped:
        try:
            value: JSON = parse_exact(stripped.encode("utf-8", "surrogatepass"))
            return value
        except ValueError:  # JsonError: not JSON (NaN and Infinity included)
            return text
    return text


def _decode(raw: bytes, position: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"log entry {position} is not valid UTF-8 (byte {exc.start}); logs hold text or JSON",
            code="invalid_utf8", entry=position, byte_offset=exc.start) from None


def append(store: Store, name: str, raw_entries: Iterable[bytes], *, redaction: Redaction
           ) -> Appended:
    """Append entries (already redacted, as ``redaction`` says) to log ``name`` (created on
    first use). Returns first/last id and count."""
    if not isinstance(redaction, Redaction):
        raise TypeError(f"{name!r}: log entries reach the store only with their redaction "
                        "record (scratch.redact.Redaction)")
    limit = store.config["limits.max_log_entry_bytes"]
    texts: list[str] = []
    for position, raw in enumerate(raw_entries, start=1):
        if len(raw) > limit:
            raise LimitExceeded(
                f"log entry {position} has {len(raw):,} bytes; limits.max_log_entry_bytes is "
                f"{limit:,}", code="log_entry_too_large", limit="limits.max_log_entry_bytes",
                limit_value=limit, attempted=len(raw), entry=position)
        texts.append(_decode(raw, position))
    if not texts:
        raise UsageError("nothing to append: the input holds no entries", code="empty_input")
    path = store.content_path(name, "log")
    with store.lock():
        meta = store.load_meta(name)
        if meta is not None and meta["kind"] != "log" and not meta.get("deleted"):
            raise UsageError(f"{name!r} is a {meta['kind']}, not a log", code="wrong_kind",
                             name=name, kind=meta["kind"])
        if meta is None or meta["kind"] != "log":
            carried = meta.get("log") if meta else None  # a deleted log's ids stay used
            meta = new_meta(name, "log")
            if carried:
                meta["log"]["next_id"] = carried["next_id"]
        new_entry = bool(meta.get("deleted")) or not path.exists()
        if new_entry:
            meta["log"]["count"] = 0
        meta["deleted"] = False
        store._check_quota(new_entry=new_entry, old_bytes=0,
                           new_bytes=sum(len(t) for t in texts) + 48 * len(texts),
                           new_log_entries=len(texts))
        # the file wins over metadata a crash may have left one append behind
        first = max(meta["log"]["next_id"], _last_id(store, path) + 1)
        ts = utc_now()
        lines = b"".join(_record(first + i, ts, t) for i, t in enumerate(texts))
        store._mkdirs(path.parent)
        last = first + len(texts) - 1
        meta["log"]["next_id"] = last + 1
        meta["log"]["count"] += len(texts)
        meta["log"]["first_id"] = meta["log"].get("first_id") or first
        _record_redaction(meta["log"], redaction, first)
        what = f"entry {first}" if len(texts) == 1 else f"{len(texts)} entries, ids {first}-{last}"
        message = f"Append {what} to log {name} (agent {store.agent})."
        fd = _open_log(store, path)
        try:
            size = os.fstat(fd).st_size
            end = _complete_end(fd, size)
            if end < size:  # cut a torn last line (no trailing newline) left by a crash
                os.ftruncate(fd, end)
            # a kill from here to the commit is undone by the next open: the log back to this
            # size, the metadata back to what it was
            store.journal_append([(path, end)], [store.meta_path(name)])
            try:
                _append_bytes(fd, lines)
                store.save_meta(name, meta)
                store.git.commit([store.rel(path), store.rel(store.meta_path(name))], message,
                                 author=store.agent)
            except BaseException:
                store.undo_journal()  # the append and the metadata, as they were
                raise
            store.journal_done()
        finally:
            os.close(fd)
    return {"name": name, "first_id": first, "last_id": last, "count": len(texts)}


def _record_redaction(log: LogCursor, redaction: Redaction, first: int) -> None:
    """Add one append's redaction record to the log's running one (see the module)."""
    kept = log.setdefault("redaction", {"count": 0, "rules": {}, "findings": [],
                                        "unredacted_appends": 0})
    if redaction.unredacted is not None:
        kept["unredacted_appends"] = kept.get("unredacted_appends", 0) + 1
        kept["unredacted"] = redaction.unredacted
        return
    kept["count"] = kept.get("count", 0) + redaction.count
    for rule, n in redaction.by_rule().items():
        kept["rules"][rule] = kept["rules"].get(rule, 0) + n
    findings = kept.setdefault("findings", [])
    for f in redaction.findings:
        if len(findings) >= MAX_KEPT:
            kept["truncated"] = True
            break
        entry: dict[str, Any] = dict(f)
        entry["id"] = first + int(entry.pop("line", 1)) - 1
        findings.append(entry)


def _open_log(store: Store, path: Path) -> int:
    """The log file opened for appending (and reading): no symlink, no hard link (a write
    through one would land in a file outside the store), see :mod:`scratch.safefs`."""
    from scratch.safefs import open_file

    return open_file(store.root, path, os.O_RDWR | os.O_APPEND | os.O_CREAT)


def _append_bytes(fd: int, data: bytes) -> None:
    written = os.write(fd, data)
    while written < len(data):
        written += os.write(fd, data[written:])
    os.fsync(fd)


def _complete_end(fd: int, size: int) -> int:
    """Offset just past the last newline of the file (0 if none): where whole lines end."""
    block = 1 << 16
    pos = size
    while pos > 0:
        start = max(0, pos - block)
        chunk = os.pread(fd, pos - start, start)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        pos = start
    return 0


def _last_id(store: Store, path: Path) -> int:
    """Id of the last whole entry in the file (0 if none or unreadable)."""
    from scratch.safefs import open_file

    try:
        fd = open_file(store.root, path)
    except OSError:
        return 0
    try:
        end = _complete_end(fd, os.fstat(fd).st_size)
        if end == 0:
            return 0
        start = _complete_end(fd, end - 1)
        line = os.pread(fd, end - start, start)
    finally:
        os.close(fd)
    try:
        return int(orjson.loads(line)["id"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return 0


def _record(entry_id: int, ts: str, text: str) -> bytes:
    from scratch.jsonvalues import dumps

    record = {"id": entry_id, "ts": ts, "entry": parse_entry(text)}
    return dumps(record) + b"\n"  # numbers exactly as appended


def _records(store: Store, name: str) -> tuple[list[LogRecord], int]:
    """The whole entries of the log, and how many damaged lines were skipped."""
    from scratch.safefs import read_file

    store.require(name, kinds=("log",))
    data = read_file(store.root, store.content_path(name, "log"))
    from scratch.jsonvalues import parse_exact

    records: list[LogRecord] = []
    skipped = 0
    for line in data.split(b"\n")[:-1]:  # the last piece is "" or a torn line
        try:
            # JSON edge (checked by its id); numbers as written (big integers, long decimals)
            record: LogRecord = parse_exact(line)
            record["id"]
        except (ValueError, KeyError, TypeError):  # JSONDecodeError is a ValueError
            skipped += 1
            continue
        records.append(record)
    return records, skipped


def _skipped(n: int) -> list[str]:
    return [f"{n} damaged line(s) in the log file were skipped"] if n else []


def read(store: Store, name: str, since: int = 0, limit: int = 100) -> LogPage:
    if since < 0 or limit < 1:
        raise UsageError(f"{argument('since')} must be >= 0 and {argument('limit')} >= 1",
                         code="invalid_argument", argument="since" if since < 0 else "limit",
                         since=since, limit=limit)
    out: list[LogRecord] = []
    has_more = False
    records, skipped = _records(store, name)
    for record in records:
        if record["id"] <= since:
            continue
        if len(out) == limit:
            has_more = True
            break
        out.append(record)
    next_since = out[-1]["id"] if out else since
    return {"name": name, "entries": out, "has_more": has_more, "next_since": next_since,
            "warnings": _skipped(skipped)}


def tail(store: Store, name: str, n: int = 20) -> LogTail:
    if n < 1:
        raise UsageError("-n must be >= 1", code="invalid_argument", n=n)
    records, skipped = _records(store, name)
    return {"name": name, "entries": records[-n:], "total": len(records),
            "warnings": _skipped(skipped)}
