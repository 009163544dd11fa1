"""Redacting content: bytes, a file, a short text, a ledger record.

Invariants:
- A found value is replaced by its marker (:mod:`scratch.redact.markers`) in text; in binary
  content (a NUL in its first 8 KB) by as many ``*`` as it has bytes, so offsets and size stay.
- Everything else is kept byte for byte: lines, line numbers (a marker holds no newline; a
  secret spanning lines, a private key block, leaves its marker on its first line and the
  line count drops by the lines it spanned), JSON validity and CSV columns.
- A big file is read through maps of :data:`BLOCK` bytes at a time (overlapping by
  :data:`OVERLAP`), so memory stays bounded whatever its size; a file with nothing found is
  not copied.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scratch.redact.markers import MARKER_BYTES_RE, marker
from scratch.redact.records import Finding, Redaction
from scratch.redact.scan import Allowed, Hit, scan, scan_text

BLOCK = 32 << 20
OVERLAP = 128 << 10
SNIFF = 8192


@dataclass(frozen=True)
class Redacted:
    """Content after redaction, and the record of what was done."""

    data: bytes
    redaction: Redaction


def _rule_set_name() -> str:
    from scratch.redact.rules import rule_set
    return rule_set().source


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head[:SNIFF]


def _hits(buf: Any, allowed: Allowed | None, kube_ok: bool = True) -> tuple[list[Hit], list[str]]:
    """Every find in ``buf`` (bytes or a map), the Kubernetes pass included when needed."""
    size = len(buf)
    memo: dict[bytes, list[Hit]] = {}
    if size <= BLOCK + OVERLAP:
        found = scan(buf, allowed=allowed, memo=memo)
        hits, kube = found.hits, found.kube_secret
    else:
        hits, kube = [], False
        for lo in range(0, size, BLOCK):
            found = scan(buf, lo, min(size, lo + BLOCK), allowed=allowed, memo=memo)
            hits.extend(found.hits)
            kube = kube or found.kube_secret
            _release(buf, lo, min(size, lo + BLOCK))
    missed: list[str] = []
    if kube and kube_ok:
        from scratch.redact import kube as kube_pass
        from scratch.redact.scan import resolve
        if size <= kube_pass.MAX_DOCUMENT:
            extra, missed = kube_pass.find(bytes(buf))
            hits = resolve([*hits, *extra])
        else:
            missed = [f"a Kubernetes Secret in an output over {kube_pass.MAX_DOCUMENT:,} "
                      "bytes: its values are found only by the other rules"]
    unique = {(h.start, h.end): h for h in (_outside_escapes(buf, h) for h in hits) if h}
    return sorted(unique.values(), key=lambda h: h.start), missed


def _outside_escapes(buf: Any, hit: Hit) -> Hit | None:
    """``hit`` without a backslash escape cut in two: a rule whose pattern ends with a class
    that takes ``\\`` (gitleaks' jwt does) took the backslash of ``\\"`` in a JSON string
    holding a quoted token, and the marker left a bare ``"`` that ended the string. A value
    never starts on an escaped character nor ends on the escape that a character after it
    needs."""
    start, end = hit.start, hit.end
    while end > start and buf[end - 1] == 0x5C:  # a trailing backslash
        end -= 1
    before = 0
    while start - before > 0 and buf[start - before - 1] == 0x5C:
        before += 1
    if before % 2:  # the first byte is the escaped one: it goes with its backslash
        start += 1
    if end <= start:
        return None
    if (start, end) == (hit.start, hit.end):
        return hit
    from dataclasses import replace
    return replace(hit, start=start, end=end)


def _release(buf: Any, lo: int, hi: int) -> None:
    """Let the pages of a map's block that was read go (they stay in the page cache, out of
    this process's resident set): a 200 MB file scanned is not 200 MB of RSS."""
    if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        buf.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def _finding(hit: Hit, mark: str, line: int) -> Finding:
    out: Finding = {"rule": hit.rule, "line": line, "marker": mark}
    if hit.path:
        out["path"] = hit.path
    if hit.key:
        out["key"] = hit.key
    return out


def _apply(buf: Any, hits: list[Hit], key: bytes, binary: bool, out: Any) -> list[Finding]:
    """Write ``buf`` with each hit replaced to ``out`` (a file or a list of parts); the
    findings with their lines in what was written."""
    findings: list[Finding] = []
    pos = 0
    line = 1
    for hit in hits:
        if hit.start < pos:
            continue
        segment = buf[pos:hit.start]  # bytes (a map has no count of its own)
        line += segment.count(b"\n")
        out.write(segment)
        value = bytes(buf[hit.start:hit.end])
        mark = marker(hit.rule, value, key)
        out.write(b"*" * len(value) if binary else mark.encode("utf-8"))
        findings.append(_finding(hit, mark, line))
        pos = hit.end
    out.write(buf[pos:])
    return findings


class _Parts:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: Any) -> None:
        self.parts.append(bytes(data))


def redact_bytes(data: bytes, key: bytes, *, allowed: Allowed | None = None) -> Redacted:
    """``data`` with every value found replaced by its marker, and the findings (lines in the
    result)."""
    if not data:
        return Redacted(data, Redaction(rule_set=_rule_set_name()))
    hits, missed = _hits(data, allowed)
    if not hits:
        return Redacted(data, Redaction(missed=tuple(missed), rule_set=_rule_set_name()))
    parts = _Parts()
    findings = _apply(data, hits, key, _is_binary(data), parts)
    return Redacted(b"".join(parts.parts), Redaction(tuple(findings), missed=tuple(missed),
                                                    rule_set=_rule_set_name()))


def redact_file(source: Path, target: Path, key: bytes, *,
                allowed: Allowed | None = None) -> Redaction | None:
    """Redact the file ``source`` into ``target``; None (and ``target`` untouched) when
    nothing was found, so the caller keeps ``source``. Memory stays bounded (see module)."""
    size = source.stat().st_size
    if size == 0:
        return None
    with open(source, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        hits, missed = _hits(buf, allowed)
        if not hits:
            return None if not missed else Redaction(missed=tuple(missed),
                                                     rule_set=_rule_set_name())
        binary = _is_binary(buf[:SNIFF])
        with open(target, "wb") as out:
            findings = _apply(buf, hits, key, binary, out)
            out.flush()
            os.fsync(out.fileno())
    return Redaction(tuple(findings), missed=tuple(missed), rule_set=_rule_set_name())


def relocate(redaction: Redaction, content: Any) -> Redaction:
    """The findings with the lines their markers are on in ``content`` (the stored form, which
    may be laid out anew, e.g. pretty-printed JSON): the markers are found in order."""
    if not redaction.findings:
        return redaction
    if isinstance(content, Path):
        if content.stat().st_size == 0:
            return redaction
        with open(content, "rb") as fh, mmap.mmap(fh.fileno(), 0,
                                                  access=mmap.ACCESS_READ) as view:
            return relocate(redaction, view)
    pending = list(redaction.findings)
    out: list[Finding] = []
    line, pos = 1, 0
    for m in MARKER_BYTES_RE.finditer(content):
        if not pending:
            break
        text = m.group(0).decode("utf-8")
        if text != pending[0]["marker"]:
            continue  # a marker that was in the input already
        line += content[pos:m.start()].count(b"\n")
        pos = m.start()
        out.append({**pending.pop(0), "line": line})
    out.extend(pending)  # binary content: no markers, the lines stay
    return Redaction(tuple(out), redaction.unredacted, redaction.carried, redaction.missed,
                     redaction.rule_set)


def redact_text(text: str, key: bytes, *, allowed: Allowed | None = None
                ) -> tuple[str, list[Finding]]:
    """``text`` with every value found replaced by its marker, and the findings. For short
    texts (a ledger record's fields, a hook's payload): no prefilter, only the rules whose
    keywords occur in it are compiled and run."""
    if not text or len(text) < 6:
        return text, []
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) > 1 << 20:  # long: the full scan
        done = redact_bytes(raw, key, allowed=allowed)
        return done.data.decode("utf-8", "surrogatepass"), list(done.redaction.findings)
    hits = scan_text(raw, allowed)
    if not hits:
        return text, []
    parts = _Parts()
    findings = _apply(raw, hits, key, False, parts)
    return b"".join(parts.parts).decode("utf-8", "surrogatepass"), findings


def redact_value(value: Any, key: bytes, *, allowed: Allowed | None = None) -> Any:
    """Every string value in a JSON-like value redacted (mapping keys are field and argument
    names, kept); the value's shape kept."""
    if isinstance(value, str):
        return redact_text(value, key, allowed=allowed)[0]
    if isinstance(value, Mapping):
        return {k: redact_value(v, key, allowed=allowed) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, key, allowed=allowed) for v in value]
    return value


__all__ = ["Redacted", "redact_bytes", "redact_file", "redact_text", "redact_value",
           "relocate"]
